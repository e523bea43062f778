#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-uverbs: user-space verbs on ibdevsim's fabric, with Debian's own
# tools.  rdma-core's ipathverbs provider drives the simulated HCAs
# (ibdevsim speaks qib's command-only user ABI, version 1), so that:
# ibv_devinfo sees two InfiniBand HCAs; progs/uverbs_keys moves data by
# RDMA WRITE, READ and SEND between user MRs of the two HCAs and proves
# that bad L_Keys and R_Keys (wrong rights, out of bounds, another PD's,
# deregistered, the kernel's DMA key) fail with the statuses hardware
# gives, that a send queue's slots come back only when completions
# are polled, as on hardware, and that a SEND finding no receive gets RNR
# NAKs: delivered once a receive is posted (rnr_retry 7), failed with
# IBV_WC_RNR_RETRY_EXC_ERR after 2 NAKs (rnr_retry 1), and that a CQ
# that overflows raises IBV_EVENT_CQ_ERR and puts the QP whose completion
# it lost in error; ibv_rc_pingpong and ibv_ud_pingpong cross the switch.  Then
# srp_daemon runs as administrators run it, executing the logins it finds
# (-e, limited by a rules file to ibdevsim1 port 1) and subscribed to the
# SA's trap reports on its UD QP, and ib_srpt is loaded only after that:
# setting IsDeviceManagementSupported makes the HCA's SMA send Trap 144,
# opensm says it sweeps for that trap (the SA then lists the capability)
# and reports it, and
# srp_daemon logs ib_srp in over IB CM without being told (fio verifies
# 8 MiB of random writes).  One-shot
# ibsrpdm -c and srp_daemon -o -c print the same target's login line.
# Over IPoIB, with the initiator's port in netns "ini", rping verifies 20
# pings over RDMA/CM and ucmatose makes 10 connections.
# timeout: 500

. "$MS_HARNESS/guest/guest-lib.sh"

tap_plan 19

g0=0002c90300001000
tgid=fe800000000000000002c90300002001
wwn=0x$tgid
acl=0x00000000000000000002c90300001001
ini_ip=10.21.0.1 tgt_ip=10.21.0.2

tap_check "ibdevsim loads, 2 HCAs, a switch, 4 cables" ms_ibsim_fabric
# opensm logs at VERBOSE too (-D 0x07: error, info, verbose), where it
# says which trap made it sweep: ib_srpt's IsDeviceManagementSupported
# must reach the SA through the sweep the HCA's Trap 144 asks for.
ms_ibsim_opensm -D 0x07
tap_check "opensm brings every port ACTIVE with a LID" \
	ms_wait 120 ms_ibsim_all_active

devinfo() {
	local d out

	for d in ibdevsim0 ibdevsim1; do
		out=$(ibv_devinfo -d $d) || { echo "$out"; return 1; }
		echo "$out"
		grep -q "transport:.*InfiniBand" <<<"$out" &&
		[ "$(grep -c "state:.*PORT_ACTIVE" <<<"$out")" -eq 2 ] &&
		[ "$(grep -c "link_layer:.*InfiniBand" <<<"$out")" -eq 2 ] ||
			return 1
	done
}
tap_check "ibv_devinfo: both HCAs, InfiniBand, every port ACTIVE" devinfo
ibv_devinfo -d ibdevsim0 | sed -n '1,6p' | sed 's/^/# /'

keys_rc=1
keys_desc="uverbs_keys: RDMA and SEND between user MRs, bad keys and requests refused with their async events, SQ slots, RNR NAKs, CQ overrun"
if ms_build_prog uverbs_keys; then
	timeout 120 /tmp/uverbs_keys ibdevsim0 ibdevsim1 >/tmp/keys.out 2>&1
	keys_rc=$?
fi
sed 's/^/# /' /tmp/keys.out 2>/dev/null
if ms_tap_passed "$(cat /tmp/keys.out 2>/dev/null)" $keys_rc &&
   [ "$ms_p" -eq 15 ]; then
	tap_ok "$keys_desc"
else
	tap_fail "$keys_desc ($ms_p passed, $ms_f failed, exit $keys_rc)"
fi

