#!/bin/bash
# SPDX-License-Identifier: MIT
# Deep recursion of targets: rt_ping and rt_pong call each other 100,000
# levels deep through the library's PLT, every level a wrapped call that
# is still on the stack at the deepest point.  Run in a thread with a
# 512 MiB stack, with and without the shim (each wrapped call adds about
# 0x170 + CACHESHIM_WINDOW bytes of stack); also with a window of 0.
# Exactly 100,001 calls, all returned.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

DEPTH=100000
STACK_MB=512

plain_run plain "$R/prog_recurse" $DEPTH $STACK_MB
expect_status plain 0
for window in default 0; do
	if [ $window = default ]; then
		shim_run deep$window tsc,perf::PAGE-FAULTS rt_ping,rt_pong \
			"$R/prog_recurse" $DEPTH $STACK_MB
	else
		CACHESHIM_WINDOW=$window shim_run deep$window tsc,perf::PAGE-FAULTS \
			rt_ping,rt_pong "$R/prog_recurse" $DEPTH $STACK_MB
	fi
	expect_status deep$window 0
	same_output plain deep$window
	no_shim_lines deep$window
	report_csv deep$window --by function
	for ev in tsc perf::PAGE-FAULTS; do
		ping=$(csv_one deep$window "function=rt_ping,event=$ev" calls,entered)
		pong=$(csv_one deep$window "function=rt_pong,event=$ev" calls,entered)
		[ "$ping" = "$((DEPTH / 2 + 1))	$((DEPTH / 2 + 1))" ] &&
			[ "$pong" = "$((DEPTH / 2))	$((DEPTH / 2))" ] || {
			show "$T/deep$window.csv"
			fail "window $window, $ev: rt_ping calls, entered = $ping; rt_pong = $pong"
		}
	done
	echo "window $window: $((DEPTH + 1)) nested calls, all returned and counted"
done
