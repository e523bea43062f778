#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmpp-lossy: RMPP recovery from lost segments and lost ACKs.
#
# Runs on the host and boots two VMs of our kernel joined by a virtual
# wire, each dropping 2% of the frames it sends (netem): the rmpp-interop
# exchanges (interop/rmpp-serve.sh, interop/rmpp-client.sh) of 1 B to
# 64 KiB on the vendor class and on DevMgt, requests and RMPP responses,
# every byte compared.  Lost DATA segments make the sender time out and
# repeat its window from the last ACK, lost ACKs make the receiver
# acknowledge the repeated segments again (also after the message was
# delivered), and the out-of-order segments after a gap are kept.  1 MiB
# is left out: with about a hundred losses at a 2 s ACK timeout each it
# would take minutes without showing anything new.
# runs-on: host
# timeout: 1800

set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/common.sh"

ms_lock
echo "TAP version 13"
echo "1..1"
ms_rmpp_pair 1 "$MS_OURS" "$MS_OURS" 15541 2 65536