# pingpong NAME ARGS...: the server on ibdevsim1 port 1, the client on
# ibdevsim0 port 1; they swap LIDs and QPNs over TCP on the loopback.
pingpong() {
	local prog=$1 srv rc out
	shift

	timeout 60 "$prog" -d ibdevsim1 -i 1 "$@" >/tmp/pp-srv.out 2>&1 &
	srv=$!
	sleep 1
	out=$(timeout 60 "$prog" -d ibdevsim0 -i 1 "$@" 127.0.0.1 2>&1)
	rc=$?
	wait $srv || rc=1
	echo "$out"
	cat /tmp/pp-srv.out
	[ $rc = 0 ] && grep -q "iters in" <<<"$out"
}
tap_check "ibv_rc_pingpong: 500 x 4 KiB across the switch" \
	pingpong ibv_rc_pingpong -n 500 -s 4096
tap_check "ibv_ud_pingpong: 500 x 2 KiB datagrams across the switch" \
	pingpong ibv_ud_pingpong -n 500 -s 2048

# srp_daemon as a service: ib_srp loaded, every login it finds executed,
# but only to ibdevsim1 port 1 (ib_srpt answers DM queries on all four
# ports, and only that one has a target behind it).  Its first try comes
# with the trap reports, as ib_srpt loads, before the TPG is enabled, and
# is refused; srp_daemon retries no refused login, so it rescans every
# 5 s (-R, as its systemd unit does every 60 s) and the next scan logs in.
printf 'a dgid=%s\nd\n' $tgid >/tmp/srp_rules
# Started here, not in a tap_check subshell, so that this shell reaps it.
srpd_pid=
if modprobe ib_srp; then
	stdbuf -oL -eL srp_daemon -e -V -f /tmp/srp_rules -i ibdevsim0 \
		-p 1 -R 5 >/tmp/srp_daemon.log 2>&1 &
	srpd_pid=$!
fi
daemon() {
	[ -n "$srpd_pid" ] && ms_wait 30 grep -q "Registering to trap:144" \
		/tmp/srp_daemon.log && sleep 2 && kill -0 $srpd_pid &&
	! ms_srp_disk
}
tap_check "srp_daemon -e runs on ibdevsim0 port 1, subscribed, no target yet" \
	daemon

target() {
	modprobe ib_srpt && modprobe target_core_file &&
	ms_srpt_target $wwn /tmp/lun0 $((64 << 20)) 0 $acl
}
# opensm's log from here on: traps 144 before (opensm's own IsSM, as it
# starts) do not count.
log_mark=$(wc -l </tmp/opensm.log)
tap_check "ib_srpt loads: target on ibdevsim1 port 1, LUN and ACL" target

# The capability reaches the SA through Trap 144 and the heavy sweep it
# asks for: since ib_srpt loaded, opensm must have received a Trap 144
# and said it swept for a trap 144, which no periodic sweep and no other
# trap makes it say; and the SA lists the ports.
sa_dm_ports() {
	local log

	log=$(tail -n +$((log_mark + 1)) /tmp/opensm.log)
	grep -q "Received Generic Notice .* num:144 " <<<"$log" &&
	grep -q "Forcing heavy sweep. Received trap:144" <<<"$log" &&
	[ "$(saquery -C ibdevsim0 -P 1 PortInfoRecord 2>/dev/null |
		grep -c IsDeviceManagementSupported)" -eq 4 ]
}
tap_check "Trap 144: opensm swept for it; the SA lists the 4 ports with IsDeviceManagementSupported" \
	ms_wait 30 sa_dm_ports
tail -n +$((log_mark + 1)) /tmp/opensm.log |
	grep -m 4 -E "num:144|Received trap:144" | sed 's/^/# opensm: /'

tap_check "srp_daemon hears of the target and logs ib_srp in over IB CM" \
	ms_wait 90 ms_srp_disk
grep -E "Registering|recalculation|allowed by|Adding|Found an SRP" \
	/tmp/srp_daemon.log | head -n 12 | sed 's/^/# srp_daemon: /'

