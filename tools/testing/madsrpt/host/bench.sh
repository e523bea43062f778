#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh [FIGURE...] - our kernel and pristine 6.12 side by side: every
# figure is measured in its own VM boot (guest/roles/bench.sh), the two
# kernels alternating, MS_BENCH_REPS times each (default 3), and
# host/bench-report.py prints the table (median and range of each kernel,
# ratio ours/upstream of the medians and the range of the per-pair ratios)
# and writes build/bench/results.csv, summary.json and plots (PNG).
#
# ibsim-sa-storm2 boots two VMs joined by a wire for each run: the SM
# host, of the kernel being measured, and the requesters, always of ours,
# on the other end of an ibdevsim remote cable.
#
# FIGURE is one of the names below (default: all of them); a "-cost"
# figure counts kernel allocations, wake-ups, context switches, work
# items and lock waits per exchange or I/O instead of a rate; MS_BENCH_SECS
# sets how long each figure runs (default 10 s).  The whole default set
# takes about 95 minutes on a 2-core machine (2.3 minutes a figure), and
# the first run 14 more to build the two bench kernels.  Not part of
# `make check`.
#
# Both kernels are built with config/bench over the test kernel's config
# (build.sh bench-ours and bench-upstream: no lockdep, the full SLUB, -O2),
# as the test kernel's debugging aids change what locks and allocations
# cost; MS_BENCH_KERNEL=test compares the test kernels (ours, upstream)
# instead.
#
# MS_BENCH_PERF=1 profiles every run with perf in the guest (the figures
# then read lower, perf taking its share of the CPUs): the hottest modules
# and symbols of each run are in build/bench/logs/FIGURE-KERNEL-REP.console.out
# as "# perf" lines, and host/bench-perf.py prints them ours beside
# upstream at the end (also in build/bench/profile.txt), with the CPU per
# operation of each module and of each source file of ib_core (the MAD
# layer being its mad*.c, agent.c and smi.c), from the samples taken while
# the operations were counted.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

reps=${MS_BENCH_REPS:-3}
perf_arg=()
[ -n "${MS_BENCH_PERF:-}" ] && perf_arg=(perf)
secs=${MS_BENCH_SECS:-10}

# name|role arguments after SECONDS
all=(
	"mad-rr-1|mad-rr 1"
	"mad-rr-16|mad-rr 16"
	"mad-rr-256|mad-rr 256"
	"mad-rr-10000|mad-rr 10000"
	"kmad-1|kmad 1 0"
	"kmad-16|kmad 16 0"
	"kmad-16-bg10|kmad 16 10"
	"kmad-16-bg1000|kmad 16 1000"
	"kmad-16-bg100000|kmad 16 100000"
	"overload-500|overload 500 2000 500 3"
	"overload-500-w128|overload 500 128 500 3 w128"
	"srp-randread-4k|srp randread 4k 32"
	"srp-randwrite-4k|srp randwrite 4k 32"
	"srp-read-128k|srp read 128k 8"
	"srp-read-1m|srp read 1m 4"
	"srp-write-1m|srp write 1m 4"
	"rmpp-64k|rmpp 65536"
	"rmpp-1m|rmpp 1048576"
	"cm-connect-100|cm-connect 100"
	"cm-ucmatose-100|cm-ucmatose 100"
	"mad-rr-1-cost|mad-rr 1 cost"
	"kmad-1-cost|kmad 1 0 cost"
	"kmad-16-cost|kmad 16 0 cost"
	"srp-randread-4k-cost|srp randread 4k 32 cost"
	"rxe-ud-256|rxe-ud"
	"rxe-rc-write-64k|rxe-rc-write"
	"rxe-rc-read-64k|rxe-rc-read"
	"ibsim-sweep-64|ibsim-sweep 64"
	"ibsim-sweep-256|ibsim-sweep 256"
	"ibsim-sweep-1024|ibsim-sweep 1024"
	"ibsim-kmad-1|ibsim-kmad 1"
	"ibsim-kmad-16|ibsim-kmad 16"
	"ibsim-kmad-256|ibsim-kmad 256"
	"ibsim-mad-rr-16|ibsim-mad-rr 16"
	"ibsim-sa-storm-256|ibsim-sa-storm 256"
	"ibsim-sa-storm-1024|ibsim-sa-storm 1024"
	"ibsim-sa-storm2-256|ibsim-sa-storm2 256"
	"ibsim-srp-randread-4k|ibsim-srp randread 4k 32"
	"ibsim-srp-randwrite-4k|ibsim-srp randwrite 4k 32"
	"ibsim-srp-read-1m|ibsim-srp read 1m 4"
	"ibsim-srp-write-1m|ibsim-srp write 1m 4"
)

