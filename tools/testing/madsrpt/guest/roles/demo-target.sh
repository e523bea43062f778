#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The target VM of `make demo` (demo-target.sh DEB TARBALL), on the
# distribution's kernel: install our package as an administrator does,
# soft-RoCE on the wire to the initiator VM, ib_srpt configured with
# targetcli-fb, wait until the initiator says it is done and report what
# the target saw.  Then the InfiniBand path, on ibdevsim in this VM:
# opensm brings the fabric up, targetcli adds an srpt target on one HCA,
# srp_daemon on the other discovers it and logs ib_srp in over IB CM, fio
# verifies, logout.

. "$MS_HARNESS/guest/guest-lib.sh"

say() { echo "[target] $*"; }
report() { echo "REPORT $*"; }
die() { say "FAILED: $*"; exit 1; }

addr=10.13.0.1
say "dpkg -i $(basename "$1")"
ms_distro_install "$1" "$2" >/tmp/install.out 2>&1 || {
	cat /tmp/install.out
	die "installing the package"
}
sed -n 's/^/    /p' /tmp/install.out | grep -E "Loading|Installing|dkms|ib_" | head -n 12
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
for m in ib_core ib_srpt ib_umad ib_cm rdma_cm target_core_mod rdma_rxe; do
	report "target module $(ms_module_origin $m)"
done

# --- The InfiniBand path: ibdevsim, opensm, srp_daemon, IB CM. ---
say "InfiniBand: ibdevsim fabric (2 HCAs with 2 ports, an 8-port switch)"
ms_ibsim_fabric >/tmp/topo.out 2>&1 || { cat /tmp/topo.out; die "ibdevsim fabric"; }
ms_ibsim_opensm
ms_wait 180 ms_ibsim_all_active || die "opensm did not bring every port ACTIVE"
report "InfiniBand: opensm $(opensm --version 2>/dev/null | sed -n 's/^OpenSM //p' | head -n 1) brought 4 HCA ports ACTIVE"
ibnetdiscover -C ibdevsim0 -P 1 >/tmp/ibnd.out 2>&1 || die "ibnetdiscover"
report "InfiniBand: ibnetdiscover: $(grep -c '^Ca' /tmp/ibnd.out) HCAs, $(grep -c '^Switch' /tmp/ibnd.out) switch"
ibgid=fe800000000000000002c90300002001
ibacl=ib.00000000000000000002c90300001001
tcli /backstores/fileio create name=demo_ib file_or_dev=/tmp/demo-ib.img size=64M &&
tcli /srpt create ib.$ibgid &&
tcli /srpt/ib.$ibgid/luns create /backstores/fileio/demo_ib &&
tcli /srpt/ib.$ibgid/acls create $ibacl || die "targetcli configuration (IB)"
report "InfiniBand target: srpt ib.$ibgid (ibdevsim1 port 1), fileio LUN demo_ib (64 MiB), ACL $ibacl"
# ibdevsim has no fast memory registration.
modprobe ib_srp never_register=1 || die "ib_srp"
say "srp_daemon -o -c -i ibdevsim0 -p 1 (discovery through the SA and DM)"
ms_wait 60 sh -c "srp_daemon -o -c -i ibdevsim0 -p 1 2>/dev/null | grep -q dgid=$ibgid" ||
	die "srp_daemon did not find the target"
srp_daemon -o -c -i ibdevsim0 -p 1 2>/dev/null | sed 's/^/    /'
say "srp_daemon -e -o -i ibdevsim0 -p 1 (logs ib_srp in)"
srp_daemon -e -o -i ibdevsim0 -p 1 >/tmp/srpd.out 2>&1
ms_wait 60 ms_srp_disk || { cat /tmp/srpd.out; die "no SCSI disk after the IB login"; }
ibdisk=$(ms_srp_disk | head -n 1)
report "InfiniBand login: srp_daemon logged ib_srp in over IB CM, disk /dev/$ibdisk"
fio --name=ib --filename=/dev/$ibdisk --direct=1 --ioengine=libaio \
	--rw=randwrite --bs=64k --iodepth=16 --size=32M --verify=crc32c \
	--do_verify=1 --verify_fatal=1 --output-format=json \
	--output=/tmp/fio-ib.json >/tmp/fio-ib.err 2>&1 || {
	cat /tmp/fio-ib.err
	die "fio over InfiniBand failed or found corrupt data"
}
python3 - <<'PY' || die "reading fio's results"
import json
j = json.load(open("/tmp/fio-ib.json"))["jobs"][0]
w, r = j["write"], j["read"]
print("REPORT InfiniBand fio: write %.0f IOPS %.1f MB/s, verify read %.0f IOPS, errors %d; data verified"
      % (w["iops"], w["bw_bytes"] / 1e6, r["iops"], j["error"]))
PY
ms_srp_logout || die "IB logout"
report "MADs through our MAD layer (ibdevsim0 port 1, the initiator side): $(ms_mad_counters ibdevsim0)"
for m in ib_srp ibdevsim; do
	report "target module $(ms_module_origin $m)"
done
kill "$ms_sm_pid" 2>/dev/null

tcli clearconfig confirm=True || die "targetcli clearconfig"
rmdir /sys/kernel/config/target/srpt 2>/dev/null
modprobe -r ib_srp ib_srpt || die "unloading ib_srp and ib_srpt"
say "target torn down, ib_srpt unloaded"
[ "$msg" = "done ok" ]
