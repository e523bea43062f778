#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of srpt-dm.sh, listening VM (10.15.0.1): the target.  rxe on
# the wire to the querier and ib_srpt with its defaults; its DM agent
# answers on every port from the moment the device is added, no configfs
# target needed.  Checks the facts the querier's expectations rest on (GIDs
# from the fixed MAC, node and service GUID, the HCA's ids, send size,
# IsDeviceManagementSupported), waits until the querier says it is done,
# then unloads ib_srpt and checks that the capability went with it.

. "$MS_HARNESS/guest/guest-lib.sh"

addr=10.15.0.1
dev=rxe-eth0
port=/sys/class/infiniband/$dev/ports/1
guid=505400fffe4d5301
dm_sup=$((1 << 19))	# IB_PORT_DEVICE_MGMT_SUP

tap_plan 9

tap_check "rxe on eth0 ($addr)" ms_rxe_wire $addr/24

# GID 0 follows the MAC 52:54:00:4d:53:01, GID 1 the IPv4 address.
gids() {
	ms_wait 10 test -e $port/gids/1
	head $port/gids/0 $port/gids/1 $port/gid_attrs/types/0 \
		$port/gid_attrs/types/1
	[ "$(cat $port/gids/0)" = fe80:0000:0000:0000:5054:00ff:fe4d:5301 ] &&
	[ "$(cat $port/gids/1)" = 0000:0000:0000:0000:0000:ffff:0a0f:0001 ] &&
	[ "$(cat $port/gid_attrs/types/0)" = "RoCE v2" ] &&
	[ "$(cat $port/gid_attrs/types/1)" = "RoCE v2" ]
}
tap_check "GID 0 fe80::5054:ff:fe4d:5301, GID 1 ::ffff:$addr, RoCE v2" gids

node_guid() {
	cat /sys/class/infiniband/$dev/node_guid
	[ "$(tr -d ':\n' </sys/class/infiniband/$dev/node_guid)" = $guid ]
}
tap_check "node GUID $guid (EUI-64 of the MAC)" node_guid

# The querier expects rxe's ids and at least 128 work requests a QP.
hca() {
	local v
	modprobe ib_uverbs || return 1
	v=$(ibv_devinfo -v -d $dev) || return 1
	echo "$v" | grep -E 'vendor_id|vendor_part_id|hw_ver|max_qp_wr:'
	echo "$v" | grep -qE '^[[:space:]]*vendor_id:[[:space:]]+0xffffff$' &&
	echo "$v" | grep -qE '^[[:space:]]*vendor_part_id:[[:space:]]+0$' &&
	echo "$v" | grep -qE '^[[:space:]]*hw_ver:[[:space:]]+0x0$' &&
	[ "$(echo "$v" | awk '$1 == "max_qp_wr:" { print $2 }')" -ge 128 ]
}
tap_check "HCA: vendor id 0xffffff, part id 0, hw_ver 0, max_qp_wr >= 128" hca

srpt() {
	local p=/sys/module/ib_srpt/parameters
	modprobe ib_srpt || return 1
	head $p/srpt_service_guid $p/srp_max_req_size $port/cap_mask
	[ "$(cat $p/srpt_service_guid)" = 0x$guid ] &&
	[ "$(cat $p/srp_max_req_size)" = 8276 ] &&
	[ $(($(cat $port/cap_mask) & dm_sup)) -ne 0 ]
}
tap_check "ib_srpt: service GUID 0x$guid, send size 8276, DM capability set" srpt

# The querier reports back when it is finished.
msg=$(ms_await_report 700)
if [ "$msg" = "done" ]; then
	tap_ok "the querier reported back"
else
	tap_fail "the querier reported back (got '$msg')"
fi

counters=$(ms_mad_counters $dev) && echo "# MAD layer, $dev port 1: $counters"
dmesg | grep -iE 'srpt|DM ' | tail -n 5 | sed 's/^/# dmesg: /'

unload() {
	modprobe -r ib_srpt || return 1
	cat $port/cap_mask
	[ $(($(cat $port/cap_mask) & dm_sup)) -eq 0 ]
}
tap_check "ib_srpt unloads and clears the DM capability" unload
tap_check "rdma link del $dev" rdma link del $dev
tap_check "rdma_rxe and ib_uverbs unload" modprobe -r rdma_rxe ib_uverbs
tap_done
