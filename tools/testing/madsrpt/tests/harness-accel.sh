#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# harness-accel: vm.sh picks an accelerator that really runs a guest.
#
# Runs on the host.  A fake qemu-system-x86_64 in front of the real one
# plays a host whose /dev/kvm is writable but whose KVM aborts the moment
# a vCPU starts (the "failed to set MSR" assertion seen on some machines),
# or a host whose KVM works (it then runs the guest under TCG).  A trivial
# guest script is booted with our kernel each time, and the fake's log of
# the accelerators it was asked for shows what vm.sh did: probe, cache,
# fallback when QEMU dies under KVM before the guest prints anything, and
# the MS_ACCEL / MS_NO_KVM overrides.  Last, a guest script that hangs:
# the run times out, and the output carries the guest watchdog's report
# of what was still running (guest.sh), which is what a hang in CI leaves
# to go on.  The first eight boots run in two lanes at once (one
# single-CPU guest each, their own files and accelerator cache), the hang
# alone after them.
# runs-on: host
# timeout: 600

set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/host/common.sh"

ms_lock
work=$MS_BUILD/harness-accel
rm -rf "$work"
mkdir -p "$work"

real_qemu=$(command -v qemu-system-x86_64) || ms_die "no qemu-system-x86_64"
cat >"$work/qemu" <<EOF
#!/bin/bash
# Fake QEMU: FAKE_KVM=broken aborts under KVM as a broken host does;
# FAKE_KVM=works runs a KVM guest under TCG instead.
accel= prev=
args=()
for a in "\$@"; do
	if [ "\$prev" = -accel ]; then
		accel=\$a
		[ "\$FAKE_KVM" = works ] && a=tcg
	fi
	args+=("\$a")
	prev=\$a
done
echo "\$accel" >>"\$FAKE_ACCELS"
if [ "\$accel" = kvm ] && [ "\$FAKE_KVM" = broken ]; then
	echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2
	echo "qemu-system-x86_64: ../../target/i386/kvm/kvm.c:3183: kvm_buf_set_msrs: Assertion \\\`ret == cpu->kvm_msr_buf->nmsrs' failed." >&2
	kill -ABRT \$\$
fi
exec "$real_qemu" "\${args[@]}"
EOF
chmod +x "$work/qemu"
cat >"$work/guest.sh" <<'EOF'
echo "ok - the guest ran"
EOF
cat >"$work/hang.sh" <<'EOF'
echo "# hanging"
sleep 86400
EOF
: >"$work/kvm"

# vmrun LANE ENV...: boot the trivial guest (or $script, with a timeout
# of $tmo) through vm.sh with the fake QEMU, its files in the directory
# LANE (accelerator cache included); vm.sh's status in $rc, its messages
# in LANE/err, the accelerators asked for in $accels (space separated).
# Two lanes run at once, each booting one single-CPU guest at a time.
script=$work/guest.sh tmo=120
vmrun() {
	local lane=$1

	shift
	mkdir -p "$lane"
	: >"$lane/accels"
	rc=0
	env -u MS_ACCEL -u MS_NO_KVM MS_QEMU="$work/qemu" \
		FAKE_ACCELS="$lane/accels" MS_KVM_DEV="$work/kvm" \
		MS_ACCEL_CACHE="$lane/cache" "$@" \
		"$here/host/vm.sh" -k "$MS_OURS" -t "$tmo" -m 512 -c 1 \
		-l "$lane/console" "$script" >"$lane/out" 2>"$lane/err" || rc=$?
	accels=$(tr '\n' ' ' <"$lane/accels")
	accels=${accels% }
	last=$lane
}

# point N DESC CONDITION...: one TAP point, into $work/point.N (printed in
# order at the end); on failure, what vm.sh said.
point() {
	local n=$1 desc=$2
	shift 2
	if "$@"; then
		echo "ok $n - $desc"
	else
		echo "not ok $n - $desc"
		echo "# vm.sh exit $rc, accelerators asked for: '$accels'"
		sed 's/^/# /' "$last/err" | tail -n 8
	fi >"$work/point.$n"
}

said() {
	grep -q "$1" "$last/err"
}

