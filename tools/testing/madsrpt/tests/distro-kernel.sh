#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# distro-kernel: our package on the distribution's unmodified kernel
# (issue 31).  On the host: Debian's kernel image and headers of the
# release that matches the linux-source-6.12 the build uses (never a
# fixed version), `make deb`, dkms building the package for that kernel
# (its kABI check must read every ib_core CRC equal to Debian's), and the
# kABI check failing, naming the symbol, on a Module.symvers with one CRC
# changed.  Then one VM boots Debian's own kernel image with Debian's own
# modules (guest/roles/distro-kernel.sh): dpkg -i, our ib_core and ib_srpt
# in updates/dkms, Debian's ib_cm, ib_umad, rdma_cm, ib_ipoib, ib_srp,
# rdma_rxe, mlx5_ib and mlx4_ib loading against our ib_core, SRP logins
# over RDMA/CM on rxe and over IB CM on ibdevsim with fio verifying, then
# dpkg -r, Debian's ib_core back and the RDMA/CM login again.
# Under `make check-upstream` it is not run (check.sh prints one SKIP
# point): what it tests is our package; Debian's stock modules alone
# are Debian's build, not the pristine build the other tests compare.
# ours-only: installs our DKMS package on Debian's kernel
# runs-on: host
# timeout: 1200

set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/host/common.sh"

host_points=4 guest_points=27
echo "TAP version 13"
echo "1..$((host_points + guest_points))"
n=0
point() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
ms_lock

out=$("$here/host/distro.sh" prepare 2>&1)
rc=$?
sed 's/^/# /' <<<"$out"
point $rc "Debian's kernel image and headers of linux-source-6.12's release"
[ $rc = 0 ] || exit 1
krel=$(cat "$MS_BUILD/distro/kernelrelease")

out=$("$here/host/deb.sh" build 2>&1)
rc=$?
sed 's/^/# /' <<<"$out"
point $rc "make deb: the DKMS package builds"
deb=$(ls "$MS_BUILD"/deb/ib-mad-srpt-dkms_*_all.deb 2>/dev/null | head -n 1)

t0=$(date +%s)
out=$("$here/host/distro.sh" package 2>&1)
rc=$?
sed 's/^/# /' <<<"$out" | tail -n 30
echo "# dkms build: $(($(date +%s) - t0)) s"
ver=$(dpkg-deb -f "$deb" Version 2>/dev/null)
log=$MS_BUILD/distro/dkms/ib-mad-srpt/$ver/$krel/x86_64/log/make.log
kabi=$(grep '^kABI:' "$log" 2>/dev/null | tail -n 1)
n_sym=$(grep -c $'\tdrivers/infiniband/core/ib_core\t' "/usr/src/linux-headers-$krel/Module.symvers")
[ $rc = 0 ] && [ "$kabi" = "kABI: $n_sym/$n_sym ib_core symbols match the kernel's CRCs" ] || rc=1
point $rc "dkms builds ib-mad-srpt $ver for $krel; $kabi"
[ $rc = 0 ] || exit 1

# The check itself: one CRC changed in a copy of the kernel's list.
tampered=$MS_BUILD/distro/Module.symvers.tampered
awk -F'\t' -v OFS='\t' '$2 == "ib_post_send_mad" { $1 = "0xdeadbeef" } { print }' \
	"/usr/src/linux-headers-$krel/Module.symvers" >"$tampered"
ko=$MS_BUILD/distro/dkms/ib-mad-srpt/$ver/$krel/x86_64/module/ib_core.ko.xz
out=$("$MS_TOP/dkms/ib-mad-srpt-kabi" "$ko" "$tampered" 2>&1)
rc=$?
sed 's/^/# /' <<<"$out"
[ $rc != 0 ] && grep -q "^kABI: ib_post_send_mad: ours .*, kernel 0xdeadbeef" <<<"$out"
point $? "the kABI check fails and names ib_post_send_mad when its CRC differs"

vmlog=$MS_BUILD/logs/distro-kernel-vm.console
rc=0
"$here/host/vm.sh" -k distro -t 1000 -l "$vmlog" \
	"$here/guest/roles/distro-kernel.sh" "$n" "$krel" "$deb" \
	"$MS_BUILD/distro/ib-mad-srpt-$ver.dkms.tar.gz" >/dev/null || rc=$?
tr -d '\r' <"$vmlog.out" | grep -v '^TAP version'
echo "# VM exit status $rc (console: ${vmlog#"$MS_TOP"/})"
exit "$rc"
