# SPDX-License-Identifier: GPL-2.0
#
# Helpers for test scripts running inside the VM: TAP output and soft-RoCE
# setup.  Source it: . "$MS_HARNESS/guest/guest-lib.sh"

MS_TAP_N=0
MS_TAP_FAILED=0

# tap_plan N: print the TAP header.
tap_plan() {
	echo "TAP version 13"
	echo "1..$1"
}

tap_ok() {
	MS_TAP_N=$((MS_TAP_N + 1))
	echo "ok $MS_TAP_N - $*"
}

tap_fail() {
	MS_TAP_N=$((MS_TAP_N + 1))
	MS_TAP_FAILED=$((MS_TAP_FAILED + 1))
	echo "not ok $MS_TAP_N - $*"
}

tap_skip() {
	MS_TAP_N=$((MS_TAP_N + 1))
	echo "ok $MS_TAP_N - $* # SKIP"
}

# tap_check DESC CMD...: one test point from a command's exit status; the
# command's output is shown as TAP comments when it fails.
tap_check() {
	local desc=$1 outp
	shift
	if outp=$("$@" 2>&1); then
		tap_ok "$desc"
	else
		tap_fail "$desc"
		sed 's/^/# /' <<<"$outp" | tail -n 20
	fi
}

# tap_here DESC CMD...: tap_check, but CMD runs in this shell, so that it
# can wait for this shell's children and set its variables; its output is
# always shown as TAP comments.
tap_here() {
	local desc=$1 f=/tmp/tap_here.$$
	shift
	if "$@" >$f 2>&1; then
		tap_ok "$desc"
	else
		tap_fail "$desc"
	fi
	sed 's/^/# /' $f | tail -n 20
	rm -f $f
}

tap_done() {
	[ "$MS_TAP_FAILED" -eq 0 ]
}

# ms_tap_passed OUT RC: whether a program that printed the TAP points OUT
# and exited with RC passed: points printed, none failed, RC 0.  Leaves
# the counts of passed and failed points in $ms_p and $ms_f.
ms_tap_passed() {
	ms_p=$(grep -c '^ok ' <<<"$1")
	ms_f=$(grep -c '^not ok' <<<"$1")
	[ "$2" -eq 0 ] && [ "$ms_f" -eq 0 ] && [ "$ms_p" -gt 0 ]
}

# ms_wait SECONDS CMD...: poll CMD every 0.2 s until it succeeds.
ms_wait() {
	local end=$((SECONDS + $1))
	shift
	while ! "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.2
	done
}

ms_port_active() {
	rdma link show "$1/1" 2>/dev/null | grep -q "state ACTIVE"
}

# ms_rxe_veth DEV ADDR/PREFIX: a veth pair (DEV, DEV-peer), both up, ADDR on
# DEV, and an rxe device rxe-DEV on it.  Loopback traffic is enough for
# tests that talk to themselves.
ms_rxe_veth() {
	local dev=$1 addr=$2
	modprobe rdma_rxe || return 1
	ip link add "$dev" type veth peer name "$dev-peer" || return 1
	# No duplicate address detection on the private pair: while it runs
	# the link-local address is tentative, no address handle to GID 0
	# can be made, and a first send through ib_umad fails with ETIMEDOUT
	# (rmpp-umad's did in a fresh-clone run).
	echo 0 >"/proc/sys/net/ipv6/conf/$dev/accept_dad"
	echo 0 >"/proc/sys/net/ipv6/conf/$dev-peer/accept_dad"
	ip link set "$dev-peer" up
	ip addr add "$addr" dev "$dev"
	ip link set "$dev" up
	rdma link add "rxe-$dev" type rxe netdev "$dev" || return 1
	ms_wait 20 ms_port_active "rxe-$dev"
}

# ms_gid0 IBDEV: the port's GID 0 as 32 hex digits.
ms_gid0() {
	tr -d ':\n' <"/sys/class/infiniband/$1/ports/1/gids/0"
}

