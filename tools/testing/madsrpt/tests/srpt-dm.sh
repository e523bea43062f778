#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srpt-dm: ib_srpt's Device Management agent, asked over the wire by
# another node the way an initiator discovers SRP targets.
#
# Runs on the host and boots two VMs of our kernel joined by a virtual
# wire (vm.sh -n).  The first is the target: rxe on eth0 (10.15.0.1) and
# ib_srpt (guest/roles/dm-target.sh).  The second queries it over umad
# (guest/roles/dm-query.sh, progs/dm_query.c "check"): Get() ClassPortInfo,
# IOUnitInfo, IOControllerProfile and ServiceEntries for valid and invalid
# slots and ranges, Set() of each attribute and Get() of attributes ib_srpt
# does not have.  Every answer must be a GetResp() from the target's QP1
# with the request's TID, the status ib_srpt gives and, where there is
# data, every field as ib_srpt fills it for an rxe port.  All of it runs
# twice: with link-local IPv6 GIDs, and with IPv4-mapped GIDs, whose
# answers pure upstream 6.12's MAD layer loses and ours must deliver.
# runs-on: host
# timeout: 900

set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/host/common.sh"

ms_lock
log=$MS_BUILD/logs/srpt-dm
port=15531

"$here/host/vm.sh" -k "$MS_OURS" -t 840 -n "listen:$port" -l "$log-target.console" \
	"$here/guest/roles/dm-target.sh" >/dev/null &
tgt_pid=$!
sleep 5
q_rc=0
"$here/host/vm.sh" -k "$MS_OURS" -t 780 -n "connect:$port" -l "$log-query.console" \
	"$here/guest/roles/dm-query.sh" >/dev/null || q_rc=$?
t_rc=0
wait "$tgt_pid" || t_rc=$?

tgt=$(tr -d '\r' <"$log-target.console.out")
qry=$(tr -d '\r' <"$log-query.console.out")

echo "TAP version 13"
echo "1..4"
sed 's/^/    /' <<<"$tgt"
ms_point "$(ms_verdict "$tgt" $t_rc)" \
	"target VM: ib_srpt's DM agent on rxe, torn down cleanly (exit $t_rc)"

sed 's/^/    /' <<<"$qry"
# The IPv4-mapped half claims a difference from upstream (testing.rst).
for kind in link-local IPv4-mapped; do
	mark=
	[ "$kind" = link-local ] || mark=" [differs]"
	line=$(grep -E "^(not )?ok [0-9]+ - DM over $kind GIDs" <<<"$qry")
	if [ -z "$line" ]; then
		ms_point "not ok" "DM over $kind GIDs: not run$mark"
	else
		ms_point "$(sed -E 's/^(not ok|ok).*/\1/' <<<"$line")" \
			"${line#* - }$mark"
	fi
done
ms_point "$(ms_verdict "$qry" $q_rc)" \
	"querier VM: every point passed, clean exit (exit $q_rc)"
exit $ms_status
