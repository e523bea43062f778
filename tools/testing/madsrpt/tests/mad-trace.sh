#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mad-trace: the thirteen trace events of upstream 6.12's MAD layer, by
# name. Their format files must list upstream's fields; each is enabled
# through tracefs and must fire with sane field values while
# progs/umad_getresp.c exchanges GETs over rxe (agents, sends, retries,
# receives) and while the ib_mad_core KUnit suite drives what rxe cannot
# show through a fake port: directed-route SMPs (RoCE has no QP0 and no
# OPA), a send queue that overflows and a send that fails.
# timeout: 300

. "$MS_HARNESS/guest/guest-lib.sh"

prog=/tmp/umad_getresp
dev=rxe-veth0
tr=/sys/kernel/tracing
events=(ib_mad_error_handler ib_mad_ib_send_mad ib_mad_send_done_resend
	ib_mad_send_done_handler ib_mad_recv_done_handler
	ib_mad_recv_done_agent ib_mad_send_done_agent ib_mad_create_agent
	ib_mad_unregister_agent ib_mad_handle_opa_smi
	ib_mad_handle_out_opa_smi ib_mad_handle_ib_smi
	ib_mad_handle_out_ib_smi)

# Upstream 6.12's fields of each event class, in order ("type name").
f_send="u8 base_version;u8 mgmt_class;u8 class_version;u8 port_num;u32 qp_num;u8 method;u8 sl;u16 attr_id;u32 attr_mod;u64 wrtid;u64 tid;u16 status;u16 class_specific;u32 length;u32 dlid;u32 rqpn;u32 rqkey;u32 dev_index;void * agent_priv;unsigned long timeout;int retries_left;int max_retries;int retry;"
f_done="u8 port_num;u8 base_version;u8 mgmt_class;u8 class_version;u32 qp_num;u64 wrtid;u16 status;u16 wc_status;u32 length;void * agent_priv;unsigned long timeout;u32 dev_index;int retries_left;int max_retries;int retry;u8 method;"
f_recv="u8 base_version;u8 mgmt_class;u8 class_version;u8 port_num;u32 qp_num;u16 status;u16 class_specific;u32 length;u64 tid;u8 method;u8 sl;u16 attr_id;u32 attr_mod;u16 src_qp;u16 wc_status;u32 slid;u32 dev_index;"
f_agent="u32 dev_index;u32 hi_tid;u8 port_num;u8 mgmt_class;u8 mgmt_class_version;"
f_smi="u64 mkey;u32 dr_slid;u32 dr_dlid;u8 hop_ptr;u8 hop_cnt;u8 initial_path[64];u8 return_path[64];"

expected_fields() {
	case $1 in
	ib_mad_error_handler|ib_mad_ib_send_mad|ib_mad_send_done_resend)
		echo "$f_send" ;;
	ib_mad_send_done_handler) echo "$f_done" ;;
	ib_mad_recv_done_handler) echo "$f_recv" ;;
	*_agent) echo "$f_agent" ;;
	*_smi) echo "$f_smi" ;;
	esac
}

# The non-common fields of an event's format file, as "type name;...".
actual_fields() {
	sed -n 's/^[[:space:]]*field:\([^;]*\);.*/\1;/p' \
		"$tr/events/ib_mad/$1/format" | grep -v ' common_' | tr -d '\n'
}

check_formats() {
	local e bad=0

	for e in "${events[@]}"; do
		if [ ! -d "$tr/events/ib_mad/$e" ]; then
			echo "$e: no such event"
			bad=1
		elif [ "$(actual_fields "$e")" != "$(expected_fields "$e")" ]; then
			echo "$e: fields differ from upstream's:"
			echo "  have $(actual_fields "$e")"
			echo "  want $(expected_fields "$e")"
			bad=1
		fi
	done
	return $bad
}

set_events() {
	local e

	for e in "${events[@]}"; do
		echo "$1" >"$tr/events/ib_mad/$e/enable" || return 1
	done
}

# lines EVENT [ERE]: the trace lines of EVENT, optionally matching ERE.
lines() {
	grep -E " $1: ${2:-}" /tmp/trace.txt
}

# has EVENT ERE: EVENT fired at least once with a line matching ERE.
has() {
	grep -qE " $1: $2" /tmp/trace.txt
}

# hi_tids CLASS: hi_tid of each ib_mad_create_agent of CLASS, in order.
hi_tids() {
	lines ib_mad_create_agent "$idx:1 mad agent : hi_tid 0x[0-9a-f]+ class 0x$1 " |
		sed 's/.*hi_tid \(0x[0-9a-f]*\).*/\1/'
}

# point EVENT DESC CMD...: the test point of one event.
point() {
	local e=$1 desc=$2
	shift 2
	if "$@"; then
		tap_ok "$e: $desc"
	else
		tap_fail "$e: $desc"
		lines "$e" | head -n 5 | sed 's/^/# /'
	fi
}

