#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mad-expire: 100,000 sends of one agent time out together on our kernel.
#
# Runs on the host only to build kmod/mad_bench_kmod.ko against our
# kernel; then boots one VM running guest/roles/expire.sh: the module
# posts 100,000 GETs to nobody and makes them all expire at once
# (ib_modify_mad() to 1 ms), under the soft-lockup detector's shortest
# threshold, while another GET stream is answered.  Every send must come
# back once, timed out; the exchanges must go on; the port's counters
# must add up; no lockup, stall or other splat may appear.  The timed
# work runs in bounded batches (KUnit mad_test_send_mass_timeout shows
# the bound); this test shows the whole stack survives the count that
# cost upstream a CVE (CVE-2024-50095).  MS_EXPIRE_COUNT overrides the
# count.
# runs-on: host
# timeout: 900

set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/host/common.sh"

n=${MS_EXPIRE_COUNT:-100000}

ms_kmod_vm mad-expire 700 expire.sh "$n"
ms_point "$ms_vm_verdict" \
	"$n sends expiring together: all back once, no lockup (exit $ms_vm_rc)"
exit $ms_status
