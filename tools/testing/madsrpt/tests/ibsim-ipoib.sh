#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-ipoib: IPoIB, and RDMA/CM over InfiniBand, on ibdevsim's fabric.
# opensm brings the default fabric up; ib_ipoib makes a netdev of each
# HCA port.  The one of ibdevsim0 port 1 moves into a network namespace,
# "ini", so that IP between it and ibdevsim1 port 1 (left in the initial
# namespace, where ib_srpt listens) has to cross the switch rather than
# the loopback.  Both join the IPv4 broadcast group through the SA (the
# MCMemberRecords opensm then lists), ARP resolves each one's IPoIB
# address (QPN and GID), and UDP datagrams go both ways.  Then ib_srp,
# told to log in from inside "ini" with dest=IP:port, resolves the address
# through IPoIB and the route through the SA's path record, connects over
# IB CM through the switch, and 4 MiB written with O_DIRECT reads back
# identical; logout.  (rping and ucmatose would need a user-space verbs
# provider, which ibdevsim has not.)
#
# Partitions: opensm runs with a partitions.conf that adds four to the
# default one.  On "blue" (0x0002) and "red" (0x0003) both ports are full
# members, and IPoIB child interfaces of each carry UDP both ways.  A
# datagram sent on blue to the QPN of the target's red child, through a
# static neighbour entry, is refused by the target's port: its
# P_KeyViolations counter rises, the red child receives nothing, and the
# port's SMA raises Trap 257 (Bad P_Key), which opensm logs.  On "srp"
# (0x0001) the initiator's port is only a limited member: ib_srp logs in
# over IB CM with pkey=0001 and 4 MiB reads back identical; a login on
# "green" (0x0004), of which the target is no member, is refused.
# timeout: 400

. "$MS_HARNESS/guest/guest-lib.sh"

tap_plan 17

g0=0002c90300001000
tgid=fe800000000000000002c90300002001
wwn=0x$tgid
acl=0x00000000000000000002c90300001001
ini_ip=10.20.0.1 tgt_ip=10.20.0.2 port=5562

tap_check "ibdevsim loads, 2 HCAs, a switch, 4 cables" ms_ibsim_fabric
cat >/tmp/partitions.conf <<EOT
Default=0x7fff, ipoib : ALL=full ;
srp=0x0001 : 0x0002c90300001001=limited, 0x0002c90300002001=full ;
blue=0x0002, ipoib : 0x0002c90300001001=full, 0x0002c90300002001=full ;
red=0x0003, ipoib : 0x0002c90300001001=full, 0x0002c90300002001=full ;
green=0x0004 : 0x0002c90300001001=full ;
EOT
ms_ibsim_opensm -P /tmp/partitions.conf
tap_check "opensm brings every port ACTIVE with a LID" \
	ms_wait 120 ms_ibsim_all_active

# pkeys DEV: the valid entries of port 1's P_Key table, sorted.
pkeys() {
	cat /sys/class/infiniband/$1/ports/1/pkeys/* | grep -v '^0x0000$' |
		sort | tr '\n' ' '
}
pkeys_set() {
	[ "$(pkeys ibdevsim0)" = "0x0001 0x8002 0x8003 0x8004 0xffff " ] &&
	[ "$(pkeys ibdevsim1)" = "0x8001 0x8002 0x8003 0xffff " ]
}
tap_check "opensm set the P_Key tables from partitions.conf (0x0001 limited)" \
	ms_wait 60 pkeys_set
echo "# ibdevsim0 port 1: $(pkeys ibdevsim0)"
echo "# ibdevsim1 port 1: $(pkeys ibdevsim1)"

setup() {
	modprobe ib_ipoib && ms_ibsim_ipoib_split $ini_ip $tgt_ip
}
tap_check "ib_ipoib: ibdevsim0 port 1's netdev in netns ini, ibdevsim1 port 1's here" \
	setup
tgt_if=$(ms_ibsim_ipoib_dev 0002c90300002001)

# Both ports in the IPv4 broadcast group (P_Key 0xffff), as the SA has
# it: opensm gives one MCMemberRecord for each member port only to a
# trusted requester, one with its SM_Key (opensm's default, 1).
bcast=ff12:401b:ffff::ffff:ffff
members() {
	saquery -C ibdevsim1 -P 1 --smkey 1 -m 2>/dev/null |
		sed -n "/MGID\.*$bcast\$/,/PortGid/s/.*PortGid\.*//p"
}
joined() {
	members | grep -q ":2:c903:0:1001$" &&
	members | grep -q ":2:c903:0:2001$"
}
tap_check "both ports joined the broadcast group $bcast through the SA" \
	ms_wait 60 joined
