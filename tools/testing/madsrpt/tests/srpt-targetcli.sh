#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srpt-targetcli: what an administrator meets, with targetcli-fb and
# rtslib-fb unmodified from Debian.  targetcli creates a fileio backstore,
# an srpt target named by GID, a LUN and an ACL; an out-of-range TPG
# attribute write is refused and the log names the range, and so is a
# target named after no port, with the names of the ports; saveconfig,
# clearconfig and ib_srpt unload; /etc/modprobe.d sets the RDMA/CM port
# (rdma_cm_port) and restoreconfig loads ib_srpt and restores the tree, as
# after a reboot, with no configfs write; a login presenting a wrong
# target port id is rejected and the log names presented and expected;
# ib_srp logs in and moves verified data; the ACL's info file,
# `targetcli sessions` and `sessions detail` show the SRP session.
# timeout: 600

. "$MS_HARNESS/guest/guest-lib.sh"

cfs=/sys/kernel/config/target
addr=10.14.0.1
dev=rxe-veth0
port=5557
conf=/etc/modprobe.d/madsrpt-ib_srpt.conf

tap_plan 16
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
ipid=0000000000000000${gid:16}
acl=ib.$ipid
tpg=$cfs/srpt/0x$gid/tpgt_1
info=$tpg/acls/0x$ipid/info
t=/srpt/$wwn

create() {
	targetcli /backstores/fileio create disk0 /tmp/tcli.img 64M &&
	targetcli /srpt create $wwn &&
	targetcli $t/luns create /backstores/fileio/disk0 &&
	targetcli $t/acls create $acl
}
tap_check "targetcli creates backstore, target, LUN and ACL" create

in_configfs() {
	[ -d $tpg/acls/0x$ipid/lun_0 ] && [ -d $tpg/lun/lun_0 ] &&
	[ "$(cat $tpg/enable)" = 1 ]
}
tap_check "configfs holds the target, LUN, ACL; TPG enabled" in_configfs

wrong_wwn() {
	dmesg -C
	! targetcli /srpt create ib.00000000000000000000000000000001 \
		>/dev/null 2>&1 &&
	dmesg | grep -F "$dev-1: 0x$gid (targetcli: ib.$gid) or "
}
tap_check "a target for no port refused; the log names the ports" wrong_wwn

out_of_range() {
	dmesg -C
	! echo 3 2>/dev/null >$tpg/attrib/srp_sq_size &&
	[ "$(cat $tpg/attrib/srp_sq_size)" = 4096 ] &&
	dmesg | grep -F "0x$gid/tpgt_1: srp_sq_size must be a number in [4..65535], not \"3\""
}
tap_check "srp_sq_size=3 refused; the log names the range" out_of_range

tap_check "targetcli saveconfig" targetcli saveconfig

# clearconfig leaves the fabric's own directory, which pins ib_srpt.
unload() {
	targetcli clearconfig confirm=True &&
	! ls -d $cfs/srpt/0x$gid 2>/dev/null &&
	rmdir $cfs/srpt && modprobe -r ib_srpt
}
tap_check "targetcli clearconfig, ib_srpt unloaded" unload

# As after a reboot: the restore loads ib_srpt with the modprobe.d options.
restore() {
	echo "options ib_srpt rdma_cm_port=$port" >$conf &&
	targetcli restoreconfig &&
	[ "$(cat /sys/module/ib_srpt/parameters/rdma_cm_port)" = $port ] &&
	[ "$(cat $cfs/srpt/discovery_auth/rdma_cm_port)" = $port ]
}
tap_check "restoreconfig loads ib_srpt, rdma_cm_port=$port from modprobe.d" restore
tap_check "restored tree matches" in_configfs

modprobe ib_srp
host=$(ls /sys/class/infiniband_srp/ | head -n 1)
add_target() {
	ms_srp_add_target "$host" "id_ext=$1,ioc_guid=$guid,dest=$addr:$port"
}

wrong_tpid() {
	dmesg -C
	! add_target 0123456789abcdef 2>/dev/null &&
	dmesg | grep -F "rejected (wrong target port id): target port id 0x0123456789abcdef$guid presented, 0x$guid$guid expected"
}
tap_check "wrong target port id rejected; the log names presented and expected" \
	wrong_tpid

login_io() {
	local disk
	add_target $guid &&
	ms_wait 30 ms_srp_disk && disk=$(ms_srp_disk) &&
	dd if=/dev/urandom of=/tmp/pat bs=1M count=2 status=none &&
	dd if=/tmp/pat of=/dev/$disk bs=1M count=2 oflag=direct status=none &&
	cmp /tmp/pat <(dd if=/dev/$disk bs=1M count=2 iflag=direct status=none)
}
tap_check "ib_srp logs in on the rdma_cm_port port, data verified" login_io

acl_info() {
	local i
	i=$(cat $info) && echo "$i" &&
	grep -qx "InitiatorName: 0x$ipid" <<<"$i" &&
	grep -qx "InitiatorAlias: 0x$ipid" <<<"$i" &&
	grep -qx "Session State: TARG_SESS_STATE_LOGGED_IN" <<<"$i" &&
	grep -qx "Target port id: 0x$guid$guid" <<<"$i" &&
	grep -qE "^CID: [0-9]+  Connection State: TARG_CONN_STATE_LIVE$" <<<"$i" &&
	grep -qE "^   Address $addr RDMA/CM  P_Key: 0xffff$" <<<"$i" &&
	grep -qE "^   Login time: [0-9-]+ [0-9:]+ UTC \([0-9]+ s ago\)$" <<<"$i" &&
	grep -qE "^   Outstanding commands: 0  Credits held by the initiator: [0-9]+ of [0-9]+" <<<"$i"
}
tap_check "the ACL's info file shows the session and its channels" acl_info

sessions() {
	local s
	s=$(targetcli sessions) && echo "$s" &&
	grep -qE "^alias: 0x$ipid	sid: [0-9]+ type: Normal session-state: LOGGED_IN$" <<<"$s"
}
tap_check "targetcli sessions lists the SRP session" sessions

sessions_detail() {
	local s
	s=$(targetcli sessions detail) && echo "$s" &&
	grep -qE "^ +name: ib\.$ipid \(NOT AUTHENTICATED\)$" <<<"$s" &&
	grep -qE "^ +mapped-lun: 0 backstore: fileio/disk0 mode: rw$" <<<"$s" &&
	grep -qE "^ +address: $addr \(RDMA/CM\)  cid: [0-9]+ connection-state: LIVE$" <<<"$s"
}
tap_check "targetcli sessions detail shows its channels" sessions_detail
# For the log: what an administrator sees.
targetcli sessions detail 2>&1 | sed 's/^/# /'
sed 's/^/# /' $info

no_sessions() {
	targetcli sessions | grep -q "(no open sessions)" &&
	grep -q "^No active SRP session for initiator 0x$ipid$" $info
}
logout() {
	ms_srp_logout && ms_wait 20 no_sessions
}
tap_check "logout; targetcli sessions: no open sessions" logout

cleanup() {
	rm -f $conf &&
	targetcli clearconfig confirm=True &&
	rmdir $cfs/srpt && modprobe -r ib_srp ib_srpt
}
tap_check "clearconfig, unload" cleanup
tap_done
