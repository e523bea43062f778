#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-dreq: a DREQ of the initiator's that crosses a lost DREQ of
# ib_srpt's must be answered with a DREP at once, also while the channel's
# release is held up by a command in the backend (issue 12, item 11).
#
# On ibdevsim's fabric, over RDMA/CM on IPoIB (so IB CM carries the
# connection, with the fabric's fault knobs on its MADs): ib_srpt serves
# an iblock LUN on a device-mapper device over null_blk, suspended, so
# that a READ stays in the backend.  progs/srp_rogue (case dreq-cross)
# logs in from netns "ini" and sends that READ.  Every GMP the switch
# sends to the initiator's port is dropped while the ACL is removed, so
# ib_srpt's DREQ is lost and it waits for a DREP; then the rogue sends its
# own DREQ, which reaches the target in DREQ_SENT: the two cross.  The
# target must answer with a DREP within 8 s although its channel cannot be
# released until the READ is done.  Pristine 6.12 sends none until the
# channel's CM ID is destroyed, after the backend resumes: its initiator
# retries the DREQ, and the target counts the retries as duplicates.
# Afterwards the READ completes, the ACL removal returns, and a new login
# works once the ACL is back.
# timeout: 360

. "$MS_HARNESS/guest/guest-lib.sh"

tap_plan 12

# ib_srpt's service GUID: the first HCA's node GUID.
g0=0002c90300001000
tgid=fe800000000000000002c90300002001
wwn=0x$tgid
rogue=0x00000000000000ff0002c90300001001
ini_ip=10.21.0.1 tgt_ip=10.21.0.2 port=5561
cfs=/sys/kernel/config/target
tpg=$cfs/srpt/$wwn/tpgt_1
bs=$cfs/core/iblock_0/held
sw=node10/port1		# the switch's end of the initiator's cable
# No udevd here: libdevmapper makes the /dev/mapper nodes itself.
export DM_DISABLE_UDEV=1

tap_check "ibdevsim loads, 2 HCAs, a switch, 4 cables" ms_ibsim_fabric
ms_ibsim_opensm
tap_check "opensm brings every port ACTIVE with a LID" \
	ms_wait 120 ms_ibsim_all_active

acl_add() {
	mkdir -p $tpg/acls/$rogue/lun_0 &&
	ln -s $tpg/lun/lun_0 $tpg/acls/$rogue/lun_0/lun0
}
acl_del() {
	rm $tpg/acls/$rogue/lun_0/lun0 && rmdir $tpg/acls/$rogue/lun_0 &&
	rmdir $tpg/acls/$rogue
}

# The LUN: iblock on dm-linear over null_blk, so that suspending the dm
# device holds every command that reaches it.
target() {
	modprobe null_blk nr_devices=1 gb=1 && modprobe dm_mod &&
	ms_wait 10 test -b /dev/nullb0 &&
	dmsetup create ms-held --table "0 $((2 << 20)) linear /dev/nullb0 0" &&
	modprobe ib_srpt && modprobe target_core_iblock &&
	mkdir -p $bs &&
	echo "udev_path=/dev/mapper/ms-held" >$bs/control &&
	cat /proc/sys/kernel/random/uuid >$bs/wwn/vpd_unit_serial &&
	echo 1 >$bs/enable &&
	mkdir -p $tpg/lun/lun_0 && ln -s $bs $tpg/lun/lun_0/held &&
	acl_add &&
	echo $port >$cfs/srpt/discovery_auth/rdma_cm_port &&
	echo 1 >$tpg/enable
}
tap_check "ib_srpt on ibdevsim1 port 1: iblock LUN on dm over null_blk, rogue's ACL" \
	target

tap_check "IPoIB: ibdevsim0 port 1 in netns ini ($ini_ip), ibdevsim1 port 1 here ($tgt_ip)" \
	ms_ibsim_ipoib_up $ini_ip $tgt_ip

tap_check "build progs/srp_rogue.c" ms_build_prog srp_rogue

cm() {
	cat /sys/class/infiniband/$1/ports/1/$2
}
knob() {
	cat /sys/kernel/debug/ibdevsim/$sw/$1
}
# The cue pipe: the rogue reads it; fd 3 here writes it.
rm -f /tmp/cue
mkfifo /tmp/cue
rogue_pid=
if [ -x /tmp/srp_rogue ] && dmsetup suspend ms-held; then
	ip netns exec ini timeout 200 /tmp/srp_rogue -b $ini_ip dreq-cross $tgt_ip \
		$port $rogue $g0 </tmp/cue >/tmp/rogue.out 2>&1 &
	rogue_pid=$!
fi
# Read-write, so that opening it cannot block if the rogue did not start.
exec 3<>/tmp/cue

# The rogue's READ gets no answer while the backend holds it, and our
# ib_srpt's ACL info file counts it outstanding (pristine 6.12's ACLs
# have no info file: there the rogue's word is all).
held() {
	[ -n "$rogue_pid" ] &&
	ms_wait 60 grep -q "READ of 4 KiB in flight" /tmp/rogue.out ||
		return 1
	[ -e $tpg/acls/$rogue/info ] || return 0
	grep "Outstanding" $tpg/acls/$rogue/info &&
	grep -q "Outstanding commands: 1 " $tpg/acls/$rogue/info
}
tap_here "the rogue logs in over RDMA/CM on IPoIB; its READ is held in the backend, outstanding" \
	held

