#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-topo: fabrics built from topology files by
# tools/infiniband/ibdevsim-topo.py, round trip through opensm and
# ibnetdiscover.  A generated two-level fat tree (12 hosts, 8-port
# switches), a generated three-level one (8 hosts, 4-port switches: 4
# leaves, 2 pods of 2 aggregation switches, 2 cores) and a site-style file
# (tests/data/ibsim-topo-cluster.topo: a 64-port switch with a host on
# port 60, port GUIDs as ConnectX-3 and ConnectX-4 number them,
# descriptions with quotes and semicolons, parallel cables, an uncabled
# HCA port) are each loaded, swept by opensm, and what ibnetdiscover
# prints must describe the same fabric as the file: nodes, GUIDs, port
# counts, descriptions and links.  Bad files are refused with the line at
# fault and leave nothing behind; the comparison itself is shown to catch
# a changed link and a changed description.  The fat trees the scale runs
# use (1,024 hosts of 36-port switches, two and three levels) are
# generated and counted.
# timeout: 600

. "$MS_HARNESS/guest/guest-lib.sh"

topo="python3 $MS_TOP/tools/infiniband/ibdevsim-topo.py"
data=$MS_HARNESS/tests/data
sys=/sys/bus/ibdevsim
w=/tmp/ibsim-topo
mkdir -p $w

tap_plan 18

# The generator's fat tree of 1,024 hosts on 36-port switches: 36 leaves
# of 29 hosts (7 uplinks each) and 7 spines, so 1,024 + 252 cables; and
# every switch port used at most once (the parser refuses a port cabled
# twice, so a summary that parses proves it).
ft1024() {
	local s
	$topo fattree --hosts 1024 --radix 36 >$w/ft1024.topo || return 1
	head -n 3 $w/ft1024.topo | tail -n 1
	s=$($topo summary $w/ft1024.topo) || return 1
	echo "$s"
	[ "$s" = "switches 43 HCAs 1024 hca_ports 1024 links 1276" ]
}
tap_here "fattree: 1,024 hosts on 36-port switches, 36 leaves + 7 spines, 1,276 cables" ft1024

# The same hosts in three levels: 57 leaves of 18 hosts in 4 pods (15, 14,
# 14 and 14 leaves) of 18 aggregation switches, whose 18 groups of 2 cores
# reach every pod; 1,024 + 57 x 18 + 72 x 15 (the largest pod's count up)
# cables.  Each host reaches every other in 6 hops (leaf, aggregation,
# core and back), checked by a breadth-first walk of the parsed file.  And
# the generator's limits: 4-port switches make 16 hosts in three levels,
# not 17; 254 ports at most.
ft1024_3() {
	local s out rc=0
	$topo fattree --hosts 1024 --radix 36 --levels 3 >$w/ft1024-3.topo || return 1
	sed -n 3p $w/ft1024-3.topo
	s=$($topo summary $w/ft1024-3.topo) || return 1
	echo "$s"
	[ "$s" = "switches 165 HCAs 1024 hca_ports 1024 links 3130" ] || return 1
	python3 -c '
import collections, importlib.util, sys
spec = importlib.util.spec_from_file_location("topo", sys.argv[1])
t = importlib.util.module_from_spec(spec)
spec.loader.exec_module(t)
f = t.parse(sys.argv[2])
adj = collections.defaultdict(set)
for (g, _), (rg, _) in f.peer.items():
    adj[g].add(rg)
kind = {n.guid: n.kind for n in f.order}
hosts = [g for g in kind if kind[g] == "Ca"]
worst = 0
for src in hosts[::97]:
    hops, todo = {src: 0}, collections.deque([src])
    while todo:
        x = todo.popleft()
        for y in adj[x]:
            if y not in hops:
                hops[y] = hops[x] + 1
                todo.append(y)
    worst = max([worst] + [hops.get(h, 99) for h in hosts])
print("most hops between hosts:", worst)
sys.exit(worst != 6)' "$MS_TOP/tools/infiniband/ibdevsim-topo.py" $w/ft1024-3.topo || return 1
	$topo fattree --hosts 16 --radix 4 --levels 3 | $topo summary /dev/stdin &&
	out=$($topo fattree --hosts 17 --radix 4 --levels 3 2>&1) || rc=$?
	echo "exit $rc: $out"
	[ "$rc" -eq 2 ] && grep -q "at most 16" <<<"$out" || return 1
	rc=0
	out=$($topo fattree --hosts 8 --radix 255 2>&1) || rc=$?
	echo "exit $rc: $out"
	[ "$rc" -eq 2 ] && grep -q "radix must be 2 to 254" <<<"$out"
}
tap_here "fattree --levels 3: 1,024 hosts, 57 leaves + 72 aggregation + 36 core switches, 6 hops" ft1024_3

