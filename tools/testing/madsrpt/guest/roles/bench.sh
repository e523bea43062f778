#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of host/bench.sh: measure one figure on this boot and print
# it as "BENCH <figure> <value> <unit>" lines (several for fio: the rate
# and the CPU time per I/O).  Everything runs on one rxe device over a
# veth by loopback, so both ends of every exchange are in this kernel.
#
#   bench.sh SECONDS mad-rr WINDOW       GET/GET_RESP through ib_umad,
#                                        WINDOW outstanding (progs/mad_bench.c)
#   bench.sh SECONDS kmad WINDOW BACKGROUND
#                                        the same between two in-kernel agents
#                                        (kmod/mad_bench_kmod.c), BACKGROUND
#                                        more GETs outstanding to nobody
#   bench.sh SECONDS overload RATE WINDOW TIMEOUT_MS RETRIES [TAG]
#                                        an overloaded responder: the same
#                                        module answers only RATE SA GETs per
#                                        second while WINDOW are outstanding
#                                        (TAG, if given, ends the metrics'
#                                        names)
#   bench.sh SECONDS srp RW BS DEPTH     fio through ib_srp to ib_srpt on a
#                                        tmpfs fileio LUN, O_DIRECT
#   bench.sh SECONDS rmpp SIZE           kernel RMPP through ib_umad: SIZE
#                                        bytes each way, one exchange at a
#                                        time (progs/rmpp_umad.c bench)
#   bench.sh SECONDS cm-connect N        RDMA/CM connections set up by cmtime
#   bench.sh SECONDS cm-ucmatose N       ucmatose runs of N connections each
#                                        (no messages), one after another
#   bench.sh SECONDS rxe-ud              perftest UD SEND message rate
#   bench.sh SECONDS rxe-rc-write        perftest RC RDMA WRITE bandwidth
#   bench.sh SECONDS rxe-rc-read         perftest RC RDMA READ bandwidth
#   bench.sh SECONDS ibsim-sweep HOSTS   on ibdevsim, a fat tree of HOSTS
#                                        HCAs (36-port switches) built by
#                                        tools/infiniband/ibdevsim-topo.py:
#                                        memory per HCA port it took, and
#                                        opensm's first sweep to SUBNET UP
#                                        (time, packets the SM's port sent,
#                                        busy CPU of the guest per packet);
#                                        SECONDS is not used
#   bench.sh SECONDS ibsim-kmad WINDOW   kmad across ibdevsim's default
#                                        fabric: requester on ibdevsim0,
#                                        responder on ibdevsim1, by LID
#                                        through the switch
#   bench.sh SECONDS ibsim-mad-rr WINDOW the same through ib_umad
#                                        (progs/mad_bench.c -D)
#   bench.sh SECONDS ibsim-sa-storm HOSTS
#                                        on a fat tree of HOSTS HCAs with
#                                        opensm up, every HCA but the SM's
#                                        sends 8 PathRecord queries through
#                                        ib_sa, 2 outstanding, 2 s deadline
#                                        each (kmod/sa_storm_kmod.c), all
#                                        at once: answered per second,
#                                        median and p99 latency, timeouts,
#                                        retries on the wire, hosts starved;
#                                        SECONDS is not used
#   bench.sh SECONDS ibsim-sa-storm-sm HOSTS
#   bench.sh SECONDS ibsim-sa-storm-req HOSTS
#                                        the same storm across two VMs
#                                        (host/bench.sh boots both, joined
#                                        by a wire): the SM's HCA and
#                                        opensm alone in the "sm" VM, a
#                                        remote cable to the fat tree of
#                                        HOSTS requesters in the "req" VM,
#                                        in the port of the host the SM
#                                        had; "req" prints the storm's
#                                        figures, "sm" the SM host's CPU
#
# A last argument "cost" to mad-rr, kmad or srp counts instead what the
# whole guest did per exchange or per I/O while the figure ran (kernel
# allocations, wake-ups, context switches, work items queued, locks found
# held), with perf stat on tracepoints; the rate itself is then not
# reported, the tracepoints slowing both kernels.
#
# A first argument "perf" (host: MS_BENCH_PERF=1) also samples the whole
# guest with perf while the figure is measured (mad-rr, kmad, rmpp, srp,
# cm-ucmatose and the one-VM SA storm, where the SM and every requester
# share the guest; a cm-connect run ends before perf has started) and
# prints the hottest modules and symbols as "# perf" lines.
#
# Exit status 0 only if the figure was measured.

. "$MS_HARNESS/guest/guest-lib.sh"

profile=
if [ "$1" = perf ]; then
	profile=1
	shift
fi
secs=$1 figure=$2
shift 2
addr=10.16.0.1
dev=rxe-veth0

# bench_line NAME VALUE UNIT: one measured value for the host.
bench_line() {
	echo "BENCH $1 $2 $3"
}

