#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-srp: an ib_srp login over IB CM across ibdevsim's default fabric.
# ib_srpt serves a fileio LUN on ibdevsim1 port 1; ib_srp on ibdevsim0
# port 1 logs in with the line srp_daemon would print (id_ext, ioc_guid,
# dgid, pkey, service_id): the SA gives the path, IB CM connects the RC
# QPs through the switch, SRP IUs move by SEND and data by RDMA WRITE and
# READ.  4 MiB written with O_DIRECT read back identical; logout; a
# second login ended by DREQs that cross (the target disables its TPG as
# the initiator logs out, with QP1 delayed 1 s): the target answers the
# initiator's DREQ with a DREP; teardown.
# timeout: 400

. "$MS_HARNESS/guest/guest-lib.sh"

tap_plan 12

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
	modprobe ib_srp never_register=1 || return 1
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
tap_check "login again" login
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
