#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of srpt-rogue.sh: one VM, rxe on a veth (10.16.0.1), ib_srpt
# with a 128 MiB fileio LUN and two ACLs: one for ib_srp, one for the rogue
# initiator (progs/srp_rogue.c).  ib_srp logs in and fio writes and verifies
# the first 64 MiB of the LUN in a loop while srp_rogue runs each of its
# cases ROUNDS times (first argument, default 1) on the same target, from
# block 196608 (96 MiB) on.  At the end every fio run must have verified,
# the rogue must hold no channel, and ib_srp and ib_srpt must go away
# cleanly, ib_srpt while a channel's release work is held past its wakes.

. "$MS_HARNESS/guest/guest-lib.sh"

rounds=${1:-1}
cfs=/sys/kernel/config/target
addr=10.16.0.1
port=5560
dev=rxe-veth0
prog=/tmp/srp_rogue

if ! out=$(ms_build_prog srp_rogue 2>&1); then
	ms_bail "build progs/srp_rogue.c: $(head -n 3 <<<"$out")"
fi
mapfile -t cases < <($prog list)

tap_plan $((13 + ${#cases[@]}))
tap_ok "build progs/srp_rogue.c (${#cases[@]} cases, $rounds round(s) each)"
ms_srpt_loopback $addr
acl=0x0000000000000000${gid:16}
rogue=0x00000000000000ff${gid:16}
rogue_info=$cfs/srpt/$wwn/tpgt_1/acls/$rogue/info
lunfile=/tmp/srpt-rogue.img
truncate -s $((128 << 20)) $lunfile
tap_check "srpt target, 128 MiB fileio LUN, ACLs for ib_srp and the rogue" \
	ms_srpt_target $wwn $lunfile $((128 << 20)) $port $acl $rogue
modprobe ib_srp

login() {
	ms_srp_add_target srp-$dev-1 \
		"id_ext=$guid,ioc_guid=$guid,dest=$addr:$port,max_cmd_per_lun=32" &&
	ms_wait 30 ms_srp_disk
}
tap_check "ib_srp logs in" login
disk=$(ms_srp_disk)

# fio over the first 64 MiB, again and again until told to stop; each run
# writes and verifies.  Results in /tmp/fio-runs and /tmp/fio-failed.
fio_loop() {
	local n=0
	rm -f /tmp/fio-failed
	while [ ! -e /tmp/rogue-done ]; do
		if ! fio --name=v --filename=/dev/$disk --ioengine=libaio \
			--iodepth=16 --direct=1 --size=64M --bs=64k \
			--rw=randwrite --verify=crc32c --do_verify=1 \
			--verify_fatal=1 --randseed=$n --eta=never \
			>/tmp/fio.log 2>&1; then
			cp /tmp/fio.log /tmp/fio-failed
			break
		fi
		n=$((n + 1))
	done
	echo $n >/tmp/fio-runs
}
rm -f /tmp/rogue-done /tmp/fio-runs
fio_loop &
fio_pid=$!

t0=$SECONDS
sq_attr=$cfs/srpt/$wwn/tpgt_1/attrib/srp_sq_size
sq_def=$(cat $sq_attr)
for c in "${cases[@]}"; do
	t=$SECONDS
	seed=$RANDOM
	# read-burst needs a send queue that a few reads fill (new logins).
	if [ "$c" = read-burst ]; then echo 16 >$sq_attr; else echo "$sq_def" >$sq_attr; fi
	if out=$($prog -n "$rounds" -s $seed "$c" $addr $port $rogue \
		$guid 2>&1); then
		sed 's/^\([^#]\)/# \1/' <<<"$out" | grep -v '^# FAIL' || true
		tap_ok "rogue $c (seed $seed, $((SECONDS - t)) s)"
	else
		sed 's/^\([^#]\)/# \1/' <<<"$out"
		tap_fail "rogue $c (seed $seed, $((SECONDS - t)) s)"
	fi
done
echo "# rogue cases took $((SECONDS - t0)) s"
echo "$sq_def" >$sq_attr

touch /tmp/rogue-done
wait $fio_pid
fio_ok() {
	[ ! -e /tmp/fio-failed ] && [ "$(cat /tmp/fio-runs)" -gt 0 ] ||
		{ cat /tmp/fio-failed 2>/dev/null | tail -n 20; return 1; }
}
tap_check "fio verified $(cat /tmp/fio-runs) run(s) of 64 MiB while the rogue ran" \
	fio_ok

rogue_gone() {
	grep -q "^No active SRP session" $rogue_info
}
tap_check "the rogue holds no channel any more" ms_wait 30 rogue_gone
tap_check "ib_srp logs out" ms_srp_logout

# Issue 34, item 8: the rogue's ACL removed and the TPG disabled while a
# login is past the making of its LIO session (which the ACL's rmdir
# reaches) and before its accept.  kmod/delay_kmod.ko holds the login's
# thread 3 s on its return from target_setup_session(), long enough for
# both from this CPU.  The login must be rejected, the rmdir must return
# once the login let go of the channel, and nothing may be freed twice
# (the harness fails on any splat).  Before the fix (20f33a4) the channel
# was freed by the failing login while the rmdir's close still used it.
tpg=$cfs/srpt/$wwn/tpgt_1
racl=$tpg/acls/$rogue
delay_ko=$MS_TOP/build/bench/kmod/$(uname -r)/delay_kmod.ko
delay_hit() {
	[ "$(cat /sys/module/delay_kmod/parameters/hits)" = 1 ]
}
acl_race() {
	local pid rm_pid rc=0

	rm $racl/lun_0/lun0 && rmdir $racl/lun_0 &&
	insmod "$delay_ko" func=target_setup_session delay_ms=3000 count=1 ||
		return 1
	$prog login-acl-gone $addr $port $rogue $guid >/tmp/race.out 2>&1 &
	pid=$!
	if ! ms_wait 30 delay_hit; then
		echo "the login never made its session"
		kill $pid
		rc=1
	fi
	rmdir $racl &
	rm_pid=$!
	echo 0 >$tpg/enable
	wait $pid || rc=1
	cat /tmp/race.out
	if ! ms_wait 30 eval '! kill -0 $rm_pid'; then
		echo "the ACL's rmdir still waits after 30 s"
		rc=1
	fi
	wait $rm_pid || rc=1
	echo "delay_kmod held the login $(cat /sys/module/delay_kmod/parameters/hits) time(s)"
	rmmod delay_kmod
	echo 1 >$tpg/enable
	mkdir -p $racl/lun_0 && ln -s $tpg/lun/lun_0 $racl/lun_0/lun0 || rc=1
	return $rc
}
tap_here "a login whose ACL is removed and TPG disabled after its session is made gets a REJ, the rmdir returns" \
	acl_race
tap_check "a login after that race works" \
	$prog login-ok $addr $port $rogue $guid

# Issue 34, item 12: srpt_send_done() must touch nothing of the channel
# but what its own reference keeps once it freed the command, which may
# be the last one the channel's release waits for.  The rogue's READ,
# done by the backend, is held 4 s in LIO's completion work (delay2_kmod,
# before srpt_queue_data_in(); not the backend, which runs in the CQ's
# thread here and would hold the release's drains) while the rogue
# disconnects; its response then goes onto the closed QP, and the
# flush's srpt_send_done() is held asleep 3 s after it freed the command
# (delay_kmod, after transport_generic_free_cmd()).  Meanwhile the
# release must finish, so that the channel is freed in the window.  This
# shows the window is real; KUnit's srpt_test_send_done_last_ref is what
# fails on the code before the fix (948d0ee), which walked the freed
# channel's wait list: nothing here sees that read, not even KASAN (the
# old code passed this point under make check-debug with no report).
dk=/sys/module/delay_kmod/parameters
dk2=/sys/module/delay2_kmod/parameters
delay2_ko=${delay_ko%/*}/delay2_kmod.ko
holds() {
	echo "$(cat $dk/hits) begun, $(cat $dk/ended) over"
}
# A channel released since the hold began (the only channel then is the
# rogue's: the READ was held 4 s before, its next login waits for the
# second cue), or the hold is over.
released_or_over() {
	dmesg | sed -n '/delay_kmod: transport_generic_free_cmd returned/,$p' |
		grep -q ': channel released$' || [ "$(cat $dk/ended)" = 1 ]
}
send_done_race() {
	local pid rc=0

	insmod "$delay2_ko" sleep=1 before=1 func=srpt_queue_data_in \
		caller=target_core_mod count=1 delay_ms=4000 || return 1
	if ! insmod "$delay_ko" sleep=1 func=transport_generic_free_cmd \
		caller=ib_srpt count=1 delay_ms=3000; then
		rmmod delay2_kmod
		return 1
	fi
	# The cues: the first at once (the DREQ), the second (the rogue's
	# new login, whose commands must not take the hold) after the race.
	rm -f /tmp/sdcue
	mkfifo /tmp/sdcue
	$prog dreq-cross $addr $port $rogue $guid </tmp/sdcue >/tmp/sd.out 2>&1 &
	pid=$!
	exec 4<>/tmp/sdcue
	echo >&4
	if ! ms_wait 30 eval '[ "$(cat $dk/hits)" = 1 ]'; then
		echo "no send completion freed the READ"
		rc=1
	elif ms_wait 5 released_or_over &&
		[ "$(cat $dk/ended)" = 0 ]; then
		echo "the channel was released while srpt_send_done() was held"
	else
		echo "the channel was not released while srpt_send_done() was held"
		rc=1
	fi
	echo >&4
	exec 4>&-
	wait $pid || rc=1
	cat /tmp/sd.out
	ms_wait 15 eval '[ "$(cat $dk/ended)" = "$(cat $dk/hits)" ] &&
		[ "$(cat $dk2/ended)" = "$(cat $dk2/hits)" ]'
	echo "backend holds $(cat $dk2/hits) begun, $(cat $dk2/ended) over;" \
		"send completion holds $(holds)"
	[ "$(cat $dk2/hits)" = 1 ] || rc=1
	rmmod delay_kmod delay2_kmod || rc=1
	return $rc
}
tap_here "a READ's response flushed after its channel closed: the channel is released while srpt_send_done() is held after the free" \
	send_done_race

tap_check "ib_srp unloads" modprobe -r ib_srp

# Issue 34, item 12: ib_srpt unloaded while a channel's release work is
# still in the module's code after waking the unload.  The rogue holds a
# channel; delay_kmod (sleep=1: asleep, so that RCU and the unload go on)
# holds the release work 5 s (20 s on the detector kernel) on its return
# from each wake_up_var(): first the TPG's, which lets the teardown go on
# and the unload begin, then the port's, which lets srpt_remove_one() go
# on.  The unload must return only
# once the work is out of ib_srpt (both holds over).  Before the fix
# (20f33a4) the release work ran on system_long_wq, which nothing flushed:
# the unload returned during the second hold and the work then returned
# into the freed module.
# The first hold must outlast the teardown: over 5 s on the detector kernel.
hold_ms=5000
case $(uname -r) in *-debug) hold_ms=20000 ;; esac
rogue_in() {
	[ -e $rogue_info ] && ! rogue_gone
}
unload_race() {
	local pid rc=0 at_unload

	$prog hold $addr $port $rogue $guid >/tmp/hold.out 2>&1 &
	pid=$!
	if ! ms_wait 30 rogue_in; then
		echo "the rogue did not log in"
		kill $pid
		cat /tmp/hold.out
		return 1
	fi
	insmod "$delay_ko" sleep=1 func=wake_up_var caller=ib_srpt count=2 \
		delay_ms=$hold_ms || { kill $pid; return 1; }
	ms_srpt_teardown $wwn || rc=1
	at_unload=$(holds)
	modprobe -r ib_srpt || rc=1
	echo "holds of the release work when the unload began: $at_unload;" \
		"when it returned: $(holds)"
	if [ "$at_unload" != "1 begun, 0 over" ]; then
		echo "the unload did not begin inside the first hold"
		rc=1
	fi
	if [ "$(holds)" != "2 begun, 2 over" ]; then
		echo "the unload returned before the release work let go"
		rc=1
	fi
	wait $pid || rc=1
	cat /tmp/hold.out
	ms_wait 15 eval '[ "$(cat $dk/ended)" = "$(cat $dk/hits)" ]'
	rmmod delay_kmod || rc=1
	return $rc
}
tap_here "target torn down and ib_srpt unloaded while a channel's release work sleeps past its wakes: the unload waits for it" \
	unload_race
# Our files are GPL-2.0-only (their SPDX lines): the module must say so.
license=$(modinfo -F license ib_srpt)
tap_check "ib_srpt's license is GPL, as its SPDX lines (got: $license)" \
	[ "$license" = GPL ]
tap_done
