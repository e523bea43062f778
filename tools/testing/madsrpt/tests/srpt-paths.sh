#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# srpt-paths: drive the ib_srpt code paths that srp-login does not reach.
#   - configfs: per-TPG attributes, range checks, bad WWN and ACL names
#   - a login without an ACL is rejected, and the reason is logged
#   - receive through the SRQ (use_srq=1) with I/O
#   - ib_srp with never_register=1 and cmd_sg_entries=255 (indirect tables
#     in the SRP_CMD) and =1 (direct descriptors), small O_DIRECT writes
#     (immediate data), data verified each time; the ACL's info attribute
#     (commands by data descriptor) proves from the target's side that
#     each kind of descriptor was used
#   - LUN reset and host reset during reads (TMF, re-login with SINGLE
#     channel action)
#     followed by working I/O
#   - srp_sq_size=16: commands whose RDMA needs more work requests than
#     the send queue holds are refused at once, small ones still work; the
#     same 128-descriptor transfers (progs/page_alias_io.c) go through with
#     the default send queue
#   - progs/srp_resid.c: reads into a 4 KiB buffer that return less (INQUIRY
#     with allocation length 36, READ of one block) report the residual and
#     leave the rest of the buffer alone; no old target memory is sent
#   - "rdma link del" with a logged-in initiator tears down without a hang
# timeout: 900

. "$MS_HARNESS/guest/guest-lib.sh"

cfs=/sys/kernel/config/target
addr=10.13.0.1
dev=rxe-veth0

tap_plan 38
ms_srpt_loopback $addr
tpg=$cfs/srpt/$wwn/tpgt_1
acl=0x0000000000000000${gid:16}
lunfile=/tmp/srpt-paths.img
truncate -s 64M $lunfile

tap_check "srpt target $wwn with a LUN, no ACL yet" \
	ms_srpt_target $wwn $lunfile $((64 << 20)) 5556
tap_check "build progs/srp_resid.c" ms_build_prog srp_resid

attrs() {
	local a=$tpg/attrib
	[ "$(cat $a/srp_max_rsp_size)" = 256 ] &&
	[ "$(cat $a/srp_sq_size)" = 4096 ] &&
	[ "$(cat $a/srp_max_rdma_size)" = 65536 ] &&
	[ "$(cat $a/use_srq)" = 0 ] &&
	echo 512 >$a/srp_max_rsp_size && [ "$(cat $a/srp_max_rsp_size)" = 512 ] &&
	! echo 39 >$a/srp_max_rsp_size 2>/dev/null &&
	! echo 1025 >$a/srp_max_rsp_size 2>/dev/null &&
	! echo 2 >$a/use_srq 2>/dev/null &&
	! echo 4096 >$a/srp_max_rdma_size 2>/dev/null &&
	[ "$(cat $a/srp_max_rsp_size)" = 512 ] &&
	[ "$(cat $cfs/srpt/discovery_auth/rdma_cm_port)" = 5556 ]
}
tap_check "TPG attributes: defaults, store, range checks" attrs

bad_names() {
	! mkdir $cfs/srpt/0x1234 2>/dev/null &&
	! mkdir $cfs/srpt/ffff:ffff:ffff:fffe 2>/dev/null &&
	! mkdir $tpg/acls/not-an-initiator 2>/dev/null &&
	mkdir $tpg/acls/192.168.1.1 && rmdir $tpg/acls/192.168.1.1 &&
	mkdir $tpg/acls/1234:5678:9abc:def0 &&
	rmdir $tpg/acls/1234:5678:9abc:def0
}
tap_check "bad WWN and ACL names refused, good ones accepted" bad_names

add_target() {
	local host
	host=$(ls /sys/class/infiniband_srp/ | head -n 1)
	ms_srp_add_target "$host" \
		"id_ext=$guid,ioc_guid=$guid,dest=$addr:5556,max_cmd_per_lun=32$1"
}

login() {
	add_target "$1" && ms_wait 30 ms_srp_disk
}

no_acl() {
	dmesg -C
	! add_target "" 2>/dev/null &&
	dmesg | grep -q "no ACL for this initiator"
}
modprobe ib_srp
tap_check "login without an ACL is rejected (no ACL logged)" no_acl

