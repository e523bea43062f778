#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-faults: ibdevsim's fault knobs (debugfs, per port) on the default
# fabric brought up by opensm, with ib_srpt answering DM queries.  10% of
# the QP1 MADs dropped on both cables between the two HCAs' first ports:
# DM queries (progs/dm_query, whose sends the MAD layer retries) and SA
# queries still get their answers, and the knobs' counters and the MAD
# layer's retry counter show that losses happened.  Duplicated and
# delayed MADs are answered too.  A send the HCA fails stops QP1's send
# queue (SQE) and the MAD layer brings it back.  Then a cable is pulled
# (both ends DOWN) and plugged back: the switch sends Trap 128 for each
# change, opensm sweeps for them and brings every port back ACTIVE, and DM
# queries cross the cable again.
# timeout: 400

. "$MS_HARNESS/guest/guest-lib.sh"

tap_plan 19

ib=/sys/class/infiniband
dbg=/sys/kernel/debug/ibdevsim
g0=0002c90300001000

tap_check "ibdevsim loads, 2 HCAs, a switch, 4 cables" ms_ibsim_fabric
tap_check "ib_srpt loads" modprobe ib_srpt
ms_ibsim_opensm
tap_check "opensm brings every port ACTIVE with a LID" \
	ms_wait 120 ms_ibsim_all_active
tap_check "opensm reports SUBNET UP" ms_wait 60 ms_ibsim_sm_up

knobs_default() {
	local p k

	for p in node1/port1 node1/port2 node2/port1 node10/port8; do
		for k in drop duplicate delay delay_ms; do
			[ "$(cat $dbg/$p/$k)" = 0 ] || { echo "$p/$k"; return 1; }
		done
		[ "$(cat $dbg/$p/classes)" = 0x0000000f ] || return 1
		[ "$(cat $dbg/$p/dropped)" = 0 ] || return 1
	done
	[ "$(cat $dbg/node1/port1/link)" = up ] &&
	[ "$(cat $dbg/node10/port8/link)" = none ] &&
	! echo sideways >$dbg/node1/port1/link &&
	! echo down >$dbg/node10/port8/link
}
tap_check "knobs in debugfs: all off, links up (none uncabled), bad writes refused" \
	knobs_default

tap_check "build dm_query" ms_build_prog dm_query

lid() { echo $(( $(cat $ib/$1/ports/$2/lid) )); }

# dm_ioc FROM_DEV FROM_PORT TO_DEV TO_PORT [DM_QUERY_OPT...]: the DM
# profile of TO is ib_srpt's, one IOC.
dm_ioc() {
	local out from=$1 fport=$2 to=$3 tport=$4

	shift 4
	out=$(/tmp/dm_query -d "$from" -p "$fport" "$@" \
		-l "$(lid "$to" "$tport")" profile) || { echo "$out"; return 1; }
	grep -q "ioc_guid=$g0 " <<<"$out" &&
	grep -q "I/O controllers found: 1" <<<"$out"
}


# The cables HCA 1 port 1 - switch port 1 (the SM's) and HCA 2 port 1 -
# switch port 3, both directions.
lossy="node1/port1 node10/port1 node2/port1 node10/port3"
ms_ibsim_knob 2 classes $lossy
ms_ibsim_knob 100 drop $lossy

retries() {
	awk '$1 == "retries" { print $2 }' /sys/kernel/debug/ib_mad/ibdevsim0-1/stats 2>/dev/null
}
r0=$(retries)
dm_lossy() {
	local i

	for i in $(seq 20); do
		dm_ioc ibdevsim0 1 ibdevsim1 1 -t 300 -r 10 || return 1
	done
}
tap_check "10% of QP1 dropped on 2 cables: 20 DM profiles (80+ MADs) all answered" \
	dm_lossy
r1=$(retries)
echo "# MAD layer retries on ibdevsim0-1: ${r0:-?} -> ${r1:-?}"
if [ -e /sys/kernel/debug/ib_mad ]; then
	tap_check "the MAD layer retried sends (${r0:-?} -> ${r1:-?})" \
		test "${r1:-0}" -gt "${r0:-0}"
