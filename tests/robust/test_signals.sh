#!/bin/bash
# SPDX-License-Identifier: MIT
# Signals: a SIGALRM handler that calls a target while the thread it
# interrupts is inside a target (rt_spin, waiting for that very signal) or
# inside the shim's bookkeeping for the same call site; every handler call
# is counted, none twice, in every thread.  Then ruby, whose threads are
# switched by its timer thread, with a SIGUSR1 handler doing Hash#[] at a
# high rate: same output, and rb_hash_aref counts that add up exactly.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

# --- C: setitimer, handler calls on 4 threads --------------------------
T_EXTRA=3
K=100
L=20000
plain_run plain "$R/prog_signal" $T_EXTRA $K $L
expect_status plain 0
shim_run shim tsc,perf::PAGE-FAULTS rt_leaf,rt_spin "$R/prog_signal" $T_EXTRA $K $L
expect_status shim 0
same_output plain shim
handled=$(sed -n 's/^handled \([0-9]*\)$/\1/p' "$T/shim.err")
[ -n "$handled" ] || { show "$T/shim.err"; fail "prog_signal did not say how many signals it handled"; }
grep -v -e '^handled ' "$T/shim.err" >&2 && fail "prog_signal under the shim printed more than its count"
report_csv shim --by function
for ev in tsc perf::PAGE-FAULTS; do
	row=$(csv_one shim "function=rt_spin,event=$ev" calls,entered,dropped)
	want=$(((T_EXTRA + 1) * (K + 1)))
	[ "$row" = "$want	$want	0" ] || {
		show "$T/shim.csv"
		fail "rt_spin $ev: calls, entered, dropped = $row, want $want $want 0"
	}
	row=$(csv_one shim "function=rt_leaf,event=$ev" calls,entered,dropped)
	want=$(((T_EXTRA + 1) * (L + 1) + handled))
	[ "$row" = "$want	$want	0" ] || {
		show "$T/shim.csv"
		fail "rt_leaf $ev: calls, entered, dropped = $row, want $want $want 0 ($handled from the handler)"
	}
done
echo "C: $handled handler calls on $((T_EXTRA + 1)) threads, all counted once"

# --- ruby: timer thread, threads, a busy SIGUSR1 handler -----------------
RUBY=$(command -v ruby) || { echo "SKIP (ruby part): no ruby"; exit 0; }
SCRIPT=$CS_SRCDIR/tests/robust/signal_hash.rb
NT=4
base=
for m in 100000 200000; do
	plain_run rplain$m "$RUBY" --disable=gems "$SCRIPT" $m $NT
	expect_status rplain$m 0
	mkdir "$T/r$m"
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rb_hash_aref \
		CACHESHIM_OUTPUT="$T/r$m/out.%p" LD_PRELOAD=$CS_SHIM \
		"$RUBY" --disable=gems "$SCRIPT" $m $NT >"$T/r$m.out" 2>"$T/r$m.err" || status=$?
	expect_status r$m 0
	same_output rplain$m r$m
	read -r _ pid _ traps <"$T/r$m.err" || true
	[ -f "$T/r$m/out.$pid" ] || { show "$T/r$m.err"; fail "no report file of ruby (pid '$pid')"; }
	report_files r$m "$T/r$m/out.$pid" -- --by function
	row=$(csv_one r$m "function=rb_hash_aref,event=tsc" calls,entered,dropped)
	calls=${row%%	*}
	[ "$row" = "$calls	$calls	0" ] || fail "ruby: rb_hash_aref calls, entered, dropped = $row"
	# Ruby's own lookups (start-up, threads) must be the same in both runs:
	# all the others are (NT + 1) * m in the loops and 10 per handler run.
	this=$((calls - (NT + 1) * m - 10 * traps))
	echo "ruby m=$m: $calls calls, $traps handler runs, $this of ruby's own"
	[ -z "$base" ] || [ "$this" = "$base" ] ||
		fail "ruby: rb_hash_aref calls do not add up: $this of ruby's own, $base in the other run"
	base=$this
done
