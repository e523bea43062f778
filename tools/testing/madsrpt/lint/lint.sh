#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# lint.sh - the style floor on our files, with zero findings allowed:
#   checkpatch.pl --strict, a sparse (C=2) and W=1 build of our objects and
#   of ib_core files that include our headers, kernel-doc -none -Wall.
# Diagnostics are kept when they point into one of our files.
# The test programs (progs/*.c, userspace C) get a userspace style:
# checkpatch --strict without its kernel-only notes (see below) and
# cc -Wall -Wextra -Werror.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/../host/common.sh"

ms_lock
"$MS_HARNESS/host/build.sh" ours >/dev/null
src=$MS_BUILD/linux
obj=$MS_BUILD/lint
cd "$MS_TOP"
mapfile -t files < <(git ls-files -- 'drivers/*.[ch]' 'include/*.h')
[ ${#files[@]} -gt 0 ] || { echo "lint: no C files yet"; exit 0; }
mapfile -t cfiles < <(printf '%s\n' "${files[@]}" | grep '\.c$' || true)
findings=0

report() {
	local what=$1 out=$2 n
	n=$(grep -c . <<<"$out" || true)
	if [ "$n" -gt 0 ]; then
		echo "lint: $what: $n finding(s)"
		echo "$out" | head -n 50 | sed 's/^/    /'
		findings=$((findings + n))
	else
		echo "lint: $what: clean"
	fi
}

out=$(cd "$src" && perl scripts/checkpatch.pl --strict --terse --no-summary \
	--show-types -f "${files[@]}" 2>&1 | grep -E ':[0-9]+: (ERROR|WARNING|CHECK):' || true)
report "checkpatch --strict (${#files[@]} files)" "$out"

out=$("$src/scripts/kernel-doc" -none -Wall "${files[@]/#/$src/}" 2>&1 || true)
report "kernel-doc -none -Wall" "$out"

# The man pages the seeds name must all come out of kernel-doc -man.
kdoc_seed() {
	local seed=$1 out
	shift
	[ -e "$1" ] || return 0
	out=$("$here/kdoc-pages.sh" -k "$src" "$MS_HARNESS/seeds/$seed" "$@" 2>&1 |
	      grep '^not ok' || true)
	report "kernel-doc -man pages named by $seed" "$out"
}
kdoc_seed ib_post_send_mad.9.txt include/rdma/ib_mad.h
mapfile -t srpt < <(git ls-files -- 'drivers/infiniband/ulp/srpt/*.c')
[ ${#srpt[@]} -eq 0 ] || kdoc_seed srpt_mad_send_handler.9.txt "${srpt[@]}"

mapfile -t rst < <(git ls-files -- 'Documentation/*.rst')
if [ ${#rst[@]} -gt 0 ]; then
	out=$("$here/rst-check.py" "$src" "${rst[@]}" 2>&1 || true)
	report "docutils + kernel-doc directives (${#rst[@]} documents)" "$out"
fi

# Userspace C: checkpatch's notes that only make sense in the kernel are
# left out: kernel macros (__packed, __printf, BIT()), kernel types and
# printk levels, volatile (a signal flag must be volatile sig_atomic_t),
# CamelCase (it flags C11's _Static_assert) and the function name in a
# string (a "usage:" line names the program's usage() naturally).
mapfile -t progs < <(git ls-files -- 'tools/testing/madsrpt/progs/*.[ch]')
if [ ${#progs[@]} -gt 0 ]; then
	kernel_only=PREFER_DEFINED_ATTRIBUTE_MACRO,BIT_MACRO,PREFER_KERNEL_TYPES
	kernel_only+=,PREFER_PR_LEVEL,PRINTK_WITHOUT_KERN_LEVEL,SSCANF_TO_KSTRTO
	kernel_only+=,VOLATILE,CAMELCASE,EMBEDDED_FUNCTION_NAME
	out=$(cd "$src" && perl scripts/checkpatch.pl --strict --terse --no-summary \
		--show-types --no-tree --ignore "$kernel_only" \
		-f "${progs[@]/#/$MS_TOP/}" 2>&1 |
		grep -E ':[0-9]+: (ERROR|WARNING|CHECK):' || true)
	report "userspace checkpatch, kernel-only notes off (${#progs[@]} files)" "$out"
	out=$(for f in "${progs[@]}"; do
		[[ $f == *.c ]] || continue
		cc -std=gnu11 -Wall -Wextra -Werror -fsyntax-only "$f" 2>&1
	      done | grep -E '(warning|error):' || true)
	report "userspace cc -Wall -Wextra -Werror" "$out"
fi

# A separate object tree, so W=1 and C=2 never dirty the test build.
mkdir -p "$obj"
if ! cmp -s "$MS_BUILD/ours/.config" "$obj/.config"; then
	cp "$MS_BUILD/ours/.config" "$obj/.config"
	make -s -C "$src" O="$obj" olddefconfig >/dev/null
fi
make -s -C "$src" O="$obj" -j"$MS_JOBS" prepare >/dev/null
# Our objects, plus users of our headers (for header diagnostics).
targets=(drivers/infiniband/core/sa_query.o drivers/infiniband/core/cm.o drivers/infiniband/core/user_mad.o
	 drivers/infiniband/ulp/srp/ib_srp.o)
for f in "${cfiles[@]}"; do
	targets+=("${f%.c}.o")
done
mapfile -t targets < <(printf '%s\n' "${targets[@]}" | sort -u |
	while read -r t; do [ -f "$src/${t%.o}.c" ] && echo "$t"; done)
# Force a fresh compile so every diagnostic shows up on every run.
for t in "${targets[@]}"; do
	rm -f "$obj/$t"
done
raw=$(make -C "$src" O="$obj" -j"$MS_JOBS" W=1 C=2 "${targets[@]}" 2>&1 || true)
ours_re=$(printf '%s\n' "${files[@]}" | sed 's/[.]/\\./g' | paste -sd'|')
out=$(grep -E "(^|/)($ours_re):[0-9]+(:[0-9]+)?: (warning|error)" <<<"$raw" || true)
report "sparse C=2 + W=1 build (${#targets[@]} objects)" "$out"
if grep -qE '(^|\s)(Error|error:) ' <<<"$raw" && [ -z "$out" ]; then
	grep -E 'error' <<<"$raw" | head -n 20 || true
	ms_die "lint build failed"
fi

echo "lint: $findings finding(s)"
[ "$findings" -eq 0 ]