figures=()
if [ $# -gt 0 ]; then
	for want in "$@"; do
		found=
		for f in "${all[@]}"; do
			[ "${f%%|*}" = "$want" ] && figures+=("$f") && found=1
		done
		[ -n "$found" ] || ms_die "no figure named '$want'; the figures: $(
			for f in "${all[@]}"; do printf '%s ' "${f%%|*}"; done)"
	done
else
	figures=("${all[@]}")
fi

# The build each kernel name of the table stands for.
kpre=bench-
[ "${MS_BENCH_KERNEL:-}" = test ] && kpre=

"$here/deps.sh" bench
ms_lock
"$here/build.sh" "${kpre}ours"
"$here/build.sh" "${kpre}upstream"
ms_build_progs

out=$MS_BUILD/bench
mkdir -p "$out/logs"

# The in-kernel benchmark agent, built out of tree against each kernel;
# the guest finds it by its kernel release.
for k in ours upstream; do
	ms_build_kmod "$kpre$k" || ms_die "cannot build kmod/ against the $k kernel"
done
csv=$out/results.csv
echo "figure,kernel,rep,metric,value,unit" >"$csv"

echo "bench: ${#figures[@]} figures x 2 kernels x $reps runs of ${secs}s"
failed=0
for f in "${figures[@]}"; do
	name=${f%%|*}
	read -ra args <<<"${f#*|}"
	# Runs of an earlier, longer bench must not count in this one's profile.
	rm -f "$out/logs/$name-"{ours,upstream}-*.console*
	for rep in $(seq 1 "$reps"); do
		# Alternate which kernel goes first, so that a drift of the
		# machine's speed does not favour one of them.
		if [ $((rep % 2)) -eq 1 ]; then order="ours upstream"; else order="upstream ours"; fi
		for k in $order; do
			log=$out/logs/$name-$k-$rep.console
			rc=0
			# The fabric figures: up to a thousand HCAs, minutes.
			mem=2048 tmo=$((secs * 3 + 240))
			case $name in
			ibsim-sweep-* | ibsim-sa-storm-*) mem=6144 tmo=1800 ;;
			esac
			if [ "${args[0]}" = ibsim-sa-storm2 ]; then
				# Two VMs on a wire: the SM host of this kernel,
				# the requesters on ours every time.
				"$here/vm.sh" -k "$kpre$k" -t 1800 -n listen:15571 \
					-l "$log-sm" "$MS_HARNESS/guest/roles/bench.sh" \
					"$secs" ibsim-sa-storm-sm "${args[1]}" \
					>/dev/null 2>&1 &
				sm_pid=$!
				sleep 5
				"$here/vm.sh" -k "${kpre}ours" -t 1800 -m 6144 \
					-n connect:15571 -l "$log" \
					"$MS_HARNESS/guest/roles/bench.sh" "$secs" \
					ibsim-sa-storm-req "${args[1]}" \
					>/dev/null 2>&1 || rc=$?
				wait "$sm_pid" || rc=$?
				cat "$log-sm.out" >>"$log.out"
			else
				"$here/vm.sh" -k "$kpre$k" -t "$tmo" -m "$mem" -l "$log" \
					"$MS_HARNESS/guest/roles/bench.sh" "${perf_arg[@]}" \
					"$secs" "${args[@]}" \
					>/dev/null 2>&1 || rc=$?
			fi
			lines=$(tr -d '\r' <"$log.out" | grep '^BENCH ' || true)
			if [ "$rc" -ne 0 ] || [ -z "$lines" ]; then
				echo "bench: $name on $k (run $rep) failed (exit $rc); see ${log#"$MS_TOP"/}"
				failed=$((failed + 1))
				continue
			fi
			while read -r _ metric value unit; do
				echo "$name,$k,$rep,$metric,$value,$unit" >>"$csv"
				printf 'bench: %-18s %-8s run %d  %-22s %12s %s\n' \
					"$name" "$k" "$rep" "$metric" "$value" "$unit"
			done <<<"$lines"
		done
	done
done

# Debian's python3, which has the matplotlib deps.sh installed.
/usr/bin/python3 "$here/bench-report.py" "$csv" "$out"
if [ -n "${MS_BENCH_PERF:-}" ]; then
	names=()
	for f in "${figures[@]}"; do names+=("${f%%|*}"); done
	/usr/bin/python3 "$here/bench-perf.py" "$out/logs" \
		--objs "ours=$MS_BUILD/${kpre}ours" \
		--objs "upstream=$MS_BUILD/${kpre}upstream" "${names[@]}" |
		tee "$out/profile.txt" || true
fi
if [ "$failed" -gt 0 ]; then
	echo "bench: $failed runs failed"
	exit 1
fi