disk=$(ms_srp_disk | head -n 1)
io() {
	[ -n "$disk" ] || return 1
	ms_fio_verify "$disk" --direct=1 --rw=randwrite --bs=4k --size=8M
}
tap_check "fio: 8 MiB of 4 KiB random writes verified (crc32c)" io

# SIGTERM, then SIGKILL after 10 s: srp_daemon's trap thread may sit in
# ibv_get_cq_event() until a completion comes.  Reaped here, in the
# shell that started it.
srpd_sig=TERM
if [ -n "${srpd_pid:-}" ]; then
	kill "$srpd_pid"
	(sleep 10; kill -9 "$srpd_pid") 2>/dev/null &
	killer=$!
	wait "$srpd_pid"
	[ "$(kill -0 $killer 2>/dev/null && echo y)" = y ] || srpd_sig=KILL
	kill "$killer" 2>/dev/null
	wait "$killer" 2>/dev/null
	echo "# srp_daemon ended by SIG$srpd_sig"
fi
tap_check "srp_daemon stopped; logout" ms_srp_logout

# The line for ibdevsim1 port 1: the IOC GUID and service id are the
# first HCA's node GUID (ib_srpt's default), the target port its GID.
want="id_ext=$g0,ioc_guid=$g0,dgid=$tgid,pkey=ffff,service_id=$g0"
umad=$(ms_umad_of ibdevsim0 1)
srpdm() {
	local out

	out=$(timeout 60 ibsrpdm -c -d /dev/infiniband/${umad:-none} 2>&1)
	echo "$out"
	grep -qFx "$want" <<<"$out"
}
tap_check "ibsrpdm -c from ibdevsim0 port 1 ($umad) prints $want" srpdm
srpd() {
	local out

	out=$(timeout 60 srp_daemon -o -c -i ibdevsim0 -p 1 2>&1)
	echo "$out" | tee /tmp/srp_daemon.out
	grep -qFx "$want" <<<"$out"
}
tap_check "srp_daemon -o -c -i ibdevsim0 -p 1 prints the same line" srpd
sed 's/^/# srp_daemon -o: /' /tmp/srp_daemon.out

# IPoIB, the initiator's port in its own network namespace.
tap_check "IPoIB: ibdevsim0 port 1 in netns ini ($ini_ip), ibdevsim1 port 1 here ($tgt_ip)" \
	ms_ibsim_ipoib_up $ini_ip $tgt_ip

# rping: the server here, the client in "ini"; -V checks every ping's
# data on the way back.
rping_run() {
	local srv rc out

	timeout 60 rping -s -a $tgt_ip -p 7174 -C 20 -V >/tmp/rping-srv.out 2>&1 &
	srv=$!
	sleep 1
	out=$(ip netns exec ini timeout 60 rping -c -a $tgt_ip -p 7174 -C 20 -V -v 2>&1)
	rc=$?
	wait $srv || rc=1
	echo "$out" | tail -n 3
	cat /tmp/rping-srv.out
	[ $rc = 0 ] && [ "$(grep -c "^ping data: rdma-ping-" <<<"$out")" -eq 20 ]
}
tap_check "rping over RDMA/CM on IPoIB: 20 pings, data verified" rping_run

cmatose() {
	local srv rc out

	timeout 90 ucmatose -b $tgt_ip -c 10 -C 10 >/tmp/cma-srv.out 2>&1 &
	srv=$!
	sleep 1
	out=$(ip netns exec ini timeout 90 ucmatose -s $tgt_ip -c 10 -C 10 2>&1)
	rc=$?
	wait $srv || rc=1
	echo "$out"
	cat /tmp/cma-srv.out
	[ $rc = 0 ] && grep -q "return status 0" <<<"$out"
}
tap_check "ucmatose: 10 connections, 10 messages each, over IPoIB" cmatose

down() {
	ms_srpt_teardown $wwn && modprobe -r ib_srp && modprobe -r ib_srpt &&
	ip netns del ini && modprobe -r ib_ipoib
}
tap_check "teardown; ib_srp, ib_srpt and ib_ipoib unload" down
kill "$ms_sm_pid"
wait "$ms_sm_pid" 2>/dev/null
tap_check "ibdevsim unloads with its devices" rmmod ibdevsim
tap_done
