#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of rmpp-lossy.sh, connecting VM
# (10.12.0.2): once the peer answers ARP, progs/rmpp_umad.c sends it RMPP
# requests of 1 B, 200 B, 220 B, 4 KiB, 64 KiB and 1 MiB (up to MAX) on a
# vendor class and on DevMgt over RoCE v2 and checks every byte of each
# RMPP response.  It uses the link-local IPv6 GIDs (index 0): with
# IPv4-mapped GIDs upstream 6.12 cannot match an ACK to its RMPP send (it
# reads a GID where the receive buffer holds an IPv4 header), so its RMPP
# responses time out whoever the receiver is.
#
# Arguments (both optional): LOSS, the percentage of the frames this VM
# sends that netem drops (0: none), and MAX, the largest transfer.

. "$MS_HARNESS/guest/guest-lib.sh"

loss=${1:-0} max=${2:-0}
set -e
ms_build_prog rmpp_umad
ms_rxe_wire 10.12.0.2/24 umad
ms_netem_loss eth0 "$loss"
ms_wait 120 ms_neigh 10.12.0.1
# The requests go to the peer's link-local GID, so the kernel resolves its
# MAC by IPv6 neighbour discovery when ib_umad makes the first address
# handle, and gives up after 1 s: on a lossy wire, a lost solicitation
# fails that send with ETIMEDOUT.  Resolve it before the first send.
peer6=fe80::5054:ff:fe4d:5301
nd_ready() {
	echo >"/dev/udp/$peer6%eth0/9" 2>/dev/null
	ip -6 neigh show "$peer6" dev eth0 | grep -q lladdr
}
ms_wait 120 nd_ready
# The server's agents are registered when it meets us (rmpp-serve.sh).
MS_PEER_ROLE=connect ms_peer_sync serving >/dev/null || true
echo "# $(uname -r): client on rxe-eth0"
set +e
/tmp/rmpp_umad -d rxe-eth0 -p 1 -g 0 -M "$max" client \
	fe80000000000000505400fffe4d5301
rc=$?
[ "$loss" = 0 ] || ms_loss_report eth0 rxe-eth0
# For a failure's post-mortem: our MAD layer's counters (none on upstream).
counters=$(ms_mad_counters rxe-eth0) && echo "# MAD counters: $counters"
exit $rc