members | sed "s/^/# member of $bcast: /"

# echo_on SRC DST: a datagram from netns ini (bound to SRC) to DST here,
# answered reversed by a listener on DST; resent every second until
# answered, 20 times at most.
echo_on() {
	local srv rc

	python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 9999)); s.settimeout(30)
d, a = s.recvfrom(100); s.sendto(d[::-1], a)' "$2" &
	srv=$!
	sleep 1
	ip netns exec ini python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1)
s.bind((sys.argv[1], 0))
for i in range(20):
    s.sendto(b"ipoib-ping", (sys.argv[2], 9999))
    try:
        d, a = s.recvfrom(100)
    except socket.timeout:
        continue
    sys.exit(0 if d == b"ipoib-ping"[::-1] else 1)
sys.exit(1)' "$1" "$2"
	rc=$?
	kill $srv 2>/dev/null
	wait $srv 2>/dev/null
	return $rc
}
udp_echo() {
	echo_on $ini_ip $tgt_ip
}
tap_check "a UDP datagram crosses the fabric and its answer comes back" udp_echo

# ARP has resolved each side's IPoIB address: 20 bytes, QPN and GID.
arp_both() {
	ip neigh show $ini_ip dev "$tgt_if" | grep -q "lladdr .*:10:01 " &&
	ip -n ini neigh show $tgt_ip | grep -q "lladdr .*:20:01 "
}
tap_check "ARP resolved both IPoIB hardware addresses" arp_both
ip neigh show $ini_ip dev "$tgt_if" | sed 's/^/# target: /'
ip -n ini neigh show $tgt_ip | sed 's/^/# initiator: /'

# IPoIB child interfaces of blue and red on both sides, each partition
# its own subnet.
ini_if=$(ip netns exec ini ls /sys/class/net | grep '^ib' | head -n 1)
children() {
	local k

	for k in 2 3; do
		ip -n ini link add link "$ini_if" name ini.800$k type ipoib \
			pkey 0x800$k &&
		ip -n ini addr add 10.2$k.0.1/24 dev ini.800$k &&
		ip -n ini link set ini.800$k up &&
		ip link add link "$tgt_if" name tgt.800$k type ipoib \
			pkey 0x800$k &&
		ip addr add 10.2$k.0.2/24 dev tgt.800$k &&
		ip link set tgt.800$k up || return 1
	done
	for k in 2 3; do
		ip -d link show tgt.800$k | grep -q "pkey  *0x800$k " ||
			return 1
		ms_wait 30 ip netns exec ini bash -c \
			"echo >/dev/udp/10.2$k.0.2/9 && ip neigh show 10.2$k.0.2 |
			 grep -q lladdr" || return 1
	done
}
tap_check "IPoIB children of blue (0x8002) and red (0x8003) on both sides" \
	children

both_partitions() {
	echo_on 10.22.0.1 10.22.0.2 && echo_on 10.23.0.1 10.23.0.2
}
tap_check "UDP crosses on blue and on red, each answered" both_partitions

# P_KeyViolations of ibdevsim1 port 1, read by its own SMA.
tgt_lid=$(cat /sys/class/infiniband/ibdevsim1/ports/1/lid)
pkey_viol() {
	smpquery -C ibdevsim1 -P 1 portinfo $((tgt_lid)) |
		sed -n 's/^PkeyViolations:\.*//p'
}
# Ten datagrams on blue to 10.22.0.99, a neighbour whose hardware address
# is the red child's (its QPN): they reach the red child's QP with blue's
# P_Key.  A packet socket on the red child counts what arrives there.
cross() {
	local red v0 v1 got sniff

	red=$(ip link show tgt.8003 | sed -n 's/.*link\/infiniband \([^ ]*\) .*/\1/p')
	[ -n "$red" ] || return 1
	ip -n ini neigh replace 10.22.0.99 lladdr "$red" dev ini.8002 \
		nud permanent || return 1
	python3 -c '
import socket, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind(("tgt.8003", 0)); s.settimeout(0.2)
n, end = 0, time.time() + 4
while time.time() < end:
    try:
        n += b"wrong partition" in s.recv(2048)
    except socket.timeout:
        pass
print(n)' >/tmp/red.count &
	sniff=$!
	sleep 0.5
	v0=$(pkey_viol)
	ip netns exec ini python3 -c '
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(10):
    s.sendto(b"wrong partition", ("10.22.0.99", 9999)); time.sleep(0.1)'
	wait $sniff
	v1=$(pkey_viol) got=$(cat /tmp/red.count)
	echo "red child $red: received $got of them, P_KeyViolations $v0 -> $v1"
	[ -n "$v0" ] && [ -n "$v1" ] && [ $((v1 - v0)) -ge 10 ] &&
		[ "$got" = 0 ]
}
tap_here "blue's datagrams to red's QP refused: counted, not received" cross

