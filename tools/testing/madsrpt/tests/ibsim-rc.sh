#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-rc: ibdevsim's RC transport under loss, with ib_srp over IB CM.
# ib_srpt serves a LUN on ibdevsim1 port 1, ib_srp logs in from ibdevsim0
# port 1 across the switch, in its default mode: memory registered by
# FRWR (no "unsafe global rkey", MRs in rdma res).
#   - 5% of the RC packets are dropped both ways on the initiator's cable
#     (the fault knobs' class 8): fio writes 4 MiB and verifies it with
#     crc32c without an error, and the ports' hw_counters show the
#     transport sending again (sequence NAKs, local ACK timeouts);
#   - then every RC packet is dropped: the initiator's QP sends again each
#     local ACK timeout, retry_cnt (7) times, then fails with
#     IB_WC_RETRY_EXC_ERR, after the time a hardware QP takes: at least 7
#     timeouts of the path's packet lifetime (saquery's PathRecord), and
#     the test measures it;
#   - the knob goes back to 0: ib_srp reconnects over IB CM by itself and
#     what fio wrote reads back identical.
# timeout: 400

. "$MS_HARNESS/guest/guest-lib.sh"

tap_plan 11

g0=0002c90300001000
tgid=fe800000000000000002c90300002001
wwn=0x$tgid
acl=0x00000000000000000002c90300001001
# ibdevsim0 port 1's cable: its own end and the switch's.
cable="node1/port1 node10/port1"
hw=/sys/class/infiniband

tap_check "ibdevsim loads, 2 HCAs, a switch, 4 cables" ms_ibsim_fabric
ms_ibsim_opensm
tap_check "opensm brings every port ACTIVE with a LID" \
	ms_wait 120 ms_ibsim_all_active

# The TPG's use_srq=1: ib_srpt's channels receive through one SRQ of the
# HCA.
target() {
	modprobe ib_srpt && modprobe target_core_file &&
	ms_srpt_target $wwn /tmp/lun0 $((64 << 20)) 0 $acl &&
	echo 1 >/sys/kernel/config/target/srpt/$wwn/tpgt_1/attrib/use_srq
}
tap_check "ib_srpt target on ibdevsim1 port 1 (use_srq=1), LUN and ACL" target

# res DEV KIND: how many objects of KIND (mr, srq...) DEV has.
res() {
	rdma res show | sed -n "s/.*$1:.* $2 \([0-9]*\).*/\1/p"
}
# ib_srp in its default mode: every command's memory registered by FRWR
# (IB_WR_REG_MR before, IB_WR_LOCAL_INV after), not the global R_Key;
# the target's channel QPs on its SRQ.
login() {
	modprobe ib_srp || return 1
	ms_srp_add_target srp-ibdevsim0-1 \
		"id_ext=$g0,ioc_guid=$g0,dgid=$tgid,pkey=ffff,service_id=$g0" ||
		return 1
	ms_wait 60 ms_srp_disk || return 1
	rdma res show | grep -E "ibdevsim[01]:"
	! dmesg | grep -q "unsafe global rkey" &&
		[ "$(res ibdevsim0 mr)" -gt 0 ] && [ "$(res ibdevsim1 srq)" -gt 0 ]
}
tap_here "ib_srp logs in over IB CM from ibdevsim0 port 1: FRWR MRs, ib_srpt's SRQ" login
disk=$(ms_srp_disk | head -n 1)
echo "# disk: ${disk:-none}"

# ctr DEV NAME: an RC counter of port 1 of DEV.
ctr() {
	cat $hw/$1/ports/1/hw_counters/$2
}
# both NAME: the counter summed over the two HCAs' ports 1.
both() {
	echo $(($(ctr ibdevsim0 $1) + $(ctr ibdevsim1 $1)))
}
counters() {
	local d c line

	for d in ibdevsim0 ibdevsim1; do
		line=
		for c in rc_retransmits local_ack_timeout_err rcvd_seq_err \
			 out_of_seq_request duplicate_request implied_nak_seq_err \
			 retry_exceeded_err; do
			line="$line $c=$(ctr $d $c)"
		done
		echo "$d:$line"
	done
}

lossy() {
	local r0 s0 rc=0

	[ -n "$disk" ] || return 1
	r0=$(both rc_retransmits) s0=$(both rcvd_seq_err)
	ms_ibsim_knob 8 classes $cable && ms_ibsim_knob 50 drop $cable ||
		return 1
	ms_fio_verify $disk --size=4M --bs=64k --rw=randwrite --direct=1 \
		>/tmp/fio.log 2>&1 || rc=1
	ms_ibsim_knob 0 drop $cable
	grep -E "err=|WRITE:|READ:" /tmp/fio.log
	counters
	for p in $cable; do
		echo "$p dropped $(cat /sys/kernel/debug/ibdevsim/$p/dropped)"
	done
	[ $rc = 0 ] || { tail -n 20 /tmp/fio.log; return 1; }
	# Sent again, and through sequence NAKs, not only by timeouts.
	[ "$(both rc_retransmits)" -gt "$r0" ] &&
		[ "$(both rcvd_seq_err)" -gt "$s0" ]
}
tap_here "5% of RC packets lost both ways: fio verify of 4 MiB without error, the transport sent again" \
	lossy

