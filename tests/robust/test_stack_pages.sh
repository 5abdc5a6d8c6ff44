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
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

plain_run plain "$R/prog_stackpages"
expect_status plain 0
for window in 256 4096; do
	name=w$window
	CACHESHIM_WINDOW=$window shim_run $name perf::PAGE-FAULTS rt_leaf "$R/prog_stackpages"
	expect_status $name 0
	same_output plain $name
	no_shim_lines $name
	report_csv $name --by function
	want_count $name "function=rt_leaf,event=perf::PAGE-FAULTS" calls 256
	want_count $name "function=rt_leaf,event=perf::PAGE-FAULTS" total 0
	echo "window $window: 256 calls on fresh stack pages, no page fault counted"
done
