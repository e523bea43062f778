#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm.sh [options] SCRIPT [ARGS...] - boot a built kernel under QEMU and run
# SCRIPT inside it (a path on the host; the guest sees the host root).
#
#   -k ours|upstream|debug|distro  which build to boot (default: ours);
#                     distro: the distribution's own kernel image with
#                     its own modules (host/distro.sh prepare), booted
#                     through an initramfs (the build's initrd.img)
#   -t SECONDS        timeout for the whole run (default: 600), stretched
#                     by MS_DEBUG_SLOWDOWN for the debug kernel
#   -l FILE           console log (default: build/logs/<script>.console)
#   -o FILE           copy of the script's output (default: <log>.out)
#   -n NETSPEC        add a virtio-net joined to another VM over a QEMU
#                     socket netdev: listen:PORT or connect:PORT
#   -d FILE           with -n: a capture of that link (pcap, every frame
#                     this VM sends and receives, QEMU's filter-dump)
#   -m MiB            guest memory (default: 2048)
#   -c CPUS           guest CPUs (default: 2)
#   -i                interactive: a shell instead of SCRIPT, console on
#                     the terminal, no timeout and no verdict
#
# The guest's PID 1 (init.sh) puts a tmpfs overlay over the read-only 9p
# host root, points /lib/modules/<release> at the build's modules and runs
# SCRIPT with bash.  The script's stdout comes back on a second serial port
# (shown here and copied to the -o file); the console goes to the log.
# Exit status: the script's, or 1 when the run timed out, the guest did not
# report a status, or the console shows a kernel splat.  Those failures
# are also added to the -o file as TAP lines, each followed by what the
# console shows of it as "#" comments: the splat, or, for a timeout, the
# report of the guest's watchdog (guest.sh: the processes still running
# and the blocked tasks' stacks, a little before the timeout).
#
# The accelerator is KVM only when a probe boot under it worked on this
# boot of the host (cached; see ms_accel_pick in common.sh), TCG otherwise;
# a run that dies under KVM before the guest printed anything is booted
# again under TCG.  MS_ACCEL=kvm|tcg overrides both.  vm.sh says on stderr
# which one it used and why.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

kind=ours timeout=600 log= out= net= dump= mem=2048 cpus=2 interactive=
while getopts "k:t:l:o:n:d:m:c:i" opt; do
	case "$opt" in
	k) kind=$OPTARG ;;
	t) timeout=$OPTARG ;;
	l) log=$OPTARG ;;
	o) out=$OPTARG ;;
	n) net=$OPTARG ;;
	d) dump=$OPTARG ;;
	m) mem=$OPTARG ;;
	c) cpus=$OPTARG ;;
	i) interactive=1 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ -n "$interactive" ]; then
	script=${1:-/bin/bash}
