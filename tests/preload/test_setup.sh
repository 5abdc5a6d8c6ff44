#!/bin/bash
# SPDX-License-Identifier: MIT
# The shim's own set-up is not a measured call's cost: ps_outer's first
# call is where 64 new targets are met (a call site block and a series
# block each, made by the shim while ps_outer's bracket runs), yet its
# `tsc` must be far below the set-up time the report says was taken off
# (without the correction it would hold nearly all of it); its later calls
# meet nothing new.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

plain_run plain "$P/prog_setup" 3
[ "$status" -eq 0 ] || fail "prog_setup exits $status"

# One run: its checks; returns 1 when only the timing bound failed.
one_run()
{
	shim_run shim tsc 'ps_outer,ps_inner_*' "$P/prog_setup" 3
	[ "$status" -eq 0 ] || { show "$T/shim.err"; fail "prog_setup under the shim exits $status"; }
	same_output plain shim
	no_shim_lines shim

	report_csv shim --cold
	row=$(csv_one shim "function=ps_outer,event=tsc" calls,cold_mean,warm_max)
	IFS=$'\t' read -r calls cold warm_max <<<"$row"
	[ "$calls" = 3 ] || fail "ps_outer: $calls calls, want 3"
	# Every inner target was measured once per ps_outer call.
	for i in 00 17 35 77; do
		row=$(csv_one shim "function=ps_inner_$i,event=tsc" calls)
		[ "$row" = 3 ] || fail "ps_inner_$i: '$row' calls, want 3"
	done

	setup=$("$CS_CMD" report --format json "$T/shim.csr" |
		sed -n 's/.*"totals":{[^}]*"setup_ticks":\([0-9]*\).*/\1/p')
	is_num "$setup" || fail "no setup_ticks in the JSON totals"
	"$CS_CMD" report "$T/shim.csr" >"$T/table" 2>&1
	grep -q "^set-up: *$setup TSC ticks" "$T/table" ||
		{ show "$T/table"; fail "table: no set-up line with $setup ticks"; }
	# 64 site blocks and 64 series blocks made inside the first call: at
	# least a few milliseconds of the shim's own work (a series block
	# alone is ~80 pages to populate).  The first call itself does 64
	# trivial calls.
	echo "set-up $setup ticks; ps_outer cold $cold, warm max $warm_max"
	[ "$setup" -gt 0 ] || fail "no set-up time recorded"
	# Without the correction the cold call holds all of the set-up
	# (c >= s); with it, ~5%.  The bound is half: a preemption of the
	# first call adds to the call, not to the set-up.
	awk -v c="$cold" -v s="$setup" 'BEGIN { exit !(c * 2 < s) }'
}

# Up to three runs: a parallel make check on two CPUs preempted the
# first call for as long as the set-up took (5.58 M ticks against 5.63 M,
# once; 2.0 M against 5.9 M another time).  Without the correction every
# run fails.
for attempt in 1 2 3; do
	if one_run; then
		echo "all passed"
		exit 0
	fi
	echo "run $attempt: ps_outer's first call took $cold ticks, not far below the $setup ticks of set-up"
done
show "$T/shim.csv"
fail "ps_outer's first call took $cold ticks: not far below the $setup ticks of set-up inside it (3 runs)"
