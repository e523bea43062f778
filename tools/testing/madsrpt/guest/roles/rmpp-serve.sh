#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of rmpp-lossy.sh, listening VM: rxe on
# the wire to the other VM (10.12.0.1), then progs/rmpp_umad.c answers the
# peer's RMPP requests (vendor 0x30 and DevMgt, 1 B up to MAX) with RMPP
# responses, then the closing 1-byte request that tells it every answer
# has arrived.
#
# Arguments (both optional): LOSS, the percentage of the frames this VM
# sends that netem drops (0: none), and MAX, the largest transfer; the
# client must be given the same MAX.

. "$MS_HARNESS/guest/guest-lib.sh"

loss=${1:-0} max=${2:-0}
set -e
ms_build_prog rmpp_umad
ms_rxe_wire 10.12.0.1/24 umad
ms_netem_loss eth0 "$loss"
echo "# $(uname -r): serving on rxe-eth0"
set +e
/tmp/rmpp_umad -d rxe-eth0 -p 1 -M "$max" -w 300 serve >/tmp/rmpp.out 2>&1 &
pid=$!
# Its agents are registered once it says how many requests it serves:
# then the client, which waits for this meeting, may begin.
ms_wait 20 grep -q '^# serving' /tmp/rmpp.out
MS_PEER_ROLE=listen ms_peer_sync serving >/dev/null
wait $pid
rc=$?
cat /tmp/rmpp.out
[ "$loss" = 0 ] || ms_loss_report eth0 rxe-eth0
exit $rc
