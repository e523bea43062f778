#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# expire.sh N: the guest side of tests/mad-expire.sh.
#
# Loads kmod/mad_bench_kmod.ko in expire mode on rxe loopback: a requester
# posts N GETs to a QP that does not exist with a ten-minute timeout,
# waits until all of them wait for their responses, and shortens every
# timeout to 1 ms with ib_modify_mad(), so that all N expire together,
# while four GETs at a time keep going to a responder on the same port.
# The soft-lockup detector is set to its shortest threshold first
# (kernel.watchdog_thresh=1: a CPU that does not schedule for 2 s is
# reported), and the host fails the run on any such report.
#
# TAP: the module found and rxe up; every one of the N came back once,
# timed out, and the responder's GETs were answered during the storm
# (none timed out, with 10 s each); the port's counters grew by N
# timeouts and nothing is left outstanding; no lockup or stall report.

. "$MS_HARNESS/guest/guest-lib.sh"

n=${1:-100000}
addr=10.16.0.1
dev=rxe-veth0
stats=/sys/kernel/debug/ib_mad/$dev-1/stats

tap_plan 4

# stat NAME: one counter of our port, from debugfs.
stat() {
	sed -n "s/^$1 //p" $stats
}

# field NAME: NAME=VALUE out of the module's line.
field() {
	grep -o " $1=[0-9]*" <<<"$line" | cut -d= -f2
}

ko=$MS_TOP/build/bench/kmod/$(uname -r)/mad_bench_kmod.ko
if [ -f "$ko" ] && ms_rxe_veth veth0 $addr/24 && [ -r $stats ] &&
   sysctl -q -w kernel.watchdog_thresh=1 &&
   [ "$(sysctl -n kernel.watchdog_thresh)" = 1 ] &&
   [ "$(sysctl -n kernel.soft_watchdog)" = 1 ]; then
	tap_ok "rxe up, benchmark module and counters found, soft-lockup threshold 1 s (reported after 2 s)"
else
	tap_fail "set up rxe, find $ko and $stats, arm the soft-lockup detector"
	exit 1
fi

timeouts0=$(stat timeouts)
dmesg -C
rc=0
insmod "$ko" dev=$dev expire="$n" window=4 timeout_ms=10000 || rc=$?
line=$(dmesg | grep -o 'mad_bench_kmod expire=.*')
rmmod mad_bench_kmod 2>/dev/null
echo "# ${line:-no line from the module}"

if [ $rc -eq 0 ] && [ "$(field timed_out)" = "$n" ] &&
   [ "$(field other)" = 0 ] && [ "$(field errors)" = 0 ] &&
   [ "$(field answered_meanwhile)" -gt 0 ]; then
	tap_ok "$n GETs expired together in $(field expire_ms) ms, each came back once timed out; $(field answered_meanwhile) exchanges with the responder answered meanwhile"
else
	tap_fail "mass expiry (insmod exit $rc): ${line:-no line}"
fi

grew=$(($(stat timeouts) - timeouts0))
if [ "$grew" = "$n" ] && [ "$(stat outstanding)" = 0 ]; then
	tap_ok "port counters: $grew timeouts more, 0 sends outstanding"
else
	tap_fail "port counters: $grew timeouts more ($n expected), $(stat outstanding) outstanding (0 expected)"
fi

# The host fails the run on these too; the point names them.
if dmesg | grep -Eq 'soft lockup|rcu: INFO|hung_task|blocked for more than'; then
	tap_fail "lockup or stall reported:"
	dmesg | grep -E -m 5 'soft lockup|rcu: INFO|blocked for more' | sed 's/^/# /'
else
	tap_ok "no soft lockup, RCU stall or hung task reported"
fi