# ms_guid IBDEV: the node GUID as 16 hex digits.
ms_guid() {
	tr -d ':\n' <"/sys/class/infiniband/$1/node_guid"
}

# The checkout the harness runs from, as seen in the guest (same path).
MS_TOP=$(cd "$MS_HARNESS/../../.." && pwd)

# ms_srp_disk: print the block device of the first LIO-ORG SCSI disk; fails
# while there is none (or its block device is not there yet).
ms_srp_disk() {
	local d
	for d in /sys/class/scsi_device/*/device/; do
		[ "$(cat "$d/vendor" 2>/dev/null)" = "LIO-ORG " ] || continue
		ls "$d/block" 2>/dev/null && return 0
	done
	return 1
}

# ms_srp_disks: print the block devices of all LIO-ORG SCSI disks.
ms_srp_disks() {
	local d
	for d in /sys/class/scsi_device/*/device/; do
		[ "$(cat "$d/vendor" 2>/dev/null)" = "LIO-ORG " ] || continue
		ls "$d/block" 2>/dev/null
	done
}

# ms_srp_rports: the SRP remote ports ib_srp has logged in to.
# ms_srp_add_target HOST LINE: log in, writing LINE to ib_srp's add_target
# of HOST (srp-<device>-<port>).  A remote port deleted just before is
# gone from sysfs before ib_srp's removal work takes its target off the
# list that a new login is compared with, so for a few seconds the same
# login fails with EEXIST: retry that, for up to 15 s, and nothing else.
ms_srp_add_target() {
	local i err

	for i in $(seq 30); do
		err=$( (echo "$2" >"/sys/class/infiniband_srp/$1/add_target") 2>&1) &&
			return 0
		grep -q "File exists" <<<"$err" || break
		sleep 0.5
	done
	echo "$err" >&2
	return 1
}

ms_srp_rports() {
	ls /sys/class/srp_remote_ports/ 2>/dev/null
}

