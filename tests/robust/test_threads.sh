#!/bin/bash
# SPDX-License-Identifier: MIT
# Threads: each thread opens its own counters at its first call, and its
# site blocks stay in the file after it exits.  8 threads x 100,000 calls
# (all threads gone before the program ends) must be exactly 800,000
# calls, for a perf event read per thread as well as for tsc.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

THREADS=8
CALLS=100000
WANT=$((THREADS * CALLS))

plain_run plain "$R/prog_threads" $THREADS $CALLS
expect_status plain 0
for events in tsc tsc,perf::PAGE-FAULTS; do
	name=shim_${events//[^a-z]/_}
	shim_run $name $events rt_leaf "$R/prog_threads" $THREADS $CALLS
	expect_status $name 0
	same_output plain $name
	no_shim_lines $name
	report_csv $name --by function
	for ev in ${events//,/ }; do
		row=$(csv_one $name "function=rt_leaf,event=$ev" calls,entered,dropped)
		[ "$row" = "$WANT	$WANT	0" ] || {
			show "$T/$name.csv"
			fail "$events: rt_leaf $ev has calls, entered, dropped = $row, want $WANT $WANT 0"
		}
	done
	echo "$events: $WANT calls in $THREADS threads"
done

# The same in the main thread alone: no thread is special.
plain_run plain0 "$R/prog_threads" 0 $CALLS
shim_run shim0 tsc rt_leaf "$R/prog_threads" 0 $CALLS
expect_status shim0 0
same_output plain0 shim0
report_csv shim0 --by function
want_count shim0 "function=rt_leaf,event=tsc" calls $CALLS

# A thread's first calls, on fresh stack pages, with a 4 KB window: the
# trampoline's copy of it and the return address it pushes wrote those
# pages after the counters were read, and each thread's first call
# counted one page fault (8 for 8 threads); rt_leaf touches no memory.
CACHESHIM_WINDOW=4096 shim_run window perf::PAGE-FAULTS rt_leaf "$R/prog_threads" $THREADS 100
expect_status window 0
report_csv window --by function
want_count window "function=rt_leaf,event=perf::PAGE-FAULTS" calls $((THREADS * 100))
want_count window "function=rt_leaf,event=perf::PAGE-FAULTS" total 0
echo "a 4 KB window on fresh stack pages: no page fault counted"

# The program exits while 2 threads are calling: their last call may be
# half-recorded (a series number taken but not yet counted, a bucket
# counted but not the call, a nested call's inclusive value but not its
# exclusive one, ...).  Such a file is what a real run leaves, not
# damage: the reader must take it whole.  Each run stops the threads
# somewhere else; with the checks of before, about one tsc run in ten was
# called damaged for its series, one in seventy for a nested block.
RUNS=60
for i in $(seq 1 $RUNS); do
	case $((i % 3)) in
	0) events=tsc ;;
	1) events=tsc,perf::PAGE-FAULTS ;;
	2) events=perf::PAGE-FAULTS ;;
	esac
	shim_run busy$i $events rt_leaf,rt_ping,rt_pong "$R/prog_threads" 2 busy
	expect_status busy$i 0
	report_csv busy$i --by function
	grep -q damaged "$T/busy$i.rerr" && fail "run $i ($events): $(cat "$T/busy$i.rerr")"
	calls=$(csv_one busy$i "function=rt_leaf,event=${events%%,*}" calls)
	[ "$calls" -ge 1000 ] || fail "run $i ($events): $calls calls, at least 1,000 made"
done
echo "$RUNS runs exiting under 2 calling threads: no damage"
