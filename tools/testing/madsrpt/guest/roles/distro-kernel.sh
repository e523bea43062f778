#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# distro-kernel.sh FIRST KREL DEB TARBALL - the guest half of the distro-kernel
# test (tests/distro-kernel.sh), on Debian's own kernel with Debian's own
# modules: install our package as an administrator would (dpkg -i, dkms
# through its postinst; the modules were built by dkms on the host, in
# TARBALL), show that modprobe now takes our ib_core and ib_srpt and that
# Debian's RDMA modules load against them, an SRP login over RDMA/CM on
# rxe and one over IB CM on ibdevsim with fio verifying, then remove the
# package and show Debian's ib_core back and the RDMA/CM login working
# with Debian's ib_srpt.  TAP points are numbered from FIRST + 1; the host
# prints the plan.

. "$MS_HARNESS/guest/guest-lib.sh"

MS_TAP_N=$1
want=$2
deb=$3
tarball=$4
krel=$(uname -r)
pkg=ib-mad-srpt-dkms
name=ib-mad-srpt
ver=$(dpkg-deb -f "$deb" Version)
mods=/lib/modules/$krel

# The Debian modules whose load against our ib_core is checked.
debian_mods="ib_cm ib_umad rdma_cm rdma_ucm ib_uverbs ib_ipoib ib_srp rdma_rxe mlx5_ib mlx4_ib"

kernel_is_debian() {
	echo "$(uname -r): $(cat /proc/version)"
	[ "$krel" = "$want" ] && grep -q "Debian" /proc/version &&
	[ -f "$mods/kernel/drivers/infiniband/core/ib_core.ko.xz" ]
}
tap_check "booted Debian's kernel $want with its own modules" kernel_is_debian

modfile() {
	modinfo -k "$krel" -F filename "$1" 2>/dev/null
}
before() {
	modfile ib_core
	[ "$(modfile ib_core)" = "$mods/kernel/drivers/infiniband/core/ib_core.ko.xz" ] &&
	[ "$(modfile ib_srpt)" = "$mods/kernel/drivers/infiniband/ulp/srpt/ib_srpt.ko.xz" ]
}
tap_check "before the package, modinfo names Debian's ib_core and ib_srpt" before

install_pkg() {
	ms_distro_install "$deb" "$tarball" || return 1
	dkms status -m $name -v "$ver"
}
tap_here "dpkg -i $pkg $ver: dkms installs the modules for $krel" install_pkg

after() {
	local m f
	for m in ib_core ib_srpt ibdevsim; do
		f=$(modfile $m)
		echo "$m: $f"
		case "$f" in
		"$mods/updates/dkms/$m.ko"*) ;;
		*) return 1 ;;
		esac
	done
}
tap_here "modinfo ib_core, ib_srpt, ibdevsim: ours, in updates/dkms" after

# ib_srp keeps its defaults: fast registration (FRWR) on rxe and ibdevsim,
# as a user's login does.
dmesg -C
load_debian() {
	local m f bad=0
	modprobe ib_core || return 1
	# Our MAD layer's debugfs directory: only ours has it.
	[ -d /sys/kernel/debug/ib_mad ] || { echo "ib_core loaded is not ours"; return 1; }
	grep -q O /sys/module/ib_core/taint || { echo "ib_core has no O taint"; return 1; }
	for m in $debian_mods; do
		f=$(modfile $m)
		case "$f" in
		"$mods/kernel/"*) ;;
		*) echo "$m: not Debian's ($f)"; bad=1; continue ;;
		esac
		modprobe $m || { echo "$m: modprobe failed"; bad=1; }
	done
	lsmod | awk '$1 == "ib_core" { print "ib_core used by " $4 }'
	for m in ib_core ib_cm ib_srp mlx5_ib; do
		ms_module_origin $m
	done
	[ $bad = 0 ]
}
tap_here "Debian's $debian_mods load against our ib_core" load_debian

clean_dmesg() {
	local t
	if dmesg | grep -E "disagrees about version|Unknown symbol|Invalid module format"; then
		return 1
	fi
	# Allowed: O (out-of-tree, 4096) and E (unsigned, 8192).
	t=$(cat /proc/sys/kernel/tainted)
	echo "taint $t"
	[ $((t & ~(4096 | 8192))) -eq 0 ]
}
tap_check "no 'disagrees about version', no taint but out-of-tree/unsigned" clean_dmesg

# The RDMA/CM login over soft-RoCE, with fio verifying.
rxe_login() {
	local host
	ms_srpt_target $wwn /tmp/lun-rxe $((32 << 20)) 5555 \
		0x0000000000000000${gid:16} || return 1
	host=$(basename /sys/class/infiniband_srp/srp-rxe-*-1)
	ms_srp_add_target "$host" \
		"id_ext=$guid,ioc_guid=$guid,dest=10.12.0.1:5555,max_cmd_per_lun=32" &&
	ms_wait 60 ms_srp_disk
}
rxe_io() {
	local disk
	disk=$(ms_srp_disk | head -n 1)
	[ -n "$disk" ] && ms_fio_verify "$disk" --rw=randwrite --bs=64k \
		--size=16m --output=/tmp/fio.out && grep -q "err= 0" /tmp/fio.out
}
rxe_round() {
	local who=$1
	truncate -s 32M /tmp/lun-rxe
	tap_check "$who: ib_srp logs in to ib_srpt over RDMA/CM on rxe" rxe_login
	tap_check "$who: fio writes 16 MiB and verifies (crc32c)" rxe_io
	tap_check "$who: logout and target teardown" \
		bash -c ". $MS_HARNESS/guest/guest-lib.sh; ms_srp_logout && ms_srpt_teardown $wwn"
}

