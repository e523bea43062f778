#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srpt-io: data integrity through ib_srpt under real I/O patterns, and the
# session life cycle around it (srpt-paths covers resets, link removal, the
# SRQ, never_register and immediate data).  One fileio LUN on tmpfs, ib_srp
# over RDMA/CM on the same rxe device.
#   - fio with crc32c verify: 4 KiB, 64 KiB and 1 MiB blocks, sequential and
#     random writes each read back and verified, O_DIRECT and buffered
#   - 4 MiB and 8 MiB transfers, O_DIRECT and buffered, with memory
#     registration: cmd_sg_entries=255 and commands of up to 8 MiB (more
#     than one 2 MiB rxe MR each, so the SRP_CMD carries an indirect
#     descriptor table; the average request size proves commands > 2 MiB),
#     and cmd_sg_entries=1 with commands of up to one MR (direct descriptor)
#   - progs/scatter_io.c: pwritev/preadv from scattered, partly sub-page
#     user buffers, O_DIRECT and buffered, compared byte for byte
#   - logout during queued I/O: the I/O fails fast, the target releases
#     every channel, a new login works
#   - dm-multipath (udevd + multipathd) over two logins to the same LUN
#     (initiator_ext 0 and 1, one ACL each): fio verify keeps passing while
#     one path logs out and back in, and the path rejoins the map
#   - ib_srpt unload and reload: data written before is read back intact
# timeout: 1200

. "$MS_HARNESS/guest/guest-lib.sh"

cfs=/sys/kernel/config/target
addr=10.15.0.1
port=5557
dev=rxe-veth0

tap_plan 53

prog=/tmp/scatter_io
if ! out=$(ms_build_prog scatter_io 2>&1); then
	tap_fail "build progs/scatter_io.c"
	sed 's/^/# /' <<<"$out"
	exit 1
fi
tap_ok "build progs/scatter_io.c"
ms_srpt_loopback $addr
tpg=$cfs/srpt/$wwn/tpgt_1
# Initiator port ids: initiator_ext (0 or 1) and the port's interface id.
acl0=0x0000000000000000${gid:16}
acl1=0x0000000000000001${gid:16}
lunfile=/tmp/srpt-io.img
lunsize=$((128 << 20))
truncate -s $lunsize $lunfile

setup_target() {
	ms_srpt_target $wwn $lunfile $lunsize $port $acl0 $acl1
}
tap_check "srpt target with a 128 MiB fileio LUN and two ACLs" setup_target
modprobe ib_srp

# login OPTIONS: log in with extra add_target OPTIONS and wait for the new
# remote port's disk; the port's name goes to /tmp/rport (tap_check runs
# commands in a subshell), where logged_in picks it up.
login() {
	local before p rport=
	before=$(ms_srp_rports)
	rm -f /tmp/rport
	ms_srp_add_target srp-$dev-1 \
		"id_ext=$guid,ioc_guid=$guid,dest=$addr:$port,max_cmd_per_lun=32$1" ||
		return 1
	for p in $(ms_srp_rports); do
		grep -qx "$p" <<<"$before" || rport=$p
	done
	[ -n "$rport" ] && ms_wait 30 ms_srp_rport_disk $rport &&
	echo $rport >/tmp/rport
}

# logged_in: set $rport and $disk from the last login.
logged_in() {
	rport=$(cat /tmp/rport 2>/dev/null)
	disk=$(ms_srp_rport_disk "$rport")
}

logins() {
	dmesg | grep -c ": logged in as "
}

releases() {
	dmesg | grep -c ": channel released"
}

# Every channel the target accepted (since dmesg -C) has been released.
channels_released() {
	[ "$(logins)" -gt 0 ] && [ "$(releases)" -eq "$(logins)" ]
}

# Let the block layer build requests as large as the SCSI host takes.
big_requests() {
	local q=/sys/block/$1/queue
	cat $q/max_hw_sectors_kb >$q/max_sectors_kb &&
	echo 8192 >$q/read_ahead_kb &&
	echo "# $1: max_sectors_kb $(cat $q/max_sectors_kb)," \
	     "max_segments $(cat $q/max_segments)"
}