# Trap 257 reached opensm, and each trap was repressed at its first copy:
# 3 s later (the port repeats an unrepressed trap every 1.07 s), no TID of
# a Trap 257 is in opensm's log twice.
trap257() {
	local all

	ms_wait 20 grep -q "num:257" /tmp/opensm.log || return 1
	sleep 3
	all=$(grep "num:257" /tmp/opensm.log)
	echo "$all" | tail -n 2
	[ -z "$(echo "$all" | sed -n 's/.*TID:\(0x[0-9a-f]*\).*/\1/p' |
		sort | uniq -d)" ]
}
tap_here "the target's port raised Trap 257 (Bad P_Key), repressed by opensm" \
	trap257

target() {
	modprobe ib_srpt && modprobe target_core_file &&
	ms_srpt_target $wwn /tmp/lun0 $((64 << 20)) $port $acl
}
tap_check "ib_srpt target on ibdevsim1 port 1, RDMA/CM on port $port" target

# The login is written from inside "ini": ib_srp takes the writer's
# network namespace for its RDMA/CM IDs.
login() {
	modprobe ib_srp &&
	ip netns exec ini sh -c "echo id_ext=$g0,ioc_guid=$g0,dest=$tgt_ip:$port \
		>/sys/class/infiniband_srp/srp-ibdevsim0-1/add_target" &&
	ms_wait 60 ms_srp_disk
}
tap_check "ib_srp logs in over RDMA/CM on IPoIB (dest=$tgt_ip:$port)" login
dmesg | grep -iE "srp" | tail -n 4 | sed 's/^/# /'

disk=$(ms_srp_disk | head -n 1)
io() {
	[ -n "$disk" ] || return 1
	head -c $((4 << 20)) /dev/urandom >/tmp/pattern &&
	dd if=/tmp/pattern of="/dev/$disk" bs=1M oflag=direct status=none &&
	dd if="/dev/$disk" of=/tmp/back bs=1M count=4 iflag=direct status=none &&
	cmp /tmp/pattern /tmp/back
}
tap_check "4 MiB written with O_DIRECT read back identical" io

# The same target over IB CM on partition 0x0001, where the initiator's
# port is a limited member and the target's a full one.
limited() {
	ms_srp_logout &&
	ms_srp_add_target srp-ibdevsim0-1 \
		"id_ext=$g0,ioc_guid=$g0,dgid=$tgid,pkey=0001,service_id=$g0" &&
	ms_wait 60 ms_srp_disk || return 1
	disk=$(ms_srp_disk | head -n 1)
	cat /sys/kernel/config/target/srpt/$wwn/tpgt_1/acls/*/info 2>/dev/null |
		grep -i "p_key"
	io && ms_srp_logout
}
tap_here "ib_srp logs in over IB CM on 0x0001 as a limited member; 4 MiB identical" \
	limited
green() {
	! ms_srp_add_target srp-ibdevsim0-1 \
		"id_ext=$g0,ioc_guid=$g0,dgid=$tgid,pkey=0004,service_id=$g0"
}
tap_here "a login on 0x0004, of which the target is no member, is refused" green

down() {
	ms_srp_logout && ms_srpt_teardown $wwn &&
	modprobe -r ib_srp && modprobe -r ib_srpt &&
	ip link del tgt.8002 && ip link del tgt.8003 &&
	ip netns del ini && modprobe -r ib_ipoib
}
tap_check "logout, teardown, ib_srp, ib_srpt and ib_ipoib unload" down
kill "$ms_sm_pid"
wait "$ms_sm_pid" 2>/dev/null
rmmod ibdevsim
tap_done
