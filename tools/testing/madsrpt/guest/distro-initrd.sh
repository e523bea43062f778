#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the initramfs for the distribution's kernel (host/distro.sh):
# that kernel has 9p and overlayfs as modules, so load them (its own
# modules, in modprobe's order), mount the host root as our own test
# kernels do (vm.sh: tag /dev/root) and hand over to the harness's init
# (the init= of the command line) with the ms_* variables the kernel put
# in our environment.

/bin/busybox mkdir -p /proc /dev /newroot
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t devtmpfs devtmpfs /dev
for m in $(/bin/busybox cat /mods/order); do
	/bin/busybox insmod "/mods/$m" || echo "initrd: insmod $m failed" >/dev/console
done
# The 9p options are vm.sh's rootflags= (msize, cache), as for our kernels.
flags=$(/bin/busybox sed -n 's/.*[[:space:]]rootflags=\([^[:space:]]*\).*/\1/p' /proc/cmdline)
if ! /bin/busybox mount -t 9p -o "ro,${flags:-trans=virtio,version=9p2000.L}" \
	/dev/root /newroot; then
	echo "initrd: cannot mount the host root" >/dev/console
	echo "MADSRPT-EXIT 1" >/dev/console
	echo b >/proc/sysrq-trigger
fi
init=$(/bin/busybox sed -n 's/.*[[:space:]]init=\([^[:space:]]*\).*/\1/p' /proc/cmdline)
/bin/busybox umount /dev
/bin/busybox umount /proc
exec /bin/busybox switch_root /newroot "$init"