# Sectors per write request on disk $1 since write_stat was last called.
write_stat() {
	local s
	read -r -a s </sys/block/$1/stat
	wr_ios=$((s[4] - ${wr_ios0:-0}))
	wr_sec=$((s[6] - ${wr_sec0:-0}))
	wr_ios0=${s[4]}
	wr_sec0=${s[6]}
}

# --- 1: fio matrix with indirect tables and 8 MiB commands ---------------
tap_check "login: cmd_sg_entries=255 sg_tablesize=2048 max_sect=16384" \
	login ",cmd_sg_entries=255,sg_tablesize=2048,max_sect=16384"
logged_in
echo "# disk: /dev/$disk ($rport)"
big_requests $disk

for direct in 1 0; do
	for bs in 4k 64k 1m; do
		for rw in write randwrite; do
			tap_check "fio $rw bs=$bs direct=$direct, verified" \
				ms_fio_verify $disk --size=8M --bs=$bs --rw=$rw \
				--direct=$direct
		done
	done
done

write_stat $disk
for direct in 1 0; do
	for bs in 4m 8m; do
		tap_check "fio randwrite bs=$bs direct=$direct, 255 descriptors, verified" \
			ms_fio_verify $disk --offset=16M --size=16M --bs=$bs \
			--rw=randwrite --direct=$direct
	done
	[ $direct = 0 ] || write_stat $disk
done
echo "# O_DIRECT: $wr_ios writes of $((wr_sec / (wr_ios ? wr_ios : 1))) sectors on average"
# rxe registers at most 512 pages per MR: commands over 2 MiB need an
# indirect table.
tap_check "writes of more than 2 MiB per command reached the target" \
	test $((wr_sec / (wr_ios ? wr_ios : 1))) -gt 4096

tap_check "scattered user buffer, O_DIRECT, 8 MiB" \
	$prog /dev/$disk $((64 << 20)) $((8 << 20))
tap_check "scattered user buffer, buffered, 8 MiB" \
	$prog -b /dev/$disk $((72 << 20)) $((8 << 20))
tap_check "logout" ms_srp_logout
tap_check "target released every channel" ms_wait 30 channels_released
dmesg -C

# --- 2: one direct descriptor per command ---------------------------------
# With a single descriptor in SRP_CMD every command must fit one MR of
# 512 pages, whatever its first page offset: 4088 sectors.
tap_check "login: cmd_sg_entries=1 sg_tablesize=512 max_sect=4088" \
	login ",cmd_sg_entries=1,sg_tablesize=512,max_sect=4088"
logged_in
big_requests $disk
for direct in 1 0; do
	for bs in 4m 8m; do
		tap_check "fio randwrite bs=$bs direct=$direct, direct descriptors, verified" \
			ms_fio_verify $disk --offset=16M --size=16M --bs=$bs \
			--rw=randwrite --direct=$direct
	done
done
tap_check "scattered user buffer, O_DIRECT, direct descriptors" \
	$prog /dev/$disk $((64 << 20)) $((8 << 20))
tap_check "scattered user buffer, buffered, direct descriptors" \
	$prog -b /dev/$disk $((72 << 20)) $((8 << 20))
tap_check "no command failed to map" \
	sh -c "! dmesg | grep -E 'Could not fit|Failed to map data'"

# --- 3: logout while I/O is queued ----------------------------------------
logout_during_io() {
	local pid rc
	fio --name=busy --filename=/dev/$disk --ioengine=libaio --iodepth=32 \
		--direct=1 --bs=64k --rw=randrw --size=64M --time_based \
		--runtime=120 --eta=never >/tmp/busy.log 2>&1 &
	pid=$!
	sleep 3
	kill -0 $pid || { echo "fio ended early"; cat /tmp/busy.log; return 1; }
	ms_srp_logout || { echo "logout did not finish"; return 1; }
	ms_wait 60 sh -c "! kill -0 $pid" || { echo "fio hangs"; return 1; }
	wait $pid
	rc=$?
	echo "fio exited with status $rc"
}
tap_check "logout during queued I/O completes" logout_during_io
tap_check "target released every channel" ms_wait 30 channels_released
tap_check "login again" login ",cmd_sg_entries=255"
logged_in
tap_check "fio randwrite bs=64k after re-login, verified" \
	ms_fio_verify $disk --size=8M --bs=64k --rw=randwrite --direct=1