else
	tap_skip "the MAD layer retried sends (no MAD counters in this kernel)"
fi

# saquery sends each query once (umad_send with no retries), and a lost
# segment of opensm's RMPP answer is often not resent in time: measured
# over 60-80 runs, 55-68% of the runs fail on our kernel and on pristine
# 6.12 alike, in streaks of up to 10 (a CI run saw 10 in a row).  So the
# query gets up to 30 runs, and every lost run is shown.
sa_lossy() {
	local i fails=0

	for i in $(seq 30); do
		if saquery -C ibdevsim1 -P 1 -t 500 >/tmp/sa.out 2>&1 &&
		   [ "$(grep -o "ibdevsim [A-Za-z]* [0-9]*" /tmp/sa.out | sort -u | wc -l)" -eq 3 ]; then
			echo "saquery answered after $fails lost runs"
			return 0
		fi
		fails=$((fails + 1))
		echo "run $i: $(tail -n 1 /tmp/sa.out)"
	done
	return 1
}
tap_here "saquery node records across the lossy cables" sa_lossy

dropped() {
	local p n=0

	for p in $lossy; do
		n=$((n + $(cat $dbg/$p/dropped)))
	done
	echo $n
}
nd=$(dropped)
for p in $lossy; do echo "# $p dropped $(cat $dbg/$p/dropped)"; done
tap_check "the drop counters show $nd MADs dropped" test "$nd" -gt 0
ms_ibsim_knob 0 drop $lossy

# Every MAD ibdevsim1 port 1 sends goes out twice: each answer reaches the
# requester's MAD layer twice, and user space must get it once.  With no
# retries (-r 0) an answer to any other TID, or one after the last
# (dm_query -w waits 2 s for it), is a duplicate delivered.
ms_ibsim_knob 1000 duplicate node2/port1
dup_ok() {
	local out d0 d1

	d0=$(cat $dbg/node2/port1/duplicated)
	out=$(/tmp/dm_query -d ibdevsim0 -p 1 -r 0 -w 2000 \
		-l "$(lid ibdevsim1 1)" profile) || { echo "$out"; return 1; }
	d1=$(cat $dbg/node2/port1/duplicated)
	echo "$out" | grep -E "found|no request"
	echo "packets duplicated: $((d1 - d0))"
	grep -q "ioc_guid=$g0 " <<<"$out" &&
	grep -q "I/O controllers found: 1" <<<"$out" &&
	grep -qx "answers matching no request: 0" <<<"$out" &&
	[ $((d1 - d0)) -ge 4 ]
}
tap_check "every QP1 MAD of a cable duplicated: each answer delivered once, counted" dup_ok
ms_ibsim_knob 0 duplicate node2/port1

ms_ibsim_knob 1000 delay node10/port3
ms_ibsim_knob 300 delay_ms node10/port3
delay_ok() {
	local t0=$SECONDS

	dm_ioc ibdevsim0 1 ibdevsim1 1 -t 2000 -r 0 &&
	[ "$(cat $dbg/node10/port3/delayed)" -ge 4 ] &&
	echo "4+ MADs delayed 300 ms each: $((SECONDS - t0)) s"
}
tap_check "every QP1 MAD to ibdevsim1 delayed 300 ms: still answered, counted" \
	delay_ok
ms_ibsim_knob 0 delay node10/port3

