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
# side rather than retried on the wire, that in a slower storm the
# responder never receives a copy of a request it still holds (the MAD
# layer drops them), and that two cmtime runs
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

ms_kmod_vm mad-flowctl 600 flowctl.sh "$secs" full
# Pristine 6.12 has no flow control: the point claims a difference.
ms_point "$ms_vm_verdict" \
	"flow control under an SA storm and crossing connects (exit $ms_vm_rc) [differs]"
exit $ms_status
