#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mad-fuzz: malformed and mutated MADs from another node at our MAD layer
# and at ib_srpt's DM agent, while valid DM queries keep being answered.
#
# Runs on the host and boots two VMs of our kernel joined by a virtual
# wire.  The first is the target (guest/roles/fuzz-target.sh): rxe, ib_srpt
# and progs/mad_fuzz.c "sink" (a kernel-RMPP agent on vendor class 0x30
# and a plain one on 0x09).  The second (guest/roles/fuzz-query.sh) runs
# progs/mad_fuzz.c "fuzz": COUNT MADs from a seeded PRNG at the target's
# QP1 (versions, classes, methods, attributes and modifiers, status, RMPP
# headers and bursts, directed-route hop fields, short and over-long
# lengths, kernel-RMPP transfers), with a DM Get(IOUnitInfo) probe to
# ib_srpt after every 200 of them (MS_FUZZ_EVERY) that must be answered
# correctly.
#
# COUNT is 20,000 under make check and 500,000 under make soak (MS_SOAK=1);
# MS_FUZZ_COUNT overrides both.  Under TCG on two cores the fuzzer sends
# 235 to 420 MADs a second and the two VMs take about 105 s to boot, set
# up and tear down: 20,000 keeps the test near 3 minutes on the slower
# machines (30,000 until make check needed the room), 100,000 would
# take 9.  The seed is the time, or MS_FUZZ_SEED: the run prints it, and
# the same seed sends the same MADs again.
#
# Accounting, from the counters both MAD layers keep in debugfs (read by
# each VM just before the first and after the last MAD) and what the
# fuzzer predicts from each MAD it put on the wire by the IBA rules:
#  - the wire lost nothing: the target received what the fuzzer's MAD
#    layer sent plus the hand-built MADs rxe must pass, and the fuzzer
#    received what the target sent (the target reads its counters between
#    two readings of the fuzzer's, which bound its own);
#  - dropped_invalid is exactly the number of MADs with a bad base
#    version, a subnet management class on QP1 or a CM MAD that is not
#    a Send;
#  - dropped_no_agent is at least the number of requests no agent is
#    registered for plus the responses whose TID names no agent, and at
#    most that plus the responses aimed at agent ids that may exist and
#    what the fuzzer VM's MAD layer sent on its own (REACT: kernel-RMPP
#    segments after the first, its answers to the target's answers, such
#    as an unsupported reply to an RMPP ACK, which the target may answer
#    in turn);
#  - unsupported_replies is at least the number of those requests that
#    are a Get or Set, at most that plus REACT;
#  - no drops for security, directed-route rules or memory, and the rest
#    (received minus drops) covers at least what ib_srpt, ib_cm and the
#    sink must have been given;
#  - the sink got every plain MAD meant for it and no more than it could
#    have been sent;
#  - the RMPP reassembler's high-water marks stayed within the bounds
#    mad_rmpp_recv.c states: transfers per source and per agent, finished
#    transfers remembered, segments held per source and per agent.
# Kernel splats on either VM fail the run (vm.sh); kmemleak, on a kernel
# with it (make check-debug), is scanned after ib_srpt and rxe unload.
# runs-on: host
# timeout: 600
# soak-timeout: 2400

set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/host/common.sh"

ms_lock
log=$MS_BUILD/logs/mad-fuzz
port=15561
if [ -n "${MS_SOAK:-}" ]; then
	count=${MS_FUZZ_COUNT:-500000} tmo=2300
else
	count=${MS_FUZZ_COUNT:-20000} tmo=560
fi
seed=${MS_FUZZ_SEED:-$(date +%s)}
every=${MS_FUZZ_EVERY:-200}

t0=$(date +%s)
"$here/host/vm.sh" -k "$MS_OURS" -t $tmo -n "listen:$port" -l "$log-target.console" \
	"$here/guest/roles/fuzz-target.sh" $((tmo - 60)) >/dev/null &
tgt_pid=$!
sleep 5
q_rc=0
"$here/host/vm.sh" -k "$MS_OURS" -t $((tmo - 20)) -n "connect:$port" \
	-l "$log-fuzzer.console" "$here/guest/roles/fuzz-query.sh" "$seed" "$count" "$every" \
	>/dev/null || q_rc=$?