mkdir -p $tpg/acls/$acl/lun_0 && ln -s $tpg/lun/lun_0 $tpg/acls/$acl/lun_0/lun0

# verify BS COUNT FLAGS: write a pattern, read it back, compare.
verify() {
	local disk=$(ms_srp_disk) bs=$1 count=$2 seek=$3
	dd if=/dev/urandom of=/tmp/pat bs=$bs count=$count status=none &&
	dd if=/tmp/pat of=/dev/$disk bs=$bs count=$count seek=$seek \
		oflag=direct status=none &&
	cmp /tmp/pat <(dd if=/dev/$disk bs=$bs count=$count skip=$seek \
		iflag=direct status=none)
}

echo 1 >$tpg/attrib/use_srq
tap_check "login with use_srq=1" login ""
tap_check "SRQ: 4 MiB in 1 MiB blocks verified" verify 1M 4 0
tap_check "SRQ: 64 KiB in 4 KiB blocks verified" verify 4k 16 100
tap_check "the channel receives through the SRQ" \
	sh -c "dmesg | grep -q 'credits.*, SRQ'"
tap_check "logout" ms_srp_logout
echo 0 >$tpg/attrib/use_srq

modprobe -r ib_srp
modprobe ib_srp cmd_sg_entries=255 never_register=1
tap_check "login, cmd_sg_entries=255 never_register=1" login ""

# fmt_count KIND: SRP_CMDs the target received with that kind of data
# descriptor (none, direct, indirect or immediate) on all the channels of
# the session (ib_srp opens one per CPU).
fmt_count() {
	sed -n "s/.*Commands by data descriptor:.* $1 \([0-9]*\).*/\1/p" \
		$tpg/acls/$acl/info | awk '{ n += $1 } END { if (NR) print n }'
}

# counted KIND MIN CMD...: run CMD; the target must have counted at least
# MIN more commands with a KIND descriptor.
counted() {
	local kind=$1 min=$2 before after
	shift 2
	before=$(fmt_count $kind)
	"$@" || return 1
	after=$(fmt_count $kind)
	echo "# $kind descriptors: ${before:-?} -> ${after:-?} (need +$min)"
	[ -n "$before" ] && [ -n "$after" ] && [ $((after - before)) -ge "$min" ]
}
tap_check "indirect: 4 MiB in 1 MiB blocks verified" verify 1M 4 8
tap_check "target side: the 1 MiB commands came with indirect tables" \
	counted indirect 8 verify 1M 4 8
tap_check "immediate data: 32 KiB in 4 KiB blocks verified" verify 4k 8 200
tap_check "target side: the 4 KiB writes came as immediate data" \
	counted immediate 8 verify 4k 8 200
tap_check "512-byte writes verified" verify 512 16 4000

# alias_io r|w: a 512 KiB direct read or write whose buffer is one page
# mapped 128 times (progs/page_alias_io.c), so that its scatterlist, and
# with never_register=1 its SRP_CMD, has 128 one-page descriptors whatever
# the page allocator handed out.  Never longer than 20 s (status 124).
alias_io() {
	timeout 20 /tmp/page_alias_io "$1" /dev/$(ms_srp_disk) $((40 << 20)) 128
}

# refused r|w: such a transfer needs more work requests than a 16-entry
# send queue holds.  It must fail at once (a CHECK CONDITION), within less
# than the 30 s in which the SCSI timeout would start error handling for a
# command the target dropped.
refused() {
	local rc=0

	alias_io "$1" || rc=$?
	echo "exit status $rc"
	[ $rc -eq 1 ]
}

alias_both() {
	alias_io w && alias_io r
}
tap_check "build progs/page_alias_io.c" \
	ms_build_prog page_alias_io
tap_check "default send queue: 512 KiB in 128 one-page descriptors, both ways" \
	counted indirect 2 alias_both

