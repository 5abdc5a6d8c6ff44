#!/bin/bash
# SPDX-License-Identifier: MIT
# A mean or standard deviation that is not 0 but below 0.001 keeps six
# significant digits in the CSV and the JSON, as the table shows it and as
# a derived column or bin_p has it: one page fault in 2500 calls is a mean
# of 0.0004, not 0 beside a total of 1.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

# fn: tsc 10 in each of 2500 calls; page faults 1 in one of them:
# mean 1/2500 = 0.0004, stddev sqrt(0.0004 - 0.0004^2) = 0.019996.
run_cmd "$CS_CMD" report --format csv --binomial --derive 'pf={perf::PAGE-FAULTS}' "$T/rare.rpt"
expect_status $LINENO 0
expect_out $LINENO <<END
$CSV_HEADER,source,bin_n,bin_p,pf
fn,prog+0x40,prog,tsc,2500,25000,10,0,10,10,10,10,10,2500,0,ok,,,,,0.0004
fn,prog+0x40,prog,perf::PAGE-FAULTS,2500,1,0.0004,0.02,0,0,0,0,1,2500,0,ok,,,1,0.0004,0.0004
END

run_cmd "$CS_CMD" report --format json "$T/rare.rpt"
expect_status $LINENO 0
if ! grep -q '"total":1,"mean":0.0004,"stddev":0.02,' "$T/out"; then
	fail $LINENO "the JSON's mean of 1 fault in 2500 calls is not 0.0004"
	show "$T/out"
fi

run_cmd "$CS_CMD" report "$T/rare.rpt"
expect_status $LINENO 0
if ! grep -q ' 2500  0.0004 ' "$T/out"; then
	fail $LINENO "the table's mean is not 0.0004"
	show "$T/out"
fi

finish
