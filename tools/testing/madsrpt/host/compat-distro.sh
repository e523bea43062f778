#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# compat-distro.sh - build our modules (ib_core with our MAD layer,
# ib_srpt, ibdevsim) the way the distribution's kernel is built: with its
# complete config (CONFIG_KUNIT off, CONFIG_MODVERSIONS on), in-tree and as
# external modules against its linux-headers package, and fail on any
# error or warning.  Every other kernel we build has KUnit on, so without
# this a KUnit-only declaration broke the real build unseen.
#
#   1. in-tree: build/compat-distro (build/linux/_compat-distro) configured
#      from the headers' .config plus ibdevsim; modules_prepare, then
#      drivers/infiniband/core/, ulp/srpt/ and sw/ibdevsim/ from clean
#      objects, then modpost over their modules against the headers'
#      Module.symvers (a modules-only build has no vmlinux.o to resolve
#      them against) and the kABI check of the ib_core built;
#   2. external: the dkms source tree (deb.sh stage) built by
#      dkms/ib-mad-srpt-build against the headers into
#      build/compat-distro-ext, its kABI check included.
#
# A warning counts as ours when it is in a file of ours or the compiler
# places it in one (the function it is in, "inlined from", the notes of a
# macro expansion): a kernel header's macro misused by our code is ours.
# Any error, and any warning of ours, fails.  Any other warning fails
# unless the same in-tree build of pristine 6.12 gives it too (built only
# then, into build/linux-upstream/_compat-distro).  Logs:
# build/compat-distro/compat-distro.log, build/compat-distro-ext/build.log.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

krel=$(ms_distro_krel)
headers=$(ms_distro_headers)
[ -f "$headers/.config" ] && [ -f "$headers/Module.symvers" ] ||
	ms_die "$headers has no .config or Module.symvers"

ms_lock

# Our directories and modules, and what in a path makes a file ours.
dirs=(drivers/infiniband/core drivers/infiniband/ulp/srpt
      drivers/infiniband/sw/ibdevsim)
mods=(drivers/infiniband/core/ib_core drivers/infiniband/ulp/srpt/ib_srpt
      drivers/infiniband/sw/ibdevsim/ibdevsim)
ours_re='(^|[ /])(drivers/infiniband/)?core/mad_|srpt|ibdevsim|'
ours_re+='include/rdma/ib_mad\.h|include/trace/events/ib_mad\.h'
diag_re='(warning|error):|WARNING:|ERROR:'

# Our options over Debian's config.  Debian signs its modules with a key
# that is not shipped (CONFIG_MODULE_SIG_KEY="output/signing_key.pem"):
# point it at the default, which Kbuild generates if it is ever needed, and
# do not sign at modules_install; module signature support itself stays.
# CONFIG_SYSTEM_TRUSTED_KEYS is emptied for the same reason (extra trusted
# certificates a distribution lists are not in its headers package).
# Pristine 6.12 (PRISTINE=1) has no ibdevsim.
distro_fragment() {
	[ -n "${PRISTINE:-}" ] || echo CONFIG_INFINIBAND_IBDEVSIM=m
	cat <<-'EOF'
	CONFIG_KUNIT=n
	CONFIG_MODULE_SIG_ALL=n
	CONFIG_MODULE_SIG_KEY="certs/signing_key.pem"
	CONFIG_SYSTEM_TRUSTED_KEYS=""
	EOF
}

