#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim report --cold (first calls apart from the others) and
# --binomial (p = 1 - var/mean, n = mean/p) on known values (mkviews).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"
"$CS_BUILDDIR/tests/report/mkviews" "$T" || { echo "mkviews failed" >&2; exit 99; }
V=$T/views.rpt
COLD=cold_n,cold_mean,cold_min,cold_max,warm_n,warm_total,warm_mean,warm_stddev,warm_min,warm_p50,warm_p90,warm_p99,warm_max

# Per call site (and thread): the first call is cold.  alpha@libx.so:
# threads 1 (1000 50 50 50) and 2 (900 60 60): cold 1000 and 900, warm
# 50 50 50 60 60 (mean 54, variance 24).  alpha@app: cold 100, warm 200
# 300 400; the overall min was cold, so warm min is the bound of the
# lowest warm bucket (200 starts one).  gamma has no warm call.
run_cmd "$CS_CMD" report -f csv --cold --event tsc "$V"
expect_status $LINENO 0
csv_pick "function,callsite,calls,mean,$COLD"
expect_out $LINENO <<END
function,callsite,calls,mean,$COLD
alpha,app+0x100,4,250,1,100,100,100,3,900,300,81.65,200,300,400,400,400
alpha,libx.so+0x200,7,310,2,950,900,1000,5,270,54,4.899,50,50,60,60,60
beta,liby.so+0x300,2,15,1,10,10,10,1,20,20,0,20,20,20,20,20
delta,app+0x500,1000,50014,1,64,64,64,999,50013936,50064,28838.631,164,50036,90009,99207,99964
gamma,app+0x400,1,7,1,7,7,7,0,,,,,,,,
END

# Per function: one cold call per site and thread (100, 1000, 900).
# Warm max: the overall max (1000) was cold, so the top of the bucket of
# the highest warm value (400 is in 400..407).
run_cmd "$CS_CMD" report -f csv --cold --by function --event tsc --function alpha "$V"
csv_pick "function,calls,$COLD"
expect_out $LINENO <<END
function,calls,$COLD
alpha,11,3,666.667,100,1000,8,1170,146.25,129.222,50,60,404,404,407
END

# The table shows the cold and warm columns instead of the plain ones.
run_cmd "$CS_CMD" report --cold --event tsc --function alpha "$V"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '  function  callsite       module   calls  cold_n  cold_mean  cold_min  cold_max  warm_mean  warm_stddev  warm_min  warm_p50  warm_p90  warm_p99  warm_max'
expect_line $LINENO "$T/out" '  alpha     libx.so+0x200  libx.so      7       2        950       900      1000         54          4.9        50        50        60        60        60'

# Sorting by a cold column needs no --cold.
run_cmd "$CS_CMD" report -f csv --event tsc --sort cold_mean --top 2 "$V"
expect_status $LINENO 0
csv_pick function,callsite
expect_out $LINENO <<'END'
function,callsite
alpha,libx.so+0x200
alpha,app+0x100
END

# The overhead (median of the calibration calls, 5) comes off the cold
# calls as off the others: keyed.rpt (mkfixture) memcpy[arg3:64] 20 22.
run_cmd "$CS_CMD" report -f csv --cold -s --event tsc "$T/keyed.rpt"
csv_pick "function,mean,cold_n,cold_mean,warm_n,warm_mean"
expect_line $LINENO "$T/out" 'memcpy[arg3:64],16,1,15,1,17'

# Binomial: binom's faults 0 0 1 1 1 1 1 3 have mean 1, variance 0.75:
# p = 0.25, n = 4; its minor faults (all 2) p = 1, n = 2.  alpha@app
# 0 1 1 2: p = 0.5, n = 2.  A variance above the mean (alpha@libx.so),
# a mean of 0 (gamma) or tsc: none ("-", empty in CSV).
run_cmd "$CS_CMD" report -f csv --binomial "$T/binom.rpt" "$V"
expect_status $LINENO 0
csv_pick function,callsite,event,bin_n,bin_p
for want in 'binom,app+0x10,perf::PAGE-FAULTS,4,0.25' \
	'binom,app+0x10,perf::MINOR-FAULTS,2,1' \
	'alpha,app+0x100,perf::PAGE-FAULTS,2,0.5' \
	'alpha,libx.so+0x200,perf::PAGE-FAULTS,,' \
	'gamma,app+0x400,perf::PAGE-FAULTS,,' \
	'binom,app+0x10,tsc,,' \
	'alpha,app+0x100,cycles,,'; do
	expect_line $LINENO "$T/out" "$want"
done
run_cmd "$CS_CMD" report --binomial --event perf::PAGE-FAULTS "$T/binom.rpt" "$V"
expect_line $LINENO "$T/out" '  binom     app+0x10       app          8     1    0.87    0    1    3    3    3      8      4   0.25'
expect_line $LINENO "$T/out" '  alpha     libx.so+0x200  libx.so      7   1.3     2.1    0    0    5    5    5      9      -      -'
# Without --binomial the CSV has no such columns.
run_cmd "$CS_CMD" report -f csv "$T/binom.rpt"
head -1 "$T/out" | grep -q bin_n && fail $LINENO "bin_n without --binomial"

finish