ms_build_prog umad_getresp || ms_bail "build progs/umad_getresp.c"
[ -d "$tr/events" ] || mount -t tracefs nodev "$tr" ||
	ms_bail "mount tracefs"
ms_rxe_veth veth0 10.16.0.1/24 || ms_bail "rdma_rxe on veth0"
modprobe ib_umad
ms_wait 10 test -c /dev/infiniband/umad0 || ms_bail "/dev/infiniband/umad0"
idx=$(rdma dev show "$dev" | sed -n 's/^\([0-9]*\): .*/\1/p')

tap_plan 17
tap_check "the 13 upstream events exist with upstream's fields" check_formats

echo 8192 >"$tr/buffer_size_kb"
echo >"$tr/trace"
if ! set_events 1; then
	tap_fail "the 13 events enable by name"
else
	tap_ok "the 13 events enable by name"
fi

echo "# umad_getresp over GID index 0"
"$prog" -d $dev -p 1 -g 0 | sed 's/^/# /'
rc_getresp=${PIPESTATUS[0]}
# mad_core_kunit is ours: the pristine build (release *-upstream) has no
# such module, and its six points are "ours only" there.  On our build a
# module that is missing or fails to load fails them.
kunit=0 kunit_err=
case "$(uname -r)" in
*-upstream) kunit=none ;;
*)
	if kunit_err=$(modprobe mad_core_kunit 2>&1); then
		kunit=1
		rmmod mad_core_kunit
	fi
	;;
esac
set_events 0
cat "$tr/trace" >/tmp/trace.txt
echo >"$tr/trace"
echo "# $(grep -c ' ib_mad_' /tmp/trace.txt) ib_mad events recorded"

tap_check "umad_getresp passes with the events on" test "$rc_getresp" -eq 0

# umad_getresp registers the responder (class 0x32), then the requesters
# of classes 0x32 and 0x33; umad puts an agent's hi_tid in the top 32 bits
# of the TIDs it sends.
resp_tid=$(hi_tids 32 | sed -n 1p)
req_tid=$(hi_tids 32 | sed -n 2p)
req_hex=$(printf %x "${req_tid:-0}")
echo "# responder hi_tid $resp_tid, requester hi_tid $req_tid"

created_and_gone() {
	[ -n "$resp_tid" ] && [ -n "$req_tid" ] && [ -n "$(hi_tids 33)" ] &&
	[ "$(lines ib_mad_create_agent "$idx:1 .* class 0x3[23] " |
		sed 's/.*hi_tid \(0x[0-9a-f]*\).*/\1/' | sort)" = \
	  "$(lines ib_mad_unregister_agent "$idx:1 .* class 0x3[23] " |
		sed 's/.*hi_tid \(0x[0-9a-f]*\).*/\1/' | sort)" ]
}
point ib_mad_create_agent "responder and requesters of classes 0x32, 0x33" \
	test -n "$resp_tid" -a -n "$req_tid" -a -n "$(hi_tids 33)"
point ib_mad_unregister_agent "each agent created is unregistered" \
	created_and_gone

# The GET of TID 0x1001 (answered) and the three copies of the GET of
# TID 0x3003 to QP 0xabcde (2 retries, unanswered). rqpkey 0x80000000 is
# IB_QP_SET_QKEY, set by ib_create_send_mad(): use the QP's own Q_Key.
sent_get() {
	has ib_mad_ib_send_mad "$idx:1 QP1 agent [^ ]+: wrtid 0x${req_hex}00001001; 0/0 retries\(0\); timeout [1-9][0-9]* length 256 : hdr : base_ver 0x1 class 0x32 class_ver 0x1 method 0x1 status 0x0 class_specific 0x0 tid 0x${req_hex}00001001 attr_id 0xff20 attr_mod 0x0  => dlid 0x[0-9a-f]{8} sl 0 rpqn 0x1 rqpkey 0x80000000" &&
	[ "$(lines ib_mad_ib_send_mad ".*wrtid 0x[0-9a-f]*00003003; .* rpqn 0xabcde " |
		sed 's/.*wrtid [^ ]* \([0-9]\/[0-9]\) retries.*/\1/' | tr '\n' ' ')" = \
	  "2/2 1/2 0/2 " ]
}
point ib_mad_ib_send_mad "a GET, and a GET with its two retries" sent_get

point ib_mad_send_done_handler "the GET's work request completed" \
	has ib_mad_send_done_handler "$idx:1 QP1 : SEND WC Status 0 : agent [^ ]+: wrtid 0x${req_hex}00001001 0/0 retries\(0\) timeout [1-9][0-9]* length [0-9]+: hdr : base_ver 0x1 class 0x32 class_ver 0x1 method 0x1 status 0x0$"

