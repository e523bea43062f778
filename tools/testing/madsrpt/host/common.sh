# SPDX-License-Identifier: GPL-2.0
#
# Shared by the host-side scripts of the harness: paths, the machine-wide
# lock, stage timing, the overlay of our files and the glue lines.

MS_HARNESS=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MS_TOP=$(cd "$MS_HARNESS/../../.." && pwd)
MS_BUILD=${MS_BUILD:-$MS_TOP/build}
# How much longer a run on the debug kernel (KASAN, lockdep...) may take.
MS_DEBUG_SLOWDOWN=3
MS_JOBS=${MS_JOBS:-$(nproc)}
MS_LOCKFILE=${MS_LOCKFILE:-/tmp/madsrpt.lock}

ms_die() {
	echo "error: $*" >&2
	exit 1
}

# The kernel series we build against: 6.12 (Debian 12's bookworm-security
# and Debian 13) by default, or 7.2 (forky) with KSERIES=7.2.  Each series
# has its own source trees and object trees: build/linux and build/ours
# for 6.12 as ever, build/linux-7.2 and build/ours-7.2 (MS_SUFFIX) for 7.2,
# and its own logs.  Debian 12 has linux-source-6.12; forky's
# linux-source-7.2 is fetched once into MS_SRC_CACHE (ms_fetch_source).
MS_KSERIES=${KSERIES:-6.12}
MS_SRC_CACHE=${MS_SRC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/madsrpt}
case "$MS_KSERIES" in
6.12)
	MS_SUFFIX=
	MS_TARBALL=${MS_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
	;;
7.2)
	MS_SUFFIX=-7.2
	MS_TARBALL=${MS_TARBALL:-$MS_SRC_CACHE/linux-source-7.2.tar.xz}
	;;
*)
	ms_die "KSERIES=$MS_KSERIES: the kernel series are 6.12 and 7.2"
	;;
esac

# ms_fetch_source: put linux-source-$MS_KSERIES.tar.xz into MS_SRC_CACHE
# unless the host has it.  Forky's package comes through apt with a
# private state directory (the host's sources stay as they are), its
# Release signature checked with the host's Debian keyring; that suite's
# Release may be past its Valid-Until, which is a fact of the mirror.
ms_fetch_source() {
	local d deb
	[ ! -f "$MS_TARBALL" ] || return 0
	[ "$MS_KSERIES" != 6.12 ] ||
		ms_die "$MS_TARBALL is missing: apt install linux-source-6.12 (make deps)"
	d=$MS_SRC_CACHE/apt-forky
	mkdir -p "$d/lists/partial" "$d/cache" "$d/archives/partial"
	cat >"$d/sources.list" <<-EOF
		deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] ${MS_MIRROR:-http://deb.debian.org/debian} forky main
	EOF
	local apt=(apt-get -q -o Dir::Etc::SourceList="$d/sources.list"
		-o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$d/lists"
		-o Dir::Cache="$d/cache" -o Dir::Cache::Archives="$d/archives"
		-o Acquire::Check-Valid-Until=false -o Debug::NoLocking=1
		-o APT::Sandbox::User=root)
	echo "    fetching linux-source-$MS_KSERIES from forky"
	"${apt[@]}" update >/dev/null ||
		ms_die "apt-get update of forky failed (see $d)"
	(cd "$d/archives" && "${apt[@]}" download "linux-source-$MS_KSERIES" >/dev/null) ||
		ms_die "cannot download linux-source-$MS_KSERIES from forky"
	deb=$(find "$d/archives" -maxdepth 1 -name "linux-source-${MS_KSERIES}_*_all.deb" |
		sort -V | tail -n 1)
	[ -n "$deb" ] || ms_die "no linux-source-$MS_KSERIES package in $d/archives"
	rm -rf "$d/x"
	dpkg-deb -x "$deb" "$d/x"
	mv "$d/x/usr/src/linux-source-$MS_KSERIES.tar.xz" "$MS_TARBALL"
	dpkg-deb -f "$deb" Version >"$MS_TARBALL.version"
	rm -rf "$d/x"
}

# Builds and VMs share two cores: hold one machine-wide lock for either.
# Nested calls (check -> build) see MS_LOCKED and do not lock again.
ms_lock() {
	[ -n "${MS_LOCKED:-}" ] && return 0
	exec {MS_LOCK_FD}>"$MS_LOCKFILE"
	if ! flock -n "$MS_LOCK_FD"; then
		echo "waiting for $MS_LOCKFILE (another build or VM is running)"
		flock "$MS_LOCK_FD"
	fi
	export MS_LOCKED=1
}