# prof_start, prof_mark, prof_stop [OPS UNIT]: sample every CPU
# (cpu-clock, as TCG has no PMU) from prof_start to prof_stop when
# profiling, and print where the time went.  prof_mark, called just
# before the figure's workload starts, opens the window the workload's
# operations are counted in; prof_end, as soon as the workload returns,
# closes it (or else prof_stop does).  Samples carry CLOCK_BOOTTIME stamps, the clock of /proc/uptime, so
# that only those inside the window are counted.  With OPS, the
# operations done in that window, each symbol's samples are printed as
# "# perf samples N DSO SYMBOL" with "# perf window NS OPS UNIT" (NS the
# CPU time of the window, all CPUs); host/bench-perf.py attributes them
# to source files and modules from the objects of the kernel's build.
prof_start() {
	[ -n "$profile" ] || return 0
	perf record -a -g -k boottime -e cpu-clock -F 1999 -o /tmp/perf.data \
		>/tmp/perf-record.out 2>&1 &
	prof_pid=$!
	sleep 1
	prof_mark
}

# The start of the window: /proc/uptime reads CLOCK_BOOTTIME.
prof_mark() {
	[ -n "$profile" ] || return 0
	read -r prof_t0 _ </proc/uptime
	prof_t1=
}

# The end of the window, as soon as the workload has returned.
prof_end() {
	[ -n "$profile" ] || return 0
	read -r prof_t1 _ </proc/uptime
}

prof_stop() {
	[ -n "$profile" ] || return 0
	local t1=$prof_t1 win

	[ -n "$t1" ] || read -r t1 _ </proc/uptime
	kill -INT "$prof_pid"
	wait "$prof_pid" || true
	win=--time=$prof_t0,$t1
	if [ -n "$1" ]; then
		awk -v a="$prof_t0" -v b="$t1" -v c="$(nproc)" -v o="$1" \
			-v u="$2" 'BEGIN { printf "# perf window %.0f %d %s\n",
				(b - a) * 1e9 * c, o, u }'
		perf report -i /tmp/perf.data "$win" --stdio --no-children -n \
			--sort dso,sym -g none --percent-limit 0 2>/dev/null |
			grep -v '^#' | grep . |
			awk '{ print "# perf samples", $2, $3, $NF }'
	fi
	echo "# perf: share of all samples, by module"
	perf report -i /tmp/perf.data "$win" --stdio --no-children --sort dso \
		-g none --percent-limit 0.5 2>/dev/null | grep -v '^#' | grep . |
		sed 's/^/# perf dso /'
	echo "# perf: share of all samples, by symbol"
	perf report -i /tmp/perf.data "$win" --stdio --no-children \
		--sort sym,dso -g none --percent-limit 0.2 2>/dev/null |
		grep -v '^#' | grep . | head -80 | sed 's/^/# perf sym /'
	# With callees: spinlock releases, where the sampling interrupt
	# lands, stand for the functions that took the lock.
	echo "# perf: share of all samples in each symbol and its callees"
	perf report -i /tmp/perf.data "$win" --stdio --children --sort sym,dso \
		-g none --percent-limit 1 2>/dev/null | grep -v '^#' |
		grep . | head -120 | awk '{ $2 = ""; print }' |
		sed 's/^/# perf incl /'
}

# Tracepoints counted by a "cost" run, and the name of each count.
cost_events=kmem:kmalloc,kmem:kmem_cache_alloc,kmem:mm_page_alloc
cost_events+=,sched:sched_wakeup,sched:sched_switch
cost_events+=,workqueue:workqueue_queue_work
# A lock found held (spinlock slow path, mutex, rwsem): what a kernel
# without lockdep can count of its locking.
cost_events+=,lock:contention_begin

# cost_start, cost_stop NAME OPS UNIT: count cost_events over the whole
# guest from one to the other, then print each count divided by OPS (the
# exchanges or I/Os done meanwhile) as "BENCH NAME-<count> value UNIT".
cost_start() {
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null || true
	perf stat -a -x, -e "$cost_events" -o /tmp/cost.out &
	cost_pid=$!
	sleep 1
}

cost_stop() {
	local name=$1 ops=$2 unit=$3

	kill -INT "$cost_pid"
	wait "$cost_pid" || true
	sed 's/^/# perf stat /' /tmp/cost.out
	[ "$ops" -gt 0 ] || return 1
	awk -F, -v name="$name" -v n="$ops" -v unit="$unit" '
		$3 ~ /^kmem:(kmalloc|kmem_cache_alloc)$/ { alloc += $1 }
		$3 == "kmem:mm_page_alloc" { pages = $1 }
		$3 == "sched:sched_wakeup" { wake = $1 }
		$3 == "sched:sched_switch" { sw = $1 }
		$3 == "workqueue:workqueue_queue_work" { work = $1; seen = 1 }
		$3 == "lock:contention_begin" { waits = $1 }
		END {
			if (!seen)
				exit 1
			printf "BENCH %s-allocs %.2f allocs/%s\n", name, alloc / n, unit
			printf "BENCH %s-pages %.3f pages/%s\n", name, pages / n, unit
			printf "BENCH %s-wakeups %.2f wakeups/%s\n", name, wake / n, unit
			printf "BENCH %s-ctxsw %.2f ctxsw/%s\n", name, sw / n, unit
			printf "BENCH %s-works %.2f works/%s\n", name, work / n, unit
			printf "BENCH %s-lockwaits %.3f lockwaits/%s\n", name, waits / n, unit
		}' /tmp/cost.out
}