# One ib_mad_send_done_agent per send completion, naming the sender.
done_agents() {
	[ "$(lines ib_mad_send_done_agent | wc -l)" -eq \
	  "$(lines ib_mad_send_done_handler | wc -l)" ] &&
	has ib_mad_send_done_agent "$idx:1 mad agent : hi_tid $req_tid class 0x32 "
}
point ib_mad_send_done_agent "one per completion, the requester among them" \
	done_agents

recv_get() {
	has ib_mad_recv_done_handler "$idx:1 QP1 : RECV WC Status 0 : length 296 : hdr : base_ver 0x01 class 0x32 class_ver 0x01 method 0x01 status 0x0000 class_specific 0x0000 tid 0x0*${req_hex}00001001 attr_id 0xff20 attr_mod 0x00000000 slid 0x[0-9a-f]{8} src QP1, sl 0$" &&
	has ib_mad_recv_done_handler ".* method 0x81 status 0x0000 class_specific 0x0000 tid 0x0*${req_hex}00001001 "
}
point ib_mad_recv_done_handler "the GET and its GET_RESP received" recv_get

recv_agents() {
	has ib_mad_recv_done_agent "$idx:1 mad agent : hi_tid $resp_tid class 0x32 " &&
	has ib_mad_recv_done_agent "$idx:1 mad agent : hi_tid $req_tid class 0x32 "
}
point ib_mad_recv_done_agent "the GET to the responder, the response to the requester" \
	recv_agents

# kpoint EVENT DESC CMD...: a point driven by mad_core_kunit: point on
# our build, a SKIP "ours only" with the same description on upstream's,
# a failure when the module did not load.
kpoint() {
	local e=$1 desc=$2

	case "$kunit" in
	1) point "$@" ;;
	none)
		MS_TAP_N=$((MS_TAP_N + 1))
		echo "ok $MS_TAP_N - $e: $desc # SKIP ours only: driven by our mad_core_kunit"
		;;
	*)
		tap_fail "$e: $desc (mad_core_kunit did not load)"
		echo "# modprobe mad_core_kunit: ${kunit_err:-failed}"
		;;
	esac
}

# mad_core_kunit on its fake port (device 0, QP1; see the suite):
# mad_test_qp_overflow's send of TID 21 waits on the overflow list,
# mad_test_qp_send_error's send of TID 23 is flushed after a send
# error and posted again; its directed-route SMPs.
kpoint ib_mad_send_done_resend "the send queued past the QP's depth" \
	has ib_mad_send_done_resend "0:1 QP1 agent [^ ]+: wrtid 0x15; 0/0 retries\(0\); timeout 0 length 256 : hdr : base_ver 0x1 class 0x81 class_ver 0x1 method 0x1 status 0x0 class_specific 0x0 tid 0x15 attr_id 0x0 attr_mod 0x0  => dlid 0x00000000 sl 0 rpqn 0x0 rqpkey 0x80000000$"
kpoint ib_mad_error_handler "the flushed send posted again" \
	has ib_mad_error_handler "0:1 QP1 agent [^ ]+: wrtid 0x17; 0/0 retries\(0\); timeout 0 length 256 : hdr : base_ver 0x1 class 0x81 class_ver 0x1 method 0x1 status 0x0 class_specific 0x0 tid 0x17 attr_id 0x0 attr_mod 0x0  => dlid 0x00000000 sl 0 rpqn 0x0 rqpkey 0x80000000$"
kpoint ib_mad_handle_out_ib_smi "the suite's SMPs, hop 0 of 0" \
	has ib_mad_handle_out_ib_smi "OPA SMP: hop_ptr 0 hop_cnt 0 mkey 0x0000000000000000 dr_slid 0x0000 dr_dlid 0x0000 initial_path 00"
kpoint ib_mad_handle_ib_smi "received SMP, wire fields in CPU order" \
	has ib_mad_handle_ib_smi "OPA SMP: hop_ptr 9 hop_cnt 5 mkey 0x0123456789abcdef dr_slid 0xffff dr_dlid 0x0042 initial_path 00 03 00"
kpoint ib_mad_handle_opa_smi "received OPA SMP, wire fields in CPU order" \
	has ib_mad_handle_opa_smi "OPA SMP: hop_ptr 9 hop_cnt 5 mkey 0x0123456789abcdef dr_slid 0xffffffff dr_dlid 0x00000042 initial_path 00 03 00"
kpoint ib_mad_handle_out_opa_smi "sent OPA SMP, wire fields in CPU order" \
	has ib_mad_handle_out_opa_smi "OPA SMP: hop_ptr 0 hop_cnt 0 mkey 0x0123456789abcdef dr_slid 0x00001234 dr_dlid 0x00005678 "

echo 1408 >"$tr/buffer_size_kb"
rdma link delete $dev
ip link del veth0
tap_check "ib_umad unloads" rmmod ib_umad
tap_done
