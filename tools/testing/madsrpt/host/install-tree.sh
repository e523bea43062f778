#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# install-tree.sh KSRC - copy our files into a Linux 6.12 source tree and
# add the glue lines, so that tree builds our MAD layer and ib_srpt with
# its own `make`.  Safe to run again: files are overwritten, glue lines are
# added once.

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

ksrc=${1:-}
[ -n "$ksrc" ] || ms_die "usage: make install-tree KSRC=/path/to/linux-6.12"
ksrc=$(cd "$ksrc" && pwd)
[ -f "$ksrc/Makefile" ] && [ -d "$ksrc/drivers/infiniband" ] ||
	ms_die "$ksrc is not a kernel source tree"
ver=$(make -s -C "$ksrc" kernelversion 2>/dev/null || true)
case "$ver" in
6.12*) ;;
*) ms_die "$ksrc is Linux '$ver', not 6.12" ;;
esac

n=0
while read -r from to; do
	mkdir -p "$(dirname "$ksrc/$to")"
	rm -f "$ksrc/$to"
	cp "$MS_TOP/$from" "$ksrc/$to"
	n=$((n + 1))
done < <(ms_overlay_list)
ms_glue "$ksrc"
echo "install-tree: $n files copied into $ksrc, glue lines added"
echo "install-tree: enable the options of $MS_TOP/Kconfig as you like and build"
