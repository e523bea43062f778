#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-srp: an ib_srp login over IB CM across ibdevsim's default fabric.
# ib_srpt serves a fileio LUN on ibdevsim1 port 1; ib_srp on ibdevsim0
# port 1 logs in with the line srp_daemon would print (id_ext, ioc_guid,
# dgid, pkey, service_id): the SA gives the path, IB CM connects the RC
# QPs through the switch, SRP IUs move by SEND and data by RDMA WRITE and
# READ.  4 MiB written with O_DIRECT read back identical; logout and
# teardown.
# timeout: 400

. "$MS_HARNESS/guest/guest-lib.sh"

tap_plan 10

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
	echo "id_ext=$g0,ioc_guid=$g0,dgid=$tgid,pkey=ffff,service_id=$g0" \
		>/sys/class/infiniband_srp/srp-ibdevsim0-1/add_target || return 1
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
kill "$ms_sm_pid"
wait "$ms_sm_pid" 2>/dev/null
tap_check "target torn down" ms_srpt_teardown $wwn
tap_check "ib_srp and ib_srpt unload" \
	sh -c "modprobe -r ib_srp && modprobe -r ib_srpt"
tap_check "ibdevsim unloads with its devices" rmmod ibdevsim
tap_done
