#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# smoke: the VM boots, rdma_rxe attaches to a veth, the port goes ACTIVE,
# the umad device node appears, and ib_core is the module our build made.
# timeout: 300

. "$MS_HARNESS/guest/guest-lib.sh"

tap_plan 6
tap_check "kernel $(uname -r) booted with modules from the build" \
	test -d "/lib/modules/$(uname -r)/kernel"
tap_check "rdma_rxe attaches to veth0" ms_rxe_veth veth0 10.11.0.1/24
tap_check "rxe-veth0 port 1 is ACTIVE" ms_port_active rxe-veth0
modprobe ib_umad
tap_check "/dev/infiniband/umad0 exists" ms_wait 10 test -c /dev/infiniband/umad0
same_module() {
	local loaded built
	loaded=$(cat "/sys/module/$1/srcversion") || return 1
	built=$(modinfo -F srcversion "$1") || return 1
	echo "loaded $loaded, built $built"
	[ -n "$built" ] && [ "$loaded" = "$built" ]
}
tap_check "ib_core loaded is the one built" same_module ib_core
tap_check "rxe-veth0 removed" rdma link delete rxe-veth0
tap_done
