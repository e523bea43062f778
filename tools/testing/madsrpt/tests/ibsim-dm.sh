#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-dm: DM discovery across ibdevsim's default fabric.  ib_srpt binds
# to both simulated HCAs and advertises DeviceManagement on their ports;
# opensm brings the fabric up; then what ibsrpdm and srp_daemon do: the
# SA names the ports with the DM capability (PortInfoRecords), and the DM
# MADs (ClassPortInfo, IOUnitInfo, IOControllerProfile, ServiceEntries)
# cross the switch to ib_srpt's agents and back.
# timeout: 300

. "$MS_HARNESS/guest/guest-lib.sh"

tap_plan 12

ib=/sys/class/infiniband
# The node GUID ms_ibsim_fabric gives the first HCA (ibdevsim0).
g0=0002c90300001000

tap_check "ibdevsim loads, 2 HCAs, a switch, 4 cables" ms_ibsim_fabric

dm_cap() {
	local d p

	modprobe ib_srpt || return 1
	for d in ibdevsim0 ibdevsim1; do
		for p in 1 2; do
			# IsDeviceManagementSupported is bit 19.
			(( $(cat $ib/$d/ports/$p/cap_mask) & 0x80000 )) || return 1
		done
	done
}
tap_check "ib_srpt binds to both HCAs and sets IsDeviceManagementSupported" \
	ms_wait 20 dm_cap

ms_ibsim_opensm
tap_check "opensm brings every port ACTIVE with a LID" \
	ms_wait 120 ms_ibsim_all_active
tap_check "opensm reports SUBNET UP" ms_wait 60 ms_ibsim_sm_up

# What ibsrpdm and srp_daemon do (ibsim-uverbs runs the tools
# themselves), by hand: ask the SA for the ports with
# IsDeviceManagementSupported, then ask each of them for its DM profile
# with LID-routed MADs.
sa_dm_ports() {
	local out

	out=$(saquery -C ibdevsim0 -P 1 PortInfoRecord) || return 1
	echo "$out" | grep -E "EndPortLid|CapMask|DeviceManagement"
	[ "$(grep -c IsDeviceManagementSupported <<<"$out")" -eq 4 ]
}
tap_check "saquery PortInfoRecords: 4 ports with IsDeviceManagementSupported" \
	sa_dm_ports

tap_check "build dm_query" ms_build_prog dm_query

lid() { echo $(( $(cat $ib/$1/ports/$2/lid) )); }

# dm_ioc FROM_DEV FROM_PORT TO_DEV TO_PORT: DM profile of TO through the
# switch, from FROM: one IOC, ib_srpt's (IOC GUID and service id are the
# first HCA's node GUID, the service is named SRP.T10:<id>).
dm_ioc() {
	local out

	out=$(/tmp/dm_query -d "$1" -p "$2" -l "$(lid "$3" "$4")" profile) ||
		{ echo "$out"; return 1; }
	echo "$out"
	grep -q "ioc_guid=$g0 " <<<"$out" &&
	grep -q "name=\"SRP.T10:$g0\" id=$g0" <<<"$out" &&
	grep -q "I/O controllers found: 1" <<<"$out"
}
tap_check "DM profile of ibdevsim1 port 1 from ibdevsim0 port 1: ib_srpt's IOC" \
	dm_ioc ibdevsim0 1 ibdevsim1 1
/tmp/dm_query -d ibdevsim0 -l "$(lid ibdevsim1 1)" profile | sed 's/^/# /'
tap_check "DM profile of ibdevsim1 port 2 from ibdevsim0 port 2" \
	dm_ioc ibdevsim0 2 ibdevsim1 2
tap_check "DM profile of ibdevsim0 port 1 from ibdevsim1 port 2" \
	dm_ioc ibdevsim1 2 ibdevsim0 1

tap_here "opensm stops within 20 s of SIGTERM" ms_ibsim_sm_stops "$ms_sm_pid"
tap_check "ib_srpt unloads" modprobe -r ib_srpt
tap_check "ibdevsim unloads with its devices" rmmod ibdevsim
tap_done
