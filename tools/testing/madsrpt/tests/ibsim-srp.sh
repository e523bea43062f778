#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-srp: an ib_srp login over IB CM across ibdevsim's default fabric.
# ib_srpt serves a fileio LUN on ibdevsim1 port 1; ib_srp on ibdevsim0
# port 1 logs in with the line srp_daemon would print (id_ext, ioc_guid,
# dgid, pkey, service_id): the SA gives the path, IB CM connects the RC
# QPs through the switch, SRP IUs move by SEND and data by RDMA WRITE and
# READ.  4 MiB written with O_DIRECT read back identical; under 3 s of
# parallel reads the receive works of the two HCA ports (each port
# receives in its own context, as hardware does) are traced running at
# the same moment on the VM's two CPUs; logout.  A
# second login with QP1 held back 1 s on the initiator's cable: its first
# SRP request reaches the target's QP before the RTU, ibdevsim raises
# COMM_EST and ib_srpt passes it to the CM, which then counts the late
# RTU as a duplicate.  One of ib_srpt's QPs is made to fail (ibdevsim's
# qp_fatal): ib_srpt closes that channel by itself, and ib_srp
# reconnects, data verified; again with the initiator's GMPs lost for 3 s,
# so that only the CM's repeat of ib_srpt's DREQ can reach it.  Then
# DREQs that cross (the target disables its TPG as the initiator logs
# out, with QP1 delayed 1 s): the target answers the initiator's DREQ
# with a DREP; teardown.
# timeout: 500

. "$MS_HARNESS/guest/guest-lib.sh"

tap_plan 17

g0=0002c90300001000
tgid=fe800000000000000002c90300002001
wwn=0x$tgid
# ib_srp's initiator port id: initiator_ext 0, then its port GUID.
acl=0x00000000000000000002c90300001001

tap_check "ibdevsim loads, 2 HCAs, a switch, 4 cables" ms_ibsim_fabric
ms_ibsim_opensm
tap_check "opensm brings every port ACTIVE with a LID" \
	ms_wait 120 ms_ibsim_all_active

target() {
	modprobe ib_srpt && modprobe target_core_file &&
	ms_srpt_target $wwn /tmp/lun0 $((64 << 20)) 0 $acl
}
tap_check "ib_srpt target on ibdevsim1 port 1, LUN and ACL" target

login() {
	modprobe ib_srp || return 1
	ms_srp_add_target srp-ibdevsim0-1 \
		"id_ext=$g0,ioc_guid=$g0,dgid=$tgid,pkey=ffff,service_id=$g0" ||
		return 1
	ms_wait 60 ms_srp_disk
}
tap_check "ib_srp logs in over IB CM from ibdevsim0 port 1" login
dmesg | grep -iE "srp|ibdevsim" | tail -n 8 | sed 's/^/# /'

disk=$(ms_srp_disk | head -n 1)
echo "# disk: ${disk:-none}"
io() {
	[ -n "$disk" ] || return 1
	head -c $((4 << 20)) /dev/urandom >/tmp/pattern &&
	dd if=/tmp/pattern of=/dev/$disk bs=1M oflag=direct status=none &&
	dd if=/dev/$disk of=/tmp/back bs=1M count=4 iflag=direct status=none &&
	cmp /tmp/pattern /tmp/back
}
tap_check "4 MiB written with O_DIRECT read back identical" io

mixed() {
	[ -n "$disk" ] || return 1
	dd if=/tmp/pattern of=/dev/$disk bs=4k seek=2000 count=256 oflag=direct status=none &&
	dd if=/dev/$disk of=/tmp/back2 bs=512 skip=16000 count=2048 iflag=direct status=none &&
	cmp -n $((1 << 20)) /tmp/pattern /tmp/back2
}
tap_check "4 KiB writes and 512-byte reads at an offset" mixed

