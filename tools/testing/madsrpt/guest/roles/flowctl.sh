#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# flowctl.sh SECONDS MODE: the guest side of tests/mad-flowctl.sh.
#
# Loads kmod/mad_bench_kmod.ko in overload mode on rxe loopback: a
# requester keeps $win SA GETs outstanding (timeout $tmo ms, $retries
# retries) to a responder that answers only $rate of them per second,
# oldest first.  Prints the module's line as "OVERLOAD ..." for the host.
#
# MODE full (our kernel) also proves, as TAP:
#   - flow control held the responder's queue to what the requester's
#     slots allow (fc_max = recv_queue_size / 4 requests, each with at most
#     1 + retries copies), where pristine 6.12 fills it with the whole storm;
#   - requests waited on the backlog and none is left there afterwards;
#   - the requests that did not wait too long were answered;
#   - in a second, slower storm (50 answers a second, 100 outstanding, 500
#     ms timeouts, so that requests are retried while the responder still
#     holds them), the responder (an SA-class agent) never received a copy
#     of a request still in its queue: the MAD layer dropped them
#     (dup_requests_dropped), where pristine 6.12 delivers each retry;
#   - two cmtime runs connecting to each other at once, each with more
#     connection requests than the CM agent has slots, both complete:
#     CM answers (REP, RTU, DREP) never wait behind requests, so two nodes
#     opening connections to each other cannot deadlock.
# MODE overload (pristine 6.12) only runs the storm.

. "$MS_HARNESS/guest/guest-lib.sh"

secs=$1 mode=$2
rate=500 win=3000 tmo=1000 retries=3 conns=300
addr=10.16.0.1
dev=rxe-veth0

# fc VAR: one flow-control counter of our port, from debugfs.
fc() {
	sed -n "s/^$1 //p" /sys/kernel/debug/ib_mad/$dev-1/stats
}

# field NAME: NAME=VALUE out of the module's line.
field() {
	grep -o " $1=[0-9]*" <<<"$line" | cut -d= -f2
}

[ "$mode" = full ] && tap_plan 9
ko=$MS_TOP/build/bench/kmod/$(uname -r)/mad_bench_kmod.ko
if ! [ -f "$ko" ] || ! ms_rxe_veth veth0 $addr/24; then
	echo "# no $ko, or no rxe"
	[ "$mode" = full ] && tap_fail "set up rxe and find the benchmark module"
	exit 1
fi

dmesg -C
rc=0
insmod "$ko" dev=$dev overload=$rate window=$win timeout_ms=$tmo \
	retries=$retries seconds="$secs" || rc=$?
line=$(dmesg | grep -o 'mad_bench_kmod overload=.*')
rmmod mad_bench_kmod 2>/dev/null
echo "OVERLOAD${line#mad_bench_kmod}"
[ "$mode" = full ] || exit $rc

if [ $rc -eq 0 ] && [ -n "$line" ]; then
	tap_ok "the overloaded responder ran $secs s: $line"
else
	tap_fail "the overloaded responder ran (insmod exit $rc)"
fi
sed 's/^/# /' /sys/kernel/debug/ib_mad/$dev-1/stats | grep -E '# (fc_|dup_)'

fc_max=$(($(cat /sys/module/ib_core/parameters/recv_queue_size) / 4))
bound=$((fc_max * (1 + retries)))
qmax=$(field queued_max)
if [ -n "$qmax" ] && [ "$qmax" -gt 0 ] && [ "$qmax" -le "$bound" ]; then
	tap_ok "responder queue peaked at $qmax requests <= $fc_max slots x $((1 + retries)) tries, with $win wanted"
else
	tap_fail "responder queue peaked at '$qmax', over $fc_max slots x $((1 + retries)) tries"
fi

queued=$(fc fc_queued)
if [ "${queued:-0}" -ge $((win - fc_max)) ] && [ "$(fc fc_backlog)" = 0 ]; then
	tap_ok "$queued requests waited for a slot; the backlog is empty again"
else
	tap_fail "fc_queued '$queued' (at least $((win - fc_max)) expected), fc_backlog '$(fc fc_backlog)' (0 expected)"