ms_srpt_loopback 10.12.0.1
modprobe ib_srp
rxe_round "ours"

# The InfiniBand path: ibdevsim's fabric, opensm, discovery, IB CM login.
tgid=fe800000000000000002c90300002001
tap_check "ibdevsim fabric: 2 HCAs, a switch, 4 cables" ms_ibsim_fabric
ms_ibsim_opensm
tap_check "opensm brings every port ACTIVE" ms_wait 180 ms_ibsim_all_active
discover() {
	ms_umad_of ibdevsim0 1 >/dev/null || return 1
	ibnetdiscover -C ibdevsim0 -P 1 >/tmp/ibnd.out || return 1
	grep -c '^Ca' /tmp/ibnd.out
	[ "$(grep -c '^Ca' /tmp/ibnd.out)" -eq 2 ] &&
	[ "$(grep -c '^Switch' /tmp/ibnd.out)" -eq 1 ]
}
tap_check "ibnetdiscover sees 2 HCAs and the switch" discover
ib_target() {
	modprobe target_core_file &&
	truncate -s 32M /tmp/lun-ib &&
	ms_srpt_target 0x$tgid /tmp/lun-ib $((32 << 20)) 0 \
		0x00000000000000000002c90300001001
}
tap_check "ib_srpt target on ibdevsim1 port 1" ib_target
srpdm() {
	ms_wait 60 sh -c "ibsrpdm -c -d /dev/infiniband/$(ms_umad_of ibdevsim0 1) | grep -q ioc_guid" &&
	ibsrpdm -c -d "/dev/infiniband/$(ms_umad_of ibdevsim0 1)" | tee /tmp/srpdm.out
}
tap_check "ibsrpdm finds ib_srpt (DM agent through our MAD layer)" srpdm
ib_login() {
	local line
	line=$(grep "dgid=$tgid" /tmp/srpdm.out | head -n 1)
	[ -n "$line" ] || return 1
	ms_srp_add_target srp-ibdevsim0-1 "$line" && ms_wait 60 ms_srp_disk
}
tap_check "Debian's ib_srp logs in over IB CM with ibsrpdm's line" ib_login
tap_check "fio over IB writes 16 MiB and verifies (crc32c)" rxe_io
ipoib() {
	ms_wait 30 ms_ibsim_ipoib_dev 0002c90300001001 &&
	ms_wait 30 ms_ibsim_ipoib_dev 0002c90300002001
}
tap_check "Debian's ib_ipoib has IPoIB interfaces on both HCAs" ipoib
tap_check "IB logout and teardown" \
	bash -c ". $MS_HARNESS/guest/guest-lib.sh; ms_srp_logout && ms_srpt_teardown 0x$tgid"
kill "$ms_sm_pid" 2>/dev/null
wait "$ms_sm_pid" 2>/dev/null

# Removal: the distribution's modules come back.
unload_all() {
	rdma link delete rxe-veth0 2>/dev/null
	ip link del veth0 2>/dev/null
	modprobe -r ib_srp ib_srpt ib_ipoib rdma_ucm rdma_rxe mlx5_ib mlx4_ib \
		ibdevsim ib_umad rdma_cm iw_cm ib_cm ib_uverbs ib_core
	if grep -q '^ib_core ' /proc/modules; then
		lsmod | grep -E '^(ib_|rdma|iw_|mlx)'
		return 1
	fi
}
tap_check "every RDMA module unloads" unload_all
remove_pkg() {
	dpkg -r $pkg &&
	[ "$(modfile ib_core)" = "$mods/kernel/drivers/infiniband/core/ib_core.ko.xz" ] &&
	[ "$(modfile ib_srpt)" = "$mods/kernel/drivers/infiniband/ulp/srpt/ib_srpt.ko.xz" ] &&
	! ls $mods/updates/dkms/*.ko* 2>/dev/null
}
tap_check "dpkg -r $pkg: modinfo names Debian's ib_core and ib_srpt again" remove_pkg
debian_core() {
	# Ours has a debugfs directory and the out-of-tree taint; Debian's,
	# signed and in-tree, neither.
	modprobe ib_core && [ ! -d /sys/kernel/debug/ib_mad ] &&
	[ -z "$(cat /sys/module/ib_core/taint)" ] &&
	ms_module_origin ib_core
}
tap_check "Debian's ib_core loads again" debian_core
dmesg -C
ms_srpt_loopback 10.12.0.1
modprobe ib_srp
rxe_round "Debian's"
tap_check "no 'disagrees about version' with Debian's modules either" clean_dmesg
tap_done
