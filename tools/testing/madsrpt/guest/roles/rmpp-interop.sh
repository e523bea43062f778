#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of rmpp-interop.sh: both VMs of the pair, each serving the
# other's RMPP requests in turn over RoCE v2 on the wire between them
# (progs/rmpp_umad.c: a vendor class and DevMgt, requests and RMPP
# responses of 1 B to 1 MiB, every byte checked by the requester).
#
#   rmpp-interop.sh a   the listening VM (10.12.0.1): serves first, then
#                       sends its requests to the other VM
#   rmpp-interop.sh b   the connecting VM (10.12.0.2): sends first, then
#                       serves
#
# The requests go to the peer's link-local GID (index 0): with
# IPv4-mapped GIDs upstream 6.12 cannot match an ACK to its RMPP send (it
# reads a GID where the receive buffer holds an IPv4 header), so its RMPP
# responses time out whoever the receiver is.  The VMs meet over TCP
# before each turn (ms_peer_sync), the server once its agents are
# registered, so the requester finds them.

. "$MS_HARNESS/guest/guest-lib.sh"

side=$1
case "$side" in
a)	MS_PEER_ROLE=listen me=1 peer=2 ;;
b)	MS_PEER_ROLE=connect me=2 peer=1 ;;
*)	echo "usage: rmpp-interop.sh a|b" >&2; exit 2 ;;
esac
export MS_PEER_ROLE
peer6=fe80::5054:ff:fe4d:530$peer
peer_gid=fe80000000000000505400fffe4d530$peer

tap_plan 3
setup() {
	ms_build_prog rmpp_umad &&
	ms_rxe_wire 10.12.0.$me/24 umad &&
	ms_wait 120 ms_neigh 10.12.0.$peer || return 1
	# The first send's address handle resolves the peer's MAC by IPv6
	# neighbour discovery, which gives up after 1 s: resolve it first.
	nd_ready() {
		echo >"/dev/udp/$peer6%eth0/9" 2>/dev/null
		ip -6 neigh show "$peer6" dev eth0 | grep -q lladdr
	}
	ms_wait 120 nd_ready
}
tap_check "rxe on the wire, the other VM's link-local address resolved" setup
echo "# $(uname -r): side $side on rxe-eth0"

serve() {
	local pid rc

	echo "# $(uname -r): serving on rxe-eth0"
	/tmp/rmpp_umad -d rxe-eth0 -p 1 -w 300 serve >/tmp/rmpp.out 2>&1 &
	pid=$!
	# rmpp_umad says how many requests it serves once its agents are
	# registered: then the requester may begin.
	ms_wait 20 grep -q '^# serving' /tmp/rmpp.out
	ms_peer_sync serving >/dev/null
	wait $pid
	rc=$?
	tail -n 8 /tmp/rmpp.out
	return $rc
}
ask() {
	local rc

	ms_peer_sync serving >/dev/null || return 1
	echo "# $(uname -r): client on rxe-eth0"
	/tmp/rmpp_umad -d rxe-eth0 -p 1 -g 0 client $peer_gid >/tmp/rmpp.out 2>&1
	rc=$?
	grep -c '^ok' /tmp/rmpp.out
	grep -v '^ok' /tmp/rmpp.out | tail -n 8
	# For a failure's post-mortem: our MAD layer's counters (none on
	# upstream).
	counters=$(ms_mad_counters rxe-eth0) && echo "MAD counters: $counters"
	return $rc
}
for turn in a b; do
	if [ $turn = $side ]; then
		tap_here "served the other VM's RMPP requests of 1 B to 1 MiB" serve
	else
		tap_here "RMPP requests of 1 B to 1 MiB to the other VM, every byte checked" ask
	fi
done