modprobe ib_umad && modprobe ibdevsim || ms_bail "ibdevsim does not load"

# nodes: how many nodes ibdevsim has.
nodes() {
	ls -d $sys/devices/node* 2>/dev/null | wc -l
}

# refused FILE WANT: loading FILE fails, says WANT, and makes no node.
refused() {
	local out rc=0
	out=$($topo load "$1" 2>&1) || rc=$?
	echo "$1: exit $rc: $out"
	[ "$rc" -eq 2 ] && grep -q -- "$2" <<<"$out" && [ "$(nodes)" -eq 0 ]
}
bad_files() {
	local f=$data/ibsim-topo-cluster.topo
	# A cable to a node the file does not have.
	sed '/^Ca\t1 "H-7cfe900300a2b3d8"/,/^$/d' $f >$w/missing.topo
	# One port cabled to two places.
	sed 's/^\[60\]\t"H-7cfe900300a2b3d8"\[1\]/[1]\t"H-7cfe900300a2b3d8"[1]/' \
		$f >$w/twice.topo
	# A line ibnetdiscover never prints.
	{ cat $f; echo "[3] garbage"; } >$w/garbage.topo
	# A port beyond the node's count; a node too large for ibdevsim.
	sed 's/^Ca\t1 "H-7cfe900300a2b3c4"/Ca\t1 "H-7cfe900300a2b3c4"\n[2](7cfe900300a2b3c5) \t"S-248a0703005a1b2c"[5]/' \
		$f >$w/port.topo
	sed 's/^Switch\t64/Switch\t255/' $f >$w/big.topo
	sed 's/^Ca\t2 "H-0002c90300b4d610"/Ca\t37 "H-0002c90300b4d610"/' \
		$f >$w/bighca.topo
	refused $w/missing.topo "which has no node line" &&
	refused $w/twice.topo "is cabled to both" &&
	refused $w/garbage.topo "garbage.topo:[0-9]*: not a line of ibnetdiscover" &&
	refused $w/port.topo "port 2 of a 1-port node" &&
	refused $w/big.topo "has 255 ports; ibdevsim's have 1 to 254" &&
	refused $w/bighca.topo "has 37 ports; ibdevsim's have 1 to 36"
}
tap_here "bad files are refused with the line at fault, no node made" bad_files

