#!/bin/bash
# SPDX-License-Identifier: MIT
# A program that closes every descriptor it did not open (as daemons do)
# and opens a file of its own, which gets the number the shim's report
# file had: the shim must not write zeros into it, grow it or truncate it
# at exit through that number, and the report must still count every call
# (as measured, or as dropped where the program closed the shim's counters).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=200
plain_run plain "$R/prog_fdreuse" "$T/plain.victim" $N
expect_status plain 0

# One event and two (a perf group: the shim has more descriptors).
for events in tsc tsc,perf::PAGE-FAULTS; do
	name=run-${events%%,*}-$(echo "$events" | tr -cd , | wc -c)
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=$events CACHESHIM_TARGETS=rt_leaf \
		CACHESHIM_OUTPUT="$T/$name.csr" LD_PRELOAD=$CS_SHIM \
		"$R/prog_fdreuse" "$T/$name.victim" $N >"$T/$name.out" 2>"$T/$name.err" || status=$?
	expect_status $name 0
	# Same output: the program got the same descriptor number as without the shim.
	same_output plain $name
	no_shim_lines $name
	[ "$(cat "$T/$name.victim")" = precious ] && [ "$(stat -c %s "$T/$name.victim")" = 9 ] ||
		fail "$name: the program's file was changed: $(stat -c %s "$T/$name.victim") bytes"
	report_files $name "$T/$name.csr" -- --by function
	want_count $name "function=rt_leaf,event=tsc" entered $((64 * N))
	if [ "$events" = tsc ]; then
		want_count $name "function=rt_leaf,event=tsc" calls $((64 * N))
	else
		# The program closed the shim's counters too: its calls cannot be
		# read any more and count as dropped, none is lost or made up.
		want_count $name "function=rt_leaf,event=tsc" dropped $((64 * N))
	fi
	echo "$events: the program's file intact, $((64 * N)) calls"
done
