#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The target VM of `make demo`: soft-RoCE on the wire to the initiator VM,
# ib_srpt configured with targetcli-fb, then wait until the initiator says
# it is done and report what the target saw.

. "$MS_HARNESS/guest/guest-lib.sh"

say() { echo "[target] $*"; }
report() { echo "REPORT $*"; }
die() { say "FAILED: $*"; exit 1; }

addr=10.13.0.1
modprobe rdma_rxe && modprobe ib_umad && modprobe ib_srpt || die "loading modules"
ip link set eth0 up && ip addr add $addr/24 dev eth0 || die "eth0"
rdma link add rxe0 type rxe netdev eth0 || die "rdma link add"
ms_wait 20 ms_port_active rxe0 || die "rxe0 did not become ACTIVE"
gid=$(ms_gid0 rxe0)
say "rxe0 on eth0 ($addr), GID 0 $gid"

# What targetcli-fb needs: a system D-Bus, a writable HOME and /etc.
dbus-daemon --system --fork || die "dbus-daemon"
img=/tmp/demo-lun0.img
# The initiator's port: its MAC is fixed by the harness (52:54:00:4d:53:02),
# so its interface id is 5054:00ff:fe4d:5302 (EUI-64, U/L bit flipped).
acl=ib.0000000000000000505400fffe4d5302
tcli() {
	say "targetcli $*"
	targetcli "$@" >/tmp/tcli.out 2>&1 || { cat /tmp/tcli.out; return 1; }
}
tcli /backstores/fileio create name=demo file_or_dev=$img size=256M &&
tcli /srpt create ib.$gid &&
tcli /srpt/ib.$gid/luns create /backstores/fileio/demo &&
tcli /srpt/ib.$gid/acls create $acl || die "targetcli configuration"
# targetcli has no knob for the RDMA/CM listener: configfs it is.
echo 5555 >/sys/kernel/config/target/srpt/discovery_auth/rdma_cm_port ||
	die "rdma_cm_port"
say "RDMA/CM listener on port 5555"
targetcli ls 2>&1 | sed 's/^/    /'
report "target: srpt ib.$gid, fileio LUN demo (256 MiB), ACL $acl"
say "READY"

# The initiator reports back when it is finished.
msg=$(ms_await_report 900) || die "the initiator never reported back"
say "initiator says: $msg"

dmesg | grep 'ib_srpt: ' | tail -n 8 | sed 's/^/    dmesg: /'
login=$(dmesg | sed -n 's/.*ib_srpt: .*: logged in as .*, request IU \([0-9]*\) bytes$/\1/p' | tail -n 1)
chans=$(dmesg | grep -c 'ib_srpt: .*: logged in as ')
how=$(dmesg | sed -n 's/.*ib_srpt: .*: logged in as [^,]*, \([^;]*\);.*/\1/p' | tail -n 1)
report "login (target side): $chans channel(s), initiator IU $login bytes, $how"
counters=$(ms_mad_counters rxe0) || die "no MAD counters in debugfs: is this our MAD layer?"
report "MADs through our MAD layer (target rxe0 port 1): $counters"
tcli clearconfig confirm=True || die "targetcli clearconfig"
rmdir /sys/kernel/config/target/srpt 2>/dev/null
modprobe -r ib_srpt || die "unloading ib_srpt"
say "target torn down, ib_srpt unloaded"
[ "$msg" = "done ok" ]
