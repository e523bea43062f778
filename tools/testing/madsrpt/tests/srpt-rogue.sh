#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srpt-rogue: a rogue SRP initiator against ib_srpt while a well-behaved
# one verifies its data on the same target (issue 12, hostile input).
#
# progs/srp_rogue.c logs in over RDMA/CM with librdmacm and libibverbs and
# sends what no initiator should: logins with short private data, wrong
# opcodes, IU lengths, target port ids, buffer formats and flags (each
# must get a REJ with the SRP_LOGIN_REJ reason that fits); IUs with unknown
# opcodes, empty or shorter than their type (the target closes the
# channel); SRP_CMDs whose descriptors, counts, offsets, additional CDB
# length or immediate data reach past the IU, descriptors of 4 GiB and of
# more than 16 MiB, unmapped LUNs (CHECK CONDITION with the right sense,
# the channel keeps working); reads into buffers longer than the data (the
# residual, and every byte past the data untouched); twice as many IUs as
# it has credits; unknown TMFs; a DREQ while a window of reads is in
# flight; random SRP_CMDs.  After each case a new login must work.  Then
# a login whose ACL is removed and TPG disabled once its session is made
# (kmod/delay_kmod.ko holds it there) must be rejected and let the rmdir
# finish.
# Meanwhile ib_srp's fio writes and verifies the LUN's first 64 MiB; at the
# end every fio run verified.  Last, the target is torn down and ib_srpt
# unloaded while the rogue holds a channel whose release work
# delay_kmod holds asleep past each of its wakes: the unload must wait for
# the work.
#
# Runs on the host so that it can tell the VM how long to go on:
# one round of every case under make check, 20 under make soak (MS_SOAK=1).
# runs-on: host
# timeout: 420
# soak-timeout: 3600

set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/host/common.sh"

rounds=1
[ -n "${MS_SOAK:-}" ] && rounds=${MS_ROGUE_ROUNDS:-20}
ms_lock
# The guest loads kmod/delay_kmod.ko for its ACL and unload races;
# without it those points fail.
ms_build_kmod "$MS_OURS" >"$MS_BUILD/logs/kmod-$MS_OURS.log" 2>&1 ||
	echo "# kmod/ did not build against $MS_OURS (build/logs/kmod-$MS_OURS.log)"
log=$MS_BUILD/logs/srpt-rogue-vm.console
rc=0
"$here/host/vm.sh" -k "$MS_OURS" -t $((rounds == 1 ? 400 : 3500)) -l "$log" \
	"$here/guest/roles/srpt-rogue-vm.sh" "$rounds" >/dev/null || rc=$?
# The VM's TAP is this test's; vm.sh adds a failing point for a timeout
# or a kernel splat.
tr -d '\r' <"$log.out"
echo "# VM exit status $rc (console: ${log#"$MS_TOP"/})"
exit "$rc"