t_rc=0
wait "$tgt_pid" || t_rc=$?
secs=$(($(date +%s) - t0))

tgt=$(tr -d '\r' <"$log-target.console.out")
fzr=$(tr -d '\r' <"$log-fuzzer.console.out")

echo "TAP version 13"
echo "1..10"
echo "# seed $seed, $count MADs wanted; both VMs done in $secs s"
echo "# reproduce: MS_FUZZ_SEED=$seed MS_FUZZ_COUNT=$count make check T=mad-fuzz"
# kv LINE KEY: the value of KEY=value in LINE (empty if absent).
kv() {
	sed -n "s/.*[ ]$2=\([0-9]*\).*/\1/p" <<<" $1"
}

# delta OUTPUT KEY [WHEN]: a counter's change between a VM's STATS-BEFORE
# line and its STATS-AFTER (or STATS-WHEN) line.
delta() {
	local b a
	b=$(kv "$(grep '^STATS-BEFORE ' <<<"$1")" "$2")
	a=$(kv "$(grep "^STATS-${3:-AFTER} " <<<"$1")" "$2")
	if [ -z "$b" ] || [ -z "$a" ]; then
		echo -1
	else
		echo $((a - b))
	fi
}

check() {
	if eval "$1"; then
		ms_point ok "$2"
	else
		ms_point "not ok" "$2 [$1]"
	fi
}

sed -e '/^\(STATS\|SINK\)/b' -e 's/^/    /' <<<"$tgt" | sed 's/^\(STATS\|SINK\)/    &/'
ms_point "$(ms_verdict "$tgt" $t_rc)" \
	"target VM: ib_srpt, sink, counters, clean unload, no splat (exit $t_rc)"
sed 's/^/    /' <<<"$fzr"
ms_point "$(ms_verdict "$fzr" $q_rc)" \
	"fuzzer VM: every point passed, no splat (exit $q_rc)"

fz=$(grep '^FUZZ ' <<<"$fzr")
sink=$(grep '^SINK ' <<<"$tgt")
for k in sent raw raw_mad raw_rxe_drop probes probe_ok invalid no_agent \
	 unsupported srpt sink sink_rmpp cm aimed krmpp; do
	v=$(kv "$fz" $k)
	eval "f_$k=${v:--1}"
done
for k in received sent dropped_invalid dropped_no_agent dropped_security \
	 dropped_smi dropped_nomem unsupported_replies; do
	eval "t_$k=$(delta "$tgt" $k)"
done
q_sent=$(delta "$fzr" sent)
q_received=$(delta "$fzr" received)
q_sent2=$(delta "$fzr" sent LATE)
q_received2=$(delta "$fzr" received LATE)
q_unsupported=$(delta "$fzr" unsupported_replies LATE)
# What the fuzzer VM's MAD layer sent beyond one MAD for each thing the
# fuzzer sent: the rest of the kernel-RMPP segments, and its own answers
# to what the target sent it (unsupported replies, RMPP ACKs and aborts),
# to which the target's layer answers in turn.  The target's counters can
# only be predicted for what the fuzzer itself sent; these may add to them.
react=$((q_sent2 - f_sent - f_probes - f_krmpp))
s_total=$(($(kv "$sink" plain) + $(kv "$sink" rmpp)))

echo "# fuzzer: $fz"
echo "# fuzzer's MAD layer: sent $q_sent, received $q_received; after the target's snapshot: sent $q_sent2, received $q_received2, unsupported replies $q_unsupported"
echo "# fuzzer's MAD layer sent $react MADs beyond one for each fuzzer send (RMPP segments, its own answers)"
echo "# target's MAD layer: received $t_received, sent $t_sent, dropped invalid $t_dropped_invalid, no agent $t_dropped_no_agent, security $t_dropped_security, smi $t_dropped_smi, nomem $t_dropped_nomem, unsupported replies $t_unsupported_replies"
echo "# sink: $sink"

check "[ $((f_sent + f_raw)) -ge $count ] && [ $f_probes -gt 0 ] && [ $f_probe_ok -eq $f_probes ]" \
	"$((f_sent + f_raw)) fuzzed MADs sent ($f_raw by hand), all $f_probes valid probes answered correctly"
