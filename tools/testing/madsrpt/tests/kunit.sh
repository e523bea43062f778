#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kunit: load every KUnit module the build made (*_kunit.ko) and report
# each test case of each suite as a TAP test point, from the KTAP results
# KUnit keeps in debugfs.
# timeout: 600

. "$MS_HARNESS/guest/guest-lib.sh"

kdir=/sys/kernel/debug/kunit
mapfile -t mods < <(find "/lib/modules/$(uname -r)/" -name '*_kunit.ko*' |
		    sed 's|.*/||; s|\.ko.*||' | sort)

echo "TAP version 13"
if [ ${#mods[@]} -eq 0 ]; then
	tap_fail "no KUnit modules in the build"
	echo "1..$MS_TAP_N"
	exit 1
fi

for m in "${mods[@]}"; do
	before=$(ls "$kdir" 2>/dev/null)
	if ! modprobe "$m"; then
		tap_fail "$m: modprobe"
		continue
	fi
	suites=$(comm -13 <(echo "$before") <(ls "$kdir"))
	[ -n "$suites" ] || tap_fail "$m: registered no suite"
	for s in $suites; do
		# Case lines are indented one level (4 spaces) in the results;
		# a parameterised case's own line sums up its parameters.
		results=$(cat "$kdir/$s/results")
		ncases=0
		while read -r verdict rest; do
			case "$verdict" in
			ok) tap_ok "$s: ${rest#* }" ;;
			not) tap_fail "$s: ${rest#ok * }"
			     grep -E '^\s+#' <<<"$results" | head -n 20 ;;
			esac
			ncases=$((ncases + 1))
		done < <(grep -E '^    (not )?ok [0-9]+ ' <<<"$results")
		[ "$ncases" -gt 0 ] || {
			tap_fail "$s: no results"
			echo "$results" | sed 's/^/# /'
		}
	done
	rmmod "$m" || tap_fail "$m: rmmod"
done
echo "1..$MS_TAP_N"
tap_done
