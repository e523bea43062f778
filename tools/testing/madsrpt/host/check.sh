#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check.sh [TEST...] - build our kernel (incrementally), prove the build
# holds our files, run the VM tests (every tests/*.sh, or the ones named;
# a test marked "# runs-on: host" runs on the host and boots its own VMs)
# and print per-test results, a table of each test's verdict and time, and
# a summary line:
#   N passed, N failed[, N skipped]
# followed, when some tests were not run, by "not run: TEST (why)...".
# Exits non-zero on any failure, timeout, kernel splat or test not run.
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
# tests it ran that have an ours run.  A test that was not run gets a
# TEST.tap of no points whose verdict line says "NOT RUN".
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
#
# The whole run has a deadline, so that it ends with its summary before
# CI stops it (at 90 minutes): MS_DEADLINE seconds from the start of
# check.sh, the build included (default 5040, 84 minutes; 0: none; none
# by default under MS_SOAK=1, whose limits run to hours).  A test whose
# limit does not fit in the time left less a margin of 60 s runs with
# that time as its limit if it is at least 120 s; otherwise it is not run
# ("not run: deadline"), which counts as a failure.  The build itself is
# not cut short.  SIGTERM, SIGINT or SIGHUP stop the run: the running
# test's process group (or the build's processes) is killed, its TAP
# kept with a "stopped" comment, the tests not reached are listed as not
# run, and the summary is printed before check.sh exits with 128 + the
# signal's number.
#
# The table at the end (also build/logs/KIND/times.txt) gives each test's
# verdict (PASS, FAIL or NOT RUN), its seconds and the limit it ran with,
# the seconds before the first test (lock, kernel build, test programs,
# overlay check) and the total.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

kind=${MS_KERNEL:-ours}

# Seconds from check.sh's start (bash's SECONDS) by which the run ends.
if [ -n "${MS_DEADLINE:-}" ]; then
	deadline=$MS_DEADLINE
elif [ -n "${MS_SOAK:-}" ]; then
	deadline=0
else
	deadline=$((84 * 60))
fi
[[ $deadline =~ ^[0-9]+$ ]] ||
	ms_die "MS_DEADLINE must be a number of seconds (0: no deadline), not '$deadline'"