# distro_config SRC OBJ: Debian's complete .config plus our fragment, redone
# when the headers or the fragment change.  Fails unless KUnit is off,
# MODVERSIONS on and every option of the fragment made it.
distro_config() {
	local src=$1 obj=$2 frag=$2/compat-distro.config stamp opt

	mkdir -p "$obj"
	stamp="$headers $(md5sum <"$headers/.config") $(distro_fragment | md5sum)"
	if [ -f "$obj/.config" ] &&
	   [ "$(cat "$obj/.compat-distro.stamp" 2>/dev/null)" = "$stamp" ]; then
		return 0
	fi
	distro_fragment >"$frag"
	cp "$headers/.config" "$obj/.config"
	(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" \
		.config "$frag" >/dev/null)
	make -s -C "$src" O="$obj" olddefconfig >/dev/null
	ms_verify_config "$obj/.config" "$frag"
	for opt in '# CONFIG_KUNIT is not set' CONFIG_MODVERSIONS=y \
		   CONFIG_INFINIBAND=m CONFIG_INFINIBAND_SRPT=m; do
		grep -qx "$opt" "$obj/.config" ||
			ms_die "config: no '$opt' in ${obj#"$MS_TOP"/}/.config"
	done
	echo "$stamp" >"$obj/.compat-distro.stamp"
}

# intree_build SRC OBJ: the in-tree build of our directories in OBJ, its
# output in OBJ/compat-distro.log.  PRISTINE=1: a pristine tree, without
# ibdevsim.
intree_build() {
	local src=$1 obj=$2 log=$2/compat-distro.log d m
	local -a dirs=("${dirs[@]}") mods=("${mods[@]}") sm=()

	[ -z "${PRISTINE:-}" ] || unset 'dirs[2]' 'mods[2]'
	distro_config "$src" "$obj"
	make -s -C "$src" O="$obj" -j"$MS_JOBS" modules_prepare \
		>"$obj/prepare.log" 2>&1 || {
		cat "$obj/prepare.log" >&2
		ms_die "modules_prepare failed in ${obj#"$MS_TOP"/}"
	}
	# Clean objects, so that every warning shows on every run.
	for d in "${dirs[@]}"; do
		[ -d "$obj/$d" ] || continue
		find "$obj/$d" \( -name '*.o' -o -name '*.mod' -o -name '*.mod.c' \
			-o -name modules.order \) -delete
	done
	rm -f "$obj/compat-distro.symvers"
	# -O: each compiler's messages in one piece, for diag_records.
	make -C "$src" O="$obj" -j"$MS_JOBS" -O -k "${dirs[@]/%//}" >"$log" 2>&1 ||
		echo "error: the in-tree build failed" >>"$log"
	# modpost as a modules build runs it (-E: section mismatches are
	# errors unless the config says otherwise), in external mode against
	# the kernel's own symbols, over every module of our directories.
	for d in "${dirs[@]}"; do
		cat "$obj/$d/modules.order" 2>/dev/null || true
	done >"$obj/compat-distro.order"
	for m in "${mods[@]}"; do
		grep -qx "$m.o" "$obj/compat-distro.order" ||
			echo "error: $m.o was not built" >>"$log"
	done
	grep -qx CONFIG_SECTION_MISMATCH_WARN_ONLY=y "$obj/.config" || sm=(-E)
	[ -s "$obj/compat-distro.order" ] || return 0
	(cd "$obj" && scripts/mod/modpost -M -m -e "${sm[@]}" \
		-i "$headers/Module.symvers" -T compat-distro.order \
		-o compat-distro.symvers) >>"$log" 2>&1 ||
		echo "error: modpost failed" >>"$log"
}

# norm FROM[|TO]...: a build log on stdin with every path relative to the
# source tree: each FROM (a sed regex) becomes TO (or nothing), then
# Kbuild's "../" and "./" prefixes go.
norm() {
	local -a args=() r
	for r in "$@"; do
		case "$r" in
		*"|"*) args+=(-e "s|$r|g") ;;
		*) args+=(-e "s|$r||g") ;;
		esac
	done
	sed -E "${args[@]}" -e 's#(^|[ (])(\./)?(\.\./)?#\1#g'
}

# diag_records: one line per diagnostic of a build log (paths already
# relative to the source tree) on stdin, "DIAG<TAB>FILES": the other
# files the compiler names for it (the function it is in, the "inlined
# from" sites before it, the notes after it).
diag_records() {
	awk -v re="$diag_re" '
	function file(s) {
		sub(/^[ \t]+/, "", s)
		if (s !~ /^[^ :]+:[0-9]/) return ""
		sub(/:[0-9].*$/, "", s)
		return s
	}
	function add(f) { if (f != "" && index(" " ctx " ", " " f " ") == 0) ctx = ctx (ctx == "" ? "" : " ") f }
	function flush() { if (d != "") print d "\t" ctx; d = ""; ctx = "" }
	/^  [A-Z0-9_]+ (\[M\] )? +[^ ]+$/ { flush(); fn = ""; pre = ""; next }
	/: (In|At) [a-z ]*(function|top level)/ { flush(); fn = $0; sub(/: (In|At) .*$/, "", fn); pre = ""; next }
	/^[ \t]+inlined from .* at / { flush(); f = $0; sub(/.* at /, "", f); pre = pre " " file(f); next }
	/: note: / { if (d != "") add(file($0)); next }
	$0 ~ re {
		flush(); d = $0; add(fn)
		n = split(pre, p, " "); for (i = 1; i <= n; i++) add(p[i])
		pre = ""; next
	}
	END { flush() }'
}

# intree_count OBJ: our modules that modpost wrote a .mod.c for (they
# compiled, linked and passed modpost).
intree_count() {
	local m n=0
	for m in "${mods[@]}"; do
		[ -f "$1/$m.mod.c" ] && n=$((n + 1))
	done
	echo "$n"
}

# show TITLE RECORDS: the records, each diagnostic with the files it
# names.
show() {
	[ -n "$2" ] || return 0
	echo "compat-distro: $1:"
	awk -F'\t' '{ print "  " $1; if ($2 != "") print "      (at " $2 ")" }' <<<"$2"
}

# --- 1. in-tree ---------------------------------------------------------
src=$MS_BUILD/linux
[ -f "$src/.extracted" ] || "$here/build.sh" ours >/dev/null
ms_overlay "$src"
ms_glue "$src"
obj=$src/_compat-distro
link=$MS_BUILD/compat-distro
[ -L "$link" ] || rm -rf "$link"
ln -sfn "${obj#"$MS_BUILD"/}" "$link"