# The path's packet lifetime, from the SA's PathRecord: IB CM sets the
# QPs' local ACK timeout to at least 4.096 us << (lifetime + 1).
slid=$(($(cat $hw/ibdevsim0/ports/1/lid)))
dlid=$(($(cat $hw/ibdevsim1/ports/1/lid)))
saquery -C ibdevsim0 -P 1 -p --src-to-dst $slid:$dlid >/tmp/pr.txt 2>&1
plt=$(sed -n 's/^[[:space:]]*pkt_life\.*\(0x[0-9a-f]*\).*/\1/p' /tmp/pr.txt |
	head -n 1)
# The top two bits are the selector (0x80: exactly).
[ -n "$plt" ] && plt=$((plt & 0x3f))
echo "# path $slid -> $dlid packet lifetime: ${plt:-unknown}"
[ -n "$plt" ] || sed 's/^/# /' /tmp/pr.txt | head -n 30

outage() {
	local e0 t0 t=0 ms tmin tmax to0 to

	[ -n "$disk" ] && [ -n "$plt" ] || return 1
	e0=$(ctr ibdevsim0 retry_exceeded_err)
	to0=$(ctr ibdevsim0 local_ack_timeout_err)
	ms_ibsim_knob 1000 drop $cable || return 1
	t0=$(date +%s%N)
	# A read that needs the cable: the SRP command is lost, again and
	# again, until the initiator's QP gives up.
	dd if=/dev/$disk of=/dev/null bs=64k count=1 skip=300 iflag=direct \
		status=none 2>/dev/null &
	echo $! >/tmp/dd.pid
	ms_wait 90 sh -c "[ \$(cat $hw/ibdevsim0/ports/1/hw_counters/retry_exceeded_err) -gt $e0 ]" &&
		t=$(date +%s%N)
	ms=$(( (t - t0) / 1000000 ))
	to=$(( $(ctr ibdevsim0 local_ack_timeout_err) - to0 ))
	# 7 timeouts at least (the 8th may have started before the drop),
	# each no shorter than the path's; IB CM adds one step at most.
	tmin=$(( 7 * (4096 << (plt + 1)) / 1000000 ))
	tmax=$(( 9 * (4096 << (plt + 2)) / 1000000 ))
	echo "retry exceeded after $ms ms, $to local ACK timeouts" \
	     "(expected $tmin to $tmax ms)"
	counters
	[ "$t" -gt 0 ] && [ "$ms" -ge "$tmin" ] && [ "$ms" -le "$tmax" ] &&
		[ "$to" -ge 8 ]
}
tap_here "every RC packet lost: the initiator's QP fails with retry exceeded after 7 local ACK timeouts" \
	outage
dmesg | grep -iE "srp.*(status|error|fail)" | tail -n 3 | sed 's/^/# /'

rport_running() {
	grep -q running /sys/class/srp_remote_ports/port-*/state 2>/dev/null
}
recovered() {
	local t0=$SECONDS

	ms_ibsim_knob 0 drop $cable && ms_ibsim_knob 0xf classes $cable ||
		return 1
	wait "$(cat /tmp/dd.pid)"
	# ib_srp reconnects after its reconnect_delay.
	ms_wait 90 sh -c "dmesg | grep -q 'reconnect succeeded'" || return 1
	ms_wait 30 rport_running || return 1
	echo "remote port running again after $((SECONDS - t0)) s"
	disk=$(ms_srp_disk | head -n 1)
	[ -n "$disk" ] &&
		ms_fio_verify $disk --size=4M --bs=64k --rw=randwrite --direct=1 \
			--verify_only >/tmp/fio2.log 2>&1 ||
		{ tail -n 20 /tmp/fio2.log; return 1; }
}
tap_here "knob back to 0: ib_srp reconnects, the 4 MiB fio wrote verify" \
	recovered
dmesg | grep -iE "reconnect" | tail -n 2 | sed 's/^/# /'

# ib_srpt drains each channel's QP with ib_drain_qp(), which on a QP of
# an SRQ waits (up to 60 s) for IB_EVENT_QP_LAST_WQE_REACHED.
srpt_qps_gone() {
	! rdma res show qp link ibdevsim1/1 2>/dev/null | grep -qw RC
}
logout() {
	local t0=$SECONDS

	ms_srp_logout || return 1
	ms_wait 30 srpt_qps_gone || return 1
	echo "ib_srpt's channels gone $((SECONDS - t0)) s after the logout"
	[ $((SECONDS - t0)) -lt 20 ]
}
tap_here "ib_srp logs out; ib_srpt's QPs of its SRQ drained (LAST_WQE_REACHED) at once" logout
kill "$ms_sm_pid"
wait "$ms_sm_pid" 2>/dev/null
tap_check "target torn down" ms_srpt_teardown $wwn
tap_check "ib_srp and ib_srpt unload" \
	sh -c "modprobe -r ib_srp && modprobe -r ib_srpt"
tap_check "ibdevsim unloads with its devices" rmmod ibdevsim
tap_done
