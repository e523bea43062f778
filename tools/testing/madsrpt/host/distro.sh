#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# distro.sh prepare|package - the distribution's own kernel for the tests,
# in build/distro, laid out as vm.sh expects a build (-k distro).
#
#   prepare  Debian's kernel image of the release that matches the
#            linux-source-6.12 the build uses (ms_distro_krel), taken from
#            Debian's archive and unpacked as it is, its headers package
#            installed, and an initramfs that loads the modules the VM
#            needs to reach its root (9p over virtio, overlayfs) from that
#            kernel's own modules; the VM's modules directory holds the
#            part of Debian's modules a VM without sound, video, USB or
#            sensors can use (vm_modules)
#   package  make deb (unless that version is built), then dkms (Debian's, with a private dkms tree)
#            adds and builds the package's source for that kernel here on
#            the host, as a dkms tarball with the built modules: inside a
#            TCG guest the build would take far longer.  The guest's
#            dpkg -i loads that tarball (dkms ldtarball, through the
#            postinst) and installs the modules.
#
# Both are incremental: the image is unpacked once per version, the dkms
# build is redone when the package version (the commit) changes.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

dir=$MS_BUILD/distro
mkdir -p "$dir"

# vm_modules KREL: the modules directory the VM sees, in $dir/vmmods:
# Debian's own module files (hard links into the unpacked image) under
# kernel/drivers/{infiniband,net,scsi,target,md,block,virtio,char},
# kernel/{fs,net,crypto,lib,arch,block,kernel,mm,security,virt}, less the
# wireless, Bluetooth, CAN, 802.15.4, WWAN and USB network ones, plus
# every module those depend on (modules.dep, softdeps too), with its
# indexes made by depmod.  About 1,240 of Debian's 4,230: the VM has no
# sound, video, USB or sensor hardware, and inside a TCG guest depmod
# reads and decompresses every module (67 s for all of them, twice per
# test: dkms runs it on install and removal).  Redone when the image or
# this script changes.
vm_modules() {
	local krel=$1 src=$dir/image/lib/modules/$1 dst=$dir/vmmods/lib/modules/$1

	if [ -f "$dst/modules.dep" ] && [ "$dst/modules.dep" -nt "$dir/image/.version" ] &&
	   [ "$dst/modules.dep" -nt "$here/distro.sh" ]; then
		return 0
	fi
	ms_stage_start "distro: the VM's modules"
	rm -rf "$dir/vmmods"
	mkdir -p "$dst"
	python3 - "$src" "$dst" <<'PY'
import os, sys

src, dst = sys.argv[1:]
keep_dirs = ["drivers/infiniband", "drivers/net", "drivers/scsi",
             "drivers/target", "drivers/md", "drivers/block",
             "drivers/virtio", "drivers/char", "fs", "net", "crypto", "lib",
             "arch", "block", "kernel", "mm", "security", "virt"]
drop_dirs = ["drivers/net/wireless", "drivers/net/usb", "drivers/net/can",
             "drivers/net/ieee802154", "drivers/net/wwan", "net/wireless",
             "net/mac80211", "net/bluetooth", "net/ieee802154"]
dep = {}
for line in open(os.path.join(src, "modules.dep")):
    mod, deps = line.split(":", 1)
    dep[mod] = deps.split()
by_name = {os.path.basename(m).split(".")[0].replace("-", "_"): m for m in dep}
soft = {}
for line in open(os.path.join(src, "modules.softdep")):
    words = line.split()
    if len(words) > 2 and words[0] == "softdep":
        soft[words[1].replace("-", "_")] = [w for w in words[2:] if not w.endswith(":")]


def under(m, dirs):
    return any(m.startswith("kernel/" + d + "/") for d in dirs)


keep = {m for m in dep if under(m, keep_dirs) and not under(m, drop_dirs)}
todo = list(keep)
while todo:
    m = todo.pop()
    name = os.path.basename(m).split(".")[0].replace("-", "_")
    more = dep[m] + [by_name[s.replace("-", "_")] for s in soft.get(name, [])
                     if s.replace("-", "_") in by_name]
    for d in more:
        if d not in keep:
            keep.add(d)
            todo.append(d)
for m in sorted(keep):
    os.makedirs(os.path.dirname(os.path.join(dst, m)), exist_ok=True)
    os.link(os.path.join(src, m), os.path.join(dst, m))
for f in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
    with open(os.path.join(src, f), "rb") as i, open(os.path.join(dst, f), "wb") as o:
        o.write(i.read())
print("distro: the VM sees %d of the kernel's %d modules" % (len(keep), len(dep)))
PY
	depmod -b "$dir/vmmods" -F "$dir/image/boot/System.map-$krel" "$krel"
	ms_stage_end
}