# io_start: direct random reads of the SRP disk in the background (fio,
# libaio, 8 in flight, for at most 120 s), its pid in $io_pid; returns
# once the disk's counters show reads completing and reads in flight, or
# fails saying why.  io_state says where the counters stand.
io_start() {
	io_disk=$(ms_srp_disk)
	[ -n "$io_disk" ] || { echo "no SRP disk"; return 1; }
	io_r0=$(io_reads)
	fio --name=inflight --filename=/dev/$io_disk --ioengine=libaio \
		--iodepth=8 --direct=1 --bs=64k --rw=randread --size=32M \
		--time_based --runtime=120 --eta=never >/tmp/inflight.log 2>&1 &
	io_pid=$!
	ms_wait 30 io_flowing && return 0
	echo "no reads in flight: $(io_state)"
	cat /tmp/inflight.log
	return 1
}
io_reads() {
	local s

	read -r -a s </sys/block/$io_disk/stat && echo "${s[0]}"
}
io_inflight() {
	local r w

	read -r r w </sys/block/$io_disk/inflight && echo $((r + w))
}
io_gone() {
	! grep -qs '^State:[[:space:]]*[^Z]' /proc/$io_pid/status
}
io_flowing() {
	! io_gone && [ "$(io_reads)" -ge $((io_r0 + 16)) ] &&
	[ "$(io_inflight)" -gt 0 ]
}
io_state() {
	echo "$(($(io_reads) - io_r0)) reads done, $(io_inflight) in flight," \
	     "fio $(io_gone && echo ended || echo running)"
}

# io_end: the reader must end within 60 s of SIGTERM (its reads may have
# failed), not hang on the disk.
io_end() {
	kill "$io_pid" 2>/dev/null
	if ! ms_wait 60 io_gone; then
		echo "fio still running 60 s after SIGTERM"
		return 1
	fi
	wait "$io_pid"
	return 0
}

# reset_during_io OPT: sg_reset OPT while direct reads are in flight (the
# counters say so just before the reset); the reads may fail, but the
# reset must finish and so must the reader.
reset_during_io() {
	io_start || return 1
	echo "at the reset: $(io_state)"
	timeout 180 sg_reset "$1" /dev/$io_disk || { io_end; return 1; }
	io_end
}
tap_check "LUN reset (sg_reset -d) during reads" reset_during_io -d
tap_check "I/O after LUN reset" verify 64k 8 50
tap_check "host reset (sg_reset -H) during reads" reset_during_io -H
tap_check "I/O after host reset" ms_wait 30 verify 64k 8 60
tap_check "logout" ms_srp_logout

echo 16 >$tpg/attrib/srp_sq_size
tap_check "login with srp_sq_size=16" login ""
tap_check "srp_sq_size=16: 512 KiB read in 128 descriptors refused" refused r
tap_check "srp_sq_size=16: 512 KiB write in 128 descriptors refused" refused w
tap_check "srp_sq_size=16: 4 KiB I/O verified" verify 4k 4 300
tap_check "logout" ms_srp_logout
echo 4096 >$tpg/attrib/srp_sq_size

modprobe -r ib_srp
modprobe ib_srp cmd_sg_entries=1 never_register=1
tap_check "login, cmd_sg_entries=1 (direct descriptors)" login ""
tap_check "direct: 1 MiB in 256 KiB blocks verified" verify 256k 4 16
tap_check "target side: the 256 KiB commands came with direct descriptors" \
	counted direct 8 verify 256k 4 16
tap_check "INQUIRY of 36 bytes into 4 KiB: residual, rest untouched" \
	/tmp/srp_resid inquiry /dev/$(ms_srp_disk)
tap_check "READ(10) of 1 block into 4 KiB: residual, rest untouched" \
	/tmp/srp_resid read /dev/$(ms_srp_disk)
tap_check "INQUIRY into 4 KiB after a READ: no old target memory sent" \
	/tmp/srp_resid stale /dev/$(ms_srp_disk)

removal() {
	io_start || return 1
	echo "at the link delete: $(io_state)"
	# Returns only once ib_srpt has released every channel of the device.
	timeout 120 rdma link delete $dev &&
	ms_wait 60 sh -c "! ls /sys/class/infiniband/$dev" &&
	io_end
}
tap_check "rdma link delete during I/O" removal

teardown() {
	ms_srp_logout
	ms_srpt_teardown $wwn
}
tap_check "configfs torn down after the device is gone" teardown
tap_check "ib_srp and ib_srpt unload" modprobe -r ib_srp ib_srpt
tap_done
