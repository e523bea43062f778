#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srpt-targetcli: targetcli-fb (unmodified, from Debian) creates a fileio
# backstore, an srpt target named by GID, a LUN and an ACL; saveconfig,
# clearconfig and restoreconfig round-trip it; ib_srp then logs in over
# RDMA/CM and moves verified data.
# timeout: 600

. "$MS_HARNESS/guest-lib.sh"

cfs=/sys/kernel/config/target
addr=10.14.0.1
dev=rxe-veth0

tap_plan 10
tap_check "rxe on veth0" ms_rxe_veth veth0 $addr/24

# What targetcli needs: a writable HOME and a system D-Bus.
export HOME=/tmp/home
mkdir -p $HOME /run/dbus
dbus-daemon --system --fork >/dev/null 2>&1 || true
modprobe ib_srpt
modprobe target_core_file

gid=$(ms_gid0 $dev)
guid=$(ms_guid $dev)
wwn=ib.$gid
acl=ib.0000000000000000${gid:16}
t=/srpt/$wwn

create() {
	targetcli /backstores/fileio create disk0 /tmp/tcli.img 64M &&
	targetcli /srpt create $wwn &&
	targetcli $t/luns create /backstores/fileio/disk0 &&
	targetcli $t/acls create $acl
}
tap_check "targetcli creates backstore, target, LUN and ACL" create

in_configfs() {
	[ -d $cfs/srpt/0x$gid/tpgt_1/acls/0x${acl#ib.}/lun_0 ] &&
	[ -d $cfs/srpt/0x$gid/tpgt_1/lun/lun_0 ] &&
	[ "$(cat $cfs/srpt/0x$gid/tpgt_1/enable)" = 1 ]
}
tap_check "configfs holds the target, LUN, ACL; TPG enabled" in_configfs
tap_check "targetcli saveconfig" targetcli saveconfig
tap_check "targetcli clearconfig" targetcli clearconfig confirm=True
tap_check "srpt target gone" sh -c "! ls -d $cfs/srpt/0x$gid 2>/dev/null"
tap_check "targetcli restoreconfig" targetcli restoreconfig
tap_check "restored tree matches" in_configfs

echo 5557 >$cfs/srpt/discovery_auth/rdma_cm_port
modprobe ib_srp

login_io() {
	local host disk
	host=$(ls /sys/class/infiniband_srp/ | head -n 1)
	echo "id_ext=$guid,ioc_guid=$guid,dest=$addr:5557" \
		>/sys/class/infiniband_srp/$host/add_target &&
	ms_wait 30 ms_srp_disk && disk=$(ms_srp_disk) &&
	dd if=/dev/urandom of=/tmp/pat bs=1M count=2 status=none &&
	dd if=/tmp/pat of=/dev/$disk bs=1M count=2 oflag=direct status=none &&
	cmp /tmp/pat <(dd if=/dev/$disk bs=1M count=2 iflag=direct status=none)
}
tap_check "ib_srp logs in to the restored target, data verified" login_io

# clearconfig leaves the fabric's own directory, which pins ib_srpt.
cleanup() {
	ms_srp_logout &&
	targetcli clearconfig confirm=True &&
	rmdir $cfs/srpt && modprobe -r ib_srp ib_srpt
}
tap_check "logout, clearconfig, unload" cleanup
tap_done
