#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-fabric: ibdevsim's default fabric (two HCAs with two ports, one
# 8-port switch, every HCA port cabled to it) brought up by opensm; then
# ibstat, ibnetdiscover, smpquery (directed route, LID, and the two
# combined: LID-routed to the switch, directed from there), ibroute,
# saquery and perfquery against it.  Then 100 more switches: the sysfs
# topology file stops at a page and says so, the debugfs one has it all.
# timeout: 600

. "$MS_HARNESS/guest/guest-lib.sh"

tap_plan 14

tap_check "ibdevsim loads, 2 HCAs, a switch, 4 cables" ms_ibsim_fabric
ms_ibsim_opensm
smpid=$ms_sm_pid
tap_check "opensm brings every port ACTIVE with a LID" ms_wait 120 ms_ibsim_all_active
ibstat ibdevsim0 | sed 's/^/# /'
tap_check "opensm reports SUBNET UP" ms_wait 60 ms_ibsim_sm_up

disc() {
	local out
	out=$(ibnetdiscover -C ibdevsim0 -P 1) || return 1
	echo "$out"
	[ "$(grep -c '^Switch' <<<"$out")" -eq 1 ] &&
	[ "$(grep -c '^Ca' <<<"$out")" -eq 2 ] &&
	[ "$(grep -cE '^\[[0-9]+\].*"(S|H)-' <<<"$out")" -ge 8 ]
}
tap_check "ibnetdiscover: 1 switch, 2 HCAs, the 4 cables both ways" disc

tap_check "smpquery nodeinfo by directed route across the switch" \
	sh -c 'smpquery -C ibdevsim0 -P 1 -D nodeinfo 0,1,3 | tee /dev/stderr | grep -q "^Guid:\.*0x0002c90300002000"'
lid2=$(cat /sys/class/infiniband/ibdevsim1/ports/1/lid)
tap_check "smpquery nodeinfo by LID $lid2" \
	sh -c "smpquery -C ibdevsim0 -P 1 nodeinfo $((lid2)) | grep -q '^Guid:\.*0x0002c90300002000'"
swlid() { smpquery -C ibdevsim0 -P 1 -D portinfo 0,1 0 | sed -n 's/^Lid:\.*//p'; }
sw=$(swlid)
tap_check "ibroute on the switch (LID $sw) shows the LFT opensm wrote" \
	sh -c "ibroute -C ibdevsim0 -P 1 $sw | tee /dev/stderr | grep -q '5 valid lids'"
# smpquery -c: a DR SMP with a LID-routed part (DrSLID, IBA 14.2.2),
# from ibdevsim0 port 2: LID-routed to the switch, then directed out of
# its port 3 (ibdevsim1), or no directed hop at all (the switch itself);
# each answer comes back directed to the switch, then by LID.
combined() {
	smpquery -C ibdevsim0 -P 2 -c nodeinfo "$sw,0,3" | tee /dev/stderr |
		grep -q '^Guid:\.*0x0002c90300002000' &&
	smpquery -C ibdevsim0 -P 2 -c nodeinfo "$sw,0" | tee /dev/stderr |
		grep -q '^Guid:\.*0x0002c90300010000'
}
tap_check "smpquery -c: LID-routed to the switch, then directed (DR-LID)" \
	combined
sa_nodes() {
	local out
	out=$(saquery -C ibdevsim0 -P 2) || return 1
	echo "$out"
	[ "$(grep -o "ibdevsim [A-Za-z]* [0-9]*" <<<"$out" | sort -u | wc -l)" -eq 3 ]
}
tap_check "saquery node records name the 3 nodes" sa_nodes
tap_check "saquery path record HCA 0 port 2 to HCA 1 port 1" \
	sh -c "saquery -C ibdevsim0 -P 2 -p --src-to-dst $(( $(cat /sys/class/infiniband/ibdevsim0/ports/2/lid) )):$((lid2)) | grep -q PathRecord"
# PortXmitPkts of HCA 1 port 1 must count what that port sends besides
# perfquery's own replies: two reads back to back give what a read adds,
# then 20 SMPs answered by that port must add at least 20 more.
pc() { perfquery -C ibdevsim0 -P 1 "$@" | sed -n 's/^PortXmitPkts:\.*//p'; }
xmit_moves() {
	local a b c i own

	a=$(pc $((lid2)) 1) && b=$(pc $((lid2)) 1) || return 1
	for ((i = 0; i < 20; i++)); do
		smpquery -C ibdevsim0 -P 1 nodeinfo $((lid2)) >/dev/null || return 1
	done
	c=$(pc $((lid2)) 1) || return 1
	own=$((b - a))
	echo "PortXmitPkts $a -> $b (a read adds $own) -> $c after 20 SMPs"
	[ -n "$a" ] && [ "$own" -ge 0 ] && [ $((c - b - own)) -ge 20 ]
}
tap_check "perfquery: PortXmitPkts counts the 20 SMP replies the port sent" xmit_moves

tap_here "opensm stops within 20 s of SIGTERM" ms_ibsim_sm_stops "$smpid"

# A topology larger than a page: 100 more switches in a chain.  The sysfs
# file stops short with a comment saying where the whole of it is; the
# debugfs file has every node and cable.
big_topology() {
	local i sysf=/sys/bus/ibdevsim/topology dbgf=/sys/kernel/debug/ibdevsim/topology
	local s d

	for ((i = 100; i < 200; i++)); do
		echo "$i 2" >/sys/bus/ibdevsim/new_switch || return 1
		((i == 100)) || echo "$((i - 1)) 2 $i 1" >/sys/bus/ibdevsim/new_cable ||
			return 1
	done
	s=$(cat $sysf) && d=$(cat $dbgf) || return 1
	echo "sysfs: $(wc -c <<<"$s") bytes, $(grep -c . <<<"$s") lines;" \
	     "debugfs: $(wc -c <<<"$d") bytes, $(grep -c '^node' <<<"$d") nodes," \
	     "$(grep -c '^cable' <<<"$d") cables"
	tail -n 1 <<<"$s"
	for ((i = 100; i < 200; i++)); do
		echo $i >/sys/bus/ibdevsim/del_node || return 1
	done
	# 3 + 100 nodes, 4 + 99 cables; sysfs a prefix of it, marked cut.
	[ "$(grep -c '^node' <<<"$d")" -eq 103 ] &&
	[ "$(grep -c '^cable' <<<"$d")" -eq 103 ] &&
	grep -q '^# cut: the whole topology is in /sys/kernel/debug/ibdevsim/topology$' <<<"$s" &&
	[ "$(grep -v '^#' <<<"$s")" = "$(head -n $(($(grep -c . <<<"$s") - 1)) <<<"$d")" ] &&
	[ "$(grep -c '^node' $sysf)" -eq 3 ]
}
tap_here "a 103-node topology: sysfs cut at a page and marked, debugfs whole" \
	big_topology
tap_check "ibdevsim unloads with its devices" rmmod ibdevsim
tail -n 30 /tmp/opensm.log | sed 's/^/# /'
tap_done
