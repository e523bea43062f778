#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The initiator VM of `make demo` (demo-initiator.sh DEB TARBALL), on the
# distribution's kernel: install our package as an administrator does,
# discover the target's Device Management profile with MADs (as
# srp_daemon does), log in with ib_srp over RDMA/CM, run fio with
# verification on the new disk, log out, tell the target.

. "$MS_HARNESS/guest/guest-lib.sh"

say() { echo "[initiator] $*"; }
report() { echo "REPORT $*"; }
taddr=10.13.0.1
status=failed

finish() {
	echo "done $status" >/dev/tcp/$taddr/7777 2>/dev/null
	[ "$status" = ok ]
	exit
}
die() { say "FAILED: $*"; finish; }

say "dpkg -i $(basename "$1")"
ms_distro_install "$1" "$2" >/tmp/install.out 2>&1 || {
	cat /tmp/install.out
	die "installing the package"
}
modprobe rdma_rxe && modprobe ib_umad && modprobe ib_srp || die "loading modules"
for m in ib_core ib_umad ib_cm rdma_cm ib_srp rdma_rxe; do
	report "initiator module $(ms_module_origin $m)"
done
ip link set eth0 up && ip addr add 10.13.0.2/24 dev eth0 || die "eth0"
rdma link add rxe0 type rxe netdev eth0 || die "rdma link add"
ms_wait 20 ms_port_active rxe0 || die "rxe0 did not become ACTIVE"
# The target's MAC is fixed by the harness: its link-local GID follows.
tgid=fe80::5054:ff:fe4d:5301
say "rxe0 on eth0 (10.13.0.2); target port GID $tgid"

dmq=$MS_TOP/build/progs/dm_query
say "DM discovery: ClassPortInfo, IOUnitInfo, IOControllerProfile, ServiceEntries"
ms_wait 180 "$dmq" -d rxe0 -g $tgid profile || die "no DM answer from the target"
"$dmq" -d rxe0 -g $tgid profile >/tmp/profile || die "DM discovery"
sed 's/^/    /' /tmp/profile
ioc=$(sed -n 's/.*ioc_guid=\([0-9a-f]*\).*/\1/p' /tmp/profile | head -n 1)
sid=$(sed -n 's/.*service 0: name="SRP.T10:\([0-9a-fA-F]*\)" id=\([0-9a-f]*\)/\2/p' /tmp/profile)
[ -n "$ioc" ] && [ -n "$sid" ] || die "the profile has no SRP service"
report "DM profile: IOC GUID $ioc, SRP service id $sid ($(grep -c 'service ' /tmp/profile) service entries)"

host=$(ls /sys/class/infiniband_srp/ | head -n 1)
login() {
	echo "id_ext=$sid,ioc_guid=$ioc,dest=$taddr:5555" \
		>/sys/class/infiniband_srp/$host/add_target 2>/dev/null
}
say "logging in: id_ext=$sid,ioc_guid=$ioc,dest=$taddr:5555"
# The target may still be configuring itself: retry until it accepts.
ms_wait 120 login || die "login refused (see the consoles)"
ms_wait 30 ms_srp_disk || die "no SCSI disk after login"
disk=$(ms_srp_disk)
lsblk -o NAME,SIZE,VENDOR,MODEL,TRAN "/dev/$disk" | sed 's/^/    /'
shost=$(ls -d /sys/class/scsi_host/host*/ | while read -r h; do
	[ -f "$h/req_lim" ] && echo "$h"; done | head -n 1)
report "login: disk /dev/$disk, channels $(cat "$shost/ch_count"), req_lim $(cat "$shost/req_lim"), cmd_sg_entries $(cat "$shost/cmd_sg_entries"), allow_ext_sg $(cat "$shost/allow_ext_sg")"
dmesg | grep -iE 'srp|immediate' | tail -n 6 | sed 's/^/    dmesg: /'

say "fio: 64 KiB random writes, queue depth 16, crc32c verification"
fio --name=demo --filename=/dev/$disk --direct=1 --ioengine=libaio \
	--rw=randwrite --bs=64k --iodepth=16 --size=64M --verify=crc32c \
	--do_verify=1 --verify_fatal=1 --output-format=json \
	--output=/tmp/fio.json >/tmp/fio.err 2>&1 || {
	cat /tmp/fio.err
	die "fio failed or found corrupt data"
}
python3 - <<'PY' || die "reading fio's results"
import json
j = json.load(open("/tmp/fio.json"))["jobs"][0]
w, r = j["write"], j["read"]
print("REPORT fio: write %.0f IOPS %.1f MB/s, verify read %.0f IOPS %.1f MB/s, errors %d; data verified"
      % (w["iops"], w["bw_bytes"] / 1e6, r["iops"], r["bw_bytes"] / 1e6, j["error"]))
PY

for p in /sys/class/srp_remote_ports/*; do
	echo 1 >"$p/delete"
done
ms_wait 30 sh -c "! ls /sys/class/srp_remote_ports/* >/dev/null 2>&1" ||
	die "logout"
say "logged out"
counters=$(ms_mad_counters rxe0) || die "no MAD counters in debugfs: is this our MAD layer?"
report "MADs through our MAD layer (initiator rxe0 port 1): $counters"
status=ok
finish