else
	[ $# -ge 1 ] || ms_die "usage: vm.sh [options] SCRIPT [ARGS...]"
	script=$(realpath "$1")
fi
shift || true
args="$*"

obj=$MS_BUILD/$kind$MS_SUFFIX
# The detectors make the debug kernel about three times slower.
[ "$kind" != debug ] || timeout=$((timeout * MS_DEBUG_SLOWDOWN))
kernel=$obj/arch/x86/boot/bzImage
[ -f "$kernel" ] && [ -f "$obj/kernelrelease" ] ||
	ms_die "no $kind kernel built yet (run: make build)"
krel=$(cat "$obj/kernelrelease")

name=$(basename "$script" .sh)
mkdir -p "$MS_BUILD/logs"
log=${log:-$MS_BUILD/logs/$name.console}
out=${out:-$log.out}
: >"$log"
: >"$out"

# The guest's clock: without ACPI the TSC may fail to calibrate, so hand
# the guest the host's frequency.
khz=$(awk '/^cpu MHz/ { printf "%d", $4 * 1000; exit }' /proc/cpuinfo)

cmdline="console=ttyS0 root=/dev/root rootfstype=9p ro"
# cache=loose: the guest caches what it reads of the host root (data,
# attributes, lookups) instead of asking the host each time; a test VM
# boots about 5 s sooner under TCG and python (targetcli) starts a third
# faster.  It is safe because the root is read-only and nothing a guest
# reads changes on the host while that guest runs: scripts, programs and
# modules are all written before the boot, and the VMs of a two-VM test
# meet over the wire, not through files.  MS_9P_CACHE=none turns it off.
cmdline+=" rootflags=trans=virtio,version=9p2000.L,msize=512000"
[ "${MS_9P_CACHE:-loose}" = none ] || cmdline+=",cache=${MS_9P_CACHE:-loose}"
cmdline+=" init=$MS_HARNESS/guest/init.sh panic=-1"
cmdline+=" tsc_early_khz=$khz tsc=reliable hung_task_panic=0"
cmdline+=" ms_krel=$krel ms_mods=$obj/mods ms_harness=$MS_HARNESS"
cmdline+=" ms_progs=$MS_BUILD/progs"
cmdline+=" ms_script=$script ms_args=${args// /,}"
if [ -n "$interactive" ]; then
	cmdline+=" ms_interactive=1"
else
	cmdline+=" ms_timeout=$timeout"
fi
# The detector kernel stops at the first warning, as the issue it reports
# may be followed by worse.  It also runs with 4-level paging: QEMU's "max"
# CPU has LA57, and 6.12's identify_cpu() clears the boot CPU's feature
# words before it reads them again, so for that moment the kernel takes
# itself for 4-level and KASAN reports an interrupt's access to the 5-level
# direct map (0xff11...) as a wild access ("BUG: KASAN: wild-memory-access
# in do_raw_spin_lock", handle_edge_irq over identify_cpu), seen when two
# guests booted at once.
[ "$kind" = debug ] && cmdline+=" panic_on_warn=1 no5lvl"

# shellcheck disable=SC2207
qemu=("$MS_QEMU" $(ms_qemu_machine) -m "$mem"
	-smp "$cpus,sockets=$cpus,cores=1,threads=1"
	-kernel "$kernel" -append "$cmdline"
	$([ ! -f "$obj/initrd.img" ] || echo "-initrd $obj/initrd.img")
	-fsdev "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap"
	-device "virtio-9p-pci,fsdev=hostroot,mount_tag=/dev/root"
	-device virtio-rng-pci)
if [ -n "$net" ]; then
	# A deterministic MAC per side, so GIDs are stable across runs.
	case "$net" in
	listen:*) mac=52:54:00:4d:53:01 ;;
	connect:*) mac=52:54:00:4d:53:02 ;;
	*) ms_die "bad -n $net" ;;
	esac
	qemu+=(-netdev "socket,id=wire,${net%%:*}=127.0.0.1:${net#*:}"
		-device "virtio-net-pci,netdev=wire,mac=$mac")
	[ -z "$dump" ] ||
		qemu+=(-object "filter-dump,id=dump,netdev=wire,file=$dump")
fi

[ -n "$interactive" ] || ms_lock
ms_accel_pick "$kernel"
echo "vm: $name: accelerator $MS_ACCEL_USE ($MS_ACCEL_WHY)" >&2

if [ -n "$interactive" ]; then
	exec "${qemu[@]}" -accel "$MS_ACCEL_USE" -serial mon:stdio
fi

# run ACCEL: one boot; its exit status in rc.
run() {
	rc=0
	timeout --foreground -k 10 "$timeout" "${qemu[@]}" -accel "$1" \
		-serial "file:$log" -serial stdio </dev/null | tee "$out" || rc=$?
}

run "$MS_ACCEL_USE"
# QEMU dying under KVM before the guest printed a thing is the host's KVM
# failing, not the test: say so, remember it and boot again under TCG.
if [ "$MS_ACCEL_USE" = kvm ] && [ -z "$MS_ACCEL_FORCED" ] &&
   [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && [ ! -s "$log" ]; then
	echo "vm: $name: QEMU exited with status $rc under KVM before the guest printed anything; falling back to TCG" >&2
	ms_accel_remember tcg "QEMU died under KVM before the guest printed anything (exit $rc)"
	: >"$out"
	run tcg
fi
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
	echo "vm: $name: timed out after ${timeout}s" >&2
	echo "not ok - $name: timed out after ${timeout}s" >>"$out"
	# The guest's watchdog report (guest.sh), or the console's last lines.
	{
		echo "# $name: the console at the timeout:"
		if grep -q '^MADSRPT-WATCHDOG' "$log"; then
			sed -n '/^MADSRPT-WATCHDOG/,$p' "$log" | head -n 80
		else
			tail -n 30 "$log"
		fi | tr -d '\r' | sed 's/^/#   /'
	} >>"$out" || true	# head(1) may cut sed off: never fatal here
fi

status=$(sed -n 's/^MADSRPT-EXIT \([0-9]*\).*/\1/p' "$log" | tail -n 1)
if [ -z "$status" ]; then
	echo "vm: $name: the guest reported no exit status (see $log)" >&2
	status=1
fi
if ms_splats "$log"; then
	echo "vm: $name: kernel splat on the console (see $log):" >&2
	ms_splats_show "$log" >&2 || true
	echo "not ok - $name: kernel splat" >>"$out"
	ms_splats_show "$log" | tr -d '\r' | sed 's/^/#   /' >>"$out" || true
	status=1
fi
exit "$status"
