#!/bin/bash
# SPDX-License-Identifier: MIT
# A signal handler siglongjmping out of the program every 40 us while it
# calls a target (tests/robust/prog_jumpstorm.c).  It used to hang: a jump
# between the wrapper's taking a side stack and its blocking of signals
# left the side stack taken, and after 16 of them every slow path waited
# for one.  Then the report refused the file as damaged (a call left in
# the middle of its recording: its site's histogram one count over its
# calls; a series whose numbers a merge gave back numbered later calls
# into full windows).  Now the program runs as without the shim, the
# report reads clean, every loop step's call is counted and the calls
# that did not return are what entered minus what returned.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=2000000
# A hang is the failure this test is about: bounded, so it fails instead.
jump_run rt_leaf "" "$R/prog_jumpstorm" $N

report_csv jump --by function
if grep -q damaged "$T/jump.rerr"; then
	show "$T/jump.rerr"
	fail "the report calls the file damaged"
fi
calls=$(csv_sum jump "function=rt_leaf,event=tsc" calls)
entered=$(csv_sum jump "function=rt_leaf,event=tsc" entered)
dropped=$(csv_sum jump "function=rt_leaf,event=tsc" dropped)
# The first call and each of the N loop steps returned once at least (a
# step the handler left after its call returned calls again); each jump
# adds one call at most.
[ "$calls" -ge $((N + 1)) ] || fail "$calls calls counted, the program made $((N + 1)) at least"
[ "$entered" -le $((N + 1 + jumps)) ] ||
	fail "$entered calls entered, $((N + 1)) + $jumps jumps at most"
[ $((entered - calls - dropped)) -le "$jumps" ] ||
	fail "$((entered - calls - dropped)) calls did not return, more than the $jumps jumps"

# The series over time reads too (a damaged series block was dropped).
if ! "$CS_CMD" report --series "$T/jump.csr" >"$T/series.out" 2>"$T/series.err" ||
	grep -q damaged "$T/series.err"; then
	show "$T/series.err"
	fail "report --series failed"
fi
grep -q rt_leaf "$T/series.out" || { show "$T/series.out"; fail "no series of rt_leaf"; }
echo "ok: $jumps jumps, $calls calls of $entered returned"