# The target read its counters between the fuzzer's two last readings,
# each at least a second from the others: what one side sent before a
# reading the other had received by its next one.
check "[ $q_sent -gt $f_sent ] && [ $f_raw_mad -gt 0 ] && [ $react -ge 0 ] && [ $t_received -ge $((q_sent + f_raw_mad)) ] && [ $t_received -le $((q_sent2 + f_raw_mad)) ] && [ $q_received -le $t_sent ] && [ $t_sent -le $q_received2 ]" \
	"the wire lost nothing: target received $t_received = $q_sent..$q_sent2 sent through the MAD layer + $f_raw_mad by hand ($f_raw_rxe_drop more for rxe to drop); fuzzer received $q_received..$q_received2 of $t_sent"
check "[ $f_invalid -gt 0 ] && [ $t_dropped_invalid -eq $f_invalid ]" \
	"dropped_invalid $t_dropped_invalid = $f_invalid MADs invalid on QP1"
check "[ $f_no_agent -gt 0 ] && [ $t_dropped_no_agent -ge $((f_no_agent + f_unsupported)) ] && [ $t_dropped_no_agent -le $((f_no_agent + f_unsupported + f_aimed + react)) ]" \
	"dropped_no_agent $t_dropped_no_agent = $f_no_agent + $f_unsupported unclaimed MADs, + at most $f_aimed aimed responses and $react from the fuzzer VM's layer"
check "[ $f_unsupported -gt 0 ] && [ $t_unsupported_replies -ge $f_unsupported ] && [ $t_unsupported_replies -le $((f_unsupported + react)) ]" \
	"unsupported_replies $t_unsupported_replies = $f_unsupported unclaimed Gets and Sets, + at most $react from the fuzzer VM's layer"
delivered=$((t_received - t_dropped_invalid - t_dropped_no_agent - t_dropped_security - t_dropped_smi - t_dropped_nomem))
check "[ $t_dropped_security -eq 0 ] && [ $t_dropped_smi -eq 0 ] && [ $t_dropped_nomem -eq 0 ] && [ $delivered -ge $((f_srpt + f_sink + f_sink_rmpp + f_cm + f_probes)) ]" \
	"no other drops; $delivered delivered >= $f_srpt to ib_srpt + $f_sink + $f_sink_rmpp to the sink + $f_cm to ib_cm + $f_probes probes"
check "[ $f_sink -gt 0 ] && [ $s_total -ge $f_sink ] && [ $s_total -le $((f_sink + f_sink_rmpp + f_krmpp)) ]" \
	"the sink got $s_total MADs: the $f_sink plain ones and at most $((f_sink_rmpp + f_krmpp)) RMPP ones"
# The RMPP reassembler's high-water marks (gauges of the target's debugfs,
# since its boot): each must stay within the bound mad_rmpp_recv.c states,
# and the reassembler must have been reached at all.
for k in rmpp_segs rmpp_segs_peak rmpp_src_segs_peak rmpp_recvs_peak \
	 rmpp_src_recvs_peak rmpp_done_peak; do
	v=$(kv "$(grep '^STATS-AFTER ' <<<"$tgt")" $k)
	eval "g_$k=${v:--1}"
done
echo "# target's RMPP reassembly peaks: transfers $g_rmpp_recvs_peak (one source $g_rmpp_src_recvs_peak), finished remembered $g_rmpp_done_peak, segments $g_rmpp_segs_peak (one source $g_rmpp_src_segs_peak), held at the end $g_rmpp_segs"
check "[ $g_rmpp_recvs_peak -ge 1 ] && [ $g_rmpp_src_recvs_peak -le 16 ] && [ $g_rmpp_recvs_peak -le 256 ] && [ $g_rmpp_done_peak -ge 0 ] && [ $g_rmpp_done_peak -le 256 ] && [ $g_rmpp_src_segs_peak -ge 1 ] && [ $g_rmpp_src_segs_peak -le 32768 ] && [ $g_rmpp_segs_peak -le 262144 ] && [ $g_rmpp_segs -ge 0 ]" \
	"RMPP reassembly within its bounds: $g_rmpp_src_recvs_peak <= 16 transfers from one source, $g_rmpp_recvs_peak <= 256 per agent, $g_rmpp_done_peak <= 256 finished remembered, $g_rmpp_src_segs_peak / $g_rmpp_segs_peak segments <= 32768 / 262144 (16 / 128 MiB of 512-byte buffers)"
exit $ms_status
