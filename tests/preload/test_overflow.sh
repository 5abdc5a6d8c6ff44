#!/bin/bash
# SPDX-License-Identifier: MIT
# Bounded call sites: with CACHESHIM_MAX_SITES=1 the first program call
# site gets a row of its own (the shim's calibration site does not count);
# the second lands in the overflow row, with its exact call count, and the
# shim says so in one line.  A call site keeps its row in every thread: 4
# threads calling site A, then site B, make one row of A with all their
# calls (the limit used to count a block per thread: a later thread's
# calls went to the overflow row, and A's row looked exact with a part of
# them, as a review helper found).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

A=1000
B=17
plain_run plain "$P/prog_sites" $A $B
export CACHESHIM_MAX_SITES=1
shim_run shim tsc cs_inner "$P/prog_sites" $A $B
unset CACHESHIM_MAX_SITES
[ "$status" -eq 0 ] || { show "$T/shim.err"; fail "prog_sites exits $status"; }
same_output plain shim
grep -q '^cacheshim: more than 1 call site (CACHESHIM_MAX_SITES)' "$T/shim.err" ||
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

# Threads: A's row holds every thread's calls; B's overflow rows (one per
# thread that called it: main's) hold B's.
plain_run tplain "$P/prog_sites" $A $B 4
export CACHESHIM_MAX_SITES=1
shim_run threads tsc cs_inner "$P/prog_sites" $A $B 4
unset CACHESHIM_MAX_SITES
[ "$status" -eq 0 ] || { show "$T/threads.err"; fail "prog_sites with threads exits $status"; }
same_output tplain threads
report_csv threads
rows=$(csv_select "$T/threads.csv" "function=cs_inner,event=tsc" callsite,calls | sort)
want=$(printf '%s\t%s\n' '[overflow]' $B "$(csv_select "$T/threads.csv" "function=cs_inner,event=tsc" callsite | grep -v overflow)" $((5 * A)) | sort)
[ "$rows" = "$want" ] || { show "$T/threads.csv"; fail "threads: rows '$rows', want '$want'"; }
echo "threads: site A's row has all $((5 * A)) calls of 5 threads, B's $B in the overflow row"
