#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh [ours|upstream|debug|bench-ours|bench-upstream] - build the
# test kernel and its modules.
#
#   ours      extract linux-source-6.12 into build/linux, lay every tracked
#             file of ours over it as a symlink, apply the glue lines, build
#             into build/ours
#   upstream  the same kernel from a pristine tree (build/linux-upstream)
#             into build/upstream, for side-by-side comparisons
#   debug     our tree (build/linux) with the detectors of config/debug
#             (KASAN, UBSAN, kmemleak, debug objects...) into build/debug
#   bench-ours, bench-upstream
#             ours and upstream without the test kernel's debugging aids
#             (config/bench: no lockdep, the full SLUB, -O2), for make
#             bench, into build/bench-ours and build/bench-upstream
#
# All are incremental: the tree is extracted once, symlinks make our edits
# live, and make only rebuilds what changed.  Prints one line per stage
# with the time it took.
#
# Each object tree lives in a direct subdirectory of its source tree
# (build/linux/_ours, build/linux-upstream/_upstream...), reached through
# the symlink build/<variant>.  Kbuild then names every source "../path",
# so the command lines of the two trees are the same, and the first
# upstream build starts from a copy of ours: after the files we lay over
# (and the ones the glue touches) are marked newer in the pristine tree,
# make rebuilds only what depends on them, a minute or two instead of a
# whole kernel.  ms_verify_pristine then proves ib_core and ib_srpt were
# built from upstream's objects.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

variant=${1:-ours}
case "$variant" in
ours | debug | bench-ours)
	src=$MS_BUILD/linux$MS_SUFFIX
	pristine=
	;;
upstream | bench-upstream)
	src=$MS_BUILD/linux$MS_SUFFIX-upstream
	pristine=1
	;;
*)
	echo "usage: $0 [ours|upstream|debug|bench-ours|bench-upstream]" >&2
	exit 2
	;;
esac

ms_lock

stage() {
	ms_stage_end
	ms_stage_start "$1"
}

stage "deps"
"$here/deps.sh"

if [ ! -f "$src/.extracted" ]; then
	stage "extract linux-source-$MS_KSERIES into ${src#"$MS_TOP"/}"
	ms_fetch_source
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	tar -xJf "$MS_TARBALL" -C "$src.tmp"
	mv "$src.tmp/linux-source-$MS_KSERIES" "$src"
	rmdir "$src.tmp"
	touch "$src/.extracted"
fi

if [ -z "$pristine" ]; then
	stage "overlay our files and glue"
	ms_overlay "$src"
	ms_glue "$src"
fi
ms_stage_end

obj=$src/_$variant
link=$MS_BUILD/$variant$MS_SUFFIX
# An object tree of the old layout (a plain directory) is rebuilt.
[ -L "$link" ] || rm -rf "$link"
ln -sfn "${obj#"$MS_BUILD"/}" "$link"

# The pristine build of a pair starts from ours of the same config.
seed=$MS_BUILD/linux$MS_SUFFIX/_${variant/upstream/ours}
if [ -n "$pristine" ] && [ ! -d "$obj" ] && [ -f "$seed/kernelrelease" ]; then
	stage "seed ${obj#"$MS_TOP"/} from our object tree"
	cp -a "$seed" "$obj.tmp"
	rm -rf "$obj.tmp/mods" "$obj.tmp/kernelrelease" "$obj.tmp/.config"
	# Every pristine file that ours replaces or the glue edits must look
	# newer than the objects built from ours.
	while read -r _ to; do
		[ ! -e "$src/$to" ] || touch "$src/$to"
	done < <(ms_overlay_list)
	touch "$src/drivers/infiniband/Kconfig" \
		"$src/drivers/infiniband/Makefile" \
		"$src/drivers/infiniband/core/Makefile"
	mv "$obj.tmp" "$obj"
	ms_stage_end
