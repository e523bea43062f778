#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srpt-lifecycle: ib_srpt taken apart and put back together under I/O, N
# cycles of each kind: ib_srpt unload and reload with its configfs tree
# restored, "rdma link delete" and "add" of the rxe device, TPG disable
# and enable, ACL removal and re-creation, LUN removal and re-creation.
# fio with inline verification runs during every step; after each cycle a
# new login must work, data written at the start must read back intact
# and fresh writes must verify.  Then no leak: module reference counts
# and the device's RDMA resources as before the cycles, bounded slab
# growth, ib_srpt unloads and target_core_mod's count is back.  The kernel
# of `make check-debug` adds kmemleak's scan at the end of the run.
#
# Runs on the host so that it can pick the number of cycles: 2 of each
# kind under make check, 50 under make soak (MS_SOAK=1); MS_CYCLES
# overrides both.  MS_LIFECYCLE_KINDS="module link ..." runs only those
# kinds (a 50-cycle soak of all five takes about three hours under TCG;
# one kind at a time fits a working session).  One VM
# (guest/roles/srpt-lifecycle.sh) does all of it.
# runs-on: host
# timeout: 1200
# soak-timeout: 13200

set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/host/common.sh"

if [ -n "${MS_CYCLES:-}" ]; then
	cycles=$MS_CYCLES
elif [ -n "${MS_SOAK:-}" ]; then
	cycles=50
else
	cycles=2
fi
kinds=${MS_LIFECYCLE_KINDS:-module link enable acl lun}
nkinds=$(wc -w <<<"$kinds")
# The guest's plan: a point for each kind and eight more; the host adds
# one for the VM's own verdict.
guest_plan=$((nkinds + 8))

ms_lock
log=$MS_BUILD/logs/srpt-lifecycle-vm
t0=$(date +%s)
rc=0
# Up to 50 s a cycle under TCG, and the boot; within the timeouts above,
# so that a hung VM still gets its points printed.
"$here/host/vm.sh" -k "$MS_OURS" -t $((300 + nkinds * cycles * 50)) \
	-l "$log.console" "$here/guest/roles/srpt-lifecycle.sh" "$cycles" "${kinds// /+}" \
	>/dev/null || rc=$?
out=$(tr -d '\r' <"$log.console.out")

echo "TAP version 13"
echo "1..$((guest_plan + 1))"
# The guest's points in order, renumbered; those it never printed (it
# died, or the VM timed out) fail as "not run".
while IFS= read -r line; do
	case "$line" in
	"ok "*" - "*) ms_point ok "${line#* - }" ;;
	"not ok "*" - "*) ms_point "not ok" "${line#* - }" ;;
	"TAP version"* | 1..*) ;;
	*) echo "$line" ;;
	esac
	[ "$ms_points" -lt "$guest_plan" ] || break
done < <(grep -vE '^not ok - srpt-lifecycle' <<<"$out")
while [ "$ms_points" -lt "$guest_plan" ]; do
	ms_point "not ok" "guest point $((ms_points + 1)): not run"
done
ms_point "$([ "$rc" -eq 0 ] && echo ok || echo "not ok")" \
	"VM: $cycles cycles of each kind ($kinds), clean exit, no kernel splat or timeout (exit $rc, $(($(date +%s) - t0)) s)"
if [ "$rc" -ne 0 ]; then
	grep -E '^not ok - ' <<<"$out" | sed 's/^/# vm: /'
	ms_splats "$log.console" && ms_splats_show "$log.console" | sed 's/^/# /'
fi
exit $ms_status
