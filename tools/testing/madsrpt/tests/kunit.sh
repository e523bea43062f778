#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kunit: load every KUnit module of our tree and report each test case of
# each suite as a TAP test point, from the KTAP results KUnit keeps in
# debugfs.
#
# The plan is made before anything runs, from what is expected: each
# *_kunit.c of our tree builds one module of its name holding one suite,
# and each KUNIT_CASE*() line of it is one case, one point (a
# parameterised case's own result line sums up its parameters).  A module
# that is missing or does not load, a suite that does not register, a case
# that does not report: each leaves the run short of its plan, which fails
# it.  The pristine kernel has none of these modules.
# ours-only: the KUnit suites of our MAD layer, ib_srpt and ibdevsim
# timeout: 600

. "$MS_HARNESS/guest/guest-lib.sh"

kdir=/sys/kernel/debug/kunit
declare -A want=()
total=0
while read -r f; do
	m=$(basename "$f" .c)
	want[$m]=$(grep -cE '^[[:space:]]*KUNIT_CASE[A-Z_]*\(' "$f")
	total=$((total + want[$m]))
done < <(find "$MS_TOP/drivers" -name '*_kunit.c')
mapfile -t mods < <(printf '%s\n' "${!want[@]}" | sort)

echo "TAP version 13"
if [ "$total" -eq 0 ]; then
	echo "1..1"
	tap_fail "no KUNIT_CASE in any *_kunit.c of $MS_TOP/drivers"
	exit 1
fi
echo "1..$total"
for m in "${mods[@]}"; do
	echo "# $m: ${want[$m]} cases expected"
done

for m in "${mods[@]}"; do
	before=$(ls "$kdir" 2>/dev/null)
	if ! err=$(modprobe "$m" 2>&1); then
		tap_fail "$m: modprobe (its ${want[$m]} cases do not run)"
		echo "# $err"
		continue
	fi
	suites=$(comm -13 <(echo "$before") <(ls "$kdir"))
	[ -n "$suites" ] || echo "# $m: registered no suite"
	ncases=0
	for s in $suites; do
		# Case lines are indented one level (4 spaces) in the results;
		# a parameterised case's own line sums up its parameters.
		results=$(cat "$kdir/$s/results")
		while read -r verdict rest; do
			case "$verdict" in
			ok) tap_ok "$s: ${rest#* }" ;;
			not) tap_fail "$s: ${rest#ok * }"
			     grep -E '^\s+#' <<<"$results" | head -n 20 ;;
			esac
			ncases=$((ncases + 1))
		done < <(grep -E '^    (not )?ok [0-9]+ ' <<<"$results")
	done
	if [ "$ncases" -ne "${want[$m]}" ]; then
		echo "# $m: $ncases cases reported, ${want[$m]} expected"
		[ -z "$suites" ] || cat "$kdir"/$suites/results 2>/dev/null |
			sed 's/^/# /' | head -n 40
	fi
	rmmod "$m" || tap_fail "$m: rmmod"
done
if [ "$MS_TAP_N" -ne "$total" ]; then
	echo "# $MS_TAP_N points printed for a plan of $total"
	exit 1
fi
tap_done
