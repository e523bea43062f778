#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mad-rdmacm: connections whose CM MADs go through our MAD layer on QP1.
# Over one rxe device (RoCE v2, IPv4), rdma-core's rping, ucmatose with 50
# connections and udaddy (UD, SIDR REQ/REP) connect and move data, and
# ib_send_bw -R measures a send bandwidth over an RDMA/CM connection.
# The per-port MAD counters in debugfs must show traffic and no drops.
# timeout: 900

. "$MS_HARNESS/guest/guest-lib.sh"

addr=10.13.0.1
dev=rxe-veth0

# run_pair DESC SERVER-CMD -- CLIENT-CMD: start the server, run the client,
# pass if both exit 0 within 120 s.
run_pair() {
	local desc=$1 srv=() cli=() spid out rc src
	shift
	while [ "$1" != "--" ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	timeout 120 "${srv[@]}" >/tmp/srv.out 2>&1 &
	spid=$!
	sleep 1
	out=$(timeout 120 "${cli[@]}" 2>&1)
	rc=$?
	wait $spid
	src=$?
	if [ $rc -eq 0 ] && [ $src -eq 0 ]; then
		tap_ok "$desc"
	else
		tap_fail "$desc (client rc $rc, server rc $src)"
		sed 's/^/# client: /' <<<"$out" | tail -n 15
		sed 's/^/# server: /' /tmp/srv.out | tail -n 15
	fi
}

stat_of() {
	sed -n "s/^$1 //p" /sys/kernel/debug/ib_mad/$dev-1/stats
}

tap_plan 7
tap_check "rxe on veth0" ms_rxe_veth veth0 $addr/24
modprobe rdma_ucm

run_pair "rping connects and verifies 20 transfers" \
	rping -s -a $addr -C 20 -v -- rping -c -a $addr -C 20 -v -V
run_pair "ucmatose: 50 connections move data" \
	ucmatose -b $addr -c 50 -- ucmatose -s $addr -c 50
run_pair "udaddy: UD over SIDR resolves and moves data" \
	udaddy -b $addr -- udaddy -s $addr
run_pair "ib_send_bw -R over RDMA/CM" \
	ib_send_bw -R -F -d $dev -n 200 -- ib_send_bw -R -F -d $dev -n 200 $addr

sent=$(stat_of sent)
recv=$(stat_of received)
echo "# MAD counters:"
sed 's/^/#   /' /sys/kernel/debug/ib_mad/$dev-1/stats
if [ "${sent:-0}" -gt 100 ] && [ "${recv:-0}" -gt 100 ]; then
	tap_ok "MAD counters show the CM traffic ($sent sent, $recv received)"
else
	tap_fail "MAD counters show the CM traffic ($sent sent, $recv received)"
fi
drops=$(($(stat_of dropped_invalid) + $(stat_of dropped_security) +
	 $(stat_of dropped_nomem) + $(stat_of send_errors)))
if [ "$drops" -eq 0 ]; then
	tap_ok "no invalid, security or memory drops and no send errors"
else
	tap_fail "drops or send errors: $drops"
fi
rdma link delete $dev
tap_done
