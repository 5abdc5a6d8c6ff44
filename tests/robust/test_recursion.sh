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

# Direct recursion through a patched entry on the default 8 MiB stack: the
# program alone uses about a third of it; the wrapper's frames may take a
# quarter at most, deeper levels run unmeasured (counted as dropped), and
# the program must not notice (issue 8, point 5).
D=50000
ulimit -s 8192 2>/dev/null || echo "note: cannot set an 8 MiB stack; using $(ulimit -s) KiB"
plain_run splain "$R/prog_deep_static" $D
expect_status splain 0
CACHESHIM_HOOK=entry shim_run static tsc down "$R/prog_deep_static" $D
expect_status static 0
same_output splain static
report_csv static --by function
row=$(csv_one static "function=down,event=tsc" calls,entered,dropped)
IFS=$'\t' read -r calls entered dropped <<<"$row"
[ "$entered" = $((D + 1)) ] || fail "down: $entered calls entered, want $((D + 1))"
[ $((calls + dropped)) = $((D + 1)) ] || fail "down: $calls measured + $dropped dropped, want $((D + 1))"
[ "$calls" -ge 1000 ] && [ "$calls" -lt $((D + 1)) ] ||
	fail "down: $calls measured: want the outer levels measured, the deepest not"
echo "static recursion $D deep: $calls levels measured, $dropped deeper ones dropped, no overflow"