MS_STAGE=
MS_STAGE_T0=0
ms_stage_start() {
	MS_STAGE=$1
	MS_STAGE_T0=$(date +%s)
	echo "==> $MS_STAGE"
}

ms_stage_end() {
	[ -n "$MS_STAGE" ] || return 0
	echo "    done in $(($(date +%s) - MS_STAGE_T0))s: $MS_STAGE"
	MS_STAGE=
}

# The files of ours that go into the kernel tree, as "repo-path tree-path".
# Only git-tracked files are laid over, so scratch files never reach a build.
# The top-level Kconfig and Kbuild carry our options and objects; they sit
# beside drivers/infiniband's own and are pulled in by the glue lines.
ms_overlay_list() {
	git -C "$MS_TOP" ls-files -- drivers include Documentation |
		while read -r f; do echo "$f $f"; done
	echo "Kconfig drivers/infiniband/Kconfig.madsrpt"
	echo "Kbuild drivers/infiniband/Kbuild.madsrpt"
}

# ms_overlay SRC: make SRC match the current overlay list.  Files that left
# the list since the last run get their upstream version back.
ms_overlay() {
	local src=$1 list=$1/.madsrpt-overlay new old stale=() from to
	new=$(ms_overlay_list | sort)
	old=$(sort "$list" 2>/dev/null || true)
	while read -r from to; do
		[ -n "$to" ] || continue
		if ! grep -qx "$from $to" <<<"$new"; then
			rm -f "$src/$to"
			stale+=("linux-source-$MS_KSERIES/$to")
		fi
	done <<<"$old"
	if [ ${#stale[@]} -gt 0 ]; then
		local tmp f
		echo "    restoring ${#stale[@]} upstream file(s)"
		tmp=$(mktemp -d "$MS_BUILD/restore.XXXXXX")
		# Files that upstream does not have are simply gone.
		tar -xJf "$MS_TARBALL" -C "$tmp" "${stale[@]}" 2>/dev/null || true
		for f in "${stale[@]}"; do
			[ -e "$tmp/$f" ] && mv -f "$tmp/$f" "$src/${f#*/}"
		done
		rm -rf "$tmp"
	fi
	while read -r from to; do
		if [ "$(readlink "$src/$to")" != "$MS_TOP/$from" ]; then
			mkdir -p "$(dirname "$src/$to")"
			ln -sfn "$MS_TOP/$from" "$src/$to"
			# make compares the target's mtime with the objects:
			# make sure a newly laid file is seen as changed.
			touch "$MS_TOP/$from"
		fi
	done <<<"$new"
	echo "$new" >"$list"
}

# ms_glue_line FILE MARKER LINE [BEFORE-REGEX]: add LINE (preceded by a
# comment naming MARKER) to FILE once, at the end or before the last line
# matching BEFORE-REGEX.
ms_glue_line() {
	local file=$1 marker=$2 line=$3 before=${4:-}
	grep -qF "# madsrpt-glue: $marker" "$file" && return 0
	if [ -n "$before" ]; then
		local n
		n=$(grep -n -- "$before" "$file" | tail -n 1 | cut -d: -f1)
		[ -n "$n" ] || ms_die "glue: '$before' not found in $file"
		sed -i "${n}i # madsrpt-glue: $marker\\n$line\\n" "$file"
	else
		printf '\n# madsrpt-glue: %s\n%s\n' "$marker" "$line" >>"$file"
	fi
}

# Every line this tree adds to upstream files; README lists the same lines.
ms_glue() {
	local src=$1
	ms_glue_line "$src/drivers/infiniband/Kconfig" "our Kconfig options" \
		'source "drivers/infiniband/Kconfig.madsrpt"' '^endif # INFINIBAND'
	ms_glue_line "$src/drivers/infiniband/Makefile" "our objects" \
		'include $(srctree)/drivers/infiniband/Kbuild.madsrpt'
	ms_glue_line "$src/drivers/infiniband/core/Makefile" "our MAD layer objects" \
		'include $(srctree)/drivers/infiniband/core/Makefile.mad'
}

# ms_verify_config CONFIG FRAGMENT...: fail when an option the fragments ask
# for did not make it into the final .config (a missing dependency).  A
# later fragment overrides an earlier one, as merge_config.sh does.
ms_verify_config() {
	local cfg=$1 bad=0 line opt val
	local -A want=()
	local -a order=()
	shift
	while read -r line; do
		case "$line" in CONFIG_*=*) ;; *) continue ;; esac
		opt=${line%%=*}
		[ -n "${want[$opt]+set}" ] || order+=("$opt")
		want[$opt]=${line#*=}
	done < <(cat "$@")
	for opt in "${order[@]}"; do
		val=${want[$opt]}
		if [ "$val" = n ]; then
			grep -q "^$opt=" "$cfg" && {
				echo "config: $opt should be off"
				bad=1
			}
		elif ! grep -qx "$opt=$val" "$cfg"; then
			echo "config: wanted $opt=$val, got: $(grep "^$opt=\|$opt is not" "$cfg" || echo absent)"
			bad=1
		fi
	done
	[ $bad -eq 0 ] || ms_die "kernel config does not match the fragments"
}

# The build that tests booting their own VMs use, the kernel under test:
# ours, debug under `make check-debug`, upstream under `make
# check-upstream` (check.sh sets it; rmpp-interop, which boots both
# kernels itself, always gets ours or debug).
MS_OURS=${MS_OURS:-ours}

# Which QEMU accelerator the VMs use.  A writable /dev/kvm is not enough:
# on some hosts QEMU aborts as soon as a vCPU starts under KVM ("failed to
# set MSR ... kvm_buf_set_msrs: Assertion ... failed").  So KVM is used
# only when a probe boot under it got as far as the guest kernel's banner,
# and the verdict is cached for this boot of the host.  MS_ACCEL=kvm or
# MS_ACCEL=tcg overrides the probe (MS_NO_KVM=1 is the same as tcg).
MS_QEMU=${MS_QEMU:-qemu-system-x86_64}
MS_KVM_DEV=${MS_KVM_DEV:-/dev/kvm}
MS_ACCEL_CACHE=${MS_ACCEL_CACHE:-/tmp/madsrpt-accel.$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo unknown)}

