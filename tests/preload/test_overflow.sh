#!/bin/bash
# SPDX-License-Identifier: MIT
# Bounded call sites: with CACHESHIM_MAX_SITES=2 the calibration call site
# and the first program call site get rows of their own; the second
# program call site lands in the overflow row, with its exact call count,
# and the shim says so in one line.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

A=1000
B=17
plain_run plain "$P/prog_sites" $A $B
export CACHESHIM_MAX_SITES=2
shim_run shim tsc cs_inner "$P/prog_sites" $A $B
unset CACHESHIM_MAX_SITES
[ "$status" -eq 0 ] || { show "$T/shim.err"; fail "prog_sites exits $status"; }
same_output plain shim
grep -q '^cacheshim: more than 2 call sites (CACHESHIM_MAX_SITES)' "$T/shim.err" ||
	{ show "$T/shim.err"; fail "no overflow message"; }
[ "$(wc -l <"$T/shim.err")" -eq 1 ] || { show "$T/shim.err"; fail "want one line on stderr"; }

report_csv shim
calls=$(csv_one shim "function=cs_inner,event=tsc,callsite=[overflow]" calls)
[ "$calls" = $B ] || { show "$T/shim.csv"; fail "overflow row has '$calls' calls, want $B"; }
rows=$(csv_select "$T/shim.csv" "function=cs_inner,event=tsc" calls | wc -l)
[ "$rows" -eq 2 ] || { show "$T/shim.csv"; fail "want 2 cs_inner rows, got $rows"; }
report_csv shim --by function
calls=$(csv_one shim "function=cs_inner,event=tsc" calls)
[ "$calls" = $((A + B)) ] || fail "--by function: $calls calls, want $((A + B))"
echo "overflow row: $B calls; total $calls"