fi

# What timed out on our side either waited its whole deadline on the
# backlog (fc_dropped) or was sent and not answered in time; while the
# responder keeps up with what the slots let through, that is rare.
answered=$(field answered) timeouts=$(field timeouts)
dropped=$(fc fc_dropped)
if [ "${answered:-0}" -gt 0 ] && [ "${dropped:-0}" -gt 0 ] &&
   [ $((timeouts - dropped)) -le $((answered / 10)) ]; then
	tap_ok "$answered answered, $timeouts timed out of which $dropped never left the backlog"
else
	tap_fail "answered '$answered', timeouts '$timeouts', dropped on the backlog '$dropped'"
fi

# Retries of requests the responder still holds reach it only as copies
# the MAD layer drops.
dups0=$(fc dup_requests_dropped)
dmesg -C
insmod "$ko" dev=$dev overload=50 window=100 timeout_ms=500 retries=3 \
	seconds=4 || true
line=$(dmesg | grep -o 'mad_bench_kmod overload=.*')
rmmod mad_bench_kmod 2>/dev/null
echo "# slow storm: $line"
copies=$(field copies) dups=$(($(fc dup_requests_dropped) - dups0))
if [ "${copies:-x}" = 0 ] && [ "$dups" -gt 0 ]; then
	tap_ok "slow storm: the responder got no copy of a request it still held; $dups copies dropped"
else
	tap_fail "slow storm: the responder got '$copies' copies of requests it still held; $dups dropped"
fi

# Two nodes connecting to each other at once.  One VM: both ends of both
# runs are the same CM agent, which is the harder case.
modprobe rdma_ucm
before=$(fc fc_queued)
cmtime -b $addr -p 7471 -c $conns >/tmp/cmtime-a-srv.out 2>&1 &
srv_a=$!
cmtime -b $addr -p 7472 -c $conns >/tmp/cmtime-b-srv.out 2>&1 &
srv_b=$!
sleep 1
timeout 300 cmtime -s $addr -p 7472 -c $conns >/tmp/cmtime-a.out 2>&1 &
cli_a=$!
timeout 300 cmtime -s $addr -p 7471 -c $conns >/tmp/cmtime-b.out 2>&1 &
cli_b=$!
rc_a=0 rc_b=0
wait $cli_a || rc_a=$?
wait $cli_b || rc_b=$?
# The clients' exit status is the verdict; the servers keep listening for
# more clients and are stopped.
kill $srv_a $srv_b 2>/dev/null
wait $srv_a $srv_b 2>/dev/null
for f in a b; do
	grep -E '^(step|connect|disconnect)' /tmp/cmtime-$f.out | sed "s/^/# $f: /"
done
if [ $rc_a -eq 0 ] && [ $rc_b -eq 0 ] &&
   grep -q '^connect' /tmp/cmtime-a.out && grep -q '^connect' /tmp/cmtime-b.out; then
	tap_ok "two cmtime runs of $conns connections each, connecting at once, both completed"
else
	tap_fail "crossing cmtime runs: exit $rc_a and $rc_b"
	tail -n 5 /tmp/cmtime-a.out /tmp/cmtime-b.out | sed 's/^/# /'
fi
after=$(fc fc_queued)
if [ $((after - before)) -gt 0 ]; then
	tap_ok "$((after - before)) CM requests waited for a slot during them"
else
	tap_fail "no CM request waited for a slot ($conns x 2 REQs, $fc_max slots)"
fi
if [ "$(fc fc_backlog)" = 0 ] && [ "$(fc outstanding)" = 0 ]; then
	tap_ok "nothing outstanding or on a backlog at the end"
else
	tap_fail "left outstanding: $(fc outstanding), on a backlog: $(fc fc_backlog)"
fi
timeouts_cm=$(fc timeouts)
echo "# MAD timeouts on the port over the whole run: $timeouts_cm"
tap_check "the kernel log has no MAD layer warning" \
	bash -c '! dmesg | grep -iE "ib_mad.*(warn|error)"'
tap_done