# Lose the target's DREQ: every GMP leaving the switch for the
# initiator's port is dropped from the start of the ACL removal until
# the rogue is cued (ib_srpt sends its DREQ at once, and 3 s is left for
# it; the IB CM counts a DREQ as sent only when it is answered or given
# up, and other GMPs, SA queries to opensm there, may be dropped too, so
# neither counter can say when).  The CM's repeats of the DREQ, every
# 4 s (the initiator's CM response timeout for RDMA/CM), are dropped as
# well; should one slip through between the knob going off and the
# rogue's DREQ, the initiator receives it and the next point fails
# rather than passes.
acl_pid= rxi0=
lose_dreq() {
	local drop0

	rxi0=$(cm ibdevsim0 cm_rx_msgs/dreq)
	drop0=$(knob dropped)
	echo 2 >/sys/kernel/debug/ibdevsim/$sw/classes &&
	echo 1000 >/sys/kernel/debug/ibdevsim/$sw/drop || return 1
	(timeout 150 bash -c "$(declare -f acl_del); tpg=$tpg rogue=$rogue acl_del"
	 echo "acl removal: exit $?" >/tmp/acl_del.out) &
	acl_pid=$!
	sleep 3
	# (Not the ACL's info file: the rmdir holds its directory.)
	echo "GMPs dropped at $sw $drop0 -> $(knob dropped); DREQs received" \
	     "by the initiator $rxi0 -> $(cm ibdevsim0 cm_rx_msgs/dreq)"
	[ "$(knob dropped)" -gt "$drop0" ] &&
	[ "$(cm ibdevsim0 cm_rx_msgs/dreq)" = "$rxi0" ]
}
tap_here "ACL removed: ib_srpt's DREQ sent and lost on the way to the initiator" \
	lose_dreq

cross() {
	local rx0 drep0 dup0 rtx0 t0=$SECONDS

	rx0=$(cm ibdevsim1 cm_rx_msgs/dreq)
	drep0=$(cm ibdevsim1 cm_tx_msgs/drep)
	dup0=$(cm ibdevsim1 cm_rx_duplicates/dreq)
	rtx0=$(cm ibdevsim0 cm_tx_retries/dreq)
	# Builtins only from here to the cue: no fork delays it.
	echo 0 >/sys/kernel/debug/ibdevsim/$sw/drop
	echo 7 >/sys/kernel/debug/ibdevsim/$sw/classes
	echo go >&3
	ms_wait 20 grep -q "dreq-cross: DREQ sent" /tmp/rogue.out
	grep "dreq-cross: DREQ sent" /tmp/rogue.out
	echo "after $((SECONDS - t0)) s: target DREQs received $rx0 ->" \
	     "$(cm ibdevsim1 cm_rx_msgs/dreq), DREPs sent $drep0 ->" \
	     "$(cm ibdevsim1 cm_tx_msgs/drep), duplicate DREQs $dup0 ->" \
	     "$(cm ibdevsim1 cm_rx_duplicates/dreq); initiator DREQ retries" \
	     "$rtx0 -> $(cm ibdevsim0 cm_tx_retries/dreq), DREQs received" \
	     "$rxi0 -> $(cm ibdevsim0 cm_rx_msgs/dreq);" \
	     "ACL removal: $(cat /tmp/acl_del.out 2>/dev/null || echo still waiting)"
	# No DREQ of the target's reached the initiator before or after
	# (else the rogue's DREQ would have been a DREP, crossing nothing).
	[ "$(cm ibdevsim0 cm_rx_msgs/dreq)" = "$rxi0" ] &&
	grep -q "DREP received" /tmp/rogue.out &&
	[ "$(cm ibdevsim1 cm_rx_msgs/dreq)" -gt "$rx0" ] &&
	[ "$(cm ibdevsim1 cm_tx_msgs/drep)" -gt "$drep0" ] &&
	[ "$(cm ibdevsim1 cm_rx_duplicates/dreq)" = "$dup0" ] &&
	[ ! -e /tmp/acl_del.out ]
}
tap_here "the crossing DREQ is answered with a DREP at once, the release still held [differs]" \
	cross

release() {
	echo 0 >/sys/kernel/debug/ibdevsim/$sw/drop
	dmsetup resume ms-held || return 1
	[ -n "$acl_pid" ] || return 1
	wait $acl_pid
	cat /tmp/acl_del.out
	grep -q "exit 0" /tmp/acl_del.out
}
tap_here "backend resumed: the READ ends, the channel is released, the ACL removal returns" \
	release

# The ACL back, the second cue lets the rogue end the case and log in
# again (TEST UNIT READY must be GOOD).
relogin() {
	local rc

	acl_add || return 1
	echo done >&3
	exec 3>&-
	[ -n "$rogue_pid" ] || return 1
	wait $rogue_pid
	rc=$?
	cat /tmp/rogue.out
	echo "srp_rogue: exit $rc (1 if the DREP did not come)"
	grep -q "health: TEST UNIT READY on a new login: GOOD" /tmp/rogue.out
}
tap_here "ACL back: a new login works, TEST UNIT READY is GOOD" relogin
exec 3>&-

down() {
	ms_srpt_teardown $wwn && modprobe -r ib_srpt && ip netns del ini &&
	modprobe -r ib_ipoib && dmsetup remove ms-held && modprobe -r null_blk
}
tap_check "teardown; ib_srpt, ib_ipoib and null_blk unload" down
kill "$ms_sm_pid"
wait "$ms_sm_pid" 2>/dev/null
tap_check "ibdevsim unloads with its devices" rmmod ibdevsim
tap_done
