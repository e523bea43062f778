#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of srpt-dm.sh, connecting VM (10.15.0.2): the querier.  Once
# the target's DM agent answers, progs/dm_query.c ("check") asks it every
# DM question twice, over RoCE v2 with link-local IPv6 GIDs (index 0 on
# both sides) and with IPv4-mapped GIDs (index 1), and checks each
# answer's header and every field against what ib_srpt must send.  Then it
# tells the target it is done (TCP port 7777).

. "$MS_HARNESS/guest/guest-lib.sh"

addr=10.15.0.2
taddr=10.15.0.1
dev=rxe-eth0
dmq=/tmp/dm_query
# The target's MAC is fixed by the harness (52:54:00:4d:53:01): rxe makes
# its node GUID the EUI-64 of it, GID 0 the matching link-local address.
# ib_srpt takes the node GUID of its first HCA as IOC GUID and service id.
tmac=52:54:00:4d:53:01
guid=505400fffe4d5301
ll_gid=fe80::5054:ff:fe4d:5301
v4_gid=::ffff:$taddr
# rxe's ids: vendor id RXE_VENDOR_ID, no vendor part id, hw_ver 0.
hca_ids=(0xffffff 0 0)

finish() {
	ms_wait 60 bash -c "echo done >/dev/tcp/$taddr/7777"
}
trap finish EXIT

tap_plan 6
tap_check "build dm_query" \
	ms_build_prog dm_query

setup() {
	ms_rxe_wire $addr/24 umad &&
	ms_wait 10 test -e /sys/class/infiniband/$dev/ports/1/gids/1
}
tap_check "rxe on eth0 ($addr), ib_umad" setup

# The IPv4-mapped GID's address handle needs the target's MAC from ARP.
# There is no ping on the host root: any datagram makes the kernel ask.
arp() {
	echo >/dev/udp/$taddr/9
	ip neigh show $taddr dev eth0 | grep -q "lladdr $tmac"
}
arp_ok() {
	ms_wait 300 arp || { ip neigh show dev eth0; return 1; }
}
tap_check "ARP: $taddr is at $tmac" arp_ok

# The target may still be loading ib_srpt: poll ClassPortInfo on either
# path, so that neither one is needed to get going.  Until ib_srpt's
# agent is there the MAD layer itself answers, with status 0x000c: only
# status 0 is ib_srpt (on the debug kernel rxe comes up half a minute
# before ib_srpt does).
dm_up() {
	$dmq -d $dev -x 0 -g $ll_gid -t 500 -r 0 raw 1 1 0 |
		grep -q "^status=0x0000" ||
	$dmq -d $dev -x 1 -g "$v4_gid" -t 500 -r 0 raw 1 1 0 |
		grep -q "^status=0x0000"
}
tap_check "the target's DM agent answers" ms_wait 240 dm_up

# check NAME SGID_INDEX DGID: one test point from a dm_query check run.
check() {
	local out rc

	out=$($dmq -d $dev -x "$2" -g "$3" check $guid "${hca_ids[@]}" 2>&1)
	rc=$?
	sed 's/^/    /' <<<"$out"
	if ms_tap_passed "$out" $rc; then
		tap_ok "DM over $1 GIDs, to $3 from GID index $2: $ms_p checks"
	else
		tap_fail "DM over $1 GIDs, to $3 from GID index $2: $ms_p ok, $ms_f not ok, exit $rc"
		ip neigh show dev eth0 | sed 's/^/# neigh: /'
		dmesg | tail -n 5 | sed 's/^/# dmesg: /'
	fi
}
check link-local 0 $ll_gid
check IPv4-mapped 1 "$v4_gid"
tap_done
