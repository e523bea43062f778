#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-scale: fat trees of 36-port switches with 64, 256 and 1,024
# single-port HCAs in two levels, and 1,024 in three (57 leaves, 72
# aggregation and 36 core switches), one after the other in one VM, each
# made by tools/infiniband/ibdevsim-topo.py: opensm brings every HCA port
# ACTIVE, ibnetdiscover sees the whole fabric as the generator wrote it,
# and the fabric is deleted again with the memory it took given back.
# Printed per size and stage: time, the guest's memory (free, slab,
# per-CPU, vmalloc) and per HCA port, and the SMPs the SM's port sent.
# Long: not in `make check`; `make fabric-scale` (and `make soak`) run it.
# long: fabric-scale
# memory: 6144
# timeout: 2400

. "$MS_HARNESS/guest/guest-lib.sh"

topo="python3 $MS_TOP/tools/infiniband/ibdevsim-topo.py"
# HOSTS:LEVELS
sizes="64:2 256:2 1024:2 1024:3"
sys=/sys/bus/ibdevsim
w=/tmp/ibsim-scale
mkdir -p $w

# 4 points per size, and the module's load and unload.
set -- $sizes
tap_plan $((4 * $# + 2))

# kib FIELD: a /proc/meminfo field in KiB.
kib() {
	awk -v f="$1:" '$1 == f { print $2 }' /proc/meminfo
}

# mem STAGE: print the memory figures of a stage; remember them in m_*.
mem() {
	m_free=$(kib MemFree) m_slab=$(kib SUnreclaim) m_pcpu=$(kib Percpu)
	m_vmal=$(kib VmallocUsed)
	echo "# $1: free $((m_free / 1024)) MiB, unreclaimable slab" \
	     "$((m_slab / 1024)) MiB," \
	     "percpu $((m_pcpu / 1024)) MiB, vmalloc $((m_vmal / 1024)) MiB"
}

# active_count: HCA ports ACTIVE, and HCA ports with a LID (the smaller).
active_count() {
	local a l
	a=$(cat /sys/class/infiniband/ibdevsim*/ports/1/state | grep -c ACTIVE)
	l=$(cat /sys/class/infiniband/ibdevsim*/ports/1/lid | grep -vc '^0x0$')
	echo $((a < l ? a : l))
}

# settle: let deferred frees (RCU callbacks, work items) run and drop
# the reclaimable caches (dentries, inodes), so that what stays in the
# unreclaimable slab is what is still held.
settle() {
	local i prev=0 cur
	for ((i = 0; i < 20; i++)); do
		echo 3 >/proc/sys/vm/drop_caches
		cur=$(kib SUnreclaim)
		[ "$cur" = "$prev" ] && break
		prev=$cur
		sleep 1
	done
}

# threads: how many tasks there are.
threads() {
	set -- /proc/[0-9]*
	echo $#
}

# vmallocs FILE: vmalloc bytes per caller, as "caller bytes" lines.
vmallocs() {
	awk '{ b[$3] += $2 } END { for (c in b) print c, b[c] }' \
		/proc/vmallocinfo | sort >"$1"
}

# xmit DEV: packets DEV's port 1 sent (its PMA's PortXmitPkts).
xmit() {
	cat /sys/class/infiniband/$1/ports/1/counters/port_xmit_packets
}

modprobe ib_umad && modprobe ibdevsim || ms_bail "ibdevsim does not load"
settle
vmallocs $w/vm.base
base_threads=$(threads)
mem "modules loaded"
base_free=$m_free base_slab=$m_slab base_pcpu=$m_pcpu
tap_ok "ibdevsim loads"

for size in $sizes; do
	h=${size%:*} lv=${size#*:}
	tag="$h hosts"
	[ "$lv" = 2 ] || tag="$h hosts in $lv levels"
	$topo fattree --hosts "$h" --radix 36 --levels "$lv" >$w/ft$h-$lv.topo
	shape=$(sed -n 3p $w/ft$h-$lv.topo | sed 's/^# //')
	t0=$(date +%s%N)
	if out=$($topo load $w/ft$h-$lv.topo 2>&1); then
		tap_ok "$tag ($shape): fabric built"
	else
		tap_fail "$tag ($shape): fabric built"
	fi
	echo "# $out"
	t1=$(date +%s%N)
	mem "$tag built"
	ports=$h
	echo "# per HCA port: $(((base_free - m_free) / ports)) KiB of memory," \
	     "$(((m_slab - base_slab) / ports)) KiB of unreclaimable slab"

	# The SM sits on the first host; its port's PMA counts what it sent.
	: >/tmp/opensm.log
	x0=$(xmit ibdevsim0)
	ms_ibsim_opensm
	sm_pid=$ms_sm_pid
	t2=$(date +%s%N)
	ms_wait 1500 ms_ibsim_sm_up
	t3=$(date +%s%N)
	if [ "$(active_count)" -eq "$ports" ] && ms_ibsim_sm_up; then
		tap_ok "$tag: opensm brings all $ports HCA ports ACTIVE, SUBNET UP"
	else
		tap_fail "$tag: opensm brings all $ports HCA ports ACTIVE, SUBNET UP"
		echo "# $(active_count) of $ports ACTIVE"
		grep -E 'ERR|SUBNET' /tmp/opensm.log | tail -n 5 | sed 's/^/# /'
	fi
	x1=$(xmit ibdevsim0)
	mem "$tag swept"
	echo "# $tag: build $(((t1 - t0) / 1000000)) ms, first sweep to" \
	     "SUBNET UP $(((t3 - t2) / 1000000)) ms ($(((t3 - t2) / 1000 / ports)) us" \
	     "per port), SM port sent $((x1 - x0)) packets," \
	     "$(grep -c IB_TIMEOUT /tmp/opensm.log) SMP timeouts"

	t4=$(date +%s%N)
	ibnetdiscover -C ibdevsim0 -P 1 >$w/disc$h-$lv.topo 2>$w/disc.err
	t5=$(date +%s%N)
	if out=$($topo compare $w/ft$h-$lv.topo $w/disc$h-$lv.topo 2>&1); then
		tap_ok "$tag: ibnetdiscover sees the fabric the generator wrote"
	else
		tap_fail "$tag: ibnetdiscover sees the fabric the generator wrote"
	fi
	tail -n 4 <<<"$out" | sed 's/^/# /'
	echo "# ibnetdiscover: $(((t5 - t4) / 1000000)) ms"

	ms_ibsim_sm_stops "$sm_pid" >/dev/null 2>&1
	t6=$(date +%s%N)
	ms_ibsim_del_all
	t7=$(date +%s%N)
	settle
	mem "$tag deleted"
	# What stays after the deletion is mostly the kworkers it woke
	# (hundreds at 1,024 HCAs, each a task in the slab and a stack in
	# vmalloc) until they idle out, and partly used slabs.  So the fabric
	# is built and deleted once more: what a second cycle adds to the
	# slab and per-CPU memory is what a cycle leaks, and must stay under
	# 4 KiB a port (a port takes about 880).
	left=$(((m_slab - base_slab + m_pcpu - base_pcpu) / ports))
	s1=$m_slab p1=$m_pcpu
	$topo load $w/ft$h-$lv.topo >/dev/null && ms_ibsim_del_all
	settle
	mem "$tag built and deleted again"
	back=$(((m_slab - s1 + m_pcpu - p1) / ports))
	echo "# deleted in $(((t7 - t6) / 1000000)) ms; $left KiB a port still" \
	     "held after it, $back KiB a port more after the second cycle;" \
	     "threads $(threads) (at load: $base_threads);" \
	     "vmalloc callers grown most since the modules loaded:"
	vmallocs $w/vm.now
	join $w/vm.base $w/vm.now | awk '{ print $3 - $2, $1 }' |
		sort -rn | head -n 2 | sed 's/^/#   /'
	if [ -z "$(ls $sys/devices)" ] && [ "$back" -le 4 ]; then
		tap_ok "$tag: every node deleted; a second build and deletion holds no more memory"
	else
		tap_fail "$tag: every node deleted; a second build and deletion holds no more memory"
	fi
done
tap_check "ibdevsim unloads" rmmod ibdevsim
tap_done