# A MAD sent with a P_Key index beyond the port's table (32 entries)
# fails in the HCA, and as on hardware QP1's send queue stops in SQE,
# flushing whatever follows, until the QP is moved back to RTS: ibdevsim
# counts the stop, and the next query is answered only if the MAD layer
# brought QP1 back.
sqe_ok() {
	local s0 s1 e0 e1

	s0=$(cat $dbg/node1/port1/sq_errors) || return 1
	e0=$(awk '$1 == "send_errors" { print $2 }' $mad_stats 2>/dev/null)
	if /tmp/dm_query -d ibdevsim0 -p 1 -k 40 -t 200 -r 0 \
		-l "$(lid ibdevsim1 1)" profile >/tmp/sqe.out 2>&1; then
		echo "answered with P_Key index 40"
		return 1
	fi
	s1=$(cat $dbg/node1/port1/sq_errors)
	e1=$(awk '$1 == "send_errors" { print $2 }' $mad_stats 2>/dev/null)
	echo "send queue stops: $s0 -> $s1; MAD layer send errors: ${e0:-?} -> ${e1:-?}"
	[ "$s1" -eq $((s0 + 1)) ] &&
	dm_ioc ibdevsim0 1 ibdevsim1 1 -t 1000 -r 0 &&
	dm_ioc ibdevsim0 1 ibdevsim1 1 -t 1000 -r 0 || return 1
	# Sends queued behind a failing one are flushed with it; the MAD
	# layer must post them again: 3 rounds of 6 queries racing 2 bad ones.
	local r i p good="" bad="" fails=0
	for r in 1 2 3; do
		/tmp/dm_query -d ibdevsim0 -p 1 -k 40 -t 200 -r 0 \
			-l "$(lid ibdevsim1 1)" profile >/dev/null 2>&1 &
		bad="$bad $!"
		for i in 1 2 3 4 5 6; do
			dm_ioc ibdevsim0 1 ibdevsim1 1 -t 1000 -r 2 >/dev/null &
			good="$good $!"
		done
		/tmp/dm_query -d ibdevsim0 -p 1 -k 40 -t 200 -r 0 \
			-l "$(lid ibdevsim1 1)" profile >/dev/null 2>&1 &
		bad="$bad $!"
		for p in $good; do wait "$p" || fails=$((fails + 1)); done
		good=""
	done
	for p in $bad; do wait "$p"; done
	echo "racing the bad ones: $fails of 18 queries failed; send queue stops now $(cat $dbg/node1/port1/sq_errors)"
	[ $fails = 0 ]
}
mad_stats=/sys/kernel/debug/ib_mad/ibdevsim0-1/stats
tap_here "a bad P_Key index stops QP1's sends (SQE); the MAD layer restarts them" \
	sqe_ok

pulled() {
	local s

	echo down >$dbg/node10/port3/link || return 1
	s=$(cat $ib/ibdevsim1/ports/1/state)
	echo "ibdevsim1/1: $s, $(cat $ib/ibdevsim1/ports/1/phys_state)"
	grep -q DOWN <<<"$s" &&
	[ "$(cat $dbg/node2/port1/link)" = down ] &&
	grep -q "cable 2 1 10 3 pulled" /sys/bus/ibdevsim/topology &&
	! dm_ioc ibdevsim0 1 ibdevsim1 1 -t 200 -r 1
}
log_mark=$(wc -l </tmp/opensm.log)
tap_check "pull the cable of ibdevsim1 port 1: DOWN, pulled, DM unreachable" pulled

t0=$SECONDS
echo up >$dbg/node2/port1/link
tap_check "plug it back: opensm's sweeps bring every port ACTIVE again" \
	ms_wait 90 ms_ibsim_all_active
echo "# back ACTIVE in $((SECONDS - t0)) s"
# The switch told the SM of both link changes (Trap 128 from its SMA),
# and opensm swept for them rather than waiting for its next sweep.
trap128() {
	local log

	log=$(tail -n +$((log_mark + 1)) /tmp/opensm.log)
	grep -E "num:128 .*Producer:2" <<<"$log"
	[ "$(grep -cE "Received Generic Notice .*num:128 .*Producer:2" <<<"$log")" -ge 2 ]
}
tap_here "the switch sent Trap 128 for the pull and the plug; opensm logged both" \
	trap128
tap_check "DM profile across the replugged cable" \
	dm_ioc ibdevsim0 1 ibdevsim1 1

kill "$ms_sm_pid"
wait "$ms_sm_pid" 2>/dev/null
tap_check "ib_srpt unloads" modprobe -r ib_srpt
tap_check "ibdevsim unloads with its devices and knobs" \
	sh -c "rmmod ibdevsim && ! test -e $dbg"
tap_done
