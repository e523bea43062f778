#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mad-flowctl: flow control of solicited MADs on our kernel.
#
# Runs on the host only to build kmod/mad_bench_kmod.ko against our
# kernel; then boots one VM running guest/roles/flowctl.sh.  There a
# requester keeps 3,000 SA GETs outstanding to a responder that answers
# only 500 per second (an SA under a query storm), and the guest proves
# that flow control held the responder's queue to the requester's slots,
# that the backlog drained, that what waited too long was dropped on our
# side rather than retried on the wire, and that two cmtime runs
# connecting to each other at once (more connection requests than slots,
# both ways) complete.  The comparison with pristine 6.12 (goodput,
# retries, queue peak) is a figure of `make bench F=overload-500`, not a
# test: it needs several alternating boots to mean anything.
# runs-on: host
# timeout: 900

set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/host/common.sh"

secs=8

ms_lock
ms_build_kmod ours >"$MS_BUILD/logs/kmod-ours.log" 2>&1 || {
	echo "1..1"
	echo "not ok 1 - build kmod/ against our kernel (see build/logs/kmod-ours.log)"
	exit 1
}

echo "TAP version 13"
echo "1..1"

# Not logs/mad-flowctl.console: check.sh writes our own output there.
log=$MS_BUILD/logs/mad-flowctl-vm
rc=0
"$here/host/vm.sh" -k ours -t 600 -l "$log.console" \
	"$here/guest/roles/flowctl.sh" "$secs" full >/dev/null 2>&1 || rc=$?
out=$(tr -d '\r' <"$log.console.out")
sed 's/^/    /' <<<"$out"
ms_point "$(ms_verdict "$out" "$rc")" \
	"flow control under an SA storm and crossing connects (exit $rc)"
exit $ms_status
