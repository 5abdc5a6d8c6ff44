#!/bin/bash
# SPDX-License-Identifier: MIT
# With perf events, no stack page the wrapper writes between its two
# counter reads may be faulted in there: a page fault counted for a
# function that touches no memory.  shim/hotpath.c touch_below writes the
# pages of the copied window and of the target's return address first;
# but the exit path pushes cs_hot_exit's callee-saved registers (48 bytes)
# below that return address before it reads the counters, and when they
# crossed into a fresh page, that page fault was the call's: 3 of 256 calls
# of rt_leaf, at the 256 16-byte positions in a page, each on fresh pages.
# Now the red zone below the return address is written first too.
#
# "unwritten": the caller's frame above the call (a buffer it would have
# the callee fill) was never written, and the trampoline's copy of the
# window read it after the counters were read: a read fault per call (256
# of 256 with a 256-byte window).  Now its pages are read first; a read,
# so that the callee's own first write there stays a fault of its own.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

plain_run plain "$R/prog_stackpages"
expect_status plain 0
plain_run plain_unwritten "$R/prog_stackpages" unwritten
expect_status plain_unwritten 0
for run in 256 4096 256:unwritten 4096:unwritten; do
	window=${run%%:*}
	how=
	[ "$run" = "$window" ] || how=${run#*:}
	name=w$window$how
	CACHESHIM_WINDOW=$window shim_run $name perf::PAGE-FAULTS rt_leaf \
		"$R/prog_stackpages" $how
	expect_status $name 0
	same_output plain${how:+_$how} $name
	no_shim_lines $name
	report_csv $name --by function
	want_count $name "function=rt_leaf,event=perf::PAGE-FAULTS" calls 256
	want_count $name "function=rt_leaf,event=perf::PAGE-FAULTS" total 0
	echo "window $window${how:+, $how}: 256 calls on fresh stack pages, no page fault counted"
done
