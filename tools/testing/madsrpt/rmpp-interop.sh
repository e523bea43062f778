#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rmpp-interop.sh - RMPP wire compatibility with pure upstream 6.12.
#
# Builds our kernel and the pristine one, then runs two VMs joined by a
# virtual wire (vm.sh -n): one serves RMPP requests, the other sends them
# (interop/rmpp-serve.sh, interop/rmpp-client.sh, progs/rmpp_umad.c), once
# with upstream serving our client and once with ours serving upstream's
# client.  Prints the client's TAP lines and "N passed, N failed".

set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"

ms_lock
"$here/build.sh" ours
"$here/build.sh" upstream

mkdir -p "$MS_BUILD/logs"
passed=0 failed=0 port=15521
for pair in upstream:ours ours:upstream; do
	srv=${pair%%:*} cli=${pair#*:}
	name="rmpp-interop-$srv-serves-$cli"
	log=$MS_BUILD/logs/$name
	echo "=== $name"
	"$here/vm.sh" -k "$srv" -t 1500 -n "listen:$port" -l "$log-srv.console" \
		"$here/interop/rmpp-serve.sh" >/dev/null &
	srv_pid=$!
	sleep 5
	rc=0
	"$here/vm.sh" -k "$cli" -t 1400 -n "connect:$port" \
		-l "$log-cli.console" "$here/interop/rmpp-client.sh" \
		>/dev/null || rc=$?
	srv_rc=0
	wait "$srv_pid" || srv_rc=$?
	tr -d '\r' <"$log-cli.console.out" | sed 's/^/    /'
	p=$(tr -d '\r' <"$log-cli.console.out" | grep -c '^ok ' || true)
	f=$(tr -d '\r' <"$log-cli.console.out" | grep -c '^not ok' || true)
	if [ "$rc" -ne 0 ] || [ "$srv_rc" -ne 0 ]; then
		[ "$f" -gt 0 ] || f=1
		echo "    not ok - $name: client exit $rc, server exit $srv_rc"
	fi
	passed=$((passed + p)) failed=$((failed + f))
	port=$((port + 1))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