ms_stage_start "compat-distro: in-tree, $krel's config"
intree_build "$src" "$obj"
ms_stage_end
intree=$(norm "$src/" <"$obj/compat-distro.log" | diag_records)
intree_mods=$(intree_count "$obj")
intree_kabi=$("$MS_TOP/dkms/ib-mad-srpt-kabi" "$obj/compat-distro.symvers" \
	"$headers/Module.symvers" 2>&1 | grep -oE '^kABI: [0-9]+/[0-9]+' || true)
intree_kabi=${intree_kabi#kABI: }

# --- 2. external --------------------------------------------------------
ext=$MS_BUILD/compat-distro-ext
ms_stage_start "compat-distro: external modules against $headers"
"$here/deb.sh" stage "$ext/stage"
rm -rf "$ext/build"
mkdir -p "$ext/build"
ext_rc=0
MAKEFLAGS=--output-sync=target \
	"$ext/stage/ib-mad-srpt-build" -k "$krel" -H "$headers" -o "$ext/build" \
	>"$ext/build.log" 2>&1 || ext_rc=$?
ms_stage_end
# Paths as in-tree: the headers' trees, our stage and build copies.
external=$(norm "$(dirname "$headers")/linux-headers-[^/]*/" \
		"$ext/stage/src/include/|include/" \
		"$ext/build/core/|drivers/infiniband/core/" \
		"$ext/build/srpt/|drivers/infiniband/ulp/srpt/" \
		"$ext/build/ibdevsim/|drivers/infiniband/sw/ibdevsim/" \
		"$ext/build/|drivers/infiniband/" <"$ext/build.log" | diag_records)
[ "$ext_rc" -eq 0 ] ||
	external+=$'\n'"error: the external build failed (exit $ext_rc)"$'\t'
ext_mods=0
for m in core/ib_core srpt/ib_srpt ibdevsim/ibdevsim; do
	[ -f "$ext/build/$m.ko" ] && ext_mods=$((ext_mods + 1))
done
ext_kabi=$(grep -oE '^kABI: [0-9]+/[0-9]+' "$ext/build.log" | tail -n 1 || true)
ext_kabi=${ext_kabi#kABI: }

# --- 3. verdict ---------------------------------------------------------
all=$(printf '%s\n%s\n' "$intree" "$external" | grep -v '^$' | sort -u || true)
ours=$(grep -E "$ours_re" <<<"$all" || true)
others=$(grep -vE "$ours_re" <<<"$all" || true)
upstream_too=
if grep -q 'warning:' <<<"$others"; then
	# Warnings of upstream's files: only those pristine 6.12 lacks count.
	# The pristine tree as build.sh extracts it (its kernel is not needed).
	up_src=$MS_BUILD/linux-upstream
	if [ ! -f "$up_src/.extracted" ]; then
		rm -rf "$up_src" "$up_src.tmp"
		mkdir -p "$up_src.tmp"
		tar -xJf "$MS_TARBALL" -C "$up_src.tmp"
		mv "$up_src.tmp/linux-source-6.12" "$up_src"
		rmdir "$up_src.tmp"
		touch "$up_src/.extracted"
	fi
	ms_stage_start "compat-distro: the same in-tree build of pristine 6.12"
	PRISTINE=1 intree_build "$up_src" "$up_src/_compat-distro"
	ms_stage_end
	up=$(norm "$up_src/" <"$up_src/_compat-distro/compat-distro.log" |
		diag_records | sort -u)
	upstream_too=$(comm -12 <(grep 'warning:' <<<"$others" | sort -u) \
				<(grep 'warning:' <<<"$up" || true))
	others=$(comm -23 <(sort -u <<<"$others") <(sort -u <<<"$upstream_too") |
		grep -v '^$' || true)
fi
counted=$(printf '%s\n%s\n' "$ours" "$others" | cut -f1)
nwarn=$(grep -cE 'warning:|WARNING:' <<<"$counted" || true)
nerr=$(grep -cE 'error:|ERROR:' <<<"$counted" || true)

show "from our files" "$ours"
show "from upstream's files" "$others"
show "upstream's files, pristine 6.12 gives the same (not counted)" "$upstream_too"
echo "compat-distro: logs in build/compat-distro/compat-distro.log and" \
	"build/compat-distro-ext/build.log; in-tree kABI ${intree_kabi:-none}"
echo "compat-distro: in-tree $intree_mods modules, external $ext_mods modules," \
	"$nwarn warnings, kABI ${ext_kabi:-none}"
ok=1
[ "$intree_mods" -eq ${#mods[@]} ] && [ "$ext_mods" -eq ${#mods[@]} ] || ok=
[ "$nwarn" -eq 0 ] && [ "$nerr" -eq 0 ] && [ "$ext_rc" -eq 0 ] || ok=
# Both ib_cores must carry the distribution's CRCs, every one of them.
[[ $intree_kabi =~ ^([0-9]+)/([0-9]+)$ ]] &&
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] || ok=
[[ $ext_kabi =~ ^([0-9]+)/([0-9]+)$ ]] &&
	[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] || ok=
[ -n "$ok" ] || ms_die "compat-distro: failed ($nerr errors)"
echo "compat-distro: clean"
