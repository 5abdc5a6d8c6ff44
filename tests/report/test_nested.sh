#!/bin/bash
# SPDX-License-Identifier: MIT
# Nested targets (a target calling a target): inclusive and exclusive
# (self) values per call, --self, --nested, overhead per nested call.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

# nested.rpt (tests/report/mkfixture.c): outer's calls are 100, 110,
# 1100 (nothing nested) and 1000, 1200 (self 400 and 500) TSC ticks;
# page faults 0, 0, 1 and 5, 3 (self 1 and 0).  Inclusive: as measured.
run_cmd "$CS_CMD" report -f csv "$T/nested.rpt"
csv_pick "$CSV_HEADER"
expect_status $LINENO 0
expect_out $LINENO <<END
$CSV_HEADER
inner,prog+0x200,prog,tsc,3,1300,433.333,117.851,350,350,600,600,600,3,0,ok,
inner,prog+0x200,prog,perf::PAGE-FAULTS,3,7,2.333,1.247,1,2,4,4,4,3,0,ok,
outer,prog+0x100,prog,tsc,5,3510,702,491.545,100,1000,1200,1200,1200,5,0,ok,
outer,prog+0x100,prog,perf::PAGE-FAULTS,5,9,1.8,1.939,0,1,5,5,5,5,0,ok,
END
expect_no_err $LINENO

# --self: outer is 100 110 1100 400 500: total 2210, mean 442, stddev
# sqrt(133056) = 364.768.  min 100 is exact (no nested call is below
# 1000); the largest call (1200) was a nested one, so max is the top of
# the bucket of 1100 (1088-1119): 1119.  Percentiles interpolate in their
# buckets (400-407: 404; 1088-1119: 1104).  Faults 0 0 1 1 0: max 1 is
# exact (bucket of its own).  inner has nothing nested: unchanged.
for opt in --self --exclusive; do
	run_cmd "$CS_CMD" report -f csv $opt "$T/nested.rpt"
	csv_pick "$CSV_HEADER"
	expect_status $LINENO 0
	expect_out $LINENO <<END
$CSV_HEADER
inner,prog+0x200,prog,tsc,3,1300,433.333,117.851,350,350,600,600,600,3,0,ok,
inner,prog+0x200,prog,perf::PAGE-FAULTS,3,7,2.333,1.247,1,2,4,4,4,3,0,ok,
outer,prog+0x100,prog,tsc,5,2210,442,364.768,100,404,1104,1104,1119,5,0,ok,
outer,prog+0x100,prog,perf::PAGE-FAULTS,5,2,0.4,0.49,0,0,1,1,1,5,0,ok,
END
done

# --nested: both means at the end of each row, whatever the view.
want_nested()
{
	cat <<END
$CSV_HEADER,incl_mean,self_mean
inner,prog+0x200,prog,tsc,3,1300,433.333,117.851,350,350,600,600,600,3,0,ok,,433.333,433.333
inner,prog+0x200,prog,perf::PAGE-FAULTS,3,7,2.333,1.247,1,2,4,4,4,3,0,ok,,2.333,2.333
END
}
run_cmd "$CS_CMD" report -f csv --nested "$T/nested.rpt"
csv_pick "$CSV_HEADER,incl_mean,self_mean"
expect_status $LINENO 0
expect_out $LINENO <<END
$(want_nested)
outer,prog+0x100,prog,tsc,5,3510,702,491.545,100,1000,1200,1200,1200,5,0,ok,,702,442
outer,prog+0x100,prog,perf::PAGE-FAULTS,5,9,1.8,1.939,0,1,5,5,5,5,0,ok,,1.8,0.4
END
run_cmd "$CS_CMD" report -f csv --nested --self "$T/nested.rpt"
csv_pick "$CSV_HEADER,incl_mean,self_mean"
expect_status $LINENO 0
expect_out $LINENO <<END
$(want_nested)
outer,prog+0x100,prog,tsc,5,2210,442,364.768,100,404,1104,1104,1119,5,0,ok,,702,442
outer,prog+0x100,prog,perf::PAGE-FAULTS,5,2,0.4,0.49,0,0,1,1,1,5,0,ok,,1.8,0.4
END

