#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ibsim-multipath: two IB CM paths to one ib_srpt LUN across ibdevsim's
# default fabric, one of them lossy, then pulled.
#   - 10% of the QP1 MADs dropped both ways on the cable of ibdevsim0 port
#     2: ib_srp still logs in over it (SA path query and IB CM REQ, REP,
#     RTU through the switch), in and out until the knobs counted losses
#     and the MAD layers retried;
#   - a second login from ibdevsim0 port 1, and dm-multipath (udevd,
#     multipathd) makes one map of the two;
#   - fio with crc32c verification runs on the map while the port 2 cable
#     is pulled: its RC QPs go to the error state, ib_srp fails the path
#     fast and dm-multipath moves the I/O to port 1, no error reaches fio;
#     the cable is plugged back, opensm brings the port ACTIVE, ib_srp
#     reconnects over IB CM and the path rejoins the map.
# timeout: 600

. "$MS_HARNESS/guest/guest-lib.sh"

tap_plan 15

ib=/sys/class/infiniband
dbg=/sys/kernel/debug/ibdevsim
g0=0002c90300001000
tgid=fe800000000000000002c90300002001
wwn=0x$tgid

# port_guid DEV PORT: the port's GUID, 16 hex digits.
port_guid() {
	tr -d : <$ib/$1/ports/$2/gids/0 | cut -c17-32
}

tap_check "ibdevsim loads, 2 HCAs, a switch, 4 cables" ms_ibsim_fabric
ms_ibsim_opensm
tap_check "opensm brings every port ACTIVE with a LID" \
	ms_wait 120 ms_ibsim_all_active

# ib_srp's initiator port ids: initiator_ext 0, then the port's GUID.
acl1=0x0000000000000000$(port_guid ibdevsim0 1)
acl2=0x0000000000000000$(port_guid ibdevsim0 2)
target() {
	modprobe ib_srpt && modprobe target_core_file &&
	ms_srpt_target $wwn /tmp/lun0 $((64 << 20)) 0 $acl1 $acl2
}
tap_check "ib_srpt target on ibdevsim1 port 1, a LUN, ACLs for both initiator ports" \
	target
modprobe ib_srp

# login PORT: log in from ibdevsim0 port PORT with the line srp_daemon
# prints; the new remote port goes to /tmp/rport-PORT.  tl_retry_count=2:
# a pulled path's QPs fail after 3 local ACK timeouts (about 6 s) rather
# than ib_srp's default 8 (17 s; ibsim-rc measures that one).
login() {
	local before p rport=

	before=$(ms_srp_rports)
	ms_srp_add_target srp-ibdevsim0-$1 \
		"id_ext=$g0,ioc_guid=$g0,dgid=$tgid,pkey=ffff,service_id=$g0,tl_retry_count=2" ||
		return 1
	for p in $(ms_srp_rports); do
		grep -qx "$p" <<<"$before" || rport=$p
	done
	[ -n "$rport" ] && ms_wait 30 ms_srp_rport_disk $rport &&
	echo "$rport" >/tmp/rport-$1
}


