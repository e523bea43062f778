#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmpp-kernel: kernel RMPP between two in-kernel MAD agents, no ib_umad.
# mad_rmpp_selftest.ko registers rmpp_version 1 agents on a vendor class of
# range 2 (0x31, with an OUI) and on Device Management, and exchanges RMPP
# requests and responses of 1 B, 200 B, 220 B, 4 KiB, 64 KiB and 1 MiB with
# itself over rxe, comparing every byte; its TAP lines come from the log.
# timeout: 1200

. "$MS_HARNESS/guest/guest-lib.sh"

if ! ms_rxe_veth veth0 10.11.0.1/24; then
	tap_plan 1
	tap_fail "rdma_rxe on veth0"
	exit 1
fi

mark="mad_rmpp_selftest-run-$$"
echo "$mark" >/dev/kmsg
modprobe mad_rmpp_selftest dev=rxe-veth0 port=1 gid_index=0
rc=$?
# The module's TAP lines, from this run only.
dmesg | sed -n "/$mark/,\$p" | sed -n 's/.*mad_rmpp_selftest: //p'
[ $rc -eq 0 ] && rmmod mad_rmpp_selftest
rdma link delete rxe-veth0
exit $rc
