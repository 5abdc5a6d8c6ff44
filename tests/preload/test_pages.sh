#!/bin/bash
# SPDX-License-Identifier: MIT
# A software event counted exactly: cs_touch_pages(k) makes exactly k page
# faults, so every statistic of its perf::PAGE-FAULTS row is known.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

N=50
for k in 1 3 17; do
	# The premise, checked without the shim: k faults per call.
	plain_run check$k "$P/prog_pages" $k $N --check
	if [ "$status" -ne 0 ]; then
		show "$T/check$k.out"
		fail "prog_pages $k $N: not exactly $k page faults per call, even without the shim"
	fi

	plain_run plain$k "$P/prog_pages" $k $N
	[ "$status" -eq 0 ] || fail "prog_pages $k $N exits $status"
	shim_run shim$k perf::PAGE-FAULTS,tsc cs_touch_pages \
		"$P/prog_pages" $k $N
	[ "$status" -eq 0 ] || {
		show "$T/shim$k.err"
		fail "prog_pages $k $N under the shim exits $status"
	}
	same_output plain$k shim$k
	no_shim_lines shim$k

	report_csv shim$k
	row=$(csv_one shim$k "function=cs_touch_pages,event=perf::PAGE-FAULTS" \
		calls,total,mean,stddev,min,p50,p90,p99,max)
	IFS=$'\t' read -r calls total mean stddev min p50 p90 p99 max <<<"$row"
	for v in "calls=$calls=$N" "total=$total=$((N * k))" "mean=$mean=$k" \
		"stddev=$stddev=0" "min=$min=$k" "p50=$p50=$k" "p90=$p90=$k" \
		"p99=$p99=$k" "max=$max=$k"; do
		IFS== read -r what got want <<<"$v"
		num_eq "$got" "$want" || {
			show "$T/shim$k.csv"
			fail "k=$k: cs_touch_pages perf::PAGE-FAULTS $what is '$got', want $want"
		}
	done

	row=$(csv_one shim$k "function=cs_touch_pages,event=tsc" calls,min)
	IFS=$'\t' read -r calls min <<<"$row"
	[ "$calls" = $N ] || fail "k=$k: tsc row has $calls calls, want $N"
	num_eq "$min" 0 && fail "k=$k: a call took 0 TSC ticks"
	echo "k=$k: $N calls, $k page faults each"
done

# Set-up inside a measured call costs it no page fault: pn_outer(k, i)
# calls cs_touch_pages(k), then cs_touch_pages(0) from a call site of 32,
# so its first 32 calls each make the shim set up a new call site (and the
# first its series) while pn_outer's counters run.  Its inclusive page
# faults must still be exactly k in every call.
k=3
N=64
plain_run nplain "$P/prog_pages" $k $N --nested
[ "$status" -eq 0 ] || fail "prog_pages $k $N --nested exits $status"
# With one call per series window (CACHESHIM_SERIES=1), cs_touch_pages'
# 128 calls also reach windows its series has not mapped in yet: the shim
# maps them in inside pn_outer's calls, which must not count either.
for series in "" 1; do
	if [ -n "$series" ]; then export CACHESHIM_SERIES=$series; else unset CACHESHIM_SERIES; fi
	rm -f "$T"/nested.csr*
	shim_run nested perf::PAGE-FAULTS,tsc pn_outer,cs_touch_pages "$P/prog_pages" $k $N --nested
	[ "$status" -eq 0 ] || {
		show "$T/nested.err"
		fail "prog_pages $k $N --nested under the shim exits $status"
	}
	same_output nplain nested
	report_csv nested
	row=$(csv_one nested "function=pn_outer,event=perf::PAGE-FAULTS" calls,total,min,max)
	IFS=$'\t' read -r calls total min max <<<"$row"
	for v in "calls=$calls=$N" "total=$total=$((N * k))" "min=$min=$k" "max=$max=$k"; do
		IFS== read -r what got want <<<"$v"
		num_eq "$got" "$want" || {
			show "$T/nested.csv"
			fail "nested (CACHESHIM_SERIES=$series): pn_outer perf::PAGE-FAULTS $what is '$got', want $want"
		}
	done
done
unset CACHESHIM_SERIES
echo "nested: $N calls of pn_outer, $k page faults each, with 32 call sites set up inside them"
