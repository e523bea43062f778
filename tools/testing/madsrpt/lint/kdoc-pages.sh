#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kdoc-pages.sh - check that kernel-doc makes every man page a seed names
#
# A seed is a man page of section 9 (a kernel-doc page as a text dump).
# The page's own name and every "name(9)" reference from its SEE ALSO
# section onwards are the pages we expect.  The script runs
# "scripts/kernel-doc -man" over the given source files, collects the
# pages it produces (.TH lines) and prints one TAP test point per expected
# page.  It exits 1 if any page is missing or kernel-doc fails, and 2 on
# a usage error.
#
# Usage: kdoc-pages.sh [-k KSRC] SEED FILE...
#
#   -k KSRC  kernel source tree that holds scripts/kernel-doc; defaults to
#            $KSRC, then to build/linux at the top of the
#            repository this script lives in.
#   SEED     the seed page, e.g. ../shared/seeds/000_10f6086b9b784e51.txt
#   FILE...  sources to run kernel-doc over, e.g. include/rdma/ib_mad.h
#
# Example:
#   KSRC=build/linux ./kdoc-pages.sh \
#       /work/shared/seeds/003_57dbfd85ac9da9cf.txt \
#       drivers/infiniband/ulp/srpt/*.c

set -u
export LC_ALL=C

kdoc_usage()
{
	sed -n 's/^# \{0,1\}//;/^Usage:/,/^Example:/p' "$0" | sed '$d' >&2
	exit 2
}

kdoc_default_ksrc()
{
	local top

	top=$(cd "$(dirname "$0")/../../.." && pwd) || return
	printf '%s\n' "$top/build/linux"
}

# Names a seed expects: "name(9)" tokens in its first line (the page's
# own name) and from the line that mentions SEE ALSO to the end.
kdoc_seed_names()
{
	awk 'NR == 1 || /SEE ALSO/ { on = 1 } on { print } NR == 1 { on = 0 }' \
		"$1" |
		grep -oE '[A-Za-z_][A-Za-z0-9_]*\(9\)' |
		sed 's/(9)$//' | awk '!seen[$0]++'
}

# Page titles from kernel-doc -man output: the third field of each .TH
# line, less a leading "struct ", "union ", "enum " or "typedef ".
kdoc_page_names()
{
	sed -n 's/^\.TH "[^"]*" 9 "\([^"]*\)".*/\1/p' |
		sed -E 's/^(struct|union|enum|typedef) //' | sort -u
}

ksrc=${KSRC:-}
while getopts 'k:h' opt; do
	case $opt in
	k) ksrc=$OPTARG ;;
	*) kdoc_usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || kdoc_usage

seed=$1
shift
[ -n "$ksrc" ] || ksrc=$(kdoc_default_ksrc)
kdoc=$ksrc/scripts/kernel-doc

if [ ! -r "$seed" ]; then
	echo "kdoc-pages: cannot read seed $seed" >&2
	exit 2
fi
if [ ! -x "$kdoc" ]; then
	echo "kdoc-pages: no $kdoc (set KSRC or pass -k)" >&2
	exit 2
fi
for f in "$@"; do
	if [ ! -r "$f" ]; then
		echo "kdoc-pages: cannot read source $f" >&2
		exit 2
	fi
done

mapfile -t expected < <(kdoc_seed_names "$seed")
if [ ${#expected[@]} -eq 0 ]; then
	echo "kdoc-pages: no name(9) references found in $seed" >&2
	exit 2
fi

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

"$kdoc" -man "$@" >"$tmp/man" 2>"$tmp/err"
kdoc_rc=$?
kdoc_page_names <"$tmp/man" >"$tmp/pages"

echo "TAP version 13"
echo "1..$((${#expected[@]} + 1))"
failed=0
n=0

n=$((n + 1))
if [ $kdoc_rc -eq 0 ]; then
	echo "ok $n - kernel-doc -man ran cleanly over $# file(s)"
else
	echo "not ok $n - kernel-doc -man exited with $kdoc_rc"
	failed=$((failed + 1))
fi
sed 's/^/# kernel-doc: /' "$tmp/err"

for name in "${expected[@]}"; do
	n=$((n + 1))
	if grep -qxF -- "$name" "$tmp/pages"; then
		echo "ok $n - page $name"
	else
		echo "not ok $n - page $name (no kernel-doc for it)"
		failed=$((failed + 1))
	fi
done

printf '%s\n' "${expected[@]}" | sort -u >"$tmp/expected"
extra=$(comm -23 "$tmp/pages" "$tmp/expected" | tr '\n' ' ')
echo "# $(wc -l <"$tmp/pages") pages produced, ${#expected[@]} expected"
[ -z "$extra" ] || echo "# pages beyond the seed: $extra"

if [ $failed -ne 0 ]; then
	echo "# $failed of $n failed"
	exit 1
fi
exit 0
