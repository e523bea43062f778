#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of ibsim-cable.sh: one InfiniBand fabric across two VMs.
# Each VM has one ibdevsim HCA whose port 1 is plugged into a remote
# cable to the other VM's (UDP port 4792 over the wire between them), so
# every packet between the two HCAs crosses as bytes, LRH to VCRC.
#
#   ibsim-cable.sh a [N]  the listening VM (10.12.0.1): HCA 1, GUID
#                      0x0002c90300001000, on port 1 of switch 10, whose
#                      port 2 is the cable's end; runs opensm, which
#                      manages both VMs' nodes through the switch
#   ibsim-cable.sh b [N]  the connecting VM (10.12.0.2): HCA 2, GUID
#                      0x0002c90300002000, its port the cable's other end;
#                      at the end it writes N frames of packet-level fuzz
#                      onto the cable (mad_fuzz wire; 20,000 by default)
#
# Each VM serves RMPP transfers (progs/rmpp_umad.c, up to 1 MiB, every
# byte checked) to the other; each serves an ib_srpt LUN and logs its
# ib_srp in to the other's (ibsrpdm's line, IB CM), fio verifies,
# logout; then b logs in again and writes under fio while a pulls its end
# of the cable for 4 s: b's RC retries run out (opensm's subnet_timeout 15
# gives PathRecords a PacketLifeTime of 134 ms, so the CM's ack timeout is
# 268 ms and 8 tries last about 2 s), ib_srp reconnects across the cable
# once opensm has swept it up again, the data verifies.  The VMs meet at
# each step (ms_peer_sync).

. "$MS_HARNESS/guest/guest-lib.sh"

side=$1 nfuzz=${2:-20000}
case "$side" in
a)	MS_PEER_ROLE=listen me=1 peer=2 ip=10.12.0.1 peer_ip=10.12.0.2 ;;
b)	MS_PEER_ROLE=connect me=2 peer=1 ip=10.12.0.2 peer_ip=10.12.0.1 ;;
*)	echo "usage: ibsim-cable.sh a|b" >&2; exit 2 ;;
esac
export MS_PEER_ROLE
guid=0x0002c9030000${me}000
pguid=0002c9030000${peer}001
dev=ibdevsim0
sysp=/sys/class/infiniband/$dev/ports/1
hca_knobs=/sys/kernel/debug/ibdevsim/node$me/port1
# The port whose end of the cable is this VM's: a switch's on a.
if [ $side = a ]; then
	knobs=/sys/kernel/debug/ibdevsim/node10/port2
else
	knobs=/sys/kernel/debug/ibdevsim/node2/port1
fi
wwn=0xfe80000000000000$(printf '0002c9030000%s001' $me)
acl=0x0000000000000000$pguid

# Points: a 15, b 14 (ibsim-cable.sh adds them up for its plan).
[ $side = a ] && tap_plan 15 || tap_plan 14
echo "# $(uname -r): side $side, HCA $me, $ip"

cable() {
	local sys=/sys/bus/ibdevsim

	ip addr add $ip/24 dev eth0 && ip link set eth0 up &&
	modprobe ib_umad && modprobe ibdevsim &&
	echo "$me 1 $guid" >$sys/new_hca || return 1
	if [ $side = a ]; then
		echo "10 4 0x0002c90300010000" >$sys/new_switch &&
		echo "1 1 10 1" >$sys/new_cable &&
		echo "10 2 4792 $peer_ip:4792" >$sys/new_remote_cable
	else
		echo "$me 1 4792 $peer_ip:4792" >$sys/new_remote_cable
	fi || return 1
	ms_wait 120 grep -q "^remote .* up$" $sys/topology &&
	cat $sys/topology
}
tap_check "remote cable to the other VM trains (link up)" cable

active() {
	grep -q ACTIVE $sysp/state && [ "$(cat $sysp/lid)" != 0x0 ]
}
if [ $side = a ]; then
	echo "subnet_timeout 15" >/tmp/opensm-cable.conf
	MS_SM_GUID=0x0002c90300001001 ms_ibsim_opensm -F /tmp/opensm-cable.conf
	tap_check "opensm here brings port 1 ACTIVE across the cable" \
		ms_wait 120 active
else
	tap_check "the other VM's opensm brings port 1 ACTIVE" \
		ms_wait 180 active
fi
lid=$(($(cat $sysp/lid)))
peer_lid=$(ms_peer_sync up $lid)
echo "# LID $lid, the other VM's $peer_lid"

both_nodes() {
	local out

	out=$(saquery -C $dev NodeRecord 2>&1) || { echo "$out"; return 1; }
	grep -c node_guid <<<"$out"
	grep -q "node_guid.*0x0002c90300001000" <<<"$out" &&
	grep -q "node_guid.*0x0002c90300002000" <<<"$out"
}
tap_check "saquery from here lists both HCAs' NodeRecords" \
	ms_wait 60 both_nodes

