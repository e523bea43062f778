#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmpp-umad: kernel RMPP through ib_umad.  progs/rmpp_umad.c registers
# rmpp_version 1 agents on a vendor class of range 2 (0x30, with an OUI)
# and on Device Management, sends itself RMPP requests of 1 B, 200 B,
# 220 B, 4 KiB, 64 KiB and 1 MiB over rxe and answers each with an RMPP
# response of the same size (double-sided RMPP); every byte is compared in
# both directions.
# timeout: 1200

. "$MS_HARNESS/guest/guest-lib.sh"

prog=/tmp/rmpp_umad
ms_build_prog rmpp_umad || ms_bail "build progs/rmpp_umad.c"
ms_rxe_veth veth0 10.11.0.1/24 || ms_bail "rdma_rxe on veth0"
modprobe ib_umad
ms_wait 10 test -c /dev/infiniband/umad0

"$prog" -d rxe-veth0 -p 1 -g 0 loop
rc=$?
rdma link delete rxe-veth0
exit $rc
