#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# compare.sh [TEST...] - ours beside upstream, point by point (make
# check-compare; check.sh prints it at the end of a check-upstream run).
#
# Reads the TAP that check.sh kept of an ours run (build/logs/ours/TEST.tap)
# and of an upstream run (build/logs/upstream/TEST.tap), for every test
# named or, without arguments, every test with either file, and prints one
# row per top-level point:
#
#   TEST  POINT  OURS  UPSTREAM  NOTE
#
# OURS and UPSTREAM are "ok", "not ok", "skip", "absent" (the run did not
# print that point, or there was no run), or "ours only" (a test whose
# header says "# ours-only:", skipped by check-upstream).  Points are
# matched by their description, digits and a " # SKIP" reason left out (a
# point may name a count or a LID).  Each test ends with a row of
# check.sh's verdict for it.
#
# A point whose description contains "[differs]" claims a difference from
# upstream 6.12 (Documentation/infiniband/testing.rst): it must fail on
# upstream.  NOTE then says "differs: fails on upstream", or flags it:
# "CLAIMS A DIFFERENCE BUT PASSES ON UPSTREAM", or "differs: no upstream
# result".  Exit status: 1 when a point is flagged, 0 otherwise.

set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

ours=$MS_BUILD/logs/ours
up=$MS_BUILD/logs/upstream

if [ $# -gt 0 ]; then
	tests=("$@")
else
	mapfile -t tests < <(find "$ours" "$up" -maxdepth 1 -name '*.tap' \
				  -printf '%f\n' 2>/dev/null | sed 's/\.tap$//' | sort -u)
fi
[ ${#tests[@]} -gt 0 ] ||
	ms_die "no TAP in build/logs/ours or build/logs/upstream (make check, make check-upstream)"

echo "ours: ${ours#"$MS_TOP"/}, upstream: ${up#"$MS_TOP"/}"
awk -v ours="$ours" -v up="$up" '
function result(line) {
	if (line ~ /^not ok/)
		return "not ok"
	if (line ~ /# [Ss][Kk][Ii][Pp] ours only/)
		return "ours only"
	if (line ~ /# [Ss][Kk][Ii][Pp]/)
		return "skip"
	return "ok"
}
function desc(line) {
	sub(/^(not )?ok *[0-9]* *(- *)?/, "", line)
	sub(/ # [Ss][Kk][Ii][Pp].*$/, "", line)
	return line
}
# read(FILE, SIDE): the top-level points of FILE into res[SIDE, key],
# their order into keys[], the verdict into verdict[SIDE].
function read(file, side,    line, d, k, n, seen) {
	verdict[side] = "absent"
	npoints[side] = 0
	while ((getline line < file) > 0) {
		if (line ~ /^# check.sh verdict: /) {
			verdict[side] = substr(line, 21)
			continue
		}
		if (line !~ /^(not )?ok( |$)/)
			continue
		d = desc(line)
		k = d
		gsub(/[0-9]+/, "N", k)
		seen[k]++
		if (seen[k] > 1)
			k = k " (#" seen[k] ")"
		res[side, k] = result(line)
		npoints[side]++
		if (!(k in name)) {
			name[k] = d
			keys[++nkeys] = k
		}
	}
	close(file)
}
function row(t, p, o, u, note) {
	printf "%-18s %-62s %-9s %-9s %s\n", t, substr(p, 1, 62), o, u, note
}
BEGIN {
	row("TEST", "POINT", "OURS", "UPSTREAM", "NOTE")
	flagged = 0
	for (i = 1; i < ARGC; i++) {
		t = ARGV[i]
		delete res
		delete name
		delete keys
		nkeys = 0
		read(ours "/" t ".tap", "o")
		read(up "/" t ".tap", "u")
		# A test skipped as ours only: one point on upstream stands
		# for every point of ours.
		uonly = (npoints["u"] == 1 && res["u", keys[nkeys]] == "ours only")
		for (j = 1; j <= nkeys; j++) {
			k = keys[j]
			o = ((("o", k) in res) ? res["o", k] : "absent")
			u = ((("u", k) in res) ? res["u", k] : "absent")
			if (uonly && o == "absent")
				continue
			if (uonly)
				u = "ours only"
			note = ""
			if (name[k] ~ /\[differs\]/) {
				if (u == "ok") {
					note = "CLAIMS A DIFFERENCE BUT PASSES ON UPSTREAM"
					flagged++
				} else if (u == "not ok")
					note = "differs: fails on upstream"
				else
					note = "differs: no upstream result"
			} else if (o != u && u != "ours only" && o != "absent" && u != "absent")
				note = "<- not the same"
			row(t, name[k], o, u, note)
		}
		row(t, "(check.sh verdict)", verdict["o"], verdict["u"], "")
	}
	if (flagged)
		printf "%d point(s) claim a difference from upstream but pass on upstream\n", flagged
	exit flagged > 0
}' "${tests[@]}"
