#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deb.sh [stage DIR | build | version] - the DKMS package (make deb).
#
#   build      (default) build/deb/ib-mad-srpt-dkms_VERSION_all.deb
#   version    print VERSION (commits on main and the commit)
#   stage DIR  only lay out the package's dkms source tree in DIR (what
#              the package installs as /usr/src/ib-mad-srpt-VERSION)
#
# The source tree holds our MAD layer, <rdma/ib_mad.h>, the trace header,
# ib_srpt and ibdevsim, with dkms/'s build and kABI scripts; the rest of
# ib_core comes, on the machine that installs the package, from the kernel
# source of the running kernel's version (dkms/ib-mad-srpt-build).

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

# The package version: commits on main and the commit itself.
ms_deb_version() {
	echo "0.$(git -C "$MS_TOP" rev-list --count HEAD)+g$(git -C "$MS_TOP" rev-parse --short=7 HEAD)"
}

# stage DIR VERSION
stage() {
	local dir=$1 ver=$2 f
	rm -rf "$dir"
	mkdir -p "$dir"/src/{core,srpt,ibdevsim,include/rdma,include/trace/events}
	while read -r f; do
		case "$f" in
		drivers/infiniband/core/tests/*) ;;
		drivers/infiniband/core/*) cp "$MS_TOP/$f" "$dir/src/core/" ;;
		*_kunit.c) ;;
		drivers/infiniband/ulp/srpt/*) cp "$MS_TOP/$f" "$dir/src/srpt/" ;;
		drivers/infiniband/sw/ibdevsim/*) cp "$MS_TOP/$f" "$dir/src/ibdevsim/" ;;
		drivers/infiniband/compat/*)
			mkdir -p "$(dirname "$dir/src/compat/${f#drivers/infiniband/compat/}")"
			cp -p "$MS_TOP/$f" "$dir/src/compat/${f#drivers/infiniband/compat/}"
			;;
		include/*) cp "$MS_TOP/$f" "$dir/src/$f" ;;
		esac
	done < <(git -C "$MS_TOP" ls-files drivers include)
	cp "$MS_TOP/dkms/ib-mad-srpt-build" "$MS_TOP/dkms/ib-mad-srpt-kabi" "$dir/"
	sed "s/@VERSION@/$ver/" "$MS_TOP/dkms/dkms.conf.in" >"$dir/dkms.conf"
}

case "${1:-build}" in
stage)
	[ $# -eq 2 ] || ms_die "usage: deb.sh stage DIR"
	stage "$2" "$(ms_deb_version)"
	exit 0
	;;
version)
	ms_deb_version
	exit 0
	;;
build) ;;
*) ms_die "usage: deb.sh [stage DIR | build | version]" ;;
esac

command -v dpkg-deb >/dev/null || ms_die "dpkg-deb is needed (Debian's dpkg)"
ver=$(ms_deb_version)
name=ib-mad-srpt
pkg=$name-dkms
root=$MS_BUILD/deb/root
rm -rf "$root"
stage "$root/usr/src/$name-$ver" "$ver"
mkdir -p "$root/DEBIAN" "$root/usr/share/doc/$pkg" "$root/usr/sbin"
# The kABI check, for administrators: ib-mad-srpt-kabi INSTALLED-ib_core.ko
# /lib/modules/$(uname -r)/build/Module.symvers
cp "$MS_TOP/dkms/ib-mad-srpt-kabi" "$root/usr/sbin/"
# dkms may replace the kernel's ib_core and ib_srpt although neither
# module has a version: Debian 12's dkms (3.0.10) otherwise finds the two
# versions equal (both empty) and keeps the kernel's ("exactly matches
# what is already found in kernel ... DKMS will not replace this
# module"), installing only ibdevsim.  This is its per-module switch for
# that comparison alone (Debian 13's dkms 3.2 compares the files instead,
# and honours the same switch).
mkdir -p "$root/usr/share/dkms/modules_to_force_install"
echo "${name}_version-override" >"$root/usr/share/dkms/modules_to_force_install/$name"
for f in postinst prerm; do
	sed -e "s/@NAME@/$name/g" -e "s/@VERSION@/$ver/g" -e "s/@PACKAGE@/$pkg/g" \
		"$MS_TOP/dkms/debian/$f" >"$root/DEBIAN/$f"
	chmod 755 "$root/DEBIAN/$f"
done
sed -e "s/@VERSION@/$ver/" -e "s/@PACKAGE@/$pkg/" \
	-e "s/@SIZE@/$(du -sk "$root/usr" | cut -f1)/" \
	"$MS_TOP/dkms/debian/control" >"$root/DEBIAN/control"
cp "$MS_TOP/dkms/README.Debian" "$root/usr/share/doc/$pkg/"
{
	echo "$pkg ($ver) unstable; urgency=medium"
	echo
	echo "  * Built from commit $(git -C "$MS_TOP" rev-parse HEAD)."
	echo
	echo " -- ib-mad-srpt developers <linux-rdma@vger.kernel.org>  $(date -R -d @"$(git -C "$MS_TOP" log -1 --format=%ct)")"
} | gzip -9n >"$root/usr/share/doc/$pkg/changelog.Debian.gz"
printf 'ib-mad-srpt: our files are GPL-2.0 (SPDX headers in each).\n' \
	>"$root/usr/share/doc/$pkg/copyright"
mkdir -p "$MS_BUILD/deb"
out=$MS_BUILD/deb/${pkg}_${ver}_all.deb
rm -f "$MS_BUILD"/deb/"${pkg}"_*_all.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$out" >/dev/null
echo "deb: $out"