prepare() {
	local krel pkg ver deb mods m
	krel=$(ms_distro_krel) || ms_die "no Debian kernel matches linux-source-6.12"
	ms_distro_headers >/dev/null
	pkg=linux-image-$krel-unsigned
	ver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
	if [ "$(cat "$dir/image/.version" 2>/dev/null)" != "$pkg $ver" ] ||
	   [ ! -f "$dir/image/lib/modules/$krel/modules.dep" ]; then
		ms_stage_start "distro: $pkg $ver from Debian's archive"
		rm -rf "$dir/image" "$dir"/*.deb.part
		(cd "$dir" && apt-get download "$pkg=$ver" >/dev/null 2>&1) ||
			ms_die "apt-get download $pkg=$ver failed"
		deb=$(ls "$dir/${pkg}_"*.deb | head -n 1)
		dpkg-deb -x "$deb" "$dir/image"
		rm -f "$deb"
		# What the package's postinst would do: modules.dep and friends.
		depmod -b "$dir/image" -F "$dir/image/boot/System.map-$krel" "$krel"
		echo "$pkg $ver" >"$dir/image/.version"
		ms_stage_end
	fi
	echo "$krel" >"$dir/kernelrelease"
	mkdir -p "$dir/arch/x86/boot"
	ln -sfn "$dir/image/boot/vmlinuz-$krel" "$dir/arch/x86/boot/bzImage"
	vm_modules "$krel"
	ln -sfn vmmods "$dir/mods"

	# The initramfs: busybox, and the kernel's own modules for a 9p root
	# (virtio-pci is built in) and the overlay the harness puts on it,
	# in the order modprobe gives, decompressed for busybox's insmod.
	if [ ! -f "$dir/initrd.img" ] || [ "$dir/image/.version" -nt "$dir/initrd.img" ] ||
	   [ "$MS_HARNESS/guest/distro-initrd.sh" -nt "$dir/initrd.img" ] ||
	   [ "$here/distro.sh" -nt "$dir/initrd.img" ]; then
		ms_stage_start "distro: initramfs"
		local ird=$dir/initrd.d
		rm -rf "$ird"
		mkdir -p "$ird/bin" "$ird/mods"
		cp /bin/busybox "$ird/bin/busybox"
		cp "$MS_HARNESS/guest/distro-initrd.sh" "$ird/init"
		mods=$(modprobe -d "$dir/image" -S "$krel" --show-depends -a \
			9pnet_virtio 9p overlay | awk '$1 == "insmod" && !seen[$2]++ { print $2 }')
		: >"$ird/mods/order"
		for m in $mods; do
			m=${m#"$dir/image"}
			case "$m" in
			*.xz) xz -dc "$dir/image$m" >"$ird/mods/$(basename "$m" .xz)" ;;
			*) cp "$dir/image$m" "$ird/mods/" ;;
			esac
			basename "${m%.xz}" >>"$ird/mods/order"
		done
		(cd "$ird" && find . | cpio -o -H newc --quiet | gzip -1) >"$dir/initrd.img"
		rm -rf "$ird"
		ms_stage_end
	fi
	echo "distro: $krel from $(cat "$dir/image/.version"), initramfs $(du -k "$dir/initrd.img" | cut -f1) KiB"
}

package() {
	local krel ver src tree
	krel=$(cat "$dir/kernelrelease")
	# make deb once per version (the test has just run it).
	ver=$("$here/deb.sh" version)
	deb=$MS_BUILD/deb/ib-mad-srpt-dkms_${ver}_all.deb
	[ -f "$deb" ] || "$here/deb.sh" build >/dev/null
	if [ -f "$dir/ib-mad-srpt-$ver.dkms.tar.gz" ]; then
		echo "distro: ib-mad-srpt $ver already built for $krel"
		return 0
	fi
	ms_stage_start "distro: dkms build of ib-mad-srpt $ver for $krel"
	rm -rf "$dir/pkgroot" "$dir/dkms" "$dir"/ib-mad-srpt-*.dkms.tar.gz
	mkdir -p "$dir/pkgroot" "$dir/dkms"
	dpkg-deb -x "$deb" "$dir/pkgroot"
	src=$dir/pkgroot/usr/src
	tree=(--sourcetree "$src" --dkmstree "$dir/dkms")
	dkms add -m ib-mad-srpt -v "$ver" "${tree[@]}" >/dev/null
	if ! dkms build -m ib-mad-srpt -v "$ver" -k "$krel" "${tree[@]}"; then
		cat "$dir/dkms/ib-mad-srpt/$ver/build/make.log" 2>/dev/null | tail -n 40
		ms_die "dkms build failed"
	fi
	grep '^kABI:' "$dir/dkms/ib-mad-srpt/$ver/$krel/x86_64/log/make.log"
	dkms mktarball -m ib-mad-srpt -v "$ver" -k "$krel" "${tree[@]}" \
		--archive "$dir/ib-mad-srpt-$ver.dkms.tar.gz" >/dev/null
	ms_stage_end
}

case "${1:-}" in
prepare) prepare ;;
package) package ;;
*) ms_die "usage: distro.sh prepare|package" ;;
esac