# --- 4: dm-multipath over two logins --------------------------------------
path0=$rport disk0=$disk
two_paths() {
	local map t0=$SECONDS
	login ",initiator_ext=1,cmd_sg_entries=255" &&
	logged_in &&
	if ms_wait 90 ms_mp_map $disk0 && map=$(ms_mp_map $disk0) &&
	   ms_wait 90 ms_mp_paths $map 2 && [ "$(ms_mp_map $disk)" = "$map" ]; then
		echo "second path in the map after $((SECONDS - t0)) s" \
			>/tmp/mp-times
		return 0
	fi
	ms_mp_debug 2>&1
	return 1
}
map=
ms_mp_conf
tap_check "udevd and multipathd run" ms_mp_start
tap_check "second login (initiator_ext=1): a map with two paths" two_paths
logged_in
path1=$rport disk1=$disk
if map=$(ms_mp_map $disk0) && ms_mp_paths $map 2; then
	echo "# /dev/$map: $disk0 ($path0) and $disk1 ($path1)"
	multipath -ll 2>&1 | sed 's/^/# /'
else
	grep -E "$disk1|uevent|retrigger|udev" /tmp/multipathd.log | tail -n 30 |
		sed 's/^/# /'
	map=
fi

path_flap() {
	local pid rc=0 t0
	touch /tmp/mp-run
	ms_mp_io $map >/tmp/mp-io.log 2>&1 &
	pid=$!
	sleep 3
	t0=$SECONDS
	if echo 1 >/sys/class/srp_remote_ports/$path1/delete &&
	   ms_wait 30 sh -c "! ls -d /sys/class/srp_remote_ports/$path1" &&
	   ms_wait 60 ms_mp_paths $map 1; then
		echo "path left the map after $((SECONDS - t0)) s" >>/tmp/mp-times
		sleep 3
		t0=$SECONDS
		if login ",initiator_ext=1,cmd_sg_entries=255" &&
		   ms_wait 90 ms_mp_paths $map 2; then
			echo "path back in the map after $((SECONDS - t0)) s" \
				>>/tmp/mp-times
			sleep 3
		else
			echo "path did not come back"
			rc=1
		fi
	else
		echo "path did not leave"
		rc=1
	fi
	rm -f /tmp/mp-run
	wait $pid || rc=1
	[ $rc = 0 ] || ms_mp_debug 2>&1
	cat /tmp/mp-io.log
	return $rc
}
if [ -n "$map" ]; then
	tap_check "fio verify on /dev/$map while a path logs out and in" \
		path_flap
	sed 's/^/# /' /tmp/mp-times
	tap_check "map has two active paths again" ms_mp_paths $map 2
else
	tap_fail "fio verify on the multipath map while a path logs out and in"
	tap_fail "map has two active paths again"
fi
tap_check "multipath maps flushed, multipathd and udevd stopped" \
	ms_mp_stop

# --- 5: ib_srpt unload and reload -----------------------------------------
rm_disk=$(ms_srp_disk)
tap_check "fio write of a 8 MiB pattern before the reload" \
	ms_fio_verify $rm_disk --offset=96M --size=8M --bs=128k --rw=write \
	--direct=1 --do_verify=0
tap_check "logout" ms_srp_logout
tap_check "configfs torn down" ms_srpt_teardown $wwn
tap_check "ib_srpt unloads" sh -c "modprobe -r ib_srpt && ! test -d /sys/module/ib_srpt"
reload() {
	modprobe ib_srpt && setup_target
}
tap_check "ib_srpt loads again and is configured" reload
tap_check "login after the reload" login ",cmd_sg_entries=255"
logged_in
tap_check "the pattern written before the reload reads back intact" \
	ms_fio_verify $disk --offset=96M --size=8M --bs=128k --rw=write \
	--direct=1 --verify_only
tap_check "fio randwrite bs=1m after the reload, verified" \
	ms_fio_verify $disk --size=8M --bs=1m --rw=randwrite --direct=1

tap_check "logout" ms_srp_logout
tap_check "configfs torn down" ms_srpt_teardown $wwn
tap_check "ib_srp and ib_srpt unload" modprobe -r ib_srp ib_srpt
tap_done
