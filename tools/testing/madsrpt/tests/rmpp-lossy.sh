#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmpp-lossy: RMPP recovery from lost segments and lost ACKs.
#
# Runs on the host and boots two VMs of our kernel joined by a virtual
# wire, each dropping 2% of the frames it sends (netem): the rmpp-interop
# exchanges (guest/roles/rmpp-serve.sh, guest/roles/rmpp-client.sh) of 1 B to
# 64 KiB on the vendor class and on DevMgt, requests and RMPP responses,
# every byte compared.  Lost DATA segments make the sender time out and
# repeat its window from the last ACK, lost ACKs make the receiver
# acknowledge the repeated segments again (also after the message was
# delivered), and the out-of-order segments after a gap are kept.  1 MiB
# is left out: with about a hundred losses at a 2 s ACK timeout each it
# would take minutes without showing anything new.  Point 2 proves, from
# what each VM reports (netem's drop count, the MAD layer's retries),
# that frames were lost on both sides and that sends were retried.
# runs-on: host
# timeout: 1800

set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/host/common.sh"

ms_lock
echo "TAP version 13"
echo "1..2"
rc=0
ms_rmpp_pair 1 "$MS_OURS" "$MS_OURS" 15541 2 65536 || rc=1

# The point of the test is recovery: prove that frames were lost on both
# sides and that the MAD layers retried, from what each VM reported.
lost() {
	local side=$1 dropped retries

	read -r dropped retries < <(tr -d '\r' \
		<"$MS_BUILD/logs/rmpp-$MS_OURS-serves-$MS_OURS-15541-$side.console.out" |
		sed -n 's/^# lossy: netem dropped \([0-9]*\) frames, MAD retries \([0-9]*\)$/\1 \2/p')
	echo "# $side: netem dropped ${dropped:-?} frames, MAD retries ${retries:-?}"
	[ "${dropped:-0}" -gt 0 ] && total_retries=$((total_retries + ${retries:-0}))
}
total_retries=0
if lost srv && lost cli && [ "$total_retries" -gt 0 ]; then
	echo "ok 2 - frames were dropped on both sides and $total_retries sends retried"
else
	echo "not ok 2 - no proof of loss and recovery (see above)"
	rc=1
fi
exit $rc
