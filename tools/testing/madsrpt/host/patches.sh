#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# patches.sh - write our tree as a git format-patch series against Linux
# 6.12 into patches/, with a cover letter, then prove that `git am`
# applies it to a clean linux-source-6.12 tree.  MS_PATCHES_BUILD=1 also
# builds the patched tree (our test config) to prove that it compiles.
#
# The series is made by committing our files in groups, in an order in
# which each step builds: header, MAD layer, ib_srpt, tests and glue,
# documentation.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

out=$MS_TOP/patches
work=$MS_BUILD/patches-work
rm -rf "$work" "$out"
mkdir -p "$work"

ms_stage_start "extract a clean linux-source-6.12 and commit it as the base"
tar -xJf "$MS_TARBALL" -C "$work"
tree=$work/linux-source-6.12
git -C "$tree" init -q
git -C "$tree" add -f -A
git -C "$tree" -c user.name=base -c user.email=base@localhost \
	commit -qm "Linux $(make -s -C "$tree" kernelversion)"
base=$(git -C "$tree" rev-parse HEAD)
cp -a "$tree" "$work/clean"
ms_stage_end

# group SUBJECT PATTERN...: commit our files whose tree path matches one of
# the patterns (bash globs).
declare -A taken=()
group() {
	local subject=$1 body=$2 from to p hit=0
	shift 2
	while read -r from to; do
		[ -z "${taken[$to]:-}" ] || continue
		for p in "$@"; do
			# shellcheck disable=SC2053
			[[ $to == $p ]] || continue
			mkdir -p "$(dirname "$tree/$to")"
			cp "$MS_TOP/$from" "$tree/$to"
			git -C "$tree" add -f "$to"
			taken[$to]=1
			hit=1
			break
		done
	done < <(ms_overlay_list)
	[ $hit -eq 1 ] || return 0
	git -C "$tree" commit -q -s -m "$subject" -m "$body"
}

ms_stage_start "commit our files as a series"
group "RDMA/core: rewrite <rdma/ib_mad.h> with full kernel-doc" \
"The MAD API header, same names, types and layouts as before, with every
exported function and inline helper documented (context, return values,
ownership of buffers) and the wire structure sizes pinned with
static_assert." \
	include/rdma/ib_mad.h
group "RDMA/core: new MAD layer split by concern" \
"Agents and their registration tables, the send path with an explicit
state machine and O(1) lookup of outstanding sends, the receive path,
directed-route SMP handling, per-port QP0/QP1 setup, RMPP and trace
events, replacing mad.c, mad_rmpp.c, agent.c and smi.c." \
	'drivers/infiniband/core/mad*' 'drivers/infiniband/core/Makefile.mad' \
	'drivers/infiniband/core/agent*' 'drivers/infiniband/core/smi*' \
	'drivers/infiniband/core/opa_smi.h' include/trace/events/ib_mad.h
group "RDMA/srpt: new SRP target split by concern" \
"ib_srpt rewritten as one file per concern (DM MADs, CM and login,
channels, I/O path, LIO ops, configfs), same module name, parameters
and configfs tree, plus an rdma_cm_port parameter and an ACL info file
for targetcli's sessions view." \
	'drivers/infiniband/ulp/srpt/*'
group "RDMA: Kconfig options and objects of the MAD and SRP target tests" \
"KUnit suites for the MAD header helpers, the MAD core, RMPP and ib_srpt,
plus the Kconfig and Kbuild files that hold their options and objects,
sourced from drivers/infiniband." \
	'drivers/infiniband/Kconfig.madsrpt' 'drivers/infiniband/Kbuild.madsrpt' \
	'drivers/*'
group "Documentation/infiniband: MAD API guide, SRP target guide, testing" \
"Guides for kernel callers of the MAD API, for administrators of the SRP
target and for the VM test harness." \
	'Documentation/*' '*'
# The glue lines: the only edits to files that upstream has.
ms_glue "$tree"
git -C "$tree" add -f -A
git -C "$tree" commit -q -s -m "RDMA: hook the MAD layer and SRP target options into Kbuild" \
	-m "Source drivers/infiniband/Kconfig.madsrpt and include Kbuild.madsrpt
(and the MAD layer's object list) from the existing Makefiles."
ms_stage_end

ms_stage_start "git format-patch into patches/"
n=$(git -C "$tree" rev-list --count "$base..HEAD")
git -C "$tree" format-patch -q --cover-letter -o "$out" "$base..HEAD"
cover=$(ls "$out"/0000-cover-letter.patch)
python3 - "$cover" "$n" <<'PY'
import sys
path, n = sys.argv[1], sys.argv[2]
text = open(path).read()
text = text.replace("*** SUBJECT HERE ***",
                    "ib-mad-srpt: a new MAD layer and SRP target for 6.12")
text = text.replace("*** BLURB HERE ***", """\
This series replaces the InfiniBand MAD layer of ib_core and the ib_srpt
SCSI RDMA Protocol target with new implementations that keep the API,
wire formats, module names, parameters and configfs layout, split the
code by concern, document every exported function and add KUnit suites
and VM tests (soft-RoCE under QEMU).  The %s patches apply to Linux 6.12
in order; each builds.""" % n)
open(path, "w").write(text)
PY
ms_stage_end

ms_stage_start "git am the series onto a clean tree"
mapfile -t series < <(ls "$out"/*.patch | grep -v cover-letter)
git -C "$work/clean" -c user.name=check -c user.email=check@localhost \
	am -q "${series[@]}" || ms_die "the series does not apply"
# Same content, same tree object id: the series reproduces the tree.
[ "$(git -C "$work/clean" rev-parse 'HEAD^{tree}')" = \
  "$(git -C "$tree" rev-parse 'HEAD^{tree}')" ] ||
	ms_die "the applied series differs from the tree it was made from"
ms_stage_end

if [ -n "${MS_PATCHES_BUILD:-}" ]; then
	ms_lock
	ms_stage_start "build the patched tree"
	obj=$MS_BUILD/patches-obj
	mkdir -p "$obj"
	cp "$MS_BUILD/ours/.config" "$obj/.config"
	make -s -C "$work/clean" O="$obj" olddefconfig >/dev/null
	make -s -C "$work/clean" O="$obj" -j"$MS_JOBS" bzImage modules ||
		ms_die "the patched tree does not build"
	ms_stage_end
fi
echo "patches: $n patches and a cover letter in ${out#"$MS_TOP"/}/"
ls "$out" | sed 's/^/    /'
