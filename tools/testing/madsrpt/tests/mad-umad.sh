#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# mad-umad: our MAD layer seen through ib_umad. progs/umad_getresp.c runs
# GET/GET_RESP exchanges between two agents over RoCE v2 with the port's
# IPv4-mapped GID (the case upstream 6.12 drops responses for) and with
# GID 0: TIDs, unsupported-method answers, timeouts after retries, a
# response to a retry, 50 outstanding requests, cancel on close. Then
# ib_umad's unload with an agent registered is refused, and removing the
# device with an agent registered is clean.  (ib_core's refusal is not
# tested: rdma_rxe's own references make it certain.)
# timeout: 600

. "$MS_HARNESS/guest/guest-lib.sh"

prog=/tmp/umad_getresp
dev=rxe-veth0
ms_build_prog umad_getresp || ms_bail "build progs/umad_getresp.c"
ms_rxe_veth veth0 10.14.0.1/24 || ms_bail "rdma_rxe on veth0"
modprobe ib_umad
ms_wait 10 test -c /dev/infiniband/umad0

# The GID index holding ::ffff:10.14.0.1 as a RoCE v2 GID.
v4idx=
for g in /sys/class/infiniband/$dev/ports/1/gids/*; do
	i=${g##*/}
	if grep -q "0000:0000:0000:0000:0000:ffff:0a0e:0001" "$g" 2>/dev/null &&
	   grep -q "RoCE v2" /sys/class/infiniband/$dev/ports/1/gid_attrs/types/$i 2>/dev/null; then
		v4idx=$i
		break
	fi
done

tap_plan 5
# Upstream 6.12 drops the IPv4-mapped responses: a claimed difference.
rc=0
if [ -n "$v4idx" ]; then
	echo "# RoCE v2 IPv4-mapped GID at index $v4idx"
	"$prog" -d $dev -p 1 -g "$v4idx" | sed 's/^/# /'
	[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
else
	echo "# no RoCE v2 IPv4-mapped GID found"
	rc=1
fi
[ $rc -eq 0 ] && tap_ok "umad_getresp over the IPv4-mapped GID [differs]" ||
	tap_fail "umad_getresp over the IPv4-mapped GID [differs]"
echo "# GID index 0"
rc=0
"$prog" -d $dev -p 1 -g 0 | sed 's/^/# /'
[ "${PIPESTATUS[0]}" -eq 0 ] || rc=1
[ $rc -eq 0 ] && tap_ok "umad_getresp over GID index 0" ||
	tap_fail "umad_getresp over GID index 0"

"$prog" -d $dev -p 1 hold 30 >/tmp/hold.out &
hold=$!
ms_wait 10 grep -q holding /tmp/hold.out
if rmmod ib_umad 2>/dev/null; then
	tap_fail "rmmod ib_umad refused while an agent is registered"
	modprobe ib_umad
else
	tap_ok "rmmod ib_umad refused while an agent is registered"
fi
# Device removal with the agent still registered.
tap_check "rxe device removed with an agent registered" \
	timeout 60 rdma link delete $dev
kill $hold 2>/dev/null
wait $hold 2>/dev/null
tap_check "ib_umad unloads once the agent is gone" rmmod ib_umad
tap_done
