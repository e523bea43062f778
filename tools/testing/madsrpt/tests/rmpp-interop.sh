#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmpp-interop: RMPP wire compatibility with pure upstream 6.12.
#
# Runs on the host: boots two VMs joined by a virtual wire (vm.sh -n), a
# pristine 6.12 (listening, a) and ours (connecting, b), and each serves
# the other's RMPP requests in turn (guest/roles/rmpp-interop.sh,
# progs/rmpp_umad.c: vendor class 0x30 and DevMgt, 1 B to 1 MiB, requests
# and RMPP responses, every byte compared): upstream serves our client
# first, then ours serves upstream's.  Each side's kernel does the RMPP
# (rmpp_version 1 agents), so each direction has one of each
# implementation segmenting and the other reassembling.  (One boot pair
# for both directions; until 2026-12-06 each direction booted its own.)
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
# When the pristine kernel's VM fails before its part begins (seen once
# in CI: it hung before its first request), the pair runs again.
# kernels: both
# runs-on: host
# timeout: 3600

set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/host/common.sh"

ms_lock
ms_upstream_built || exit 1

# Three points from each VM (guest/roles/rmpp-interop.sh).
echo "TAP version 13"
echo "1..6"
log=$MS_BUILD/logs/rmpp-interop
port=15521
for try in 1 2; do
	rm -f "$log"-?.console*
	"$MS_HARNESS/host/vm.sh" -k upstream -t 540 -n "listen:$port" \
		-l "$log-a.console" "$MS_HARNESS/guest/roles/rmpp-interop.sh" a \
		>/dev/null &
	a_pid=$!
	sleep 5
	a_rc=0 b_rc=0
	"$MS_HARNESS/host/vm.sh" -k "$MS_OURS" -t 540 -n "connect:$port" \
		-l "$log-b.console" "$MS_HARNESS/guest/roles/rmpp-interop.sh" b \
		>/dev/null || b_rc=$?
	wait "$a_pid" || a_rc=$?
	[ "$try" = 1 ] && ! grep -q ': side a on ' "$log-a.console.out" ||
		break
	echo "# the pristine kernel's VM failed before its part began: run again" \
		"(first run's logs: $log-*.try1.*)"
	for f in "$log-a.console" "$log-b.console"; do
		mv "$f" "${f%.console}.try1.console"
		mv "$f.out" "${f%.console}.try1.console.out"
	done
done

ms_vm_points "$log" 6 "a exit $a_rc, b exit $b_rc" a:upstream b:"$MS_OURS"
status=$ms_vm_status
[ "$a_rc" = 0 ] && [ "$b_rc" = 0 ] || status=1
exit $status
