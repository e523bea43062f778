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
# header says "# ours-only:", skipped by check-upstream, or a point
# skipped as "# SKIP ours only").  Points are matched by their
# description with numbers and a " # SKIP" reason left out (a point may
# name a count, a LID or a GUID), or else by what comes before its first ": " or
# a parenthesised tail (a failing point may say more than a passing one).
# Each test ends with a row of check.sh's verdict for it.
#
# A point whose description contains "[differs]" claims a difference from
# upstream 6.12 (Documentation/infiniband/testing.rst): it must fail on
# upstream.  NOTE then says "differs: fails on upstream", or flags it:
# "CLAIMS A DIFFERENCE BUT PASSES ON UPSTREAM", "... BUT IS ABSENT ON
# UPSTREAM" (the upstream run of the test did not print that point),
# "... BUT IS SKIPPED ON UPSTREAM" or "... BUT UPSTREAM DOES NOT RUN THE
# TEST" (an ours-only test).  Only when there is no upstream run of the
# test at all (no upstream TAP, or one whose check.sh verdict is NOT RUN)
# does NOTE just say "differs: no upstream result".  The last line counts
# the flagged points.  Exit status: 1 when a point is flagged, 0
# otherwise.

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
# full(D): D with its numbers (and 0x... hex) left out; short(D): also without what follows
# its first ": " and a parenthesised tail, the " [differs]" mark (a failing
# point may say more, or other numbers, than a passing one).
function full(d) {
	gsub(/0x[0-9a-fA-F]+/, "N", d)
	gsub(/[0-9]+/, "N", d)
	return d
}
function short(d) {
	sub(/ \[differs\]/, "", d)
	sub(/: .*$/, "", d)
	sub(/ \([^()]*\)$/, "", d)
	return full(d)
}
# read(FILE, SIDE): the top-level points of FILE: n[SIDE], and for each
# point I d[SIDE, I], r[SIDE, I]; the verdict into verdict[SIDE];
# ran[SIDE]: whether FILE is the TAP of a run of the test (it exists and
# check.sh did not record the test as not run).
function read(file, side,    line, st) {
	verdict[side] = "absent"
	n[side] = 0
	while ((st = (getline line < file)) > 0) {
		if (line ~ /^# check.sh verdict: /) {
			verdict[side] = substr(line, 21)
			continue
		}
		if (line !~ /^(not )?ok( |$)/)
			continue
		n[side]++
		d[side, n[side]] = desc(line)
		r[side, n[side]] = result(line)
	}
	ran[side] = st == 0 && verdict[side] != "NOT RUN"
	close(file)
}
function row(t, p, o, u, note) {
	printf "%-18s %-62s %-9s %-9s %s\n", t, substr(p, 1, 62), o, u, note
}
# match_up(I): the upstream point for ours point I: the first unused one
# with the same full() description, else with the same short() one; 0.
function match_up(i,    j) {
	for (j = 1; j <= n["u"]; j++)
		if (!used[j] && full(d["u", j]) == full(d["o", i]))
			return j
	for (j = 1; j <= n["u"]; j++)
		if (!used[j] && short(d["u", j]) == short(d["o", i]))
			return j
	return 0
}
# A claim of a difference must be seen failing on upstream: with an
# upstream run of the test, anything else is flagged.
function judge(t, name, o, u,    note) {
	note = ""
	if (name ~ /\[differs\]/) {
		claims++
		if (u == "not ok")
			note = "differs: fails on upstream"
		else if (!ran["u"])
			note = "differs: no upstream result"
		else {
			if (u == "ok")
				note = "PASSES ON UPSTREAM"
			else if (u == "absent")
				note = "IS ABSENT ON UPSTREAM"
			else if (u == "skip")
				note = "IS SKIPPED ON UPSTREAM"
			else
				note = "UPSTREAM DOES NOT RUN THE TEST"
			note = "CLAIMS A DIFFERENCE BUT " note
			flagged++
		}
	} else if ((o == "ok" && u == "not ok") || (o == "not ok" && u == "ok"))
		note = "<- not the same"
	row(t, name, o, u, note)
}
BEGIN {
	row("TEST", "POINT", "OURS", "UPSTREAM", "NOTE")
	flagged = claims = 0
	for (a = 1; a < ARGC; a++) {
		t = ARGV[a]
		delete d
		delete r
		delete used
		read(ours "/" t ".tap", "o")
		read(up "/" t ".tap", "u")
		# A test skipped as ours only: its one upstream point stands
		# for every point of ours.
		uonly = (n["u"] == 1 && r["u", 1] == "ours only")
		for (i = 1; i <= n["o"]; i++) {
			if (uonly) {
				used[1] = 1
				judge(t, d["o", i], r["o", i], "ours only")
				continue
			}
			j = match_up(i)
			if (j) {
				used[j] = 1
				judge(t, d["o", i], r["o", i], r["u", j])
			} else
				judge(t, d["o", i], r["o", i], "absent")
		}
		for (j = 1; j <= n["u"]; j++)
			if (!used[j])
				judge(t, d["u", j], "absent", r["u", j])
		row(t, "(check.sh verdict)", verdict["o"], verdict["u"], "")
	}
	printf "flagged: %d of %d point(s) claiming a difference from upstream (\"[differs]\") were not seen failing on upstream\n", flagged, claims
	exit flagged > 0
}' "${tests[@]}"
