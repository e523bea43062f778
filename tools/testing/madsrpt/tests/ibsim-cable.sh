#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-cable: one InfiniBand fabric across two VMs, ours and pristine
# 6.12, each with its own MAD layer, ib_cm, SA client, ib_srpt and ib_srp.
#
# Runs on the host: builds the pristine kernel next to ours, then boots
# two VMs joined by a wire (vm.sh -n).  Each has one ibdevsim HCA; a's
# is on a switch, whose port 2 is cabled to b's HCA by a remote cable
# (ibdevsim's new_remote_cable: InfiniBand packets as bytes, LRH to
# VCRC, in UDP).  VM a runs our kernel and opensm, which manages the
# nodes of both VMs across the cable; VM b runs pristine 6.12 (guest/roles/ibsim-cable.sh says what
# each does: SA queries, ibnetdiscover, DM discovery, an ib_srp login
# each way with fio verifying while the cable duplicates 10% of a's
# packets, RMPP transfers up to 1 MiB each way, the cable pulled under
# I/O, and the packet-level fuzz b writes onto the cable, which a's
# counters must account for frame by frame).  Under check-upstream too it
# pairs ours with upstream.  The wire is captured (QEMU filter-dump on
# a's side) and tools/infiniband/ibdevsim-pcap.py checks every frame of
# the cable in it but those the fuzz spoiled on purpose, which it must
# find bad.
# kernels: both
# runs-on: host
# timeout: 1500

set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/host/common.sh"

ms_lock
ms_upstream_built || exit 1

# 15 points on a's side and 14 on b's (guest/roles/ibsim-cable.sh), then
# the capture.  The fuzz is 20,000 frames, 200,000 under make soak.
echo "TAP version 13"
echo "1..30"
nfuzz=20000
[ -z "${MS_SOAK:-}" ] || nfuzz=200000
log=$MS_BUILD/logs/ibsim-cable
cap=$log.pcap
rm -f "$cap" "$log"-?.console*
port=15561
"$MS_HARNESS/host/vm.sh" -k "$MS_OURS" -t 1200 -n "listen:$port" -d "$cap" \
	-l "$log-a.console" "$MS_HARNESS/guest/roles/ibsim-cable.sh" a "$nfuzz" \
	>/dev/null &
a_pid=$!
sleep 5
b_rc=0 a_rc=0
"$MS_HARNESS/host/vm.sh" -k upstream -t 1200 -n "connect:$port" \
	-l "$log-b.console" "$MS_HARNESS/guest/roles/ibsim-cable.sh" b "$nfuzz" \
	>/dev/null || b_rc=$?
wait "$a_pid" || a_rc=$?

# Each side's points, numbered on in one plan.
ms_vm_points "$log" 29 "a exit $a_rc, b exit $b_rc" a:"$MS_OURS" b:upstream
status=$ms_vm_status
[ "$a_rc" = 0 ] && [ "$b_rc" = 0 ] || status=1

# The capture, checked by an implementation of the framing and CRCs of
# its own: every frame the two ends sent (from UDP port 4792) is good,
# and SMPs, RC packets and link frames crossed.  The fuzz comes from
# another port; the checker's verdicts on it are summed up.
capture() {
	local out bad

	out=$(python3 "$MS_TOP/tools/infiniband/ibdevsim-pcap.py" convert \
		--list "$cap" "$log-ib.pcap") || { tail -n 5 <<<"$out"; return 1; }
	grep -v '^ *[0-9]' <<<"$out"
	bad=$(grep -E '^ *[0-9]+ .*:4792->' <<<"$out" | grep -v ': ok' | head -n 5)
	echo "frames of the fuzz found bad: $(grep -E '^ *[0-9]+ ' <<<"$out" |
		grep -v ':4792->' | grep -vc ': ok')"
	[ -z "$bad" ] || { echo "bad frames from the cable's ends:"; echo "$bad"; }
	[ -z "$bad" ] && grep -q "^SMPs: [1-9]" <<<"$out" &&
	grep -q "RC [1-9]" <<<"$out" && grep -q "^link frames: [1-9]" <<<"$out"
}
if out=$(capture 2>&1); then
	echo "ok 30 - the capture of the wire: every frame of the cable's ends good (SMPs, RC, link frames)"
else
	echo "not ok 30 - the capture of the wire: every frame of the cable's ends good"
	status=1
fi
sed 's/^/    # /' <<<"$out"
rm -f "$cap" "$log-ib.pcap"
exit $status