# Directed-route SMPs from this VM through the cable and the switch.
discover() {
	local out

	out=$(ibnetdiscover -C $dev 2>&1) || { echo "$out"; return 1; }
	grep -E '^(Switch|Ca)' <<<"$out"
	[ "$(grep -c '^Ca' <<<"$out")" -eq 2 ] &&
	[ "$(grep -c '^Switch' <<<"$out")" -eq 1 ]
}
tap_check "ibnetdiscover from here: the switch and both HCAs" discover

# RMPP, each side serving the other in turn: a serves first.  Before
# ib_srpt is loaded: its DM agent would take the DevMgt Set requests.
ms_build_prog rmpp_umad
rmpp_serve() {
	/tmp/rmpp_umad -d $dev -p 1 -M 1048576 -w 300 serve >/tmp/rmpp.out 2>&1
	local rc=$?

	grep -c '^ok' /tmp/rmpp.out
	grep -v '^ok' /tmp/rmpp.out | tail -n 8
	return $rc
}
rmpp_client() {
	# The responder registers its agents after the meeting.
	sleep 3
	/tmp/rmpp_umad -d $dev -p 1 -l "$peer_lid" -M 1048576 client \
		fe80000000000000$pguid >/tmp/rmpp.out 2>&1
	local rc=$?

	grep -c '^ok' /tmp/rmpp.out
	grep -v '^ok' /tmp/rmpp.out | tail -n 8
	return $rc
}
for turn in a b; do
	ms_peer_sync "rmpp-$turn" >/dev/null
	if [ $turn = $side ]; then
		tap_check "RMPP: served the other VM's requests of 1 B to 1 MiB" \
			rmpp_serve
	else
		tap_check "RMPP: requests of 1 B to 1 MiB to the other VM, every byte" \
			rmpp_client
	fi
done

target() {
	modprobe ib_srpt && modprobe target_core_file &&
	ms_srpt_target $wwn /tmp/lun0 $((32 << 20)) 0 $acl
}
tap_check "ib_srpt serves a LUN here, ACL for the other VM's ib_srp" target
# While both logins run, a's end of the cable sends 10% of what crosses
# it twice: ib_srp, ib_srpt and the MAD layers see the duplicates.
[ $side = b ] || ms_ibsim_knob 100 duplicate node10/port2
ms_peer_sync targets >/dev/null

srpdm() {
	local umad

	umad=$(ms_umad_of $dev 1) &&
	ms_wait 60 sh -c "ibsrpdm -c -d /dev/infiniband/$umad | grep -q dgid=fe80000000000000$pguid" &&
	ibsrpdm -c -d /dev/infiniband/$umad | tee /tmp/srpdm.out
}
tap_check "ibsrpdm finds the other VM's ib_srpt" srpdm

login() {
	local line

	line=$(grep "dgid=fe80000000000000$pguid" /tmp/srpdm.out | head -n 1)
	[ -n "$line" ] || return 1
	modprobe ib_srp &&
	ms_srp_add_target srp-$dev-1 "$line" && ms_wait 60 ms_srp_disk
}
tap_check "ib_srp logs in over IB CM to the other VM's ib_srpt" login

io() {
	local disk

	disk=$(ms_srp_disk | head -n 1) && [ -n "$disk" ] &&
	ms_fio_verify "$disk" --size=8M --bs=16k --rw=randwrite --direct=1 \
		>/tmp/fio.log 2>&1 || { tail -n 20 /tmp/fio.log; return 1; }
}
tap_check "fio writes 8 MiB there and verifies (crc32c)" io
ms_peer_sync io >/dev/null
if [ $side = a ]; then
	dups() {
		ms_ibsim_knob 0 duplicate node10/port2 || return 1
		echo "duplicated $(cat $knobs/duplicated)"
		[ "$(cat $knobs/duplicated)" -gt 0 ]
	}
	tap_check "the cable sent copies of 10% of a's packets meanwhile" dups
fi
tap_check "logout" ms_srp_logout

