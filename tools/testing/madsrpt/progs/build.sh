#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh [-f FROM] OUTDIR [NAME...] - build the test programs of progs/
# (all of them, or the ones named) into OUTDIR.
#
# A program is left alone when OUTDIR already holds a binary newer than
# its source and the shared headers; with -f, a fresh binary in FROM is
# copied instead of compiled.  The host builds every program once before
# the tests (make check), and a guest, for which compiling under TCG costs
# seconds a program, copies from there.  The libraries a program links
# follow from the headers it includes.  On failure the compiler's output
# goes to stderr and the exit status is non-zero.

set -uo pipefail

progs=$(cd "$(dirname "$0")" && pwd)
from=
if [ "${1:-}" = -f ]; then
	from=$2
	shift 2
fi
out=${1:?usage: build.sh [-f FROM] OUTDIR [NAME...]}
shift
if [ $# -eq 0 ]; then
	for src in "$progs"/*.c; do
		set -- "$@" "$(basename "$src" .c)"
	done
fi

# fresh BIN NAME: BIN exists and is newer than what it is built from.
fresh() {
	local h

	[ -x "$1" ] && [ "$1" -nt "$progs/$2.c" ] || return 1
	for h in "$progs"/*.h; do
		[ "$1" -nt "$h" ] || return 1
	done
}

libs() {
	grep -q '^#include <infiniband/umad.h>' "$1" && echo -libumad
	grep -q '^#include <rdma/rdma_cma.h>' "$1" && echo -lrdmacm
	grep -q '^#include <infiniband/verbs.h>' "$1" && echo -libverbs
	return 0
}

mkdir -p "$out" || exit 1
rc=0
for name in "$@"; do
	src=$progs/$name.c
	[ -f "$src" ] || { echo "no program $name in $progs" >&2; rc=1; continue; }
	fresh "$out/$name" "$name" && continue
	if [ -n "$from" ] && fresh "$from/$name" "$name"; then
		cp "$from/$name" "$out/$name" && continue
	fi
	# shellcheck disable=SC2046
	cc -O2 -Wall -o "$out/$name.tmp" "$src" $(libs "$src") &&
		mv "$out/$name.tmp" "$out/$name" || rc=1
done
exit $rc