# sys_counters: context switches and interrupts of the whole guest so far.
sys_counters() {
	awk '/^ctxt / { c = $2 } /^intr / { i = $2 }
		END { print c, i }' /proc/stat
}

# Busy CPU time of the whole guest so far, in microseconds.
cpu_busy_us() {
	awk -v hz="$(getconf CLK_TCK)" '/^cpu / {
		printf "%.0f", ($2 + $3 + $4 + $7 + $8) * 1e6 / hz }' /proc/stat
}

# ll_ready NETDEV: its IPv6 link-local address exists and passed DAD.
ll_ready() {
	local a

	a=$(ip -6 addr show dev "$1" scope link)
	[ -n "$a" ] && ! grep -q tentative <<<"$a"
}

bench_mad_rr() {
	local win=$1 cost=$2 out n

	ms_build_prog mad_bench || return 1
	ms_rxe_veth veth0 $addr/24 || return 1
	modprobe ib_umad
	ms_wait 10 test -c /dev/infiniband/umad0 || return 1
	# GID 0 is the link-local one: until IPv6 has checked the address
	# (DAD), no address handle to it can be made and the first send
	# fails (seen on the bench kernels, which get here sooner).
	ms_wait 10 ll_ready veth0 || return 1
	if [ -n "$cost" ]; then cost_start; else prof_start; fi
	out=$(/tmp/mad_bench -d $dev -p 1 -g 0 -w "$win" -s "$secs") || {
		echo "# $out"
		return 1
	}
	prof_end
	echo "# $out"
	if [ -n "$cost" ]; then
		n=$(grep -o ' answered=[0-9]*' <<<"$out") || return 1
		cost_stop "mad-rr-$win" "${n#*=}" exchange
		return
	fi
	n=$(grep -o ' answered=[0-9]*' <<<"$out")
	prof_stop "${n#*=}" exchange
	bench_line "mad-rr-$win" "${out##*rate=}" exchanges/s
}

# kmad_run NAME COST ARG...: load mad_bench_kmod with ARGs (and the
# figure's seconds) and report figure NAME from its line: exchanges per
# second and ns per exchange, or with COST non-empty the cost counts.
kmad_run() {
	local name=$1 cost=$2 ko out rate ns n

	shift 2
	ko=$MS_TOP/build/bench/kmod/$(uname -r)/mad_bench_kmod.ko
	[ -f "$ko" ] || { echo "# no $ko"; return 1; }
	dmesg -C
	if [ -n "$cost" ]; then cost_start; else prof_start; fi
	insmod "$ko" "$@" seconds="$secs" ||
		{ dmesg | grep mad_bench_kmod | sed 's/^/# /'; return 1; }
	prof_end
	out=$(dmesg | grep -o 'mad_bench_kmod window=.*')
	echo "# $out"
	n=$(grep -o ' answered=[0-9]*' <<<"$out") || return 1
	if [ -n "$cost" ]; then
		cost_stop "$name" "${n#*=}" exchange
		rmmod mad_bench_kmod
		return
	fi
	prof_stop "${n#*=}" exchange
	rmmod mad_bench_kmod
	rate=$(grep -o ' rate=[0-9]*' <<<"$out")
	ns=$(grep -o 'ns_per_exchange=[0-9]*' <<<"$out")
	[ -n "$rate" ] && [ -n "$ns" ] || return 1
	bench_line "$name" "${rate#*=}" exchanges/s
	bench_line "$name-ns" "${ns#*=}" ns/exchange
}

bench_kmad() {
	local win=$1 bg=$2 cost=$3

	ms_rxe_veth veth0 $addr/24 || return 1
	kmad_run "kmad-$win-bg$bg" "$cost" dev=$dev window="$win" \
		background="$bg"
}

