#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh - an SRP target from zero, as an administrator runs it: the
# distribution's own kernel (Debian's image and modules, host/distro.sh)
# with our DKMS package installed by dpkg in each of two VMs joined by a
# virtual Ethernet wire.  The target VM configures ib_srpt with
# targetcli-fb; the initiator VM discovers it with Device Management MADs,
# logs in with ib_srp over RDMA/CM on soft-RoCE, runs fio with
# verification and logs out.  Then the InfiniBand path on ibdevsim in the
# target VM: opensm, srp_daemon's discovery, an IB CM login, fio.  Ends
# with a report naming the kernel, the package and where each module was
# loaded from; non-zero exit and the failing step on any failure.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

t_start=$(date +%s)
ms_lock
"$here/deps.sh"
ms_stage_start "the distribution's kernel: Debian's image, headers and modules"
"$here/distro.sh" prepare | sed 's/^/    /'
ms_stage_end
ms_stage_start "make deb, and dkms builds the package for that kernel"
"$here/distro.sh" package | sed 's/^/    /'
ms_stage_end
deb=$(ls "$MS_BUILD"/deb/ib-mad-srpt-dkms_*_all.deb)
ver=$(dpkg-deb -f "$deb" Version)
tarball=$MS_BUILD/distro/ib-mad-srpt-$ver.dkms.tar.gz

ms_stage_start "build the test programs, the DM query tool among them (build/progs)"
"$MS_HARNESS/progs/build.sh" "$MS_BUILD/progs" || ms_die "building progs/"
ms_stage_end

logs=$MS_BUILD/logs
mkdir -p "$logs"
# Old outputs must not be mistaken for this run's.
rm -f "$logs"/demo-*.console "$logs"/demo-*.out "$logs"/demo-*.err
# Decide the accelerator once, for both VMs, and say so.
ms_stage_start "choose the QEMU accelerator"
ms_accel_pick "$MS_BUILD/distro/arch/x86/boot/bzImage"
echo "    $MS_ACCEL_USE ($MS_ACCEL_WHY)"
ms_stage_end
port=$((20000 + RANDOM % 20000))
ms_stage_start "boot the target and initiator VMs (wire: 127.0.0.1:$port)"
"$here/vm.sh" -k distro -t 1500 -n "listen:$port" -l "$logs/demo-target.console" \
	"$MS_HARNESS/guest/roles/demo-target.sh" "$deb" "$tarball" >/dev/null 2>"$logs/demo-target.err" &
tpid=$!
sleep 1
"$here/vm.sh" -k distro -t 1200 -n "connect:$port" -l "$logs/demo-initiator.console" \
	"$MS_HARNESS/guest/roles/demo-initiator.sh" "$deb" "$tarball" >/dev/null 2>"$logs/demo-initiator.err" &
ipid=$!

# follow FILE PID [MARKER]: print FILE's lines as they come until MARKER
# shows up or PID ends.
follow() {
	local file=$1 pid=$2 marker=${3:-} n=0 lines
	while :; do
		lines=$(tr -d '\r' <"$file" 2>/dev/null | tail -n +$((n + 1)) || true)
		if [ -n "$lines" ]; then
			printf '%s\n' "$lines" | { grep -v '^REPORT ' || true; } | sed 's/^/  /'
			n=$((n + $(printf '%s\n' "$lines" | wc -l)))
			if [ -n "$marker" ] && grep -q "$marker" <<<"$lines"; then
				return 0
			fi
		fi
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.5
	done
}
follow "$logs/demo-target.console.out" $tpid "READY"
follow "$logs/demo-initiator.console.out" $ipid
irc=0
wait $ipid || irc=$?
follow "$logs/demo-target.console.out" $tpid
trc=0
wait $tpid || trc=$?
ms_stage_end

krel=$(cat "$MS_BUILD/distro/kernelrelease")
echo
echo "================ ib-mad-srpt demo report ================"
echo "kernel:     $krel, Debian's own ($(cut -d' ' -f1,2 "$MS_BUILD/distro/image/.version"))"
echo "package:    ib-mad-srpt-dkms $ver (dpkg -i in each VM; dkms built it for $krel)"
echo "userspace:  targetcli-fb $(dpkg-query -W -f='${Version}' targetcli-fb)," \
	"rdma-core $(dpkg-query -W -f='${Version}' rdma-core)," \
	"fio $(dpkg-query -W -f='${Version}' fio)"
cat "$logs/demo-target.console.out" "$logs/demo-initiator.console.out" |
	tr -d '\r' | sed -n 's/^REPORT /            /p'
echo "qemu:       -accel $MS_ACCEL_USE ($MS_ACCEL_WHY)"
echo "elapsed:    $(($(date +%s) - t_start))s"
if [ $irc -eq 0 ] && [ $trc -eq 0 ]; then
	echo "result:     PASS"
	exit 0
fi
echo "result:     FAIL"
for side in target initiator; do
	grep -h 'FAILED' "$logs/demo-$side.console.out" 2>/dev/null | tr -d '\r' |
		sed "s/^/            /"
	[ -s "$logs/demo-$side.err" ] && sed "s/^/            $side: /" "$logs/demo-$side.err"
done
echo "logs:       ${logs#"$MS_TOP"/}/demo-*.console{,.out}"
exit 1