# kernel_refusal: node numbers in use are refused before anything is
# made; a file that ibdevsim refuses half way (here a node number taken
# behind the tool's back, between its check and its writes) is unwound:
# no node of it stays, the other node does.
kernel_refusal() {
	local out rc=0 f=$data/ibsim-topo-cluster.topo
	echo "5 2" >$sys/new_switch || return 1
	out=$($topo load --first-id 1 $f 2>&1) || rc=$?
	echo "exit $rc: $out"
	[ "$rc" -eq 2 ] && grep -q "node numbers in use: \[5\]" <<<"$out" &&
	[ "$(nodes)" -eq 1 ] || return 1
	rc=0
	out=$(python3 -c '
import importlib.util, sys
spec = importlib.util.spec_from_file_location("topo", sys.argv[1])
t = importlib.util.module_from_spec(spec)
spec.loader.exec_module(t)
t.existing_ids = set
sys.argv[1:] = ["load", "--first-id", "4", sys.argv[2]]
sys.exit(t.main())' "$MS_TOP/tools/infiniband/ibdevsim-topo.py" $f 2>&1) || rc=$?
	echo "exit $rc: $out"
	[ "$rc" -eq 2 ] &&
	grep -q "ibdevsim refused the fabric (.*File exists.*); the 1 nodes made are deleted again" <<<"$out" &&
	[ "$(nodes)" -eq 1 ] && echo 5 >$sys/del_node && [ "$(nodes)" -eq 0 ]
}
tap_here "a file ibdevsim refuses half way is unwound, other nodes kept" kernel_refusal

# all_active: every port of every ibdevsim HCA that has a cable is
# ACTIVE with a LID ($1 ports in all).
all_active() {
	local n=0 p
	for p in /sys/class/infiniband/ibdevsim*/ports/*; do
		[ "$(cat $p/phys_state)" = "5: LinkUp" ] || continue
		grep -q ACTIVE $p/state && [ "$(cat $p/lid)" != 0x0 ] || return 1
		n=$((n + 1))
	done
	[ "$n" -eq "$1" ]
}

# roundtrip FILE SMGUID NPORTS: load FILE, run opensm on port SMGUID until
# NPORTS HCA ports are ACTIVE, and compare ibnetdiscover's view with FILE.
roundtrip() {
	local f=$1 guid=$2 n=$3 dev
	$topo load --map $w/map $f || return 1
	cat $sys/topology | head -n 4
	MS_SM_GUID=$guid ms_ibsim_opensm
	sm_pid=$ms_sm_pid
	ms_wait 120 all_active "$n" || { echo "not all $n ports ACTIVE"; return 1; }
	ms_wait 60 ms_ibsim_sm_up || { echo "no SUBNET UP"; tail -n 12 /tmp/opensm.log; return 1; }
	dev=$(ms_guid_dev "$guid") || { echo "no device has $guid"; return 1; }
	ibnetdiscover -C "$dev" -P 1 >$w/disc.topo || return 1
	echo "ibnetdiscover from $dev: $(grep -c '^Switch' $w/disc.topo) switches," \
	     "$(grep -c '^Ca' $w/disc.topo) HCAs"
	$topo compare $f $w/disc.topo
}

# ms_guid_dev GUID: the ib_device one of whose ports has GUID.
ms_guid_dev() {
	local want g d
	want=$(printf '%16s' "${1#0x}" | tr ' ' 0 | sed 's/..../&:/g; s/:$//')
	for g in /sys/class/infiniband/ibdevsim*/ports/1/gids/0; do
		d=${g#/sys/class/infiniband/}
		[ "$(cut -d: -f5-8 "$g")" = "$want" ] && echo "${d%%/*}" && return
	done
	return 1
}

sm_stop_and_clear() {
	ms_ibsim_sm_stops "$sm_pid" && ms_ibsim_del_all
}

$topo fattree --hosts 12 --radix 8 >$w/ft12.topo

# Before any SM: the fabric has no LIDs, yet a directed route SMP from
# host 0 through its leaf to host 1 is answered at once (the answer goes
# to the permissive LID the request came from).  Without it an SM's first
# sweep sees no HCA behind a switch.
dr_before_sm() {
	local out
	$topo load $w/ft12.topo >/dev/null || return 1
	out=$(smpquery -C ibdevsim0 -P 1 -t 500 -D nodeinfo 0,1,2 2>&1)
	echo "$out" | grep -E 'Guid|LocalPort|iberror'
	echo "ibdevsim0 port 1 LID $(cat /sys/class/infiniband/ibdevsim0/ports/1/lid)"
	grep -q '^PortGuid:\.*0x0002c90300001041$' <<<"$out" &&
	ms_ibsim_del_all
}
tap_here "no SM yet, no LIDs: a directed route SMP to an HCA behind a switch is answered" \
	dr_before_sm
tap_here "a generated fat tree (12 hosts, 3 leaves, 2 spines) round trip: ibnetdiscover sees the file's fabric" \
	roundtrip $w/ft12.topo 0x0002c90300001001 12
tap_here "opensm stops, the fat tree's 17 nodes are deleted" sm_stop_and_clear

$topo fattree --hosts 8 --radix 4 --levels 3 >$w/ft8-3.topo
tap_here "a generated 3-level fat tree (8 hosts, 4 leaves, 4 aggregation, 2 cores) round trip" \
	roundtrip $w/ft8-3.topo 0x0002c90300001001 8
# A LID-routed SMP from host 0 to host 7 crosses all three levels: leaf,
# aggregation switch, core, aggregation switch, leaf (opensm's routes).
lid_routed_3() {
	local from to lid hops
	from=$(ms_guid_dev 0x0002c90300001001) &&
	to=$(ms_guid_dev 0x0002c903000011c1) || return 1
	lid=$(($(cat /sys/class/infiniband/$to/ports/1/lid)))
	echo "host 0: $from, host 7: $to, LID $lid"
	smpquery -C "$from" -P 1 nodedesc "$lid" | tee /dev/stderr |
		grep -q "ft-host7 HCA-1" || return 1
	hops=$(ibtracert -C "$from" -P 1 \
		"$(($(cat /sys/class/infiniband/$from/ports/1/lid)))" "$lid" |
		tee /dev/stderr | grep -c -- '-> switch')
	echo "ibtracert: $hops switches"
	[ "$hops" -eq 5 ]
}
tap_here "a LID-routed SMP crosses leaf, aggregation, core, aggregation, leaf" lid_routed_3
tap_here "opensm stops, the 3-level tree's 18 nodes are deleted" sm_stop_and_clear

tap_here "a site's topology file round trip: ibnetdiscover sees the file's fabric" \
	roundtrip $data/ibsim-topo-cluster.topo 0x7cfe900300a2b3c4 4
cp $w/disc.topo $w/site-disc.topo

# Port GUIDs as the file has them: ConnectX-4 style (the node GUID) and
# ConnectX-3 style (node GUID + port), read back through the SMA.
port_guids() {
	local dev
	dev=$(ms_guid_dev 0x7cfe900300a2b3d8) && echo "node02: $dev" &&
	smpquery -C "$dev" -P 1 nodeinfo -D 0 | grep -E '^(Node|Port)Guid' &&
	[ "$(smpquery -C "$dev" -P 1 nodeinfo -D 0 | sed -n 's/^PortGuid:\.*//p')" = 0x7cfe900300a2b3d8 ] &&
	dev=$(ms_guid_dev 0x0002c90300b4d611) && echo "storage-01: $dev" &&
	[ "$(smpquery -C "$dev" -P 1 nodeinfo -D 0 | sed -n 's/^PortGuid:\.*//p')" = 0x0002c90300b4d611 ] &&
	[ "$(cat /sys/class/infiniband/$dev/node_guid)" = 0002:c903:00b4:d610 ] &&
	[ "$(cut -d: -f5-8 /sys/class/infiniband/$dev/ports/2/gids/0)" = 0002:c903:00b4:d612 ]
}
tap_here "port GUIDs as the file numbers them, node GUIDs apart" port_guids

# Descriptions: the switch's, with quotes, through ibdevsim's node_desc,
# and an HCA's through its ib_device (the two must agree).
descs() {
	local dev
	smpquery -C "$(ms_guid_dev 0x7cfe900300a2b3c4)" -P 1 nodedesc -D 0,1 &&
	smpquery -C "$(ms_guid_dev 0x7cfe900300a2b3c4)" -P 1 nodedesc -D 0,1 |
		grep -q 'MF0;switch-ib1:MQM9700/U1' &&
	dev=$(ms_guid_dev 0x98039b0300c1e2f0) &&
	[ "$(cat "/sys/class/infiniband/$dev/node_desc")" = "node03 mlx5_1" ]
}
tap_here "node descriptions: the switch's by SMP, an HCA's in its ib_device" descs

# The 64-port switch: node02, on its port 60, answers a LID-routed SMP
# (the switch's LFT sends it out of port 60), port 60 is Active, and the
# switch's MFT reads back in the 5 PortMask positions its ports 0-64 take
# (ibroute -M reads every position up to the last port's).
port60() {
	local dev lid out rc=0
	dev=$(ms_guid_dev 0x7cfe900300a2b3c4) &&
	lid=$(($(cat "/sys/class/infiniband/$(ms_guid_dev 0x7cfe900300a2b3d8)/ports/1/lid"))) ||
		return 1
	smpquery -C "$dev" -P 1 nodedesc "$lid" | tee /dev/stderr |
		grep -q "node02 mlx5_0" || return 1
	smpquery -C "$dev" -P 1 -D portinfo 0,1 60 |
		grep -E '^(LinkState|PhysLinkState):' | tee /dev/stderr |
		grep -q '^LinkState:\.*Active' || return 1
	out=$(ibroute -M -C "$dev" -P 1 -D 0,1 0xc000 0xc01f 2>&1) || rc=$?
	echo "exit $rc"
	head -n 3 <<<"$out"
	tail -n 1 <<<"$out"
	[ "$rc" -eq 0 ] && ! grep -q "failed" <<<"$out" &&
	grep -q "mlids dumped" <<<"$out"
}
tap_here "the 64-port switch: LID routing out of port 60, its 5 MFT positions read" port60

# compare must fail when the fabric differs: a description changed, a
# cable moved to another port (written into a copy of what was seen).
compare_catches() {
	local out rc=0
	sed 's/"node02 mlx5_0"/"node02 mlx5_9"/' $w/site-disc.topo >$w/d1.topo
	out=$($topo compare $data/ibsim-topo-cluster.topo $w/d1.topo) || rc=$?
	echo "$out"
	[ "$rc" -eq 1 ] && grep -q "0x7cfe900300a2b3d8:.*node02 mlx5_9" <<<"$out" || return 1
	rc=0
	sed 's/^\[18\]\t"S-0002c9030061f0e0"\[8\]/[19]\t"S-0002c9030061f0e0"[8]/; s/^\[8\]\t"S-248a0703005a1b2c"\[18\]/[8]\t"S-248a0703005a1b2c"[19]/' \
		$w/site-disc.topo >$w/d2.topo
	out=$($topo compare $data/ibsim-topo-cluster.topo $w/d2.topo) || rc=$?
	echo "$out"
	[ "$rc" -eq 1 ] && grep -q "link 0x0002c9030061f0e0\[8\] - 0x248a0703005a1b2c\[18\] only in" <<<"$out" &&
	grep -q "link 0x0002c9030061f0e0\[8\] - 0x248a0703005a1b2c\[19\] only in" <<<"$out"
}
tap_here "compare names a changed description and a moved cable" compare_catches

# The HCA port without a cable stays down and is not in ibnetdiscover's
# view (as on the real fabric), yet the node has its 2 ports.
uncabled() {
	local dev
	dev=$(ms_guid_dev 0x0002c90300b4d611) &&
	cat /sys/class/infiniband/$dev/ports/2/state &&
	grep -q DOWN /sys/class/infiniband/$dev/ports/2/state &&
	grep -q '^Ca	2 "H-0002c90300b4d610"' $w/site-disc.topo
}
tap_here "the uncabled HCA port: DOWN, its node still 2 ports" uncabled

tap_here "opensm stops, the site's 6 nodes are deleted" sm_stop_and_clear
tap_check "ibdevsim unloads" rmmod ibdevsim
tap_done