# --subtract-overhead: the calibration median (10 ticks) per call, and
# once more per nested call (3 of them), whose own bracket is inside
# outer's values: 2210 - 5 * 10 - 3 * 10 = 2130 (self), 3510 - 80 = 3430.
run_cmd "$CS_CMD" report -f csv -s --nested --self "$T/nested.rpt"
csv_pick "$CSV_HEADER,incl_mean,self_mean"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'outer,prog+0x100,prog,tsc,5,2130,426,364.768,84,388,1088,1088,1103,5,0,ok,,686,426'

# A writer with the nested calibration (nestcal.rpt: a function calling
# the empty one measured 60 ticks against its 10): a nested call costs
# the call around it its own bracket and the wrapper's work outside it,
# 60 - 10 = 50 ticks (inclusive: 3510 - 5 * 10 - 3 * 50 = 3310), of which
# 40 are beyond its own value (exclusive: 2210 - 5 * 10 - 3 * 40 = 2040).
# The overhead line stays every call's (10).  Minima and percentiles move
# by the average amount taken off: 200 / 5 = 40 (inclusive), 170 / 5 = 34.
run_cmd "$CS_CMD" report -f csv -s --nested "$T/nestcal.rpt"
csv_pick "$CSV_HEADER,incl_mean,self_mean"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'outer,prog+0x100,prog,tsc,5,3310,662,491.545,60,960,1160,1160,1160,5,0,ok,,662,408'
run_cmd "$CS_CMD" report -f csv -s --nested --self "$T/nestcal.rpt"
csv_pick "$CSV_HEADER,incl_mean,self_mean"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'outer,prog+0x100,prog,tsc,5,2040,408,364.768,66,370,1070,1070,1085,5,0,ok,,662,408'
run_cmd "$CS_CMD" report -s "$T/nestcal.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'overhead: tsc 10, perf::PAGE-FAULTS 0 (median per call around an empty function, subtracted below)'
expect_line $LINENO "$T/out" 'nested:   tsc 50, perf::PAGE-FAULTS 0 (what a wrapped call adds to the call around it, subtracted below per nested call)'
# With --self the line says what is taken off there: 40.
run_cmd "$CS_CMD" report -s --self "$T/nestcal.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'nested:   tsc 40, perf::PAGE-FAULTS 0 (what a wrapped call adds to the call around it beyond its own value, subtracted below per nested call)'
# Files of writers before the nested calibration: no such line.
run_cmd "$CS_CMD" report -s "$T/nested.rpt"
expect_status $LINENO 0
! grep -q '^nested:' "$T/out" || fail $LINENO "a nested: line for a file without the nested calibration"

# --by function merges call sites; the views follow.
run_cmd "$CS_CMD" report -f csv --by function --nested "$T/nested.rpt"
csv_pick "$CSV_HEADER,incl_mean,self_mean"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'outer,*,*,tsc,5,3510,702,491.545,100,1000,1200,1200,1200,5,0,ok,,702,442'

# The table: "incl" and "self" columns with --nested only.
run_cmd "$CS_CMD" report --nested "$T/nested.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '  function  callsite    module  calls   mean   incl   self  stddev  min   p50   p90   p99   max  total'
expect_line $LINENO "$T/out" '  outer     prog+0x100  prog        5    702    702    442   491.5  100  1000  1200  1200  1200   3510'
run_cmd "$CS_CMD" report --self "$T/nested.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '  function  callsite    module  calls   mean  stddev  min  p50   p90   p99   max  total'
expect_line $LINENO "$T/out" '  outer     prog+0x100  prog        5    442   364.8  100  404  1104  1104  1119   2210'

# Two copies of the file (two processes): counts double, the spread stays
# (percentiles move within their buckets: two values in each now).
other_run "$T/nested.rpt" "$T/nested_copy.rpt"
run_cmd "$CS_CMD" report -f csv --self --by function "$T/nested.rpt" "$T/nested_copy.rpt"
csv_pick "$CSV_HEADER"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'outer,*,*,tsc,10,4420,442,364.768,100,402,1096,1112,1119,10,0,ok,'

# selfsum.rpt: the exclusive sum is one more than the inclusive one (the
# exclusive value of a call is never more than its inclusive value).  It
# was read as it came, and the self split (site - inclusive + exclusive)
# gave outer more self time than time; now the nested block is damaged.
run_cmd "$CS_CMD" report -f csv --self "$T/selfsum.rpt"
expect_status $LINENO 1
grep -q 'damaged: nested block at offset [0-9]*: event 0 has values that are not among its site' "$T/err" ||
	{ show "$T/err"; fail $LINENO "selfsum.rpt not called damaged"; }

finish
