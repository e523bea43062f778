#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmpp-interop: RMPP wire compatibility with pure upstream 6.12.
#
# Runs on the host: builds the pristine kernel next to ours, then boots two
# VMs joined by a virtual wire (vm.sh -n).  One serves RMPP requests, the
# other sends them (guest/roles/rmpp-serve.sh, guest/roles/rmpp-client.sh,
# progs/rmpp_umad.c: vendor class 0x30 and DevMgt, 1 B to 1 MiB, requests
# and RMPP responses, every byte compared): once with upstream serving our
# client, once with ours serving upstream's.  Each side's kernel does the
# RMPP (rmpp_version 1 agents), so each direction has one of each
# implementation segmenting and the other reassembling.
#
# Two things made this test fail on 1 MiB of DevMgt before, and both are
# worth knowing when it fails again: the responder exited as soon as it
# had answered the last request, cancelling that RMPP response while it
# was being segmented (fixed with the closing exchange of rmpp_umad), and
# our requester granted the response a 64-segment window in the
# double-sided turnaround ACK, so a strict sender (upstream) took our
# final ACK of a one-segment response, which says "window 1", for an old
# one and timed out a few seconds later, which ended the responder (we
# now grant one segment, as upstream does).  The responder prints why it
# stopped, the client our MAD counters.  It boots both kernels itself, so
# under check-upstream too it pairs ours (MS_OURS=ours) with upstream.
# kernels: both
# runs-on: host
# timeout: 3600

set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/host/common.sh"

ms_lock
ms_upstream_built || exit 1

echo "TAP version 13"
echo "1..2"
status=0
ms_rmpp_pair 1 upstream "$MS_OURS" 15521 || status=1
ms_rmpp_pair 2 "$MS_OURS" upstream 15522 || status=1
exit $status
