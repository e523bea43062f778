#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of rmpp-interop.sh, listening VM: rxe on the wire to the other
# VM (10.12.0.1), then progs/rmpp_umad.c answers the peer's 12 RMPP
# requests (vendor 0x30 and DevMgt, 1 B to 1 MiB) with RMPP responses,
# then the closing 1-byte request that tells it every answer has arrived.

. "$MS_HARNESS/guest-lib.sh"

set -e
ms_build_prog rmpp_umad
ms_rxe_wire 10.12.0.1/24 umad
echo "# $(uname -r): serving on rxe-eth0"
/tmp/rmpp_umad -d rxe-eth0 -p 1 -c 13 -w 600 serve
