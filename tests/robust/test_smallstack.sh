#!/bin/bash
# SPDX-License-Identifier: MIT
# Threads with small stacks: a PTHREAD_STACK_MIN thread with 5,000 bytes
# of its stack left makes the process's first wrapped calls (all the
# set-up happens in them: XSAVE area, perf_event_open, /proc reads).  It
# runs fine without the shim; with the set-up on the thread's stack it
# overflowed (SIGSEGV).  The slow path now runs on a side stack
# (shim/sidestack.c), and only the call's frame is on the thread's.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

plain_run plain "$R/prog_smallstack" 5000
expect_status plain 0
for events in perf::PAGE-FAULTS tsc; do
	name=shim_${events//[^a-zA-Z]/_}
	shim_run $name $events rt_leaf "$R/prog_smallstack" 5000
	expect_status $name 0
	same_output plain $name
	no_shim_lines $name
	report_csv $name --by function
	want_count $name "function=rt_leaf,event=$events" calls 10
	echo "$events: 10 calls with 5,000 bytes of a 16 KiB stack left"
done

# 64 such threads (4,000 bytes left) making their first calls at once: more
# set-ups at once than there are side stacks.  The ones that found none
# free ran on their own 16 KiB stack and overflowed it (SIGSEGV in most
# runs); now they wait for one.
plain_run plain64 "$R/prog_smallstack" 4000 64
expect_status plain64 0
for run in 1 2 3; do
	shim_run many$run tsc rt_leaf "$R/prog_smallstack" 4000 64
	expect_status many$run 0
	same_output plain64 many$run
	no_shim_lines many$run
	report_csv many$run --by function
	want_count many$run "function=rt_leaf,event=tsc" calls 640
done
echo "64 threads at once: 640 calls, three runs"
