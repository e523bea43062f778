#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srp-login: configure an ib_srpt target through configfs (fileio LUN, ACL,
# RDMA/CM listener on port 5555), log in with ib_srp over RDMA/CM on the
# same rxe device, write 4 MiB of random data with O_DIRECT to the new SCSI
# disk and read it back identical, then log out and take it all down.
# timeout: 600

. "$MS_HARNESS/guest/guest-lib.sh"

addr=10.12.0.1

tap_plan 9
ms_srpt_loopback $addr
modprobe ib_srp
# ib_srp sends initiator_ext (0 here) and its port's interface id.
acl=0x0000000000000000${gid:16}
lunfile=/tmp/srp-lun0.img
truncate -s 64M $lunfile

tap_check "srpt target $wwn with LUN and ACL $acl" \
	ms_srpt_target $wwn $lunfile $((64 << 20)) 5555 $acl

login() {
	local host
	host=$(ls /sys/class/infiniband_srp/ | head -n 1)
	echo "id_ext=$guid,ioc_guid=$guid,dest=$addr:5555,max_cmd_per_lun=32" \
		>/sys/class/infiniband_srp/$host/add_target &&
	ms_wait 30 ms_srp_disk
}
tap_check "ib_srp logs in over RDMA/CM and a LIO-ORG disk appears" login
disk=$(ms_srp_disk)
echo "# disk: /dev/$disk"

dd if=/dev/urandom of=/tmp/pattern bs=1M count=4 status=none
tap_check "4 MiB O_DIRECT write" \
	dd if=/tmp/pattern of=/dev/$disk bs=1M count=4 oflag=direct status=none
tap_check "4 MiB O_DIRECT read back identical" \
	cmp /tmp/pattern <(dd if=/dev/$disk bs=1M count=4 iflag=direct status=none)
tap_check "backing file holds the same bytes" \
	cmp -n $((4 << 20)) /tmp/pattern $lunfile

tap_check "ib_srp logs out" ms_srp_logout
tap_check "target torn down through configfs" ms_srpt_teardown $wwn
tap_check "ib_srpt and ib_srp unload" modprobe -r ib_srp ib_srpt
tap_done
