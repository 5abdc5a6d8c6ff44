#!/bin/bash
# SPDX-License-Identifier: MIT
# Keys by argument: cs_touch_pages:arg1 keys its distributions by the size
# class of its page count.  Called only with 5: one row, class 4-7, with
# p50 = p99 = 5 and the exact call count; called with 1, 2, 3, 5 and 9:
# one row per class with exact counts and totals.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"
S=$CS_BUILDDIR/tests/series

N=40
plain_run plain "$S/prog_keyed" $N 5
shim_run shim perf::PAGE-FAULTS,tsc cs_touch_pages:arg1 "$S/prog_keyed" $N 5
[ "$status" -eq 0 ] || { show "$T/shim.err"; fail "prog_keyed exits $status"; }
same_output plain shim
no_shim_lines shim
report_csv shim --by function
rows=$(csv_select "$T/shim.csv" "event=perf::PAGE-FAULTS" key,calls,total,min,p50,p99,max)
[ "$rows" = "$(printf '4-7\t%d\t%d\t5\t5\t5\t5' $N $((5 * N)))" ] ||
	{ show "$T/shim.csv"; fail "keyed rows: '$rows'"; }

shim_run mix perf::PAGE-FAULTS cs_touch_pages:arg1 "$S/prog_keyed" 30 1 2 3 5 9
[ "$status" -eq 0 ] || { show "$T/mix.err"; fail "prog_keyed exits $status"; }
report_csv mix --by function
csv_select "$T/mix.csv" "event=perf::PAGE-FAULTS" key,calls,total,min,max | sort >"$T/mix.rows"
printf '%s\t%s\t%s\t%s\t%s\n' 1 30 30 1 1 2-3 60 150 2 3 4-7 30 150 5 5 8-15 30 270 9 9 |
	sort >"$T/mix.want"
cmp -s "$T/mix.rows" "$T/mix.want" || {
	show "$T/mix.csv"
	diff "$T/mix.want" "$T/mix.rows" >&2 || true
	fail "per-class rows differ"
}

# Not keyed: the key column is empty.
shim_run plainkey perf::PAGE-FAULTS cs_touch_pages "$S/prog_keyed" 3 5
report_csv plainkey --by function
rows=$(csv_select "$T/plainkey.csv" "event=perf::PAGE-FAULTS" key,calls)
[ "$rows" = "$(printf '\t3')" ] || { show "$T/plainkey.csv"; fail "unkeyed rows: '$rows'"; }
echo "keys: class 4-7 $N calls of 5 pages; mixed classes exact"