# ms_qemu_machine: the machine options every VM and the probe share.
ms_qemu_machine() {
	echo -nodefaults -no-reboot -display none -machine q35 -cpu max
}

# ms_accel_probe KERNEL: boot KERNEL under KVM alone until it prints its
# banner (it then panics for want of a root and QEMU exits).  Prints why
# KVM is unusable and fails, or succeeds silently.
ms_accel_probe() {
	local kernel=$1 con rc=0 why

	con=$(mktemp)
	# shellcheck disable=SC2046
	timeout -k 5 60 "$MS_QEMU" $(ms_qemu_machine) -m 256 -accel kvm \
		-kernel "$kernel" -serial "file:$con" \
		-append "console=ttyS0 panic=-1 root=/dev/madsrpt-probe" \
		</dev/null >/dev/null 2>"$con.err" || rc=$?
	if grep -q 'Linux version' "$con"; then
		rm -f "$con" "$con.err"
		return 0
	fi
	why=$(grep -v '^$' "$con.err" | head -n 1)
	[ "$rc" -ne 124 ] || why="no banner within 60 s"
	echo "KVM probe failed (exit $rc): ${why:-the guest printed nothing}"
	rm -f "$con" "$con.err"
	return 1
}

# ms_accel_pick KERNEL: set MS_ACCEL_USE (kvm or tcg) and MS_ACCEL_WHY.
# MS_ACCEL_FORCED is set when the user chose, so that no fallback applies.
ms_accel_pick() {
	local kernel=$1 verdict why

	MS_ACCEL_FORCED=
	if [ -n "${MS_ACCEL:-}" ]; then
		case "$MS_ACCEL" in
		kvm | tcg) ;;
		*) ms_die "MS_ACCEL must be kvm or tcg, not '$MS_ACCEL'" ;;
		esac
		MS_ACCEL_USE=$MS_ACCEL MS_ACCEL_WHY="MS_ACCEL=$MS_ACCEL"
		MS_ACCEL_FORCED=1
		return
	fi
	if [ -n "${MS_NO_KVM:-}" ]; then
		MS_ACCEL_USE=tcg MS_ACCEL_WHY="MS_NO_KVM is set" MS_ACCEL_FORCED=1
		return
	fi
	if [ ! -e "$MS_KVM_DEV" ] || [ ! -w "$MS_KVM_DEV" ]; then
		MS_ACCEL_USE=tcg MS_ACCEL_WHY="no writable $MS_KVM_DEV"
		return
	fi
	if [ -s "$MS_ACCEL_CACHE" ]; then
		{ read -r verdict; read -r why; } <"$MS_ACCEL_CACHE"
		if [ "$verdict" = kvm ] || [ "$verdict" = tcg ]; then
			MS_ACCEL_USE=$verdict
			MS_ACCEL_WHY="$why (cached in $MS_ACCEL_CACHE)"
			return
		fi
	fi
	if why=$(ms_accel_probe "$kernel"); then
		MS_ACCEL_USE=kvm MS_ACCEL_WHY="a probe boot under KVM worked"
	else
		MS_ACCEL_USE=tcg MS_ACCEL_WHY=$why
	fi
	ms_accel_remember "$MS_ACCEL_USE" "$MS_ACCEL_WHY"
}

