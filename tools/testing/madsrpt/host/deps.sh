#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install, from Debian's packages, whatever the build, the VM tests and the
# demo need (deps.sh bench: and the benchmarks) and the machine does not
# have yet.  Does nothing when all of it is present, so every make target
# can call it first.

set -euo pipefail

pkgs=(
	linux-source-6.12 gcc make flex bison bc libelf-dev libssl-dev
	cpio xz-utils kmod qemu-system-x86 busybox-static sparse iproute2
	rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
	infiniband-diags opensm
	srptools dkms openssl
	libibumad-dev libibverbs-dev librdmacm-dev targetcli-fb fio
	sg3-utils dbus python3 python3-docutils util-linux procps
	multipath-tools dmsetup git perl
)

# `make bench` also draws its plots, and profiles with perf (MS_BENCH_PERF).
[ "${1:-}" != bench ] || pkgs+=(python3-matplotlib linux-perf)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}"
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q >/dev/null
# multipath-tools and targetcli pull in services; we never start them on
# the host, the VM tests start what they need inside the guest.
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
echo "deps: done"