bench_overload() {
	local rate=$1 win=$2 tmo=$3 retries=$4 ko out v name=overload-$1${5:+-$5}

	ko=$MS_TOP/build/bench/kmod/$(uname -r)/mad_bench_kmod.ko
	[ -f "$ko" ] || { echo "# no $ko"; return 1; }
	ms_rxe_veth veth0 $addr/24 || return 1
	dmesg -C
	insmod "$ko" dev=$dev overload="$rate" window="$win" \
		timeout_ms="$tmo" retries="$retries" seconds="$secs" ||
		{ dmesg | grep mad_bench_kmod | sed 's/^/# /'; return 1; }
	out=$(dmesg | grep -o 'mad_bench_kmod overload=.*')
	echo "# $out"
	rmmod mad_bench_kmod
	[ -f /sys/kernel/debug/ib_mad/$dev-1/stats ] &&
		grep '^fc_' /sys/kernel/debug/ib_mad/$dev-1/stats | sed 's/^/# /'
	v=$(grep -o ' goodput=[0-9]*' <<<"$out") || return 1
	bench_line "$name-goodput" "${v#*=}" answered/s
	v=$(grep -o ' retries_sent=[0-9]*' <<<"$out") || return 1
	bench_line "$name-retries" $((${v#*=} / secs)) retries/s
	v=$(grep -o ' timeouts=[0-9]*' <<<"$out") || return 1
	bench_line "$name-timeouts" $((${v#*=} / secs)) timeouts/s
	v=$(grep -o ' queued_max=[0-9]*' <<<"$out") || return 1
	bench_line "$name-queue-peak" "${v#*=}" queued
}

# srp_fio NAME RW BS DEPTH DISK [cost]: fio on DISK for $secs seconds,
# then the figure NAME in IOPS, NAME-cpu (busy time of the whole guest,
# both ends and fio, per I/O) and NAME-ctxsw; with cost, the counts of
# cost_stop instead, as NAME-cost-*.
srp_fio() {
	local name=$1 rw=$2 bs=$3 depth=$4 disk=$5 cost=$6 json c0 c1 ios rate

	if [ -n "$cost" ]; then cost_start; else prof_start; fi
	read -r x0 i0 < <(sys_counters)
	c0=$(cpu_busy_us)
	json=$(fio --name=bench --filename="$disk" --rw="$rw" --bs="$bs" \
		--iodepth="$depth" --ioengine=libaio --direct=1 \
		--time_based --runtime="$secs" \
		--output-format=json) || return 1
	prof_end
	c1=$(cpu_busy_us)
	read -r x1 i1 < <(sys_counters)
	read -r ios rate < <(python3 -c '
import json, sys
j = json.loads(sys.stdin.read())["jobs"][0]
d = j["read"] if j["read"]["io_bytes"] else j["write"]
print(d["total_ios"], d["iops"])' <<<"$json") || return 1
	[ "$ios" -gt 0 ] || return 1
	if [ -n "$cost" ]; then
		# Named apart from the plain run's NAME-ctxsw.
		cost_stop "$name-cost" "$ios" IO
		return
	fi
	prof_stop "$ios" IO
	awk -v n="$ios" -v i=$((i1 - i0)) \
		'BEGIN { printf "# per I/O: %.2f interrupts\n", i / n }'
	bench_line "$name" "${rate%.*}" IOPS
	bench_line "$name-cpu" \
		"$(awk -v c=$((c1 - c0)) -v n="$ios" \
			'BEGIN { printf "%.1f", c / n }')" us/IO
	# Wake-ups per I/O: the slow boots of both kernels switch more often
	# (see "Benchmarks" in testing.rst).
	bench_line "$name-ctxsw" \
		"$(awk -v x=$((x1 - x0)) -v n="$ios" \
			'BEGIN { printf "%.2f", x / n }')" ctxsw/IO
}

bench_srp() {
	local rw=$1 bs=$2 depth=$3 cost=$4 lun=/tmp/bench.img port=5560 disk

	ms_srpt_loopback $addr >/dev/null
	[ -n "$gid" ] || return 1
	truncate -s $((256 << 20)) $lun
	ms_srpt_target "$wwn" $lun $((256 << 20)) $port \
		0x0000000000000000"${gid:16}" || return 1
	modprobe ib_srp
	ms_srp_add_target srp-$dev-1 \
		"id_ext=$guid,ioc_guid=$guid,dest=$addr:$port,max_cmd_per_lun=64" ||
		return 1
	ms_wait 30 ms_srp_disk || return 1
	disk=/dev/$(ms_srp_disk)
	# Fill the LUN once so that reads move data the file really holds.
	dd if=/dev/zero of="$disk" bs=1M count=256 oflag=direct 2>/dev/null
	srp_fio "srp-$rw-$bs" "$rw" "$bs" "$depth" "$disk" "$cost" || return 1
	ms_srp_logout
}

# bench_ibsim_srp RW BS DEPTH: SRP over InfiniBand on ibdevsim.  ib_srpt
# serves a 256 MiB fileio LUN on ibdevsim1 port 1; ib_srp, in its default
# mode (FRWR), logs in from ibdevsim0 port 1 over IB CM across the switch
# with the path the SA gives; opensm then leaves, and fio runs.  The data
# crosses the fabric as RC packets of the path MTU, acknowledged.
bench_ibsim_srp() {
	local rw=$1 bs=$2 depth=$3 lun=/tmp/bench.img disk
	local g0=0002c90300001000 tgid=fe800000000000000002c90300002001

	ms_ibsim_fabric >/dev/null || return 1
	ms_ibsim_opensm
	ms_wait 120 ms_ibsim_all_active || { echo "# ports not ACTIVE"; return 1; }
	modprobe ib_srpt && modprobe target_core_file || return 1
	truncate -s $((256 << 20)) $lun
	ms_srpt_target 0x$tgid $lun $((256 << 20)) 0 \
		0x00000000000000000002c90300001001 || return 1
	modprobe ib_srp
	ms_srp_add_target srp-ibdevsim0-1 \
		"id_ext=$g0,ioc_guid=$g0,dgid=$tgid,pkey=ffff,service_id=$g0,max_cmd_per_lun=64" ||
		return 1
	ms_wait 60 ms_srp_disk || return 1
	# shellcheck disable=SC2154 # set by ms_ibsim_opensm
	kill "$ms_sm_pid" && wait "$ms_sm_pid" 2>/dev/null
	disk=/dev/$(ms_srp_disk)
	dd if=/dev/zero of="$disk" bs=1M count=256 oflag=direct 2>/dev/null
	srp_fio "ibsim-srp-$rw-$bs" "$rw" "$bs" "$depth" "$disk" || return 1
	ms_srp_logout
}

bench_rmpp() {
	local size=$1 out n name

	ms_build_prog rmpp_umad || return 1
	ms_rxe_veth veth0 $addr/24 || return 1
	modprobe ib_umad
	ms_wait 10 test -c /dev/infiniband/umad0 || return 1
	ms_wait 10 ll_ready veth0 || return 1
	case "$size" in
	*[!0-9]*) return 1 ;;
	*) name=rmpp-$((size >> 10))k ;;
	esac
	[ "$size" -ge $((1 << 20)) ] && name=rmpp-$((size >> 20))m
	prof_start
	out=$(/tmp/rmpp_umad -d $dev -p 1 -g 0 -s "$size" bench "$secs") || {
		grep -v '^ok ' <<<"$out" | tail -5 | sed 's/^/# /'
		return 1
	}
	prof_end
	out=$(grep '^# rmpp-bench ' <<<"$out") || return 1
	echo "$out"
	n=$(grep -o ' exchanges=[0-9]*' <<<"$out")
	prof_stop "${n#*=}" exchange
	bench_line "$name" "${out##*rate=}" MB/s
}

bench_cm_connect() {
	local n=$1 out us

	ms_rxe_veth veth0 $addr/24 || return 1
	modprobe rdma_ucm
	cmtime -b $addr -c "$n" >/tmp/cmtime-server.out 2>&1 &
	sleep 1
	out=$(cmtime -s $addr -c "$n" 2>&1) || {
		sed 's/^/# /' <<<"$out"
		return 1
	}
	sed 's/^/# /' <<<"$out"
	# The "connect" row: step, total ms, max ms, min us, us / conn.
	us=$(awk '$1 == "connect" { print $NF }' <<<"$out")
	[ -n "$us" ] || return 1
	bench_line "cm-connect-$n" "$(awk -v u="$us" 'BEGIN { printf "%.0f", 1e6 / u }')" conn/s
}

# The server side of one ucmatose run of $1 connections, its PID in
# $server, ready for the client: the server prints nothing until its first
# connection, so wait for its listening RDMA/CM ID to show up instead.
ucmatose_server() {
	ucmatose -b $addr -c "$1" -C 0 >>/tmp/ucmatose-server.out 2>&1 &
	server=$!
	ms_wait 5 sh -c 'rdma resource show cm_id 2>/dev/null | grep -q LISTEN'
}

bench_cm_ucmatose() {
	local n=$1 runs=0 t0 t1 ns=0 deadline server

	ms_rxe_veth veth0 $addr/24 || return 1
	modprobe rdma_ucm
	# Whole runs until SECONDS have passed; only the client's run time
	# (address and route resolution, connect, disconnect of every
	# connection) counts, not the server's start.
	deadline=$((SECONDS + secs))
	prof_start
	while [ $SECONDS -lt $deadline ] || [ $runs -eq 0 ]; do
		ucmatose_server "$n" || { echo "# ucmatose server not listening"; return 1; }
		t0=$(date +%s%N)
		ucmatose -s $addr -c "$n" -C 0 >/tmp/ucmatose-client.out 2>&1 || {
			sed 's/^/# /' /tmp/ucmatose-client.out | tail -5
			return 1
		}
		t1=$(date +%s%N)
		wait "$server" || { echo "# ucmatose server failed"; return 1; }
		ns=$((ns + t1 - t0))
		runs=$((runs + 1))
	done
	prof_end
	prof_stop $((runs * n)) connection
	echo "# ucmatose: $runs runs of $n connections in $((ns / 1000000)) ms"
	bench_line "cm-ucmatose-$n" \
		"$(awk -v c=$((runs * n)) -v ns=$ns 'BEGIN { printf "%.0f", c * 1e9 / ns }')" conn/s
}

bench_rxe() {
	local kind=$1 out v

	ms_rxe_veth veth0 $addr/24 || return 1
	case "$kind" in
	ud)
		ib_send_bw -d $dev -x 1 -c UD -s 256 -D "$secs" -F \
			>/tmp/perf-server.out 2>&1 &
		sleep 1
		out=$(ib_send_bw -d $dev -x 1 -c UD -s 256 -D "$secs" -F $addr 2>&1)
		;;
	write)
		ib_write_bw -d $dev -x 1 -s 65536 -D "$secs" -F \
			>/tmp/perf-server.out 2>&1 &
		sleep 1
		out=$(ib_write_bw -d $dev -x 1 -s 65536 -D "$secs" -F $addr 2>&1)
		;;
	read)
		ib_read_bw -d $dev -x 1 -s 65536 -D "$secs" -F \
			>/tmp/perf-server.out 2>&1 &
		sleep 1
		out=$(ib_read_bw -d $dev -x 1 -s 65536 -D "$secs" -F $addr 2>&1)
		;;
	esac
	sed 's/^/# /' <<<"$out"
	# The result row: bytes, iterations, BW peak, BW average (MB/s), Mpps.
	v=$(awk '$1 ~ /^[0-9]+$/ && NF >= 5 { r = $0 } END { print r }' <<<"$out")
	[ -n "$v" ] || return 1
	set -- $v
	if [ "$kind" = ud ]; then
		bench_line rxe-ud-256 "$(awk -v m="$5" 'BEGIN { printf "%.0f", m * 1e6 }')" msg/s
	else
		bench_line "rxe-rc-$kind-64k" "$4" MB/s
	fi
}

# kib_free: MemFree in KiB.
kib_free() {
	awk '$1 == "MemFree:" { print $2 }' /proc/meminfo
}

bench_ibsim_sweep() {
	local hosts=$1 topo f0 f1 x0 x1 c0 c1 t0 t1 active
	local port=/sys/class/infiniband/ibdevsim0/ports/1

	topo="python3 $MS_TOP/tools/infiniband/ibdevsim-topo.py"
	modprobe ib_umad && modprobe ibdevsim || return 1
	$topo fattree --hosts "$hosts" --radix 36 >/tmp/ft.topo || return 1
	f0=$(kib_free)
	$topo load /tmp/ft.topo | sed 's/^/# /' || return 1
	sleep 1
	f1=$(kib_free)
	x0=$(cat $port/counters/port_xmit_packets)
	c0=$(cpu_busy_us)
	t0=$(date +%s%N)
	ms_ibsim_opensm
	ms_wait 1500 ms_ibsim_sm_up || { echo "# no SUBNET UP"; return 1; }
	t1=$(date +%s%N)
	c1=$(cpu_busy_us)
	x1=$(cat $port/counters/port_xmit_packets)
	active=$(cat /sys/class/infiniband/ibdevsim*/ports/1/state | grep -c ACTIVE)
	echo "# $active of $hosts HCA ports ACTIVE;" \
	     "$(grep -c IB_TIMEOUT /tmp/opensm.log) SMP timeouts"
	[ "$active" -eq "$hosts" ] || return 1
	bench_line "ibsim-$hosts-mem" $(((f0 - f1) / hosts)) KiB/port
	bench_line "ibsim-sweep-$hosts" $(((t1 - t0) / 1000000)) ms
	bench_line "ibsim-sweep-$hosts-smps" $((x1 - x0)) SMPs
	bench_line "ibsim-sweep-$hosts-cpu" $(((c1 - c0) / (x1 - x0))) us/SMP
}

# ibsim_two_hosts: ibdevsim's default fabric (two HCAs behind a switch),
# every port ACTIVE, and opensm gone again so that it sends nothing while
# the figure runs (the ports keep their LIDs).
ibsim_two_hosts() {
	ms_ibsim_fabric >/dev/null || return 1
	ms_ibsim_opensm
	ms_wait 120 ms_ibsim_all_active || { echo "# ports not ACTIVE"; return 1; }
	# shellcheck disable=SC2154 # set by ms_ibsim_opensm
	kill "$ms_sm_pid" && wait "$ms_sm_pid" 2>/dev/null
	return 0
}

bench_ibsim_kmad() {
	local win=$1

	ibsim_two_hosts || return 1
	kmad_run "ibsim-kmad-$win" "" dev=ibdevsim0 peer=ibdevsim1 \
		window="$win"
}

bench_ibsim_mad_rr() {
	local win=$1 out n

	ms_build_prog mad_bench || return 1
	ibsim_two_hosts || return 1
	prof_start
	out=$(/tmp/mad_bench -d ibdevsim0 -D ibdevsim1 -p 1 -g 0 -w "$win" \
		-s "$secs") || {
		echo "# $out"
		return 1
	}
	prof_end
	echo "# $out"
	n=$(grep -o ' answered=[0-9]*' <<<"$out")
	prof_stop "${n#*=}" exchange
	bench_line "ibsim-mad-rr-$win" "${out##*rate=}" exchanges/s
}

# xmit_sum FIRST: packets sent so far by port 1 of every ibdevsim HCA
# from ibdevsimFIRST on.
xmit_sum() {
	local d n=0 v

	for d in /sys/class/infiniband/ibdevsim*; do
		[ "${d##*ibdevsim}" -ge "$1" ] || continue
		read -r v <"$d/ports/1/counters/port_xmit_packets"
		n=$((n + v))
	done
	echo $n
}

# sm_side: what the SM's port and opensm did so far, one line: packets
# the port received, sent and dropped for want of a receive buffer
# (PortRcvErrors), opensm's CPU time (clock ticks) and the guest's busy CPU
# (us).
sm_side() {
	local c=/sys/class/infiniband/ibdevsim0/ports/1/counters

	echo "$(cat $c/port_rcv_packets) $(cat $c/port_xmit_packets)" \
	     "$(cat $c/port_rcv_errors)" \
	     "$(awk '{ print $14 + $15 }' /proc/"$ms_sm_pid"/stat)" \
	     "$(cpu_busy_us)"
}

# storm_lines NAME LINE SENT: the BENCH lines of a storm from the
# module's LINE ("sa_storm hosts=... answered=..."), SENT the packets the
# requesters' ports sent meanwhile.  Every query answered, timed out or
# answered wrong left at least once; what the requesters sent beyond
# that were ib_sa's retries.
storm_lines() {
	local name=$1 out=$2 sent=$3 a t w v

	a=$(grep -o ' answered=[0-9]*' <<<"$out") || return 1
	t=$(grep -o ' timeouts=[0-9]*' <<<"$out") || return 1
	w=$(grep -o ' wrong=[0-9]*' <<<"$out") || return 1
	a=${a#*=} t=${t#*=} w=${w#*=}
	echo "# requesters sent $sent packets for $((a + t + w)) queries"
	v=$(grep -o ' goodput=[0-9]*' <<<"$out") || return 1
	bench_line "$name" "${v#*=}" answered/s
	v=$(grep -o ' p50_us=[0-9]*' <<<"$out") || return 1
	bench_line "$name-p50" "${v#*=}" us
	v=$(grep -o ' p99_us=[0-9]*' <<<"$out") || return 1
	bench_line "$name-p99" "${v#*=}" us
	bench_line "$name-timeouts" "$t" timeouts
	bench_line "$name-retries" $((sent - a - t - w)) retries
	v=$(grep -o ' starved_hosts=[0-9]*' <<<"$out") || return 1
	bench_line "$name-starved" "${v#*=}" hosts
}

bench_ibsim_sa_storm() {
	local hosts=$1 topo ko out x0 x1 v s0 s1
	local q=8 win=2 tmo=2000

	ko=$MS_TOP/build/bench/kmod/$(uname -r)/sa_storm_kmod.ko
	[ -f "$ko" ] || { echo "# no $ko"; return 1; }
	topo="python3 $MS_TOP/tools/infiniband/ibdevsim-topo.py"
	modprobe ib_umad && modprobe ibdevsim || return 1
	$topo fattree --hosts "$hosts" --radix 36 >/tmp/ft.topo || return 1
	$topo load /tmp/ft.topo | sed 's/^/# /' || return 1
	ms_ibsim_opensm
	ms_wait 1500 ms_ibsim_sm_up || { echo "# no SUBNET UP"; return 1; }
	v=$(cat /sys/class/infiniband/ibdevsim*/ports/1/state | grep -c ACTIVE)
	[ "$v" -eq "$hosts" ] || { echo "# $v of $hosts ports ACTIVE"; return 1; }
	# ib_sa learns the SM's address from the port events of the sweep.
	sleep 5
	dmesg -C
	prof_start
	x0=$(xmit_sum 1)
	s0=$(sm_side)
	prof_mark
	insmod "$ko" queries=$q window=$win timeout_ms=$tmo ||
		{ dmesg | grep sa_storm | sed 's/^/# /'; return 1; }
	prof_end
	s1=$(sm_side)
	x1=$(xmit_sum 1)
	out=$(dmesg | grep -o 'sa_storm hosts=.*')
	echo "# $out"
	v=$(grep -o ' answered=[0-9]*' <<<"$out") || return 1
	prof_stop "${v#*=}" query
	echo "$s0 $s1" | awk -v hz="$(getconf CLK_TCK)" '{
		printf "# SM port: received %d, sent %d, dropped %d;" \
		       " opensm CPU %.2f s; guest busy CPU %.2f s\n",
		       $6 - $1, $7 - $2, $8 - $3, ($9 - $4) / hz,
		       ($10 - $5) / 1e6 }'
	for v in /sys/kernel/debug/ib_mad/ibdevsim0-1/stats \
		 /sys/kernel/debug/ib_mad/ibdevsim1-1/stats; do
		[ -f "$v" ] && grep -E '^(unmatched|fc_|dup_|timeouts|retries)' "$v" |
			tr '\n' ' ' | sed "s|^|# since boot, ${v#/sys/kernel/debug/ib_mad/}: |;s/ *$/\n/"
	done
	rmmod sa_storm_kmod
	storm_lines "ibsim-sa-storm-$hosts" "$out" $((x1 - x0))
}

# The storm across two VMs: the SM's side.  Its HCA is the first host of
# the fat tree (GUID 0x0002c90300001000, where opensm runs in the one-VM
# figure), plugged into a remote cable to the requesters' VM.
bench_ibsim_sa_storm_sm() {
	local hosts=$1 s0 s1 f

	export MS_PEER_ROLE=listen
	ip addr add 10.12.0.1/24 dev eth0 && ip link set eth0 up &&
	modprobe ib_umad && modprobe ibdevsim &&
	echo "1 1 0x0002c90300001000" >/sys/bus/ibdevsim/new_hca &&
	echo "1 1 4792 10.12.0.2:4792" >/sys/bus/ibdevsim/new_remote_cable ||
		return 1
	ms_peer_sync cabled >/dev/null || return 1
	ms_ibsim_opensm
	ms_wait 1500 ms_ibsim_sm_up || { echo "# no SUBNET UP"; return 1; }
	ms_peer_sync swept >/dev/null || return 1
	s0=$(sm_side)
	ms_peer_sync storm >/dev/null || return 1
	# The requesters say when their storm is over.
	ms_peer_sync stormed >/dev/null || return 1
	s1=$(sm_side)
	echo "$s0 $s1" | awk -v hz="$(getconf CLK_TCK)" '{
		printf "# SM port: received %d, sent %d, dropped %d;" \
		       " opensm CPU %.2f s; guest busy CPU %.2f s\n",
		       $6 - $1, $7 - $2, $8 - $3, ($9 - $4) / hz,
		       ($10 - $5) / 1e6 }'
	f=/sys/kernel/debug/ib_mad/ibdevsim0-1/stats
	[ -f "$f" ] && grep -E '^(unmatched|fc_|dup_|timeouts|retries)' "$f" |
		tr '\n' ' ' | sed 's/^/# SM port MAD layer: /;s/ *$/\n/'
	bench_line "ibsim-sa-storm2-$hosts-sm-cpu" \
		"$(echo "$s0 $s1" | awk '{ printf "%.0f", ($10 - $5) / 1000 }')" \
		ms
}

# The storm across two VMs: the requesters' side.  A fat tree of HOSTS + 1
# hosts whose first host is taken out and its leaf port cabled to the SM
# VM instead; then every host asks the SA as in ibsim-sa-storm.
bench_ibsim_sa_storm_req() {
	local hosts=$1 topo ko out x0 x1 v sm sw swp
	local q=8 win=2 tmo=2000

	export MS_PEER_ROLE=connect
	ko=$MS_TOP/build/bench/kmod/$(uname -r)/sa_storm_kmod.ko
	[ -f "$ko" ] || { echo "# no $ko"; return 1; }
	topo="python3 $MS_TOP/tools/infiniband/ibdevsim-topo.py"
	ip addr add 10.12.0.2/24 dev eth0 && ip link set eth0 up &&
	modprobe ib_umad && modprobe ibdevsim || return 1
	$topo fattree --hosts $((hosts + 1)) --radix 36 >/tmp/ft.topo || return 1
	$topo load --map /tmp/ft.map /tmp/ft.topo | sed 's/^/# /' || return 1
	sm=$(awk '$2 == "0x0002c90300001000" { print $1 }' /tmp/ft.map)
	read -r sw swp < <(awk -v h="$sm" '$1 == "cable" {
		if ($2 == h) print $4, $5; else if ($4 == h) print $2, $3 }' \
		/sys/kernel/debug/ibdevsim/topology)
	[ -n "$sm" ] && [ -n "$sw" ] || { echo "# no first host in the map"; return 1; }
	echo "$sm" >/sys/bus/ibdevsim/del_node &&
	echo "$sw $swp 4792 10.12.0.1:4792" >/sys/bus/ibdevsim/new_remote_cable ||
		return 1
	ms_peer_sync cabled >/dev/null || return 1
	ms_peer_sync swept >/dev/null || return 1
	v=$(cat /sys/class/infiniband/ibdevsim*/ports/1/state | grep -c ACTIVE)
	[ "$v" -eq "$hosts" ] || { echo "# $v of $hosts ports ACTIVE"; return 1; }
	# ib_sa learns the SM's address from the port events of the sweep.
	sleep 5
	dmesg -C
	ms_peer_sync storm >/dev/null || return 1
	x0=$(xmit_sum 0)
	insmod "$ko" queries=$q window=$win timeout_ms=$tmo ||
		{ dmesg | grep sa_storm | sed 's/^/# /'; return 1; }
	x1=$(xmit_sum 0)
	ms_peer_sync stormed >/dev/null || return 1
	out=$(dmesg | grep -o 'sa_storm hosts=.*')
	echo "# $out"
	rmmod sa_storm_kmod
	storm_lines "ibsim-sa-storm2-$hosts" "$out" $((x1 - x0))
}

case "$figure" in
mad-rr) bench_mad_rr "$@" ;;
kmad) bench_kmad "$@" ;;
overload) bench_overload "$@" ;;
srp) bench_srp "$@" ;;
rmpp) bench_rmpp "$@" ;;
cm-connect) bench_cm_connect "$@" ;;
cm-ucmatose) bench_cm_ucmatose "$@" ;;
rxe-ud) bench_rxe ud ;;
rxe-rc-write) bench_rxe write ;;
rxe-rc-read) bench_rxe read ;;
ibsim-sweep) bench_ibsim_sweep "$@" ;;
ibsim-kmad) bench_ibsim_kmad "$@" ;;
ibsim-mad-rr) bench_ibsim_mad_rr "$@" ;;
ibsim-sa-storm) bench_ibsim_sa_storm "$@" ;;
ibsim-sa-storm-sm) bench_ibsim_sa_storm_sm "$@" ;;
ibsim-sa-storm-req) bench_ibsim_sa_storm_req "$@" ;;
ibsim-srp) bench_ibsim_srp "$@" ;;
*) echo "# unknown figure $figure"; exit 2 ;;
esac
