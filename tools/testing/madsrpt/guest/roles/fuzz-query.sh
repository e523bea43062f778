#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of mad-fuzz.sh, connecting VM (10.17.0.2): the fuzzer.  Waits
# until ib_srpt's DM agent on the target answers, tells the target to read
# its counters ("start", port 7777), runs progs/mad_fuzz.c with the seed
# and count the host chose, and tells the target it is done.  Prints its
# own MAD counters before and after ("STATS-BEFORE", "STATS-AFTER") and
# the fuzzer's "FUZZ" line for the host's accounting.
#
# Arguments: SEED COUNT [EVERY]

. "$MS_HARNESS/guest/guest-lib.sh"

seed=$1 count=$2 every=${3:-200}
addr=10.17.0.2
taddr=10.17.0.1
dev=rxe-eth0
stats=/sys/kernel/debug/ib_mad/$dev-1/stats
ll_gid=fe80::5054:ff:fe4d:5301	# the target's GID 0 (fixed MAC)
fz=/tmp/mad_fuzz

stats_line() {
	echo "$1 $(awk '{ printf "%s%s=%s", sep, $1, $2; sep = " " }' $stats)"
}

# tell MSG: hand MSG to the target and wait for its "ok".
tell() {
	local r

	r=$(timeout 30 bash -c "exec 3<>/dev/tcp/$taddr/7777 && echo $1 >&3 && head -n 1 <&3") &&
		[ "$r" = ok ]
}

tap_plan 6
tap_check "build mad_fuzz and dm_query" \
	ms_build_prog mad_fuzz && ms_build_prog dm_query
tap_check "rxe on eth0 ($addr), ib_umad" ms_rxe_wire $addr/24 umad
# Status 0 only: the MAD layer answers 0x000c until ib_srpt's agent is
# registered.
dm_up() {
	/tmp/dm_query -d $dev -x 0 -g $ll_gid -t 500 -r 0 raw 1 0x10 0 |
		grep -q "^status=0x0000"
}
tap_check "the target's DM agent answers" ms_wait 300 dm_up
tap_check "the target read its counters (start)" ms_wait 60 tell start

stats_line STATS-BEFORE
out=$($fz -d $dev -x 0 -g $ll_gid -r $addr,$taddr -S "$seed" -n "$count" \
	-e "$every" fuzz 2>&1)
rc=$?
# The fuzzer's points as comments, its FUZZ line as it is.
sed -e '/^FUZZ /b' -e 's/^/    /' <<<"$out"
if ms_tap_passed "$out" $rc; then
	tap_ok "mad_fuzz: $ms_p points passed (seed $seed)"
else
	tap_fail "mad_fuzz: $ms_p ok, $ms_f not ok, exit $rc (seed $seed)"
	dmesg | tail -n 10 | sed 's/^/# dmesg: /'
fi
# Counters once what was in flight has arrived, and again after the
# target read its own: its snapshot falls between the two.
sleep 1
stats_line STATS-AFTER
tap_check "the target read its counters (done)" ms_wait 60 tell done
sleep 1
stats_line STATS-LATE
tap_done
