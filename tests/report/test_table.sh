#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim report (table): the summary, one aligned section per event,
# rows by total, "not counted", the calibration overhead line.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

# aligned LINE FILE: in each section (lines after a title, up to a blank
# line), the header and the rows are equally long: columns line up.
aligned()
{
	awk '
	/^  / { if (!w) w = length($0); else if (length($0) != w) bad = NR; next }
	{ w = 0 }
	END { if (bad) { print "line " bad " is not aligned"; exit 1 } }' "$2" >&2 ||
		{ fail "$1" "columns not aligned"; show "$2"; }
}

run_cmd "$CS_CMD" report "$T/basic.rpt"
expect_status $LINENO 0
expect_out $LINENO <<'END'
program:  /usr/bin/prog
pid:      100
files:    1
events:   tsc, perf::PAGE-FAULTS
calls:    11 measured, 1 dropped (unusable reading)
calls that did not return: 1

tsc (TSC ticks)
  function   callsite        module     calls  mean  stddev   min   p50   p90   p99   max  total
  malloc     libfoo.so+0x20  libfoo.so      3  1000       0  1000  1000  1000  1000  1000   3000
  malloc     prog+0x1234     prog           5    30    14.1    10    30    50    50    50    150
  free       prog+0x1300     prog           2     8       1     7     7     9     9     9     16
  odd,"name  0xabc           ?              1     3       0     3     3     3     3     3      3

perf::PAGE-FAULTS
  function   callsite        module     calls  mean  stddev  min  p50  p90  p99  max  total
  malloc     prog+0x1234     prog           5   0.6     0.8    0    0    2    2    2      3
  odd,"name  0xabc           ?              1     1       0    1    1    1    1    1      1
  free       prog+0x1300     prog           2     0       0    0    0    0    0    0      0
  malloc     libfoo.so+0x20  libfoo.so      3     0       0    0    0    0    0    0      0
END
expect_no_err $LINENO
aligned $LINENO "$T/out"

# Per function: no callsite and module columns.
run_cmd "$CS_CMD" report --by function "$T/basic.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '  function   calls   mean  stddev  min  p50   p90   p99   max  total'
expect_line $LINENO "$T/out" '  malloc         8  393.8   469.7   10   40  1000  1000  1000   3150'
aligned $LINENO "$T/out"

# A failed event says so instead of printing numbers.
run_cmd "$CS_CMD" report "$T/failed.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'events:   tsc, cycles (not counted), perf::PAGE-FAULTS'
expect_line $LINENO "$T/out" 'cycles'
expect_line $LINENO "$T/out" '  not counted (the event could not be opened)'
aligned $LINENO "$T/out"

# The calibration target gives the overhead line, and no row.
run_cmd "$CS_CMD" report "$T/keyed.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'overhead: tsc 5, perf::PAGE-FAULTS 0 (median per call around an empty function)'
grep -q 'cacheshim:empty' "$T/out" && fail $LINENO "the calibration target is a row"
expect_line $LINENO "$T/out" '  memcpy[arg3:64]   prog+0x70  prog        2    21       1   20   20   22   22   22     42'

# --subtract-overhead takes the median of the calibration calls (5) off,
# the mean as measured (raw_mean) beside the corrected one.
run_cmd "$CS_CMD" report --subtract-overhead "$T/keyed.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'overhead: tsc 5, perf::PAGE-FAULTS 0 (median per call around an empty function, subtracted below)'
expect_line $LINENO "$T/out" '  function          callsite   module  calls  mean  raw_mean  stddev  min  p50  p90  p99  max  total'
expect_line $LINENO "$T/out" '  memcpy[arg3:64]   prog+0x70  prog        2    16        21       1   15   15   17   17   17     32'

# A killed process: the warning, the calls that did not return.
run_cmd "$CS_CMD" report "$T/running.rpt"
expect_status $LINENO 0
expect_err $LINENO "$T/running.rpt is incomplete (program still running or did not exit cleanly)"
expect_line $LINENO "$T/out" 'calls that did not return: 2'

# Control characters in names (a newline, an escape sequence, a tab, DEL)
# are written as escapes: a newline broke the rows, and escape sequences
# reached the terminal.  CSV, JSON and HTML quote them their own way.
# Event names too, in the summary and in the tables' titles.
run_cmd "$CS_CMD" report "$T/ctl.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'program:  /usr/bin/p\x1b[2Jq'
expect_line $LINENO "$T/out" 'events:   tsc, page\x1b[7mfaults'
expect_line $LINENO "$T/out" 'page\x1b[7mfaults'
expect_line $LINENO "$T/out" '  function         callsite       module    calls  mean  stddev  min  p50  p90  p99  max  total'
expect_line $LINENO "$T/out" '  \x1b[31mred\x7f  li\tb.so+0x20  li\tb.so      1     9       0    9    9    9    9    9      9'
expect_line $LINENO "$T/out" '  new\nline        li\tb.so+0x10  li\tb.so      1     7       0    7    7    7    7    7      7'
expect_no_ctl $LINENO "$T/out"

finish
