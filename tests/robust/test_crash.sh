#!/bin/bash
# SPDX-License-Identifier: MIT
# Crashes: a program that dies by SIGSEGV (outside and inside a wrapped
# call), abort() or SIGKILL sent to itself keeps every call it completed
# in its report file; `cacheshim report` reads the file and says it is
# incomplete.  (A program leaving by _exit has its file sealed, complete:
# test_quick_exit.sh.)  And a live snapshot: the report of a program
# that is still running (it waits on a FIFO) has exactly the calls made
# so far; after it goes on and exits, the file is complete.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=777
for how in segv:139 segv-in:139 abort:134 kill:137; do
	want=${how#*:}
	how=${how%:*}
	plain_run plain_$how "$R/prog_crash" $N $how
	expect_status plain_$how $want
	shim_run crash_$how tsc rt_leaf,rt_crash "$R/prog_crash" $N $how
	expect_status crash_$how $want
	same_output plain_$how crash_$how
	no_shim_lines crash_$how
	report_csv crash_$how --by function
	incomplete_said crash_$how || {
		show "$T/crash_$how.rerr"
		fail "$how: cacheshim report does not say the file is incomplete"
	}
	row=$(csv_one crash_$how "function=rt_leaf,event=tsc" calls,entered,dropped)
	[ "$row" = "$N	$N	0" ] || {
		show "$T/crash_$how.csv"
		fail "$how: rt_leaf calls, entered, dropped = $row, want $N $N 0"
	}
	if [ $how = segv-in ]; then
		# The call that crashed entered and never returned.
		row=$(csv_one crash_$how "function=rt_crash,event=tsc" calls,entered,dropped)
		[ "$row" = "0	1	0" ] || {
			show "$T/crash_$how.csv"
			fail "segv-in: rt_crash calls, entered, dropped = '$row', want 0 1 0"
		}
	fi
	echo "$how: status $want, $N calls in the file, marked incomplete"
done

# --- a live snapshot ---------------------------------------------------
# run_paused NAME SHIM: prog_crash N pause with FIFOs; while it waits, the
# report of its file goes to $T/NAME.live.csv (with the shim).
run_paused()
{
	local name=$1 shim=$2 pid

	rm -f "$T/ready" "$T/go"
	mkfifo "$T/ready" "$T/go"
	if [ "$shim" = yes ]; then
		CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc,perf::PAGE-FAULTS CACHESHIM_TARGETS=rt_leaf \
			CACHESHIM_OUTPUT="$T/$name.csr" LD_PRELOAD=$CS_SHIM \
			"$R/prog_crash" $N pause "$T/ready" "$T/go" >"$T/$name.out" 2>"$T/$name.err" &
	else
		"$R/prog_crash" $N pause "$T/ready" "$T/go" >"$T/$name.out" 2>"$T/$name.err" &
	fi
	pid=$!
	cleanup_add "kill -9 $pid 2>/dev/null || true"
	# Bounded waits: a program that died early must not hang the test.
	if ! timeout 20 head -n 1 "$T/ready" >/dev/null; then
		kill -9 $pid 2>/dev/null || true
		show "$T/$name.err"
		fail "$name: the program never said it was ready"
	fi
	if [ "$shim" = yes ]; then
		"$CS_CMD" report --format csv --by function "$T/$name.csr" \
			>"$T/$name.live.csv" 2>"$T/$name.live.rerr" || {
			kill -9 $pid 2>/dev/null || true
			show "$T/$name.live.rerr"
			fail "cacheshim report of a running program failed"
		}
	fi
	echo go | timeout 20 tee "$T/go" >/dev/null || true
	status=0
	wait $pid || status=$?
}

run_paused lplain no
expect_status lplain 0
run_paused live yes
expect_status live 0
same_output lplain live
no_shim_lines live
incomplete_said live.live || {
	show "$T/live.live.rerr"
	fail "live: the report of a running program does not say it is incomplete"
}
for ev in tsc perf::PAGE-FAULTS; do
	want_count live.live "function=rt_leaf,event=$ev" calls $N
	want_count live.live "function=rt_leaf,event=$ev" entered $N
done
# Finished: all 2N calls, complete.
report_csv live --by function
! incomplete_said live || { show "$T/live.rerr"; fail "live: the finished file is incomplete"; }
want_count live "function=rt_leaf,event=tsc" calls $((2 * N))
echo "live: $N calls while running (marked incomplete), $((2 * N)) at the end (complete)"
