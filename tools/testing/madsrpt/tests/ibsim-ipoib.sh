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
# timeout: 400

. "$MS_HARNESS/guest/guest-lib.sh"

tap_plan 10

g0=0002c90300001000
tgid=fe800000000000000002c90300002001
wwn=0x$tgid
acl=0x00000000000000000002c90300001001
ini_ip=10.20.0.1 tgt_ip=10.20.0.2 port=5562

tap_check "ibdevsim loads, 2 HCAs, a switch, 4 cables" ms_ibsim_fabric
ms_ibsim_opensm
tap_check "opensm brings every port ACTIVE with a LID" \
	ms_wait 120 ms_ibsim_all_active

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

# udp_echo: a datagram from "ini" to the target's address, answered
# reversed by a listener here; resent every second until answered.
udp_echo() {
	local srv rc

	python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 9999)); s.settimeout(30)
d, a = s.recvfrom(100); s.sendto(d[::-1], a)' $tgt_ip &
	srv=$!
	sleep 1
	ip netns exec ini python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(1)
for i in range(20):
    s.sendto(b"ipoib-ping", (sys.argv[1], 9999))
    try:
        d, a = s.recvfrom(100)
    except socket.timeout:
        continue
    sys.exit(0 if d == b"ipoib-ping"[::-1] else 1)
sys.exit(1)' $tgt_ip
	rc=$?
	kill $srv 2>/dev/null
	wait $srv 2>/dev/null
	return $rc
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

target() {
	modprobe ib_srpt && modprobe target_core_file &&
	ms_srpt_target $wwn /tmp/lun0 $((64 << 20)) $port $acl
}
tap_check "ib_srpt target on ibdevsim1 port 1, RDMA/CM on port $port" target

# The login is written from inside "ini": ib_srp takes the writer's
# network namespace for its RDMA/CM IDs.
login() {
	modprobe ib_srp never_register=1 &&
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

down() {
	ms_srp_logout && ms_srpt_teardown $wwn &&
	modprobe -r ib_srp && modprobe -r ib_srpt &&
	ip netns del ini && modprobe -r ib_ipoib
}
tap_check "logout, teardown, ib_srp, ib_srpt and ib_ipoib unload" down
kill "$ms_sm_pid"
wait "$ms_sm_pid" 2>/dev/null
rmmod ibdevsim
tap_done