# ms_srp_rport_disk RPORT: the block device of remote port RPORT
# (port-H:N); fails while there is none.
ms_srp_rport_disk() {
	local h=${1#port-}

	h=${h%%:*}
	ls /sys/class/scsi_host/host$h/device/target$h:*/$h:*/block 2>/dev/null
}

# ms_srp_logout: log ib_srp out of every SRP target port (remove the SCSI
# hosts) and wait until they are gone.
ms_srp_logout() {
	local p
	for p in /sys/class/srp_remote_ports/*; do
		[ -e "$p/delete" ] && echo 1 >"$p/delete"
	done
	ms_wait 30 sh -c "! ls /sys/class/srp_remote_ports/* >/dev/null 2>&1"
}

# ms_srpt_loopback ADDR: how the one-VM srpt tests start: the TAP point
# "rxe on veth0" (rxe-veth0 on a veth with ADDR/24, where ib_srp and ib_srpt
# meet by loopback), ib_srpt and target_core_file loaded, and rxe-veth0's
# GID 0 in $gid (32 hex digits), its node GUID in $guid and the target's
# WWN (0x$gid) in $wwn.
ms_srpt_loopback() {
	tap_check "rxe on veth0" ms_rxe_veth veth0 "$1/24"
	modprobe ib_srpt
	modprobe target_core_file
	gid=$(ms_gid0 rxe-veth0)
	guid=$(ms_guid rxe-veth0)
	wwn=0x$gid
}

# ms_srpt_target WWN FILE SIZE PORT [ACL...]: the configfs setup the srpt
# tests share: target WWN with TPG 1, one fileio LUN (lun_0) on FILE of
# SIZE bytes, mapped into each ACL given, the RDMA/CM listener on PORT,
# and the TPG enabled.  The LUN gets a random unit serial, so that
# dm-multipath sees two logins to it as paths of one device.
ms_srpt_target() {
	local cfs=/sys/kernel/config/target wwn=$1 file=$2 size=$3 port=$4
	local tpg=$cfs/srpt/$wwn/tpgt_1 bs=$cfs/core/fileio_0/lun0 a

	shift 4
	mkdir -p $bs &&
	echo "fd_dev_name=$file,fd_dev_size=$size" >$bs/control &&
	cat /proc/sys/kernel/random/uuid >$bs/wwn/vpd_unit_serial &&
	echo 1 >$bs/enable &&
	mkdir -p $tpg/lun/lun_0 &&
	ln -s $bs $tpg/lun/lun_0/lun0 || return 1
	for a in "$@"; do
		mkdir -p $tpg/acls/$a/lun_0 &&
		ln -s $tpg/lun/lun_0 $tpg/acls/$a/lun_0/lun0 || return 1
	done
	echo $port >$cfs/srpt/discovery_auth/rdma_cm_port &&
	echo 1 >$tpg/enable
}

# ms_srpt_teardown WWN: take down through configfs what the srpt tests set
# up: every TPG of WWN (disabled first) with its ACLs and their mapped LUNs
# and its LUNs, then the WWN, the fileio_0 and iblock_0 backstores and the
# srpt fabric directory.
ms_srpt_teardown() {
	local cfs=/sys/kernel/config/target tpg d l

	for tpg in "$cfs/srpt/$1"/tpgt_*; do
		[ -d "$tpg" ] || continue
		echo 0 >"$tpg/enable" || return 1
		for d in "$tpg"/acls/*/lun_* "$tpg"/acls/* "$tpg"/lun/lun_*; do
			[ -d "$d" ] || continue
			for l in "$d"/*; do
				[ -L "$l" ] && { rm "$l" || return 1; }
			done
			rmdir "$d" || return 1
		done
		rmdir "$tpg" || return 1
	done
	rmdir "$cfs/srpt/$1" || return 1
	for b in "$cfs"/core/fileio_0 "$cfs"/core/iblock_0; do
		[ -d "$b" ] || continue
		for d in "$b"/*; do
			[ -d "$d" ] || continue
			rmdir "$d" || return 1
		done
		rmdir "$b" || return 1
	done
	rmdir "$cfs/srpt"
}

# ms_mad_counters DEV [PORT]: our MAD layer's counters for one port on one
# line ("sent 12 received 12 ..."), from debugfs; fails when the kernel
# has none (a pure upstream build).
ms_mad_counters() {
	local f=/sys/kernel/debug/ib_mad/$1-${2:-1}/stats

	[ -r "$f" ] || return 1
	awk '$2 != 0 || $1 ~ /^(sent|received|timeouts|retries)$/ { printf "%s%s %s", sep, $1, $2; sep = ", " }
	     END { print "" }' "$f"
}

# ms_build_prog NAME: progs/NAME.c built into /tmp/NAME: a copy of the
# host's build (MS_PROGS, made before the tests) when it is up to date,
# compiled here otherwise (progs/build.sh); on failure the compiler's
# output is printed as TAP comments.
ms_build_prog() {
	local out

	out=$("$MS_HARNESS/progs/build.sh" -f "${MS_PROGS:-/nonexistent}" /tmp "$1" 2>&1) &&
		return 0
	sed 's/^/# /' <<<"$out"
	return 1
}

# ms_bail DESC: the test cannot start; one failing point and exit.
ms_bail() {
	tap_plan 1
	tap_fail "$1"
	exit 1
}

# ms_neigh IP: fails until IP answers ARP (the host root has no ping: any
# datagram to it makes the kernel ask).  RoCE v2 address handles to an
# IPv4-mapped GID need the peer's MAC in the neighbour table.
ms_neigh() {
	echo >"/dev/udp/$1/9" 2>/dev/null
	ip neigh show "$1" | grep -q lladdr
}

# ms_await_report SECS: the first line the peer VM sends to TCP port 7777
# once it is finished (it writes to /dev/tcp/ADDR/7777); fails if none
# comes within SECS seconds.
ms_await_report() {
	timeout "$1" python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", 7777))
s.listen(1)
c, _ = s.accept()
print(c.recv(200).decode().strip())
'
}

# ms_netem_loss DEV PCT: drop PCT percent of the frames DEV sends (netem);
# nothing to do for 0.
ms_netem_loss() {
	[ "$2" = 0 ] && return 0
	tc qdisc add dev "$1" root netem loss "$2%"
}

# ms_loss_report DEV IBDEV: on a lossy run, one comment line with what
# netem dropped on DEV and how many sends IBDEV's MAD layer retried, for
# the host to prove that losses happened and were recovered from.
ms_loss_report() {
	local dropped retries

	dropped=$(tc -s qdisc show dev "$1" | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n 1)
	retries=$(awk '$1 == "retries" { print $2 }' \
		"/sys/kernel/debug/ib_mad/$2-1/stats" 2>/dev/null)
	echo "# lossy: netem dropped ${dropped:-?} frames, MAD retries ${retries:-?}"
}

# ms_rxe_wire ADDR/PREFIX: the two-VM wire: eth0 up with ADDR, rxe-eth0
# on it, port ACTIVE.  With "umad" as second argument also ib_umad and
# /dev/infiniband/umad0.
ms_rxe_wire() {
	ip addr add "$1" dev eth0 &&
	ip link set eth0 up &&
	modprobe rdma_rxe &&
	rdma link add rxe-eth0 type rxe netdev eth0 &&
	ms_wait 20 ms_port_active rxe-eth0 || return 1
	[ "${2:-}" = umad ] || return 0
	modprobe ib_umad && ms_wait 10 test -c /dev/infiniband/umad0
}

# ms_ibsim_fabric: ibdevsim's test default fabric: ib_umad and ibdevsim
# loaded, HCAs 1 and 2 (ibdevsim0 and ibdevsim1) with two ports each and
# an 8-port switch 10, every HCA port cabled to it (HCA 1 on switch ports
# 1 and 2, HCA 2 on 3 and 4); prints the topology.
ms_ibsim_fabric() {
	local sys=/sys/bus/ibdevsim

	modprobe ib_umad && modprobe ibdevsim || return 1
	echo "1 2 0x0002c90300001000" >$sys/new_hca &&
	echo "2 2 0x0002c90300002000" >$sys/new_hca &&
	echo "10 8 0x0002c90300010000" >$sys/new_switch &&
	echo "1 1 10 1" >$sys/new_cable &&
	echo "1 2 10 2" >$sys/new_cable &&
	echo "2 1 10 3" >$sys/new_cable &&
	echo "2 2 10 4" >$sys/new_cable || return 1
	cat $sys/topology
}

# ms_ibsim_all_active: fails until every port of ibdevsim0 and ibdevsim1
# is ACTIVE with a LID.
ms_ibsim_all_active() {
	local d p

	for d in ibdevsim0 ibdevsim1; do
		for p in 1 2; do
			grep -q ACTIVE /sys/class/infiniband/$d/ports/$p/state ||
				return 1
			[ "$(cat /sys/class/infiniband/$d/ports/$p/lid)" != 0x0 ] ||
				return 1
		done
	done
}

# ms_ibsim_opensm [OPT...]: start opensm with OPTs on the port whose GUID
# is $MS_SM_GUID (default 0x0002c90300001001: ibdevsim0 port 1 of the
# default fabric, and the first host of an ibdevsim-topo.py fat tree),
# its log in /tmp/opensm.log, flushed after every message (-d2; opensm's
# log is otherwise buffered, and a "SUBNET UP" not followed by more
# messages may never reach the file); its pid in $ms_sm_pid.
ms_ibsim_opensm() {
	mkdir -p /var/log /var/cache/opensm
	opensm -g "${MS_SM_GUID:-0x0002c90300001001}" -d2 -f /tmp/opensm.log \
		"$@" >/dev/null 2>&1 &
	ms_sm_pid=$!
}

# ms_ibsim_del_all: delete every ibdevsim node; fails if one stays.
ms_ibsim_del_all() {
	local n
	for n in /sys/bus/ibdevsim/devices/node*; do
		[ -e "$n" ] || continue
		echo "${n##*node}" >/sys/bus/ibdevsim/del_node || return 1
	done
	[ -z "$(ls /sys/bus/ibdevsim/devices)" ]
}

# ms_ibsim_sm_stops PID: opensm leaves within 20 s of SIGTERM, and no opensm is
# left running (one stuck in the kernel, in ib_umad's close or a MAD
# send, does not).  Run by tap_here: it reaps this shell's child.
ms_ibsim_sm_stops() {
	local pid=$1 i

	kill "$pid" || return 1
	for ((i = 0; i < 100; i++)); do
		case "$(ps -o stat= -p "$pid")" in
		'' | Z*) break ;;
		esac
		sleep 0.2
	done
	if [ "$i" -eq 100 ]; then
		echo "opensm (pid $pid) still runs 20 s after SIGTERM:"
		ps -o pid,stat,wchan:32,cmd -p "$pid"
		kill -9 "$pid"
		return 1
	fi
	wait "$pid" 2>/dev/null
	! pgrep -x opensm
}
# ms_ibsim_sm_up: fails until opensm has logged SUBNET UP.
ms_ibsim_sm_up() {
	grep -q "SUBNET UP" /tmp/opensm.log
}

# ms_ibsim_knob VALUE NAME PORT...: write VALUE to ibdevsim's fault knob
# NAME of each PORT (nodeN/portM under /sys/kernel/debug/ibdevsim).
ms_ibsim_knob() {
	local v=$1 k=$2 p

	shift 2
	for p in "$@"; do
		echo "$v" >"/sys/kernel/debug/ibdevsim/$p/$k" || return 1
	done
}

# ms_ibsim_ipoib_dev GUID: the IPoIB netdev (in the current network
# namespace) whose hardware address ends with port GUID GUID (16 hex
# digits); fails while there is none.
ms_ibsim_ipoib_dev() {
	local want n

	want=$(sed 's/../&:/g; s/:$//' <<<"$1")
	for n in /sys/class/net/ib*; do
		[ -e "$n/address" ] || continue
		case "$(cat "$n/address")" in
		*"$want") basename "$n"; return 0 ;;
		esac
	done
	return 1
}

# ms_ibsim_ipoib_split INI_IP TGT_IP: the IPoIB netdevs of ibdevsim0
# port 1 and ibdevsim1 port 1, the first moved into a new network
# namespace "ini" with INI_IP/24, the second left here with TGT_IP/24, so
# that IP between them crosses the switch.  ib_ipoib must be loaded.
ms_ibsim_ipoib_split() {
	local ini_if tgt_if

	ms_wait 20 ms_ibsim_ipoib_dev 0002c90300001001 &&
	ms_wait 20 ms_ibsim_ipoib_dev 0002c90300002001 || return 1
	ini_if=$(ms_ibsim_ipoib_dev 0002c90300001001)
	tgt_if=$(ms_ibsim_ipoib_dev 0002c90300002001)
	echo "initiator $ini_if ($1, netns ini), target $tgt_if ($2)"
	ip netns add ini &&
	ip link set "$ini_if" netns ini &&
	ip -n ini link set lo up &&
	ip -n ini addr add "$1/24" dev "$ini_if" &&
	ip -n ini link set "$ini_if" up &&
	ip addr add "$2/24" dev "$tgt_if" &&
	ip link set "$tgt_if" up
}

# ms_ibsim_ipoib_up INI_IP TGT_IP: ib_ipoib loaded, the ports split as by
# ms_ibsim_ipoib_split, and the target's address resolved from netns ini.
ms_ibsim_ipoib_up() {
	modprobe ib_ipoib && ms_ibsim_ipoib_split "$1" "$2" &&
	ms_wait 60 ip netns exec ini bash -c "echo >/dev/udp/$2/9 &&
		ip neigh show $2 | grep -q lladdr"
}

# ms_umad_of DEV PORT: the umad device (umadN) of port PORT of DEV.
ms_umad_of() {
	local u

	for u in /sys/class/infiniband_mad/umad*; do
		[ "$(cat $u/ibdev)" = "$1" ] && [ "$(cat $u/port)" = "$2" ] &&
			basename $u && return 0
	done
	return 1
}

# ms_fio_verify DEV ARGS...: fio writes /dev/DEV and verifies it with
# crc32c, ARGS adding to or overriding the defaults.
ms_fio_verify() {
	local d=$1
	shift
	fio --name=v --filename=/dev/$d --ioengine=libaio --iodepth=8 \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --end_fsync=1 \
		--eta=never "$@"
}

# ms_mp_conf: /etc/multipath.conf for SRP logins to LIO LUNs: every path
# of a LUN in one round-robin group, checked with TUR every 2 s, and I/O
# queued for 30 checks when no path is left.
ms_mp_conf() {
	mkdir -p /etc/multipath
	cat >/etc/multipath.conf <<-EOC
	defaults {
		user_friendly_names no
		find_multipaths no
		polling_interval 2
		detect_prio no
		detect_checker no
	}
	devices {
		device {
			vendor "LIO-ORG"
			product ".*"
			hardware_handler "0"
			path_grouping_policy multibus
			path_selector "round-robin 0"
			prio const
			path_checker tur
			no_path_retry 30
		}
	}
	EOC
}

# ms_mp_map DISK: the multipath map (dm-N) on top of DISK.
ms_mp_map() {
	local m
	for m in /sys/block/dm-*; do
		[ -e "$m/slaves/$1" ] && grep -q ^mpath- $m/dm/uuid &&
			basename $m && return 0
	done
	return 1
}

# ms_mp_paths MAP N: MAP has N paths, all active.
ms_mp_paths() {
	local st
	[ "$(ls /sys/block/$1/slaves | wc -l)" = "$2" ] || return 1
	st=$(dmsetup status --target multipath "$(cat /sys/block/$1/dm/name)") ||
		return 1
	[ "$(grep -oE '[0-9]+:[0-9]+ A' <<<"$st" | wc -l)" = "$2" ] &&
	! grep -qE '[0-9]+:[0-9]+ F' <<<"$st"
}

# ms_mp_start: udevd, the multipath modules and multipathd (its log in
# /tmp/multipathd.log), with ms_mp_conf's configuration written first.
ms_mp_start() {
	/lib/systemd/systemd-udevd --daemon &&
	udevadm trigger --action=add --subsystem-match=block &&
	udevadm settle -t 30 &&
	modprobe dm-multipath && modprobe dm-round-robin || return 1
	multipathd -d -s -v3 >/tmp/multipathd.log 2>&1 &
	ms_wait 30 multipathd show status
}

# ms_mp_debug: what multipath sees, for failures.
ms_mp_debug() {
	local d
	multipath -ll
	multipathd show paths
	dmsetup table
	dmsetup status
	for d in $(ms_srp_disks); do
		echo "$d: $(udevadm info -q property -n $d | grep -E 'ID_SERIAL=|DM_MULTIPATH|SYSTEMD_READY')"
	done
	tail -n 40 /tmp/multipathd.log
}

# ms_mp_io MAP: fio verify runs on MAP in a loop until /tmp/mp-run goes
# away; the loop's status is the first failing run's.
ms_mp_io() {
	local n=0
	while [ -e /tmp/mp-run ]; do
		n=$((n + 1))
		ms_fio_verify $1 --size=16M --bs=64k --rw=randwrite --direct=1 \
			--iodepth=16 --randseed=$n >/tmp/mp-fio.log 2>&1 ||
			{ echo "fio run $n failed"; cat /tmp/mp-fio.log; return 1; }
	done
	echo "$n fio runs passed"
}

# ms_mp_stop: flush the maps, stop multipathd and udevd.  A path that just
# came back makes udev probe the map; the flush waits until nothing holds
# it any more (on a slow host that takes a while).
ms_mp_stop() {
	udevadm settle --timeout=60
	ms_wait 60 multipath -F && multipathd shutdown &&
	ms_wait 30 sh -c "! pidof multipathd" &&
	udevadm control --exit
}

# ms_distro_install DEB TARBALL: on the distribution's kernel (vm.sh -k
# distro), install our DKMS package as an administrator does, dpkg -i; the
# modules were built for this kernel by dkms on the host (host/distro.sh
# package) into the dkms tarball TARBALL, which goes where Debian's dkms
# postinst loads one from (/usr/share/<package>/<name>-<version>.dkms.tar.gz)
# instead of building again.  Fails unless dkms then lists the package
# as installed for the running kernel.
ms_distro_install() {
	local deb=$1 tarball=$2 pkg ver

	pkg=$(dpkg-deb -f "$deb" Package) && ver=$(dpkg-deb -f "$deb" Version) ||
		return 1
	# The image's modules directory lacks the link to the headers,
	# which are installed on the host (the guest's root).
	ln -sfn "/usr/src/linux-headers-$(uname -r)" "/lib/modules/$(uname -r)/build"
	mkdir -p "/usr/share/$pkg" &&
	cp "$tarball" "/usr/share/$pkg/" &&
	dpkg -i "$deb" &&
	dkms status -m ib-mad-srpt -v "$ver" -k "$(uname -r)" | grep -q ": installed"
}

# ms_module_origin MODULE: where modprobe takes MODULE from, and whether
# the one loaded is of that kind: "ib_core: /lib/modules/.../updates/dkms/
# ib_core.ko.xz (ours, ib-mad-srpt-dkms, loaded)".  A loaded module of ours
# carries the out-of-tree taint (O in /sys/module/MODULE/taint), one of the
# distribution's (signed, in-tree) none.
ms_module_origin() {
	local f who state='' taint

	f=$(modinfo -F filename "$1" 2>/dev/null) || { echo "$1: not found"; return 1; }
	case "$f" in
	*/updates/dkms/*) who="ours, ib-mad-srpt-dkms" ;;
	*/kernel/*) who="the distribution's" ;;
	*) who="?" ;;
	esac
	if [ -d "/sys/module/$1" ] && [ -e "/sys/module/$1/taint" ]; then
		taint=$(cat "/sys/module/$1/taint")
		case "$f:$taint" in
		*/updates/dkms/*:*O*) state=", loaded" ;;
		*/kernel/*:) state=", loaded" ;;
		*) state=", the loaded one is not this file (taint '$taint')" ;;
		esac
	fi
	echo "$1: $f ($who$state)"
}

# ms_peer_sync TAG [VALUE]: meet the other VM of a two-VM test (the VMs
# on the wire, 10.12.0.1 listening, 10.12.0.2 connecting; MS_PEER_ROLE
# says which this is) at TAG, over TCP port 7000 of 10.12.0.1; prints
# the VALUE the other VM gave.  Fails when the other VM is not there
# within MS_PEER_WAIT seconds (default 600) or is at another TAG.
ms_peer_sync() {
	python3 - "$1" "${2:-}" "${MS_PEER_ROLE:?}" "${MS_PEER_WAIT:-600}" <<'PY'
import socket, sys, time

tag, value, role, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
mine = ("%s %s\n" % (tag, value)).encode()
end = time.time() + secs
if role == "listen":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("10.12.0.1", 7000))
    s.listen(1)
    s.settimeout(secs)
    c, _ = s.accept()
else:
    while True:
        try:
            c = socket.create_connection(("10.12.0.1", 7000), timeout=5)
            break
        except OSError:
            if time.time() > end:
                sys.exit("no peer at %s" % tag)
            time.sleep(0.5)
c.settimeout(secs)
c.sendall(mine)
got = c.makefile().readline().split(" ", 1)
if got[0] != tag:
    sys.exit("peer is at %r, not %s" % (got[0], tag))
print(got[1].strip() if len(got) > 1 else "")
PY
}