# The cable pulled under I/O: b writes to a's LUN while a pulls its end.
ms_peer_sync pull >/dev/null
if [ $side = b ]; then
	# The LinkDownedCounter of this port (PortCounters).
	link_downed() {
		perfquery -C $dev | sed -n 's/^LinkDownedCounter:\.*//p'
	}
	reconnects() {
		dmesg | grep -c "reconnect succeeded"
	}
	through_pull() {
		local r disk line ld0 ld1 rc0 rc1

		line=$(grep "dgid=fe80000000000000$pguid" /tmp/srpdm.out | head -n 1)
		ms_srp_add_target srp-$dev-1 "$line" && ms_wait 60 ms_srp_disk ||
			return 1
		for r in /sys/class/srp_remote_ports/*; do
			echo 2 >"$r/reconnect_delay" &&
			echo off >"$r/fast_io_fail_tmo" || return 1
		done
		disk=$(ms_srp_disk | head -n 1)
		ld0=$(link_downed) rc0=$(reconnects)
		ms_peer_sync writing >/dev/null || return 1
		ms_fio_verify "$disk" --size=8M --bs=64k --rw=randwrite \
			--direct=1 --rate=512k >/tmp/fio2.log 2>&1 ||
			{ tail -n 20 /tmp/fio2.log; return 1; }
		dmesg | grep -iE "reconnect|srp" | tail -n 4
		ms_peer_sync written >/dev/null || return 1
		ld1=$(link_downed) rc1=$(reconnects)
		echo "LinkDownedCounter $ld0 before, $ld1 after; ib_srp reconnects $rc0 before, $rc1 after"
		[ "$ld1" -gt "$ld0" ] && [ "$rc1" -gt "$rc0" ] && ms_srp_logout
	}
	tap_here "fio writes 8 MiB while the cable is pulled for 4 s (link down here, the QP's retries run out) and plugged: ib_srp reconnects, verifies" \
		through_pull
else
	# b's port goes down with the cable and must be ACTIVE again: read
	# by LID across the switch, once opensm has swept again.
	peer_active() {
		smpquery -C $dev portinfo "$peer_lid" 1 2>/dev/null |
			grep -q "^LinkState:.*Active"
	}
	pull() {
		local t0 rc=0

		ms_peer_sync writing >/dev/null && sleep 5 &&
		echo down >$knobs/link && sleep 4 &&
		grep "^remote .* pulled$" /sys/bus/ibdevsim/topology || rc=1
		# Plugged back whatever happened, so that b is not left waiting.
		echo up >$knobs/link
		t0=$SECONDS
		ms_wait 120 peer_active &&
		echo "the other VM's port ACTIVE $((SECONDS - t0)) s after the plug" ||
			rc=1
		ms_peer_sync written >/dev/null || rc=1
		return $rc
	}
	tap_here "cable pulled for 4 s and plugged: opensm resweeps, b's port ACTIVE" \
		pull
fi

# Packet-level fuzz: b writes raw InfiniBand packets onto the cable, a's
# counters account for every one.
ms_build_prog mad_fuzz
if [ $side = b ]; then
	ms_peer_sync fuzz >/dev/null
	fuzz() {
		/tmp/mad_fuzz -n "$nfuzz" -l "$peer_lid" \
			-L "$lid" wire "$peer_ip:4792" >/tmp/wire.out 2>&1
		local rc=$?

		cat /tmp/wire.out
		ms_peer_sync fuzzed "$(grep '^WIRE ' /tmp/wire.out)" >/dev/null &&
			return $rc
	}
	tap_check "mad_fuzz wrote raw packets onto the cable" fuzz
else
	snap() {
		cat $knobs/remote
		# At the HCA port, through the switch; not PortInfo's
		# counters: opensm's PortInfo Sets write those back.
		echo "pkey_refused $(cat $hca_knobs/pkey_refused)"
		echo "qkey_refused $(cat $hca_knobs/qkey_refused)"
		sed -n 's/^dropped_invalid /mad_dropped_invalid /p' \
			/sys/kernel/debug/ib_mad/$dev-1/stats 2>/dev/null
	}
	accounted() {
		local before after want k v b a bad=0

		before=$(snap)
		ms_peer_sync fuzz >/dev/null || return 1
		want=$(ms_peer_sync fuzzed) || return 1
		sleep 2
		after=$(snap)
		echo "$want"
		for kv in ${want#WIRE }; do
			k=${kv%%=*} v=${kv#*=}
			[ "$k" = sent ] && continue
			b=$(awk -v k="$k" '$1 == k { print $2 }' <<<"$before")
			a=$(awk -v k="$k" '$1 == k { print $2 }' <<<"$after")
			echo "$k: $((a - b)) counted, $v sent"
			[ $((a - b)) -eq "$v" ] || bad=1
		done
		return $bad
	}
	tap_check "every fuzzed packet is counted for the reason it was refused" \
		accounted
fi

ms_peer_sync end >/dev/null
teardown() {
	[ $side = b ] || ms_ibsim_sm_stops "$ms_sm_pid" || return 1
	ms_srpt_teardown $wwn && ms_ibsim_del_all && rmmod ibdevsim
}
tap_here "teardown: opensm, ib_srpt, the HCA and its cable" teardown
tap_done
