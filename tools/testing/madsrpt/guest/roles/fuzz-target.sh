#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of mad-fuzz.sh, listening VM (10.17.0.1): the target.  rxe on
# the wire to the fuzzer, ib_srpt (whose DM agent the fuzzer aims at and
# probes) and the agents of progs/mad_fuzz.c "sink" on two vendor classes,
# one with kernel RMPP.  The fuzzer connects to port 7777 twice: "start"
# before its first MAD and "done" after its last probe was answered; this
# VM answers each with a snapshot of its MAD layer's counters (printed as
# "STATS-BEFORE" and "STATS-AFTER" lines for the host).  Then the sink
# reports what reached it, ib_srpt and rxe are unloaded, and guest.sh scans
# for leaks where the kernel has kmemleak.

. "$MS_HARNESS/guest/guest-lib.sh"

addr=10.17.0.1
dev=rxe-eth0
port=/sys/class/infiniband/$dev/ports/1
stats=/sys/kernel/debug/ib_mad/$dev-1/stats
dm_sup=$((1 << 19))	# IB_PORT_DEVICE_MGMT_SUP
fz=/tmp/mad_fuzz

tap_plan 9
tap_check "build mad_fuzz" ms_build_prog mad_fuzz
tap_check "rxe on eth0 ($addr), ib_umad" ms_rxe_wire $addr/24 umad

srpt() {
	modprobe ib_srpt || return 1
	[ $(($(cat $port/cap_mask) & dm_sup)) -ne 0 ] && [ -r $stats ]
}
tap_check "ib_srpt loaded, DM capability set, MAD counters in debugfs" srpt

$fz -d $dev sink >/tmp/sink.out 2>&1 &
sink=$!
tap_check "sink agents registered (vendor 0x30 with RMPP, vendor 0x09)" \
	ms_wait 20 grep -q '^# sink:' /tmp/sink.out

# The fuzzer's two calls; each answered once the counters are read.
timeout "${1:-3000}" python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", 7777))
s.listen(1)
def stats():
    with open(sys.argv[1]) as f:
        return " ".join("=".join(l.split()) for l in f if l.strip())
for tag in ("start", "done"):
    c, _ = s.accept()
    msg = c.recv(100).decode().strip()
    if msg != tag:
        print("# unexpected message %r" % msg)
        sys.exit(1)
    if tag == "done":
        time.sleep(2)   # answers and RMPP ACKs still on their way
    print("STATS-%s %s" % ("BEFORE" if tag == "start" else "AFTER", stats()))
    sys.stdout.flush()
    c.sendall(b"ok\n")
    c.close()
' $stats >/tmp/sync.out 2>&1
sync_rc=$?
cat /tmp/sync.out
if [ $sync_rc -eq 0 ] && [ "$(grep -c '^STATS-' /tmp/sync.out)" -eq 2 ]; then
	tap_ok "the fuzzer started and finished, counters read at both ends"
else
	tap_fail "the fuzzer started and finished (exit $sync_rc)"
fi

# Not through tap_check: wait needs the sink as a child of this shell.
kill -TERM $sink
wait $sink
sink_rc=$?
if [ $sink_rc -eq 0 ] && grep -q '^SINK ' /tmp/sink.out; then
	tap_ok "the sink exits cleanly on SIGTERM and reports"
else
	tap_fail "the sink exits cleanly on SIGTERM and reports (exit $sink_rc)"
fi
sed -n '/^SINK /p; /^# /p' /tmp/sink.out
counters=$(ms_mad_counters $dev) && echo "# MAD layer, $dev port 1: $counters"
dmesg | grep -iE 'srpt|mad' | tail -n 5 | sed 's/^/# dmesg: /'

unload() {
	modprobe -r ib_srpt || return 1
	[ $(($(cat $port/cap_mask) & dm_sup)) -eq 0 ]
}
tap_check "ib_srpt unloads and clears the DM capability" unload
tap_check "rdma link del $dev" rdma link del $dev
tap_check "rdma_rxe and ib_umad unload" modprobe -r rdma_rxe ib_umad
tap_done
