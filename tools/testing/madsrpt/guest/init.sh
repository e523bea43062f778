#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 of a test VM, started from the read-only 9p host root.  Builds a
# writable root (tmpfs overlay over the host root), points
# /lib/modules/<release> at the build's modules, then chroots into it and
# hands over to guest.sh, still as PID 1: module autoloading and every
# tool then see the new root.

PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs -o mode=0755 rwroot /mnt
mkdir -p /mnt/upper /mnt/work /mnt/root
if ! mount -t overlay overlay \
	-o lowerdir=/,upperdir=/mnt/upper,workdir=/mnt/work /mnt/root; then
	echo "init: cannot mount the overlay root" >/dev/console
	echo "MADSRPT-EXIT 1" >/dev/console
	echo b >/proc/sysrq-trigger
	sleep 30
fi

# The chroot gets its own /proc, /sys and /dev; keep nothing of ours.
root=/mnt/root
rm -rf "$root/usr/lib/modules/$ms_krel"
mkdir -p "$root/usr/lib/modules"
ln -s "$ms_mods/lib/modules/$ms_krel" "$root/usr/lib/modules/$ms_krel"

exec chroot "$root" /bin/bash "$ms_harness/guest/guest.sh"
