#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# PID 1 inside the overlay root: mounts the usual filesystems, runs the test
# script with its output on the second serial port (ttyS1) and reports the
# exit status on the console, where the host looks for it, then powers off.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM=dumb LANG=C.UTF-8

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
# Fresh scratch directories, except the one the checkout lives in (a CI
# clone under /tmp, say): the overlay keeps that one writable anyway.
for d in /tmp /var/tmp /root; do
	case "$ms_harness/" in
	"$d"/*) ;;
	*) mount -t tmpfs tmpfs "$d" ;;
	esac
done
mount -t debugfs debugfs /sys/kernel/debug
# A distribution kernel has as modules what ours has built in: configfs,
# the drivers of the VM's devices (virtio-net...) and SCSI disks, which
# udev, not run in the guest, would load.  So load the drivers that the
# devices present ask for, as udev's coldplug does, and sd_mod for the
# disks that SRP logins add later.
[ -d /sys/kernel/config ] || modprobe configfs 2>/dev/null
cat /sys/bus/pci/devices/*/modalias /sys/bus/virtio/devices/*/modalias 2>/dev/null |
	sort -u | xargs -r modprobe -qa 2>/dev/null
modprobe -q sd_mod 2>/dev/null
mount -t configfs configfs /sys/kernel/config
mkdir -p /run/lock /run/dbus
hostname madsrpt-vm
ip link set lo up
echo 1 >/proc/sys/kernel/sysrq
# The host tools' defaults (modprobe.d, multipath, rtslib) stay as they
# are; /etc is writable through the overlay for what the tests change.

# Leaks: on a kmemleak kernel, forget what boot left behind now and scan
# once the test is over; what the scan finds goes to the console, where
# vm.sh counts it as a splat.
kmemleak=/sys/kernel/debug/kmemleak
[ -w $kmemleak ] && echo clear >$kmemleak

finish() {
	if [ -w $kmemleak ]; then
		echo scan >$kmemleak
		cat $kmemleak >/dev/console
	fi
	sync
	echo "MADSRPT-EXIT $1" >/dev/console
	# The UARTs send asynchronously: the reset must wait until the last
	# line has left (under load it was lost without waiting).  tcdrain()
	# returns once a port's transmitter is empty; a fixed 2 s pause cost
	# every VM 2 s.
	perl -MPOSIX -e 'for (@ARGV) { open(my $t, ">", $_) or exit 1;
		POSIX::tcdrain(fileno($t)) or exit 1 }' /dev/ttyS0 /dev/ttyS1 \
		2>/dev/null || sleep 2
	# No ACPI to power off with: reboot, and QEMU (-no-reboot) exits.
	echo b >/proc/sysrq-trigger
	sleep 60
}

if [ -n "$ms_interactive" ]; then
	echo "madsrpt VM: kernel $(uname -r), modules from $ms_mods"
	echo "harness: $ms_harness; 'poweroff -f' or Ctrl-A X to leave"
	setsid -c /bin/bash -l </dev/ttyS0 >/dev/ttyS0 2>&1
	finish 0
fi

export MS_HARNESS=$ms_harness MS_MODS=$ms_mods MS_PROGS=${ms_progs:-}
stty -F /dev/ttyS1 raw -echo 2>/dev/null
cd /tmp || finish 1

# A hang's post-mortem: a little before the host gives up on this boot
# (ms_timeout, counted from QEMU's start), put on the console what is
# still running and where each task in uninterruptible sleep waits, so
# that a timeout in CI names the step that hung.  vm.sh copies this part
# of the console into the test's output.
watchdog() {
	local margin=$((ms_timeout / 10)) up

	[ "$margin" -ge 30 ] || margin=30
	up=$(cut -d. -f1 /proc/uptime)
	[ "$ms_timeout" -gt $((margin + up)) ] || return 0
	sleep $((ms_timeout - margin - up))
	{
		echo "MADSRPT-WATCHDOG: the test still runs after $((ms_timeout - margin))s of ${ms_timeout}s; its processes:"
		ps -ww --ppid 2 -p 2 --deselect -o pid,ppid,stat,etimes,wchan:28,args
		echo "MADSRPT-WATCHDOG: tasks in uninterruptible sleep (sysrq w):"
	} >/dev/console 2>&1
	echo w >/proc/sysrq-trigger
}
[ -z "${ms_timeout:-}" ] || watchdog &
# shellcheck disable=SC2086
bash "$ms_script" ${ms_args//,/ } >/dev/ttyS1 2>&1
finish $?
