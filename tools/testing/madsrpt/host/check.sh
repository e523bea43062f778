#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh [TEST...] - build our kernel (incrementally), prove the build
# holds our files, run the VM tests (every tests/*.sh, or the ones named;
# a test marked "# runs-on: host" runs on the host and boots its own VMs)
# and print per-test results and a summary line:
#   N passed, N failed[, N skipped]
# Exits non-zero on any failure, timeout or kernel splat.
#
# MS_KERNEL=upstream runs the same tests against the pristine build,
# MS_KERNEL=debug against our tree built with the detectors of
# config/debug.  Tests that boot their own VMs ("# runs-on: host") boot
# that build too ($MS_OURS: the kernel under test), except:
#  - a test whose header says "# kernels: both" compares ours with
#    upstream itself (rmpp-interop): it always gets MS_OURS=ours (or
#    debug);
#  - a test whose header says "# ours-only: REASON" is not run under
#    MS_KERNEL=upstream: it gets the one point
#    "ok 1 - TEST # SKIP ours only: REASON".
#
# Each test's TAP output is also kept in build/logs/KIND/TEST.tap (KIND:
# ours, upstream or debug), so that a run of one kernel does not overwrite
# the other's; host/compare.sh (make check-compare) puts the two side by
# side, and a check-upstream run prints that table at its end for the
# tests it ran that have an ours run.
#
# MS_SOAK=1 (make soak) asks the tests that have a long form to run it
# (more MADs, more cycles); such a test names its longer limit in a
# "# soak-timeout: SECONDS" line, used instead of "# timeout:".
#
# A test whose header says "# long: TARGET" (ibsim-scale) runs only when
# named or under MS_SOAK=1: make TARGET runs it, make check leaves it
# out.  "# memory: MiB" gives a test's VM more than the default 2 GiB.
#
# A test passes only when it printed its whole TAP plan: a plan line
# (1..N) and N top-level points, none "not ok".

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

kind=${MS_KERNEL:-ours}
ms_lock
"$here/build.sh" "$kind"
ms_build_progs
[ "$kind" = upstream ] || ms_verify_overlay "$MS_BUILD/$kind"
if [ "$kind" = ours ] || [ "$kind" = debug ]; then
	export MS_OURS=$kind
fi

if [ $# -gt 0 ]; then
	tests=()
	for t in "$@"; do
		[ -f "$MS_HARNESS/tests/$t.sh" ] || ms_die "no test named '$t' (see tests/)"
		tests+=("$MS_HARNESS/tests/$t.sh")
	done
else
	tests=()
	for t in "$MS_HARNESS"/tests/*.sh; do
		[ -n "${MS_SOAK:-}" ] || ! grep -q '^# long: ' "$t" ||
			continue
		tests+=("$t")
	done
fi

mkdir -p "$MS_BUILD/logs" "$MS_BUILD/logs/$kind"
ran=()
passed=0 failed=0 skipped=0 bad=()
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	tmo=$(sed -n 's/^# timeout: \([0-9]*\)/\1/p' "$t" | head -n 1)
	if [ -n "${MS_SOAK:-}" ]; then
		stmo=$(sed -n 's/^# soak-timeout: \([0-9]*\)/\1/p' "$t" | head -n 1)
		tmo=${stmo:-$tmo}
	fi
	tmo=${tmo:-600}
	[ "$kind" != debug ] || tmo=$((tmo * MS_DEBUG_SLOWDOWN))
	log=$MS_BUILD/logs/$name.console
	echo "=== $name (timeout ${tmo:-600}s, console: ${log#"$MS_TOP"/})"
	t0=$(date +%s)
	rc=0
	ran+=("$name")
	why=$(sed -n 's/^# ours-only: //p' "$t" | head -n 1)
	# The kernel the test's own VMs boot.
	under=$kind
	[ "$kind" != upstream ] || ! grep -q '^# kernels: both' "$t" || under=ours
	if [ "$kind" = upstream ] && [ -n "$why" ]; then
		printf 'TAP version 13\n1..1\nok 1 - %s # SKIP ours only: %s\n' \
			"$name" "$why" >"$log.out"
		: >"$log"
	elif grep -q '^# runs-on: host' "$t"; then
		# It boots its own VMs (two joined by a wire, or two kernels).
		MS_OURS=$under timeout "${tmo:-600}" "$t" >"$log.out" 2>"$log" || rc=$?
	else
		mem=$(sed -n 's/^# memory: \([0-9]*\)$/\1/p' "$t" | head -n 1)
		"$here/vm.sh" -k "$kind" -t "${tmo:-600}" -m "${mem:-2048}" \
			-l "$log" "$t" >/dev/null || rc=$?
	fi
	tr -d '\r' <"$log.out" | sed 's/^/    /'
	p=$(tr -d '\r' <"$log.out" | grep -Ec '^ok [0-9]* ?- .*# SKIP' || true)
	skipped=$((skipped + p))
	p=$(tr -d '\r' <"$log.out" | grep -E '^ok ' | grep -vc '# SKIP' || true)
	passed=$((passed + p))
	f=$(tr -d '\r' <"$log.out" | grep -Ec '^not ok' || true)
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# The script failed without a failing test point (it died).
		f=1
		echo "    not ok - $name exited with status $rc"
	fi
	plan=$(tr -d '\r' <"$log.out" | sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' | tail -n 1)
	npoints=$(tr -d '\r' <"$log.out" | grep -Ec '^(not )?ok ' || true)
	if [ -z "$plan" ] || [ "$npoints" -ne "$plan" ]; then
		echo "    not ok - $name: planned ${plan:-no plan}, printed $npoints points"
		f=$((f + 1))
	fi
	failed=$((failed + f))
	[ "$f" -eq 0 ] || bad+=("$name")
	echo "=== $name: $([ "$f" -eq 0 ] && echo PASS || echo FAIL) in $(($(date +%s) - t0))s"
	{
		tr -d '\r' <"$log.out"
		echo "# check.sh verdict: $([ "$f" -eq 0 ] && echo PASS || echo FAIL)"
	} >"$MS_BUILD/logs/$kind/$name.tap"
done

[ ${#bad[@]} -eq 0 ] || echo "failed tests: ${bad[*]}"
summary="$passed passed, $failed failed"
[ "$skipped" -eq 0 ] || summary+=", $skipped skipped"
echo "$summary"
# Ours beside upstream, for the tests of this run that have an ours run.
if [ "$kind" = upstream ]; then
	have=()
	for name in "${ran[@]}"; do
		[ ! -f "$MS_BUILD/logs/ours/$name.tap" ] || have+=("$name")
	done
	if [ ${#have[@]} -gt 0 ]; then
		echo
		"$here/compare.sh" "${have[@]}" || true
	else
		echo "no ours run of these tests in build/logs/ours: no comparison (make check first)"
	fi
fi
[ "$failed" -eq 0 ]