deadline=$((10#$deadline))
# What a test's limit leaves before the deadline, and the shortest limit
# worth a run.
margin=60 min_limit=120

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

# Each test's verdict (PASS, FAIL, NOT RUN), seconds, limit and a note.
declare -A verdict=() secs=() limit=() note=()
ran=() notrun=()
passed=0 failed=0 skipped=0 bad=()
build_secs=

# A signal stops the run: stopped names it, the summary still prints.
stopped='' stop_status=0
# The process run_bg waits for, and how to stop it: "group" (a timeout(1)
# process, which is the leader of its own process group) or "tree" (it
# stays in our group: it and its descendants are signalled one by one).
cur_pid='' cur_how='' cur_killer=''

# tree_of PID: PID and its descendants.
tree_of() {
	local c
	echo "$1"
	for c in $(pgrep -P "$1" || true); do
		tree_of "$c"
	done
}

# stop_current: SIGTERM to what run_bg waits for, SIGKILL 15 s later.
stop_current() {
	local pids

	[ -n "$cur_pid" ] || return 0
	if [ "$cur_how" = group ]; then
		pids="-$cur_pid $cur_pid"
	else
		pids=$(tree_of "$cur_pid" | tr '\n' ' ')
	fi
	# shellcheck disable=SC2086 # a list of pids
	kill -TERM -- $pids 2>/dev/null || true
	if [ -z "$cur_killer" ]; then
		# shellcheck disable=SC2086
		{ sleep 15 && kill -KILL -- $pids; } </dev/null >/dev/null 2>&1 &
		cur_killer=$!
	fi
}

# shellcheck disable=SC2317 # called by the traps below
on_signal() {
	stopped=$1
	stop_status=$2
	stop_current
}
trap 'on_signal TERM 143' TERM
trap 'on_signal INT 130' INT
trap 'on_signal HUP 129' HUP

# run_bg HOW CMD...: run CMD in the background and wait for it (a trapped
# signal interrupts a wait, not a foreground command); its status in rc.
run_bg() {
	cur_how=$1
	shift
	"$@" &
	cur_pid=$!
	[ -z "$stopped" ] || stop_current
	while :; do
		rc=0
		wait "$cur_pid" || rc=$?
		# Above 128: a signal interrupted the wait, or it killed CMD.
		if [ "$rc" -le 128 ] || ! kill -0 "$cur_pid" 2>/dev/null; then
			break
		fi
	done
	[ -z "$cur_killer" ] || kill "$cur_killer" 2>/dev/null || true
	cur_pid='' cur_killer=''
}

# not_run NAME WHY [LIMIT]: record a test that was not run.
not_run() {
	verdict[$1]="NOT RUN" secs[$1]=- limit[$1]=${3:--} note[$1]=$2
	notrun+=("$1 ($2)")
	failed=$((failed + 1))
	bad+=("$1")
	echo "=== $1: NOT RUN ($2)"
	printf 'TAP version 13\n1..0 # SKIP not run: %s\n# check.sh verdict: NOT RUN\n' \
		"$2" >"$MS_BUILD/logs/$kind$MS_SUFFIX/$1.tap"
}

# times_table: the verdict, seconds and limit of every test.
times_table() {
	local w=14 t name fmt

	for t in "${tests[@]}"; do
		name=$(basename "$t" .sh)
		[ ${#name} -le "$w" ] || w=${#name}
	done
	fmt="%-${w}s  %-7s  %7s  %7s  %s\n"
	echo "times of this check.sh run (MS_KERNEL=$kind, $(date -u '+%Y-%m-%d %H:%M UTC')):"
	{
		# shellcheck disable=SC2059 # the format is ours
		printf "$fmt" test verdict seconds limit note
		for t in "${tests[@]}"; do
			name=$(basename "$t" .sh)
			# shellcheck disable=SC2059
			printf "$fmt" "$name" "${verdict[$name]:-NOT RUN}" \
				"${secs[$name]:--}" "${limit[$name]:--}" \
				"${note[$name]:-}"
		done
		# shellcheck disable=SC2059
		printf "$fmt" "(before tests)" "" "${build_secs:--}" "" \
			"lock, kernel build, test programs, overlay check"
		if [ "$deadline" -gt 0 ]; then
			# shellcheck disable=SC2059
			printf "$fmt" "(total)" "" "$SECONDS" "$deadline" \
				"the limit: the deadline (MS_DEADLINE)"
		else
			# shellcheck disable=SC2059
			printf "$fmt" "(total)" "" "$SECONDS" - "no deadline"
		fi
	} | sed 's/ *$//'
}

# finish: the times, the summary; exits.
finish() {
	local t name

	for t in "${tests[@]}"; do
		name=$(basename "$t" .sh)
		[ -n "${verdict[$name]:-}" ] || not_run "$name" "stopped by SIG$stopped"
	done
	echo
	times_table | tee "$MS_BUILD/logs/$kind$MS_SUFFIX/times.txt"
	echo
	[ ${#bad[@]} -eq 0 ] || echo "failed tests: ${bad[*]}"
	summary="$passed passed, $failed failed"
	[ "$skipped" -eq 0 ] || summary+=", $skipped skipped"
	echo "$summary"
	[ ${#notrun[@]} -eq 0 ] || echo "not run: ${notrun[*]}"
	if [ -n "$stopped" ]; then
		echo "check.sh: stopped by SIG$stopped after ${SECONDS}s"
		exit "$stop_status"
	fi
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
	exit 0
}

if [ "$deadline" -gt 0 ]; then
	echo "check.sh: deadline in ${deadline}s (MS_DEADLINE; 0: none)"
fi
mkdir -p "$MS_BUILD/logs" "$MS_BUILD/logs/$kind$MS_SUFFIX"
ms_lock
run_bg tree "$here/build.sh" "$kind"
if [ -z "$stopped" ] && [ "$rc" -ne 0 ]; then
	echo "check.sh: the $kind build failed (exit $rc) after ${SECONDS}s" >&2
	exit "$rc"
fi
if [ -z "$stopped" ]; then
	ms_build_progs
	[ "$kind" = upstream ] || ms_verify_overlay "$MS_BUILD/$kind$MS_SUFFIX"
fi
if [ "$kind" = ours ] || [ "$kind" = debug ]; then
	export MS_OURS=$kind
fi
build_secs=$SECONDS

for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	[ -z "$stopped" ] || break
	tmo=$(sed -n 's/^# timeout: \([0-9]*\)/\1/p' "$t" | head -n 1)
	if [ -n "${MS_SOAK:-}" ]; then
		stmo=$(sed -n 's/^# soak-timeout: \([0-9]*\)/\1/p' "$t" | head -n 1)
		tmo=${stmo:-$tmo}
	fi
	tmo=${tmo:-600}
	[ "$kind" != debug ] || tmo=$((tmo * MS_DEBUG_SLOWDOWN))
	onhost=
	! grep -q '^# runs-on: host' "$t" || onhost=1
	# vm.sh stretches the -t it is given again for the debug kernel: the
	# limit a VM test runs with is that.
	stretch=1
	[ -n "$onhost" ] || [ "$kind" != debug ] || stretch=$MS_DEBUG_SLOWDOWN
	lim=$((tmo * stretch)) own=$((tmo * stretch))
	why=$(sed -n 's/^# ours-only: //p' "$t" | head -n 1)
	log=$MS_BUILD/logs/$name.console
	cut=
	# An ours-only test under upstream is a SKIP printed at once.
	if [ "$deadline" -gt 0 ] && { [ "$kind" != upstream ] || [ -z "$why" ]; }; then
		left=$((deadline - SECONDS))
		if [ $((left - margin)) -lt "$lim" ]; then
			lim=$(((left - margin) / stretch * stretch))
			if [ "$lim" -lt "$min_limit" ]; then
				not_run "$name" "deadline: ${left}s left, its limit ${own}s" "$own"
				continue
			fi
			cut="cut from ${own}s: the deadline is ${left}s away"
		fi
	fi
	echo "=== $name (timeout ${lim}s${cut:+, $cut}, console: ${log#"$MS_TOP"/})"
	t0=$SECONDS
	rc=0
	ran+=("$name")
	# The kernel the test's own VMs boot.
	under=$kind
	[ "$kind" != upstream ] || ! grep -q '^# kernels: both' "$t" || under=ours
	: >"$log.out"
	if [ "$kind" = upstream ] && [ -n "$why" ]; then
		printf 'TAP version 13\n1..1\nok 1 - %s # SKIP ours only: %s\n' \
			"$name" "$why" >"$log.out"
		: >"$log"
	elif [ -n "$onhost" ]; then
		# It boots its own VMs (two joined by a wire, or two kernels).
		# timeout(1) gives it a process group of its own.
		MS_OURS=$under run_bg group timeout -k 10 "$lim" "$t" >"$log.out" 2>"$log"
	else
		mem=$(sed -n 's/^# memory: \([0-9]*\)$/\1/p' "$t" | head -n 1)
		# vm.sh keeps to its -t; the outer timeout(1) gives it a
		# process group and stops it before the deadline whatever
		# vm.sh does (a KVM probe boot, a second boot under TCG).
		guard=0
		[ "$deadline" -eq 0 ] || guard=$((deadline - SECONDS - 15))
		run_bg group timeout -k 10 "$guard" "$here/vm.sh" -k "$kind" \
			-t $((lim / stretch)) -m "${mem:-2048}" -l "$log" "$t" >/dev/null
	fi
	took=$((SECONDS - t0))
	# A signal that came while the test ran (not after it) stopped it.
	hit=$stopped
	tr -d '\r' <"$log.out" | sed 's/^/    /'
	p=$(tr -d '\r' <"$log.out" | grep -Ec '^ok [0-9]* ?- .*# SKIP' || true)
	skipped=$((skipped + p))
	p=$(tr -d '\r' <"$log.out" | grep -E '^ok ' | grep -vc '# SKIP' || true)
	passed=$((passed + p))
	f=$(tr -d '\r' <"$log.out" | grep -Ec '^not ok' || true)
	extra=()
	if [ -n "$hit" ]; then
		extra+=("# check.sh: stopped by SIG$hit after ${took}s")
		f=$((f + 1))
		echo "    not ok - $name: stopped by SIG$hit"
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		# The script failed without a failing test point (it died).
		f=1
		if [ "$rc" -eq 124 ]; then
			extra+=("# check.sh: timed out after ${took}s")
		else
			extra+=("# check.sh: exited with status $rc")
		fi
		echo "    not ok - $name: ${extra[-1]#\# check.sh: }"
	fi
	[ -z "$cut" ] || extra+=("# check.sh: $cut")
	plan=$(tr -d '\r' <"$log.out" | sed -n 's/^1\.\.\([0-9][0-9]*\)$/\1/p' | tail -n 1)
	npoints=$(tr -d '\r' <"$log.out" | grep -Ec '^(not )?ok ' || true)
	if [ -z "$plan" ] || [ "$npoints" -ne "$plan" ]; then
		echo "    not ok - $name: planned ${plan:-no plan}, printed $npoints points"
		f=$((f + 1))
	fi
	failed=$((failed + f))
	[ "$f" -eq 0 ] || bad+=("$name")
	verdict[$name]=$([ "$f" -eq 0 ] && echo PASS || echo FAIL)
	secs[$name]=$took limit[$name]=$lim
	note[$name]=${cut:+cut from ${own}s by the deadline}
	[ -z "$hit" ] || note[$name]="stopped by SIG$hit"
	echo "=== $name: ${verdict[$name]} in ${took}s"
	{
		tr -d '\r' <"$log.out"
		[ ${#extra[@]} -eq 0 ] || printf '%s\n' "${extra[@]}"
		echo "# check.sh verdict: ${verdict[$name]}"
	} >"$MS_BUILD/logs/$kind$MS_SUFFIX/$name.tap"
done

finish
