#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim report --hist: histograms per function and event from known
# values (mkviews): one row per value for small counts, merged buckets
# for wide ranges, counts, percentages, bars in ASCII or block characters.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"
"$CS_BUILDDIR/tests/report/mkviews" "$T" || { echo "mkviews failed" >&2; exit 99; }
V=$T/views.rpt

# delta's page faults: 0 x10, 1 x5, 2 x3, 3 x2, fifty times over.  Not
# a UTF-8 locale: '#' bars, 40 for the biggest row.
LC_ALL=C run_cmd "$CS_CMD" report --hist --event perf::PAGE-FAULTS --function delta "$V"
expect_status $LINENO 0
sed -n '/^perf::PAGE-FAULTS$/,$p' "$T/out" >"$T/section"
cat >"$T/want" <<'END'
perf::PAGE-FAULTS
  delta: 1000 calls, mean 0.85, p50 0, p99 3, max 3
    0  500   50.0%  ########################################
    1  250   25.0%  ####################
    2  150   15.0%  ############
    3  100   10.0%  ########
END
diff -u "$T/want" "$T/section" >"$T/diff" || { fail $LINENO "histogram"; show "$T/diff"; }

# Merged over call sites: alpha's 11 page-fault values 0 1 1 2 5 0 0 0
# 4 0 0; an empty row inside the range is shown (no bar).
LC_ALL=C run_cmd "$CS_CMD" report --hist --event perf::PAGE-FAULTS --function alpha "$V"
sed -n '/^  alpha/,$p' "$T/out" >"$T/section"
cat >"$T/want" <<'END'
  alpha: 11 calls, mean 1.2, p50 0, p99 5, max 5
    0  6   54.5%  ########################################
    1  2   18.2%  #############
    2  1    9.1%  #######
    3  0    0.0%
    4  1    9.1%  #######
    5  1    9.1%  #######
END
diff -u "$T/want" "$T/section" >"$T/diff" || { fail $LINENO "merged histogram"; show "$T/diff"; }

# UTF-8: block characters, eighths for the remainder; a tiny count still
# gets a sliver.
LC_ALL=C.UTF-8 run_cmd "$CS_CMD" report --hist --event tsc --function gamma --function delta "$V"
expect_status $LINENO 0
expect_line $LINENO "$T/out" "    7  1  100.0%  $(printf '\u2588%.0s' $(seq 40))"
expect_line $LINENO "$T/out" '         64 - 127    1    0.1%  ▏'
expect_line $LINENO "$T/out" '      1024 - 2047   10    1.0%  █▏'

# delta's tsc: 64, 164, ... 99964: whole powers of two per row (the
# smallest grouping that fits 20 rows), from min to max, all counted.
awk '/^  delta/ { on = 1; next } on && /^    / { n++; c += $(NF - 2) } on && !/^    / { on = 0 }
	END { print n, c }' "$T/out" >"$T/got"
[ "$(cat "$T/got")" = "11 1000" ] || { fail $LINENO "delta rows/count: $(cat "$T/got")"; show "$T/out"; }
expect_line $LINENO "$T/out" '    65536 - 99964  345   34.5%  ████████████████████████████████████████'

# Order by a statistic, cut by --top; not counted said as such.
LC_ALL=C run_cmd "$CS_CMD" report --hist --sort mean:asc --top 2 "$V"
expect_status $LINENO 0
grep '^  [a-z]*:' "$T/out" | cut -d: -f1 | tr -d ' ' | tr '\n' ' ' >"$T/got"
[ "$(cat "$T/got")" = "gamma beta gamma delta beta gamma " ] ||
	{ fail $LINENO "order: $(cat "$T/got")"; show "$T/out"; }
expect_line $LINENO "$T/out" '  not counted (the event could not be opened)'

# Histograms are drawn in the table format only.
run_cmd "$CS_CMD" report --hist -f csv "$V"
expect_status $LINENO 2
expect_err $LINENO "report: --hist draws in the table format only"

# Control characters in names (ctl.rpt: a newline, an escape sequence,
# DEL, in a function and an event) are written as escapes, as in the
# table: a newline broke the lines, escape sequences reached the terminal.
LC_ALL=C run_cmd "$CS_CMD" report --hist "$T/ctl.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'page\x1b[7mfaults'
expect_line $LINENO "$T/out" '  \x1b[31mred\x7f: 1 call, mean 9, p50 9, p99 9, max 9'
expect_line $LINENO "$T/out" '  new\nline: 1 call, mean 7, p50 7, p99 7, max 7'
expect_no_ctl $LINENO "$T/out"

# --subtract-overhead (keyed.rpt: memcpy's tsc 20 and 22, overhead 5):
# the rows are taken down as the line above them is, to 15 and 17.  They
# were the values as measured, 20 to 22, under a line saying max 17.
LC_ALL=C run_cmd "$CS_CMD" report --hist -s --event tsc --function memcpy "$T/keyed.rpt"
expect_status $LINENO 0
sed -n '/^  memcpy\[arg3:64\]/,/^  memcpy\[arg3:128\]/p' "$T/out" >"$T/section"
cat >"$T/want" <<'END'
  memcpy[arg3:64]: 2 calls, mean 16, p50 15, p99 17, max 17
    15  1   50.0%  ########################################
    16  0    0.0%
    17  1   50.0%  ########################################
  memcpy[arg3:128]: 1 call, mean 25, p50 25, p99 25, max 25
END
diff -u "$T/want" "$T/section" >"$T/diff" || { fail $LINENO "-s histogram"; show "$T/diff"; }

finish