# retries: the MAD layer's retries on both ends of the lossy path, or
# where it has no counters (pristine 6.12) ib_cm's.
retries() {
	local f n=0

	for f in ibdevsim0-2 ibdevsim1-1; do
		f=/sys/kernel/debug/ib_mad/$f/stats
		[ -r $f ] || continue
		n=$((n + $(awk '$1 == "retries" { print $2 }' $f)))
	done
	[ -r $f ] || n=$(cat $ib/ibdevsim0/ports/2/cm_tx_retries/* \
		$ib/ibdevsim1/ports/1/cm_tx_retries/* | awk '{ n += $1 } END { print n }')
	echo $n
}

# Both ends of the cable of ibdevsim0 port 2 (node 1 port 2 - switch 10
# port 2), QP1 only (classes bit 1).
lossy="node1/port2 node10/port2"
dropped() {
	echo $(( $(cat $dbg/node1/port2/dropped) + $(cat $dbg/node10/port2/dropped) ))
}
ms_ibsim_knob 2 classes $lossy
ms_ibsim_knob 100 drop $lossy
r0=$(retries)

# One login moves a handful of MADs (the SA's path record, CM REQ, REP,
# RTU), so losses are not certain in one: log in and out over the lossy
# cable at least 3 times and until MADs were dropped and retried (at most
# 15 times).  Every login must succeed; the last one stays.
lossy_logins() {
	local i r

	for i in $(seq 15); do
		login 2 || { echo "login $i failed"; return 1; }
		if [ "$i" -ge 3 ] && [ "$(dropped)" -gt 0 ] &&
		   [ "$(retries)" -gt "$r0" ]; then
			break
		fi
		[ "$i" -lt 15 ] || break
		r=$(cat /tmp/rport-2)
		echo 1 >/sys/class/srp_remote_ports/$r/delete &&
		ms_wait 30 sh -c "! test -e /sys/class/srp_remote_ports/$r" ||
			{ echo "logout $i failed"; return 1; }
	done
	echo "$i logins, $(dropped) MADs dropped, retries $r0 -> $(retries)"
}
tap_check "10% of QP1 dropped on ibdevsim0 port 2's cable: ib_srp logs in over it, again and again" \
	lossy_logins
nd=$(dropped) r1=$(retries)
ms_ibsim_knob 0 drop $lossy
ms_ibsim_knob 7 classes $lossy
echo "# dropped on the cable: $nd; MAD retries on the path: $r0 -> $r1"
tap_check "MADs were dropped ($nd) and the MAD layers retried ($r0 -> $r1)" \
	test "$nd" -gt 0 -a "$r1" -gt "$r0"

tap_check "second login, from ibdevsim0 port 1" login 1
rport1=$(cat /tmp/rport-1 2>/dev/null)
rport2=$(cat /tmp/rport-2 2>/dev/null)
disk1=$(ms_srp_rport_disk "$rport1")
disk2=$(ms_srp_rport_disk "$rport2")
echo "# port 1: $rport1 ($disk1), port 2: $rport2 ($disk2)"

# Fail a broken path within 2 s and try to reconnect it every 2 s.
for r in $rport1 $rport2; do
	echo 2 >/sys/class/srp_remote_ports/$r/reconnect_delay
	echo 2 >/sys/class/srp_remote_ports/$r/fast_io_fail_tmo
done

ms_mp_conf
tap_check "udevd and multipathd run" ms_mp_start
map=
two_paths() {
	ms_wait 90 ms_mp_map "$disk1" && map=$(ms_mp_map "$disk1") &&
	[ "$(ms_mp_map "$disk2")" = "$map" ] && ms_wait 90 ms_mp_paths $map 2 &&
	echo "$map" >/tmp/map || { ms_mp_debug; return 1; }
}
tap_check "one multipath map over the two logins, both paths active" two_paths
map=$(cat /tmp/map 2>/dev/null)
[ -z "$map" ] || multipath -ll 2>&1 | sed 's/^/# /'

# mp_failed MAP: one path of MAP is failed.
mp_failed() {
	dmsetup status --target multipath "$(cat /sys/block/$1/dm/name)" |
		grep -qE '[0-9]+:[0-9]+ F'
}

port2_active() {
	grep -q ACTIVE $ib/ibdevsim0/ports/2/state
}

cable_pull() {
	local pid rc=0 t0

	[ -n "$map" ] || return 1
	touch /tmp/mp-run
	ms_mp_io $map >/tmp/mp-io.log 2>&1 &
	pid=$!
	sleep 3
	t0=$SECONDS
	echo down >$dbg/node1/port2/link || rc=1
	echo "cable pulled: ibdevsim0/2 $(cat $ib/ibdevsim0/ports/2/state)"
	if ms_wait 60 mp_failed $map; then
		echo "path failed in the map after $((SECONDS - t0)) s"
	else
		echo "the path never failed"
		rc=1
	fi
	sleep 3
	t0=$SECONDS
	echo up >$dbg/node1/port2/link || rc=1
	if ms_wait 90 port2_active; then
		echo "port ACTIVE again after $((SECONDS - t0)) s"
	else
		echo "the port stayed $(cat $ib/ibdevsim0/ports/2/state)"
		rc=1
	fi
	if ms_wait 120 ms_mp_paths $map 2; then
		echo "path back in the map after $((SECONDS - t0)) s"
		sleep 3
	else
		echo "the path did not come back"
		rc=1
	fi
	rm -f /tmp/mp-run
	wait $pid || rc=1
	cat /tmp/mp-io.log
	[ $rc = 0 ] || { ms_mp_debug; dmesg | grep -E "srp|ibdevsim" | tail -n 20; }
	return $rc
}
tap_check "fio verify on the map while ibdevsim0 port 2's cable is pulled and plugged back" \
	cable_pull
dmesg | grep -iE "reconnect|srp.*(error|fail)" | tail -n 6 | sed 's/^/# /'
tap_check "map has two active paths again" ms_mp_paths "$map" 2
tap_check "multipath maps flushed, multipathd and udevd stopped" ms_mp_stop

tap_check "ib_srp logs out of both paths" ms_srp_logout
kill "$ms_sm_pid"
wait "$ms_sm_pid" 2>/dev/null
tap_check "target torn down" ms_srpt_teardown $wwn

# Every send posted on the two ends of the lossy path has had its send
# handler run: none is outstanding once the logins are gone.
settled() {
	local f

	for f in ibdevsim0-2 ibdevsim1-1; do
		grep -qx "outstanding 0" /sys/kernel/debug/ib_mad/$f/stats ||
			return 1
	done
}
if [ -r /sys/kernel/debug/ib_mad/ibdevsim0-2/stats ]; then
	tap_check "no MAD left outstanding on either end of the lossy path" \
		ms_wait 30 settled
else
	tap_skip "no MAD left outstanding (no MAD counters in this kernel)"
fi
unload() {
	modprobe -r ib_srp && modprobe -r ib_srpt && rmmod ibdevsim
}
tap_check "ib_srp, ib_srpt and ibdevsim unload" unload
tap_done
