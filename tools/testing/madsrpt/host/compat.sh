#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# compat.sh - build every in-tree user of the MAD API against our tree in
# its own object directory, and fail on any error or on any warning that
# the same build of pristine 6.12 lacks (built only when ours warns).

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

ms_lock
# The trees themselves (extract, overlay, glue) come from the normal builds.
"$here/build.sh" ours >/dev/null

# Where the MAD API's users live; their objects are rebuilt on every run.
dirs=(drivers/infiniband net/rds net/sunrpc/xprtrdma drivers/nvme/target
      drivers/net/ethernet/mellanox/mlx4)

compat_build() {
	local src=$1 obj=$2 frag=$3
	mkdir -p "$obj"
	if [ ! -f "$obj/.config" ] || [ "$MS_HARNESS/config/compat" -nt "$obj/.config" ]; then
		make -s -C "$src" O="$obj" tinyconfig >/dev/null
		(cd "$obj" && "$src/scripts/kconfig/merge_config.sh" -m -O "$obj" \
			.config "$MS_HARNESS/config/base" "$frag" "$MS_HARNESS/config/compat" >/dev/null)
		make -s -C "$src" O="$obj" olddefconfig >/dev/null
		ms_verify_config "$obj/.config" "$MS_HARNESS/config/compat"
	fi
	make -s -C "$src" O="$obj" -j"$MS_JOBS" prepare >/dev/null
	# Rebuild the users from clean objects so every warning shows again;
	# modpost then checks every symbol they take from ib_core.
	for d in "${dirs[@]}"; do
		[ -d "$obj/$d" ] && find "$obj/$d" -name '*.o' -delete
	done
	# modpost says ERROR:, make only its exit status.
	make -C "$src" O="$obj" -j"$MS_JOBS" -k bzImage modules \
		>"$obj/compat.log" 2>&1 ||
		echo "error: the build failed (see ${obj#"$MS_TOP"/}/compat.log)"
	{ grep -E '(warning|error):|ERROR:' "$obj/compat.log" || true; } |
		sed "s|$src/||" | sort -u
}

ms_stage_start "compat: MAD API users against our tree"
ours=$(compat_build "$MS_BUILD/linux" "$MS_BUILD/compat-ours" "$MS_HARNESS/config/ours")
ms_stage_end
errors=$(grep -E 'error:|ERROR:' <<<"$ours" || true)
built=$(find "$MS_BUILD/compat-ours" -name '*.ko' | wc -l)
if grep -q 'warning:' <<<"$ours"; then
	# Only warnings pristine 6.12 does not also give count.
	[ -f "$MS_BUILD/linux-upstream/.extracted" ] ||
		"$here/build.sh" upstream >/dev/null
	ms_stage_start "compat: the same against pristine 6.12"
	up=$(compat_build "$MS_BUILD/linux-upstream" "$MS_BUILD/compat-upstream" \
		"$MS_HARNESS/config/upstream")
	ms_stage_end
	new=$(comm -23 <(grep -E 'warning:' <<<"$ours" | sort -u) \
		       <(grep -E 'warning:' <<<"$up" | sort -u || true))
else
	new=
fi
echo "compat: $built modules built against our tree, $(grep -c 'warning:' <<<"$ours" || true) warning(s)"
[ -z "$errors" ] || { echo "compat: errors:"; echo "$errors"; }
[ -z "$new" ] || { echo "compat: warnings upstream does not have:"; echo "$new"; }
[ -z "$errors" ] && [ -z "$new" ] && echo "compat: clean"
[ -z "$errors" ] && [ -z "$new" ]