guest_ran() {
	[ "$rc" -eq 0 ] && grep -q 'ok - the guest ran' "$last/out"
}

cached() {
	[ "$(head -n 1 "$last/cache" 2>/dev/null)" = "$1" ]
}

echo "TAP version 13"
echo "1..9"

lane_a() {
	local a=$work/a
	vmrun "$a" env FAKE_KVM=broken
	point 1 "broken KVM: the probe fails, the guest runs under TCG, verdict cached" \
		eval 'guest_ran && [ "$accels" = "kvm tcg" ] && said "accelerator tcg (KVM probe failed" && cached tcg'

	vmrun "$a" env FAKE_KVM=broken
	point 2 "broken KVM again: the cached verdict is used, no second probe" \
		eval 'guest_ran && [ "$accels" = tcg ] && said "cached in"'

	rm -f "$a/cache"
	vmrun "$a" env FAKE_KVM=works
	point 4 "working KVM: the probe boots, the guest runs under KVM" \
		eval 'guest_ran && [ "$accels" = "kvm kvm" ] && said "accelerator kvm (a probe boot" && cached kvm'
}

lane_b() {
	local b=$work/b
	mkdir -p "$b"
	printf 'kvm\nstale verdict\n' >"$b/cache"
	vmrun "$b" env FAKE_KVM=broken
	point 3 "KVM believed good but QEMU dies under it: fallback to TCG, cache corrected" \
		eval 'guest_ran && [ "$accels" = "kvm tcg" ] && said "falling back to TCG" && cached tcg'

	rm -f "$b/cache"
	vmrun "$b" env FAKE_KVM=broken MS_ACCEL=tcg
	point 5 "MS_ACCEL=tcg: no probe, TCG" \
		eval 'guest_ran && [ "$accels" = tcg ] && said "accelerator tcg (MS_ACCEL=tcg)"'

	vmrun "$b" env FAKE_KVM=broken MS_KVM_DEV=/nonexistent/kvm
	point 6 "no /dev/kvm: TCG without a probe" \
		eval 'guest_ran && [ "$accels" = tcg ] && said "no writable /nonexistent/kvm"'

	vmrun "$b" env FAKE_KVM=broken MS_ACCEL=kvm
	point 7 "MS_ACCEL=kvm on a broken host: honoured, the run fails, no fallback" \
		eval '[ "$rc" -ne 0 ] && [ "$accels" = kvm ] && ! said "falling back"'

	tmo=60
	vmrun "$b" env FAKE_KVM=broken MS_ACCEL=tcg
	point 8 "a guest that ends before its timeout has no watchdog report" \
		eval 'guest_ran && ! grep -q MADSRPT-WATCHDOG "$last/console"'
}

lane_a &
lane_b
wait

# Alone, so that the guest boots in time for its watchdog: it reports
# 30 s before the end, and 45 s leaves it time.
script=$work/hang.sh tmo=45
# vm.sh stretches the timeout of the detector kernel (make check-debug).
waited=$tmo
[ "$MS_OURS" != debug ] || waited=$((tmo * MS_DEBUG_SLOWDOWN))
export waited	# read by point 9's eval
vmrun "$work/c" env FAKE_KVM=broken MS_ACCEL=tcg
point 9 "a hung guest script: timed out, the watchdog shows it still sleeping" \
	eval '[ "$rc" -ne 0 ] && grep -q "^not ok - hang: timed out after ${waited}s" "$last/console.out" &&
	      grep -q "^#   MADSRPT-WATCHDOG: the test still runs" "$last/console.out" &&
	      grep -q "^#  .* sleep 86400$" "$last/console.out" &&
	      grep -q "^#  .*Show Blocked State" "$last/console.out"'
if ! grep -q "^#   MADSRPT-WATCHDOG" "$last/console.out"; then
	{
		echo "# the hung run's output:"
		sed 's/^/# /' "$last/console.out" | tail -n 20
	} >>"$work/point.9"
fi
for n in 1 2 3 4 5 6 7 8 9; do
	cat "$work/point.$n" 2>/dev/null || echo "not ok $n - no verdict (the lane did not reach it)"
done