fi
mkdir -p "$obj"
frags=("$MS_HARNESS/config/base")
case "$variant" in
ours) frags+=("$MS_HARNESS/config/ours") ;;
upstream) frags+=("$MS_HARNESS/config/upstream") ;;
debug) frags+=("$MS_HARNESS/config/ours" "$MS_HARNESS/config/debug") ;;
bench-*)
	frags+=("$MS_HARNESS/config/${variant#bench-}" "$MS_HARNESS/config/bench")
	# Each bench kernel its own release (the guest finds kmod/ by it).
	# Not named localversion*: Kbuild appends such files to the release.
	echo "CONFIG_LOCALVERSION=\"-${variant#bench-}-bench\"" >"$obj/.rel.new"
	cmp -s "$obj/.rel.new" "$obj/bench-release.config" ||
		mv "$obj/.rel.new" "$obj/bench-release.config"
	rm -f "$obj/.rel.new"
	frags+=("$obj/bench-release.config")
	;;
esac
stale=
for f in "${frags[@]}"; do
	[ "$f" -nt "$obj/.config" ] && stale=1
done
if [ ! -f "$obj/.config" ] || [ -n "$stale" ]; then
	stage "configure (tinyconfig + ${frags[*]##*/})"
	make -s -C "$src" O="$obj" tinyconfig >/dev/null
	(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" \
		.config "${frags[@]}" >/dev/null)
	make -s -C "$src" O="$obj" olddefconfig >/dev/null
	ms_verify_config "$obj/.config" "${frags[@]}"
fi

# What the compat headers choose on: the probes, against this tree's
# own headers and flags (drivers/infiniband/compat/madsrpt-probe.sh).
stage "probe the kernel API (madsrpt_probes.h)"
make -s -C "$src" O="$obj" -j"$MS_JOBS" modules_prepare >/dev/null ||
	ms_die "kernel build failed (modules_prepare)"
"$MS_TOP/drivers/infiniband/compat/madsrpt-probe.sh" "$src" "$obj" \
	"$obj/include/generated/madsrpt_probes.h"
grep -h '^#define HAVE_' "$obj/include/generated/madsrpt_probes.h" |
	sed 's/^#define /    /; s/ 1$//' || true

stage "build bzImage and modules (-j$MS_JOBS)"
make -s -C "$src" O="$obj" -j"$MS_JOBS" bzImage modules ||
	ms_die "kernel build failed"

stage "install modules into ${obj#"$MS_TOP"/}/mods"
rm -rf "$obj/mods.new"
make -s -C "$src" O="$obj" INSTALL_MOD_PATH="$obj/mods.new" \
	INSTALL_MOD_STRIP=1 modules_install >/dev/null
if [ -n "$pristine" ]; then
	# The IB path of the tests needs the simulated fabric, which is ours
	# and uses only the verbs API: built out of tree against the
	# pristine kernel, so the same ibsim tests compare the two MAD
	# layers and ib_srpts.
	stage "ibdevsim (ours) as an external module of the pristine kernel"
	ext=$obj/ext-ibdevsim
	mkdir -p "$ext"
	for f in "$MS_TOP"/drivers/infiniband/sw/ibdevsim/*.[ch]; do
		[ "$(basename "$f")" != ibdevsim_kunit.c ] || continue
		cmp -s "$f" "$ext/${f##*/}" || cp "$f" "$ext/"
	done
	{
		echo "obj-m += ibdevsim.o"
		grep '^ibdevsim-y' "$MS_TOP/drivers/infiniband/sw/ibdevsim/Makefile"
	} >"$ext/Kbuild.new"
	cmp -s "$ext/Kbuild.new" "$ext/Kbuild" || mv "$ext/Kbuild.new" "$ext/Kbuild"
	rm -f "$ext/Kbuild.new"
	make -s -C "$src" O="$obj" M="$ext" modules ||
		ms_die "ibdevsim does not build against pristine $MS_KSERIES"
	make -s -C "$src" O="$obj" M="$ext" INSTALL_MOD_PATH="$obj/mods.new" \
		INSTALL_MOD_STRIP=1 modules_install >/dev/null
fi
rm -rf "$obj/mods"
mv "$obj/mods.new" "$obj/mods"
make -s -C "$src" O="$obj" kernelrelease >"$obj/kernelrelease"
ms_stage_end
[ -z "$pristine" ] || ms_verify_pristine "$obj"
echo "build: $variant kernel $(cat "$obj/kernelrelease") ready in ${obj#"$MS_TOP"/}"
