#!/bin/bash
# SPDX-License-Identifier: MIT
# prog_jumpstorm's signal handler siglongjmping out every 40 us while the
# program calls nested targets (rt_ping -> rt_pong -> rt_ping -> rt_pong,
# one window of the series per call).  A handler that jumps out of a call
# while the shim adds its values to its site's nested block (inclusive
# value counted, exclusive or the block's calls not yet) leaves that call
# half-recorded for good, one per call in flight; the reader allowed one
# such call per site only and called the file damaged in every run.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=200000
jump_run rt_ping,rt_pong 1 "$R/prog_jumpstorm" $N ping

# Every view reads the file clean.
for view in "" "--nested" "--series" "--format json" "--nested --format csv"; do
	# shellcheck disable=SC2086 # the view's words are separate arguments
	if ! "$CS_CMD" report $view "$T/jump.csr" >"$T/view.out" 2>"$T/view.err" ||
		grep -q damaged "$T/view.err"; then
		show "$T/view.err"
		fail "report $view: failed or calls the file damaged"
	fi
done
report_csv jump --by function
if grep -q damaged "$T/jump.rerr"; then
	show "$T/jump.rerr"
	fail "the report calls the file damaged"
fi
# rt_ping(3) is rt_ping, rt_pong, rt_ping, rt_pong: each loop step (and
# the call before the loop) that returned made two calls of each; a jump
# leaves at most one step, two calls of each.
for fn in rt_ping rt_pong; do
	calls=$(csv_sum jump "function=$fn,event=tsc" calls)
	entered=$(csv_sum jump "function=$fn,event=tsc" entered)
	dropped=$(csv_sum jump "function=$fn,event=tsc" dropped)
	[ "$calls" -ge $((2 * (N + 1))) ] ||
		fail "$fn: $calls calls counted, the program made $((2 * (N + 1))) at least"
	[ "$entered" -le $((2 * (N + 1 + jumps))) ] ||
		fail "$fn: $entered calls entered, $((2 * (N + 1 + jumps))) at most"
	[ $((entered - calls - dropped)) -le $((2 * jumps)) ] ||
		fail "$fn: $((entered - calls - dropped)) calls did not return, more than 2 x $jumps jumps"
done
echo "ok: $jumps jumps"
