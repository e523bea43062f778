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
#            kernel's own modules
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
	ln -sfn image "$dir/mods"

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