# Each HCA port receives in its own work, as a real port's receive side
# runs on its own interrupt: with reads in flight both ways (SRP commands
# to the target's port, RDMA WRITEs and responses to the initiator's),
# the two ports' receive works must be seen running at the same moment on
# the two CPUs.  From the workqueue trace events.
tr=/sys/kernel/tracing
concurrent_rx() {
	local e pids=() i out

	[ -n "$disk" ] || return 1
	[ -d $tr/events ] || mount -t tracefs nodev $tr || return 1
	echo 8192 >$tr/buffer_size_kb && echo >$tr/trace || return 1
	for e in workqueue_execute_start workqueue_execute_end; do
		echo 1 >$tr/events/workqueue/$e/enable || return 1
	done
	for i in 1 2 3; do
		timeout 3 bash -c "while dd if=/dev/$disk of=/dev/null bs=256k \
			count=16 skip=$((i * 16)) iflag=direct status=none; do :; done" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	for e in workqueue_execute_start workqueue_execute_end; do
		echo 0 >$tr/events/workqueue/$e/enable
	done
	# A port's receive work starting while another port's has started
	# and not ended, on another CPU: the two ran at once.  (Tracked by
	# work, not by CPU: an unbound worker may move while it runs.)
	out=$(grep ibdevsim_rx_work $tr/trace | awk '
		{
			if (!match($0, /\[[0-9]+\]/))
				next
			cpu = substr($0, RSTART + 1, RLENGTH - 2) + 0
			if (!match($0, /work struct [0-9a-fx]+/))
				next
			w = substr($0, RSTART + 12, RLENGTH - 12)
		}
		/workqueue_execute_start/ {
			runs++
			ports[w] = 1
			for (o in active)
				if (o != w && active[o] != cpu)
					overlap++
			active[w] = cpu
		}
		/workqueue_execute_end/ { delete active[w] }
		END {
			n = 0
			for (w in ports)
				n++
			printf "%d %d %d\n", runs, n, overlap
		}')
	echo >$tr/trace
	read -r runs nports overlap <<<"$out"
	echo "receive work runs: ${runs:-0} on ${nports:-0} ports;" \
	     "started while another port's ran on the other CPU: ${overlap:-0}"
	[ "${nports:-0}" -ge 2 ] && [ "${overlap:-0}" -ge 1 ]
}
tap_here "the two ports' receive sides run at once on both CPUs (3 s of reads)" \
	concurrent_rx

tap_check "ib_srp logs out" ms_srp_logout

# Crossing DREQs: every QP1 MAD on the initiator's cable (both ends) held
# back 1 s, then the target disables its TPG (ib_srpt sends a DREQ on each
# channel) while ib_srp logs out (it sends its own).  Each side receives
# the other's DREQ while waiting for a DREP.  ib_srpt must answer with a
# DREP rather than leave the initiator's DREQ unanswered and its channel
# waiting for ever.  Pristine 6.12 passes this point too, with the same
# counters (2026-12-02: 2 DREQs in, 4 DREPs out on each kernel): when its
# ib_srpt leaves the initiator's DREQ unanswered, the IB CM sends the DREP
# itself as the channel's CM ID is destroyed (cm_destroy_id in DREQ_RCVD),
# so the point does not tell the two ib_srpts apart.
cm() {
	cat /sys/class/infiniband/$1/ports/1/cm_$2_msgs/$3
}
drep_sent() {
	[ "$(cm ibdevsim1 tx drep)" -gt "$drep0" ]
}
cross() {
	local tpg=/sys/kernel/config/target/srpt/$wwn/tpgt_1 p rc=0
	local cable="node1/port1 node10/port1"
	local rx0 rxi0 drep0 rx1 rxi1 drep1 t0=$SECONDS

	ms_ibsim_knob 2 classes $cable && ms_ibsim_knob 1000 delay_ms $cable &&
	ms_ibsim_knob 1000 delay $cable || return 1
	rx0=$(cm ibdevsim1 rx dreq) rxi0=$(cm ibdevsim0 rx dreq)
	drep0=$(cm ibdevsim1 tx drep)
	timeout 60 sh -c "echo 0 >$tpg/enable" &
	p=$!
	ms_srp_logout || rc=1
	wait $p || { echo "TPG disable: exit $?"; rc=1; }
	# The DREPs are delayed too.
	ms_wait 10 drep_sent
	sleep 2
	rx1=$(cm ibdevsim1 rx dreq) rxi1=$(cm ibdevsim0 rx dreq)
	drep1=$(cm ibdevsim1 tx drep)
	ms_ibsim_knob 0 delay $cable
	ms_ibsim_knob 7 classes $cable
	echo "both done in $((SECONDS - t0)) s; DREQs received: target" \
	     "$rx0 -> $rx1, initiator $rxi0 -> $rxi1; DREPs sent by the" \
	     "target $drep0 -> $drep1; DREQ retries: initiator" \
	     "$(cat /sys/class/infiniband/ibdevsim0/ports/1/cm_tx_retries/dreq)," \
	     "target $(cat /sys/class/infiniband/ibdevsim1/ports/1/cm_tx_retries/dreq);" \
	     "DREPs received by the initiator $(cm ibdevsim0 rx drep)" | tee /tmp/cross.out
	[ $rc = 0 ] && [ "$rx1" -gt "$rx0" ] && [ "$rxi1" -gt "$rxi0" ] &&
	[ $((drep1 - drep0)) -ge $((rx1 - rx0)) ] &&
	echo 1 >$tpg/enable
}
# Login with QP1 held back 1 s both ways on the initiator's cable: ib_srp
# sends its first requests (the SCSI scan) as soon as the REP arrives,
# while its RTU waits a second.  A request that lands on the target's QP
# in RTR raises COMM_EST; ib_srpt hands it to the CM (ib_cm_notify), which
# establishes the connection before any RTU arrives.  Without that, the
# first RTU of each connection establishes it and only later ones (sent
# again for a REP the CM sent again) are duplicates: so more duplicates
# than RTUs received less channels means COMM_EST did it at least once.
cmc=/sys/class/infiniband/ibdevsim1/ports/1
comm_est() {
	local cable="node1/port1 node10/port1" r0 r1 d0 d1 n rc=0

	r0=$(cat $cmc/cm_rx_msgs/rtu) d0=$(cat $cmc/cm_rx_duplicates/rtu)
	ms_ibsim_knob 2 classes $cable && ms_ibsim_knob 1000 delay_ms $cable &&
	ms_ibsim_knob 1000 delay $cable || return 1
	login || rc=1
	sleep 3
	ms_ibsim_knob 0 delay $cable
	ms_ibsim_knob 7 classes $cable
	r1=$(cat $cmc/cm_rx_msgs/rtu) d1=$(cat $cmc/cm_rx_duplicates/rtu)
	n=$(cat /sys/class/scsi_host/host*/ch_count 2>/dev/null | head -n 1)
	echo "channels ${n:-?}; RTUs the target received $((r1 - r0)), of which duplicates $((d1 - d0))"
	[ $rc = 0 ] && [ "${n:-0}" -gt 0 ] &&
	[ $((d1 - d0)) -gt $((r1 - r0 - n)) ]
}
tap_here "login again with the RTU late: COMM_EST establishes a channel first" \
	comm_est

# ib_srpt's RC QPs on ibdevsim1, by number (rdma's restrack names the
# module that made each kernel QP).
srpt_qps() {
	rdma res show qp link ibdevsim1/1 2>/dev/null |
		awk '/ib_srpt/ { for (i = 1; i < NF; i++) if ($i == "lqpn") print $(i + 1) }'
}
# A QP of ib_srpt fails (IB_EVENT_QP_FATAL): with no I/O to make the
# initiator notice, ib_srpt must close the channel itself, and its QP
# goes.  Pristine 6.12's ib_srpt logs the event as unrecognized and
# keeps the channel.
fatal() {
	local qpn

	qpn=$(srpt_qps | head -n 1)
	[ -n "$qpn" ] || { echo "no QP of ib_srpt"; return 1; }
	echo "QP_FATAL on ib_srpt's QP $qpn"
	echo "$qpn" >/sys/kernel/debug/ibdevsim/node2/qp_fatal || return 1
	ms_wait 15 sh -c "! rdma res show qp link ibdevsim1/1 2>/dev/null |
		grep -qw 'lqpn $qpn'" || { echo "QP $qpn still there"; return 1; }
}
tap_here "a QP of ib_srpt fails: ib_srpt closes its channel [differs]" fatal
dmesg | grep -E "ib_srpt|srp" | grep -iE "fatal|error event|reconnect" |
	tail -n 4 | sed 's/^/# /'
tap_check "ib_srp reconnects, 4 MiB read back identical" \
	ms_wait 60 io

# The same while every GMP the switch sends to the initiator's port is
# lost for 3 s from the failure: ib_srpt's first DREQ is lost with them.
# ib_srpt must keep the channel, and its CM ID, until the CM's repeat of
# the DREQ has reached the initiator; a channel released at once takes
# the DREQ's retries with its CM ID, and ib_srp learns nothing until its
# commands time out.  The repeat comes after the initiator's CM response
# timeout (about 4 s here).
fatal_lost() {
	local qpn k=/sys/kernel/debug/ibdevsim/node10/port1 rc=0
	local rx0 rtx0 drop0 classes0 rx1 drop1
	local ini=/sys/class/infiniband/ibdevsim0/ports/1
	local tgt=/sys/class/infiniband/ibdevsim1/ports/1

	qpn=$(srpt_qps | head -n 1)
	[ -n "$qpn" ] || { echo "no QP of ib_srpt"; return 1; }
	rx0=$(cat $ini/cm_rx_msgs/dreq) rtx0=$(cat $tgt/cm_tx_retries/dreq)
	drop0=$(cat $k/dropped) classes0=$(cat $k/classes)
	echo 2 >$k/classes && echo 1000 >$k/drop || return 1
	echo "QP_FATAL on ib_srpt's QP $qpn, GMPs to the initiator lost for 3 s"
	echo "$qpn" >/sys/kernel/debug/ibdevsim/node2/qp_fatal || rc=1
	sleep 3
	# Read while the loss still holds: the repeat may come at any time
	# once it ends.
	drop1=$(cat $k/dropped) rx1=$(cat $ini/cm_rx_msgs/dreq)
	echo 0 >$k/drop
	echo "$classes0" >$k/classes
	echo "GMPs lost $drop0 -> $drop1; DREQs the initiator received" \
	     "meanwhile $rx0 -> $rx1"
	[ "$drop1" -gt "$drop0" ] && [ "$rx1" = "$rx0" ] || rc=1
	ms_wait 20 sh -c "[ \$(cat $ini/cm_rx_msgs/dreq) -gt $rx0 ]" ||
		{ echo "no DREQ reached the initiator within 20 s"; rc=1; }
	echo "DREQs the initiator received $rx0 -> $(cat $ini/cm_rx_msgs/dreq);" \
	     "the target's DREQ retries $rtx0 -> $(cat $tgt/cm_tx_retries/dreq)"
	[ "$(cat $tgt/cm_tx_retries/dreq)" -gt "$rtx0" ] || rc=1
	ms_wait 15 sh -c "! rdma res show qp link ibdevsim1/1 2>/dev/null |
		grep -qw 'lqpn $qpn'" || { echo "QP $qpn still there"; rc=1; }
	return $rc
}
tap_here "a QP of ib_srpt fails and its first DREQ is lost: the CM repeats it to the initiator, then the channel goes [differs]" \
	fatal_lost
tap_check "ib_srp reconnects again, 4 MiB read back identical" \
	ms_wait 60 io
tap_check "crossing DREQs (TPG disabled as ib_srp logs out): the target sends a DREP" \
	cross
sed 's/^/# /' /tmp/cross.out
kill "$ms_sm_pid"
wait "$ms_sm_pid" 2>/dev/null
tap_check "target torn down" ms_srpt_teardown $wwn
tap_check "ib_srp and ib_srpt unload" \
	sh -c "modprobe -r ib_srp && modprobe -r ib_srpt"
tap_check "ibdevsim unloads with its devices" rmmod ibdevsim
tap_done