# ms_accel_remember VERDICT WHY: cache a verdict for this boot of the host
# (written whole, so that two VMs starting at once never read half of it).
ms_accel_remember() {
	printf '%s\n%s\n' "$1" "$2" >"$MS_ACCEL_CACHE.$$" &&
		mv -f "$MS_ACCEL_CACHE.$$" "$MS_ACCEL_CACHE"
}

# What counts as a kernel splat on a console log.
MS_SPLAT_RE='(BUG:|WARNING:|Oops|general protection fault|KASAN:|UBSAN:|'
MS_SPLAT_RE+='INFO: task .* blocked|INFO: possible|INFO: trying to register|'
MS_SPLAT_RE+='possible circular locking|unreferenced object 0x|'
MS_SPLAT_RE+='suspected memory leak|Call Trace:|ODEBUG:|'
MS_SPLAT_RE+='Kernel panic|watchdog: BUG|rcu: INFO|list_add corruption|'
MS_SPLAT_RE+='list_del corruption|Tainted: )'

ms_splats() {
	grep -Eq "$MS_SPLAT_RE" "$1"
}

ms_splats_show() {
	grep -En -m 20 -A 12 "$MS_SPLAT_RE" "$1" | head -n 60
}

# ms_verify_overlay [OBJ]: fail unless the build tree holds every file of ours
# (as a link to this checkout) and every C file of ours was compiled, so a
# run never tests upstream code by mistake.  OBJ: build/ours by default.
ms_verify_overlay() {
	local src=$MS_BUILD/linux$MS_SUFFIX obj=${1:-$MS_BUILD/ours$MS_SUFFIX} from to bad=0
	while read -r from to; do
		if [ "$(readlink "$src/$to")" != "$MS_TOP/$from" ]; then
			echo "overlay: $to is not ours"
			bad=1
		elif [[ $to == drivers/*.c ]] && [ ! -f "$obj/${to%.c}.o" ]; then
			echo "overlay: $to was not compiled into the build"
			bad=1
		fi
	done < <(ms_overlay_list)
	[ $bad -eq 0 ] || ms_die "the build does not contain our files"
}

# ms_build_progs: build the test programs of progs/ into build/progs once,
# on the host, where the guests copy them from (guest-lib's ms_build_prog).
# A program that fails here is compiled in the guest, which reports why.
ms_build_progs() {
	"$MS_HARNESS/progs/build.sh" "$MS_BUILD/progs" ||
		echo "progs: some programs did not build on the host (the tests will say)"
}

# ms_verify_pristine OBJ: fail unless the upstream build in OBJ holds none
# of our code.  The first upstream build starts from a copy of our objects
# (see build.sh), so prove that every object compiled from a file we
# replace was rebuilt from upstream's version, and that no module it
# installs (modules.order) links an object only our tree has.
ms_verify_pristine() {
	local src=$MS_BUILD/linux$MS_SUFFIX-upstream obj=$1 from to linked bad=0
	linked=$(sed 's/\.o$/.mod/' "$obj/modules.order" | (cd "$obj" && xargs -r cat))
	while read -r from to; do
		if [ -L "$src/$to" ]; then
			echo "pristine: $to is a link to our tree"
			bad=1
		elif [[ $to == *.c ]] && [ -f "$src/$to" ] &&
		     [ -f "$obj/${to%.c}.o" ] &&
		     [ ! "$obj/${to%.c}.o" -nt "$src/$to" ]; then
			echo "pristine: ${to%.c}.o was not rebuilt from upstream"
			bad=1
		elif [[ $to == *.c ]] && [ ! -e "$src/$to" ] &&
		     grep -qxF "${to%.c}.o" <<<"$linked"; then
			echo "pristine: a module links ${to%.c}.o, which only we have"
			bad=1
		fi
	done < <(ms_overlay_list)
	[ $bad -eq 0 ] || ms_die "the upstream build holds objects of ours"
}

# Host-side TAP, for a test that judges what its VMs printed.
# ms_point RESULT DESC: the next point, RESULT being "ok" or "not ok"; a
# failure sets ms_status, which the test exits with.  ms_points counts the
# points printed.
ms_points=0
ms_status=0
ms_point() {
	ms_points=$((ms_points + 1))
	if [ "$1" = ok ]; then
		echo "ok $ms_points - $2"
	else
		echo "not ok $ms_points - $2"
		ms_status=1
	fi
}

# ms_verdict OUTPUT RC: "ok" when a VM's script printed points and passed
# every one, and the VM exited cleanly (RC 0: no kernel splat, no
# timeout); "not ok" otherwise.
ms_verdict() {
	local p f

	p=$(grep -c '^ok ' <<<"$1")
	f=$(grep -c '^not ok' <<<"$1")
	if [ "$2" -eq 0 ] && [ "$f" -eq 0 ] && [ "$p" -gt 0 ]; then
		echo ok
	else
		echo "not ok"
	fi
}

# ms_build_kmod K: build kmod/ (the in-kernel benchmark agent) out of tree
# against kernel K (ours or upstream, already built) into
# build/bench/kmod/<its kernel release>/, where the guest scripts look for
# it.  Fails when it does not build.
ms_build_kmod() {
	local kdir

	kdir=$MS_BUILD/bench/kmod/$(cat "$MS_BUILD/$1/kernelrelease")
	mkdir -p "$kdir"
	cp "$MS_HARNESS"/kmod/Kbuild "$MS_HARNESS"/kmod/*.c "$kdir/"
	make -s -C "$MS_BUILD/$1" M="$kdir" modules
}

# ms_kmod_vm NAME SECONDS ROLE [ARGS...]: the host half of a test whose VM
# loads kmod/.  Builds kmod/ against the kernel under test ($MS_OURS: ours,
# the detector kernel under `make check-debug`, the pristine one under
# `make check-upstream`), or prints a failed plan of one point
# and exits; prints a plan of one point, and runs guest/roles/ROLE ARGS in
# a VM of that kernel for at most SECONDS (vm.sh stretches that for the
# detector kernel), its console in build/logs/NAME-vm.console (check.sh
# writes the test's own output to NAME.console).  The guest's output is
# shown indented and left in $ms_vm_out, the VM's exit status in
# $ms_vm_rc, and $ms_vm_verdict is "ok" only if the VM exited cleanly and
# the guest passed every point of its plan.
ms_kmod_vm() {
	local name=$1 secs=$2 role=$3 log plan

	shift 3
	ms_lock
	ms_build_kmod "$MS_OURS" >"$MS_BUILD/logs/kmod-$MS_OURS.log" 2>&1 || {
		echo "1..1"
		echo "not ok 1 - build kmod/ against the $MS_OURS kernel (see build/logs/kmod-$MS_OURS.log)"
		exit 1
	}
	echo "TAP version 13"
	echo "1..1"
	log=$MS_BUILD/logs/$name-vm
	ms_vm_rc=0
	"$MS_HARNESS/host/vm.sh" -k "$MS_OURS" -t "$secs" -l "$log.console" \
		"$MS_HARNESS/guest/roles/$role" "$@" >/dev/null 2>&1 || ms_vm_rc=$?
	ms_vm_out=$(tr -d '\r' <"$log.console.out")
	sed 's/^/    /' <<<"$ms_vm_out"
	ms_vm_verdict=$(ms_verdict "$ms_vm_out" "$ms_vm_rc")
	plan=$(grep -m 1 -oE '^1\.\.[0-9]+' <<<"$ms_vm_out")
	[ -n "$plan" ] &&
		[ "$(grep -c '^ok ' <<<"$ms_vm_out")" -eq "${plan#1..}" ] ||
		ms_vm_verdict="not ok"
}

# ms_upstream_built: build pristine 6.12 (incrementally) for a host test
# that boots it; when that fails, print the one TAP point the test then
# consists of and fail.
ms_upstream_built() {
	"$MS_HARNESS/host/build.sh" upstream \
		>"$MS_BUILD/logs/build-upstream.log" 2>&1 && return 0
	echo "1..1"
	echo "not ok 1 - build the pristine 6.12 kernel (see build/logs/build-upstream.log)"
	return 1
}

# ms_vm_points LOG NPOINTS WHY SIDE:KERNEL...: the TAP points of the VMs of
# a multi-VM test, read from LOG-SIDE.console.out in the order given and
# numbered on in one plan as "ok N - SIDE (KERNEL): ...", everything else
# indented under them; when they printed fewer than NPOINTS points, the
# missing ones are failures saying WHY (the VMs' exit statuses).  Sets
# ms_vm_n (points printed) and ms_vm_status (1 if any point failed).
ms_vm_points() {
	local log=$1 npoints=$2 why=$3 side kern line ok

	shift 3
	ms_vm_n=0 ms_vm_status=0
	for side in "$@"; do
		kern=${side#*:} side=${side%%:*}
		while IFS= read -r line; do
			case "$line" in
			"ok "* | "not ok "*)
				ms_vm_n=$((ms_vm_n + 1))
				[ "${line%% *}" = ok ] || ms_vm_status=1
				ok=${line%%[0-9]*}
				echo "${ok}$ms_vm_n - $side ($kern):${line#*-}"
				;;
			"1.."* | "TAP version"*) ;;
			*) echo "    $line" ;;
			esac
		done < <(tr -d '\r' <"$log-$side.console.out")
	done
	while [ $ms_vm_n -lt "$npoints" ]; do
		ms_vm_n=$((ms_vm_n + 1))
		echo "not ok $ms_vm_n - a point the VMs did not reach ($why)"
		ms_vm_status=1
	done
}

# ms_rmpp_pair N SRV CLI PORT [ARGS...]: TAP point N, one RMPP run between
# two VMs joined by a wire on PORT: a VM of kernel SRV (ours or upstream)
# serves (guest/roles/rmpp-serve.sh ARGS), a VM of kernel CLI sends the
# requests (guest/roles/rmpp-client.sh ARGS).  The client's TAP becomes the
# point's subtest.  Returns 1 when the point failed.
#
# A run in which the pristine kernel's VM failed before its side of the
# test began (no "serving on" or "client on" line) is run once more, and
# says so: it tells nothing of RMPP, and what hung is not ours (seen once
# in CI: upstream's client VM hung for its whole timeout, with a splat,
# before it sent a request).  The first run's output stays in the point's
# output, and a VM of ours is never given a second run.
ms_rmpp_pair() {
	local n=$1 srv=$2 cli=$3 port=$4 name log out p f try file again=
	local rc srv_rc

	shift 4
	name="$srv serves $cli${*:+ ($*)}"
	log=$MS_BUILD/logs/rmpp-$srv-serves-$cli-$port
	for try in 1 2; do
		ms_rmpp_run "$srv" "$cli" "$port" "$log" "$@"
		out=$(tr -d '\r' <"$log-cli.console.out")
		sed 's/^/    /' <<<"$out"
		sed 's/^/    # server: /' < <(tr -d '\r' <"$log-srv.console.out")
		p=$(grep -c '^ok ' <<<"$out" || true)
		f=$(grep -c '^not ok' <<<"$out" || true)
		if [ "$rc" -eq 0 ] && [ "$srv_rc" -eq 0 ] && [ "$f" -eq 0 ] &&
		   [ "$p" -gt 0 ]; then
			echo "ok $n - $name: $p points passed$again"
			return 0
		fi
		[ "$try" = 1 ] && ms_rmpp_unstarted "$srv" "$cli" "$log" || break
		echo "    # the pristine kernel's VM failed before its side began:" \
			"run again (first run's logs: $log-*.try1.*)"
		for file in "$log"-srv.console "$log"-cli.console; do
			mv "$file" "${file%.console}.try1.console"
			mv "$file.out" "${file%.console}.try1.console.out"
		done
		again=" (second run)"
	done
	echo "not ok $n - $name: $p ok, $f not ok, client exit $rc, server exit $srv_rc"
	return 1
}

# ms_rmpp_run SRV CLI PORT LOG [ARGS...]: the two VMs of one ms_rmpp_pair
# run; their exit statuses in srv_rc and rc (the caller's locals), their
# outputs in LOG-srv.console.out and LOG-cli.console.out.
ms_rmpp_run() {
	local srv=$1 cli=$2 port=$3 log=$4 srv_pid

	shift 4
	rc=0 srv_rc=0
	"$MS_HARNESS/host/vm.sh" -k "$srv" -t 540 -n "listen:$port" \
		-l "$log-srv.console" "$MS_HARNESS/guest/roles/rmpp-serve.sh" "$@" \
		>/dev/null &
	srv_pid=$!
	sleep 5
	"$MS_HARNESS/host/vm.sh" -k "$cli" -t 480 -n "connect:$port" \
		-l "$log-cli.console" "$MS_HARNESS/guest/roles/rmpp-client.sh" "$@" \
		>/dev/null || rc=$?
	wait "$srv_pid" || srv_rc=$?
}

# ms_rmpp_unstarted SRV CLI LOG: true when a side run by the pristine kernel
# did not reach its part of the test in the run whose logs are LOG-*.
ms_rmpp_unstarted() {
	[ "$1" = upstream ] &&
		! grep -q ': serving on ' "$3-srv.console.out" && return 0
	[ "$2" = upstream ] &&
		! grep -q ': client on ' "$3-cli.console.out" && return 0
	return 1
}

# ms_distro_krel: the release of the distribution kernel that the installed
# linux-source-6.12 is the source of (6.12.118+deb12-amd64 for
# 6.12.118-1~deb12u1, 6.12.118+deb13-amd64 for 6.12.118-1,
# 6.12.115+deb13.1-amd64 for 6.12.115-2), derived, never hard-coded: the
# linux-headers-<krel> package whose installed, or else candidate, version
# is linux-source-6.12's.  MS_DISTRO_HDR_RE is the form of those package
# names, a Debian ABI of +debN or +debN.M (not the metapackages
# linux-headers-amd64 and linux-headers-6.12-amd64).
MS_DISTRO_HDR_RE='^linux-headers-[0-9.]+[+]deb[0-9]+([.][0-9]+)?-amd64$'
ms_distro_krel() {
	local want name ver names

	want=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null) ||
		ms_die "linux-source-6.12 is not installed (make deps)"
	[ -n "$want" ] || ms_die "linux-source-6.12 is not installed (make deps)"
	while read -r name ver; do
		[ "$ver" = "$want" ] || continue
		echo "${name#linux-headers-}"
		return 0
	done < <(dpkg-query -W -f='${Package} ${Version} ${db:Status-Abbrev}\n' \
			'linux-headers-*' 2>/dev/null |
		awk -v re="$MS_DISTRO_HDR_RE" '$3 ~ /^ii/ && $1 ~ re { print $1, $2 }')
	names=$(apt-cache search --names-only "$MS_DISTRO_HDR_RE" | cut -d' ' -f1)
	[ -n "$names" ] || ms_die "apt knows no linux-headers-*+deb*-amd64 (apt-get update?)"
	# shellcheck disable=SC2086
	while read -r name ver; do
		[ "$ver" = "$want" ] || continue
		echo "${name#linux-headers-}"
		return 0
	done < <(apt-cache policy $names |
		awk '/^[^ ]/ { sub(/:$/, ""); name = $1 }
		     $1 == "Candidate:" { print name, $2 }')
	ms_die "no linux-headers-*+deb*-amd64 package has version $want (linux-source-6.12's)"
}

# ms_distro_headers: install linux-headers-<ms_distro_krel> when its
# directory is missing, and print that directory.
ms_distro_headers() {
	local krel dir sudo=

	krel=$(ms_distro_krel) || exit 1
	dir=/usr/src/linux-headers-$krel
	if [ ! -f "$dir/Makefile" ]; then
		[ "$(id -u)" -eq 0 ] || sudo=sudo
		echo "installing linux-headers-$krel" >&2
		$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends "linux-headers-$krel" >&2 ||
			ms_die "apt-get install linux-headers-$krel failed"
		[ -f "$dir/Makefile" ] || ms_die "linux-headers-$krel did not install $dir"
	fi
	echo "$dir"
}
