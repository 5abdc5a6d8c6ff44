#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim report --diff A B: two runs compared per function and event,
# from files or directories of files with known values (mkviews).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"
"$CS_BUILDDIR/tests/report/mkviews" "$T" || { echo "mkviews failed" >&2; exit 99; }
A=$T/diff_a.rpt
B=$T/diff_b.rpt

# work: tsc 100 -> 80 (-20, -20%); slower 50 -> 75 (+25, +50%); only_a
# and only_b are in one run each: calls 0 on the other side, nothing else.
run_cmd "$CS_CMD" report -f csv --diff "$A" "$B"
expect_status $LINENO 0
expect_no_err $LINENO
expect_out $LINENO <<'END'
function,callsite,module,event,calls_a,calls_b,calls_diff,calls_pct,mean_a,mean_b,mean_diff,mean_pct,p50_a,p50_b,p50_diff,p50_pct,p90_a,p90_b,p90_diff,p90_pct,p99_a,p99_b,p99_diff,p99_pct,status
only_a,*,*,tsc,1,0,-1,-100,5,,,,5,,,,5,,,,5,,,,only a
only_b,*,*,tsc,0,1,1,,,9,,,,9,,,,9,,,,9,,,only b
slower,*,*,tsc,2,2,0,0,50,75,25,50,50,75,25,50,50,75,25,50,50,75,25,50,ok
work,*,*,tsc,4,4,0,0,100,80,-20,-20,100,80,-20,-20,100,80,-20,-20,100,80,-20,-20,ok
only_a,*,*,perf::PAGE-FAULTS,1,0,-1,-100,0,,,,0,,,,0,,,,0,,,,only a
only_b,*,*,perf::PAGE-FAULTS,0,1,1,,,0,,,,0,,,,0,,,,0,,,only b
slower,*,*,perf::PAGE-FAULTS,2,2,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,ok
work,*,*,perf::PAGE-FAULTS,4,4,0,0,2,2,0,0,2,2,0,0,2,2,0,0,2,2,0,0,ok
END

# The table: biggest change of the mean (in %) first; rows without one
# last; signed changes.
run_cmd "$CS_CMD" report --diff "$A" "$B" --event tsc
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'A: 1 file, 7 calls; B: 1 file, 7 calls (diff: B - A; pct: of A)'
awk '/^  [a-z_]+ / && !/^  function/ { print $1 }' "$T/out" | tr '\n' ' ' >"$T/got"
[ "$(cat "$T/got")" = "slower work only_a only_b " ] ||
	{ fail $LINENO "order: $(cat "$T/got")"; show "$T/out"; }
expect_line $LINENO "$T/out" '  slower          2        2           0      +0.0%      50      75        +25    +50.0%     50     75       +25   +50.0%     50     75       +25   +50.0%     50     75       +25   +50.0%'
grep -qx 'perf::PAGE-FAULTS' "$T/out" && fail $LINENO "--event ignored"

# --sort and --top take diff columns.
run_cmd "$CS_CMD" report -f csv --diff "$A" "$B" --event tsc --sort mean_diff:asc --top 2
expect_status $LINENO 0
csv_pick function,mean_diff
expect_out $LINENO <<'END'
function,mean_diff
work,-20
slower,25
END
run_cmd "$CS_CMD" report --diff "$A" "$B" --sort mean
expect_status $LINENO 2
expect_err $LINENO "report: --sort mean: with --diff, one of function, calls_a"

# Directories of runs: every report file in each (others ignored), a
# run's processes merged.
mkdir "$T/runa" "$T/runb"
cp "$A" "$T/runa/1.out"
cp "$T/merge_a.rpt" "$T/runa/2.out"
echo "not a report" >"$T/runa/notes.txt"
cp "$B" "$T/runb/1.out"
run_cmd "$CS_CMD" report -f csv --diff "$T/runa" "$T/runb" --event tsc
expect_status $LINENO 0
csv_pick function,calls_a,calls_b,status
expect_line $LINENO "$T/out" 'work,6,4,ok'
expect_line $LINENO "$T/out" 'only_a,2,0,only a'

# A copy of a file in a directory (cp, or a snapshot) is read once, as in
# report without --diff (its calls counted twice).
mkdir "$T/runc"
cp "$A" "$T/runc/1.out"
cp "$A" "$T/runc/2.out"
run_cmd "$CS_CMD" report -f csv --diff "$T/runc" "$B" --event tsc
expect_status $LINENO 0
csv_pick function,calls_a,calls_b,status
expect_line $LINENO "$T/out" 'work,4,4,ok'
expect_err $LINENO "$T/runc/2.out is a copy of $T/runc/1.out (the file of the same process"

# Of two snapshots of a running file alike by their headers (no block
# reserved between them), the one that had entered more calls, named
# second here: the first named was read.
mkdir "$T/runl"
cp "$T/basic_early.rpt" "$T/runl/1.out"
cp "$T/basic_live.rpt" "$T/runl/2.out"
run_cmd "$CS_CMD" report -f csv --diff "$T/runl" "$T/basic.rpt" --event tsc
expect_status $LINENO 0
csv_pick function,calls_a,calls_b
expect_line $LINENO "$T/out" 'malloc,9,8'
expect_err $LINENO "$T/runl/1.out is a copy of $T/runl/2.out (the file of the same process"

# A --function or --module glob that matches nothing in either run is an
# error, as without --diff (it printed empty tables with exit 0); one that
# matches in one run only is not.
for x in "--function nomatch|report: --function nomatch: no function in the files matches" \
	"--module nomatch|report: --module nomatch: no call in the files is made from a matching module"; do
	run_cmd "$CS_CMD" report ${x%%|*} --diff "$A" "$B"
	expect_status $LINENO 2
	expect_err $LINENO "${x#*|}"
	[ -s "$T/out" ] && fail $LINENO "a table for ${x%%|*}"
done
run_cmd "$CS_CMD" report -f csv --function only_b --module app --diff "$A" "$B"
expect_status $LINENO 0
grep -q '^only_b,' "$T/out" || { fail $LINENO "no only_b row"; show "$T/out"; }

# --by callsite: matched by module path and offset.
run_cmd "$CS_CMD" report -f csv --by callsite --diff "$A" "$B" --event tsc
csv_pick function,callsite,mean_pct
expect_line $LINENO "$T/out" 'work,app+0x10,-20'

# An event one run did not record is not counted there: its calls were
# made, not measured.  B's work made 4 calls, and A's tsc row said
# calls_b 0, calls_diff -4, -100%, status 'only a', as if B had not
# called it (and the other way round, 'only b').
run_cmd "$CS_CMD" report -f csv --diff "$A" "$T/diff_c.rpt"
expect_status $LINENO 0
csv_pick function,event,calls_a,calls_b,calls_diff,calls_pct,mean_b,status
expect_line $LINENO "$T/out" 'work,tsc,4,not counted,not counted,not counted,not counted,not counted'
expect_line $LINENO "$T/out" 'work,perf::PAGE-FAULTS,4,4,0,0,2,ok'
expect_line $LINENO "$T/out" 'only_a,tsc,1,not counted,not counted,not counted,not counted,not counted'
run_cmd "$CS_CMD" report -f csv --diff "$T/diff_c.rpt" "$A" --event tsc
expect_status $LINENO 0
csv_pick function,calls_a,calls_b,calls_diff,status
expect_line $LINENO "$T/out" 'work,not counted,4,not counted,not counted'
run_cmd "$CS_CMD" report --diff "$A" "$T/diff_c.rpt" --event tsc
expect_status $LINENO 0
grep -q -- '-100' "$T/out" && { fail $LINENO "B's calls taken for none"; show "$T/out"; }

# Usage errors.
run_cmd "$CS_CMD" report --diff "$A"
expect_status $LINENO 2
expect_err $LINENO "report: --diff A B: run B is missing"
run_cmd "$CS_CMD" report --diff "$A" "$B" "$B"
expect_status $LINENO 2
run_cmd "$CS_CMD" report --diff "$A" "$B" --hist
expect_status $LINENO 2
expect_err $LINENO "not with --hist"
run_cmd "$CS_CMD" report --diff "$A" "$B" --event nosuch
expect_status $LINENO 2
run_cmd "$CS_CMD" report --diff "$T/empty.rpt" "$B"
expect_status $LINENO 1
mkdir "$T/nothing"
run_cmd "$CS_CMD" report --diff "$T/nothing" "$B"
expect_status $LINENO 1
expect_err $LINENO "$T/nothing: no report files in this directory"

# Control characters in names (ctl.rpt against itself) are written as
# escapes in the table, by function and by call site, the columns as wide
# as the escaped text; the CSV quotes them as they are.
run_cmd "$CS_CMD" report --diff "$T/ctl.rpt" "$T/ctl.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'page\x1b[7mfaults'
expect_line $LINENO "$T/out" '  function         calls_a  calls_b  calls_diff  calls_pct  mean_a  mean_b  mean_diff  mean_pct  p50_a  p50_b  p50_diff  p50_pct  p90_a  p90_b  p90_diff  p90_pct  p99_a  p99_b  p99_diff  p99_pct'
expect_line $LINENO "$T/out" '  new\nline              1        1           0      +0.0%       7       7          0     +0.0%      7      7         0    +0.0%      7      7         0    +0.0%      7      7         0    +0.0%'
expect_no_ctl $LINENO "$T/out"
run_cmd "$CS_CMD" report --by callsite --diff "$T/ctl.rpt" "$T/ctl.rpt" --event tsc
expect_status $LINENO 0
expect_line $LINENO "$T/out" '  \x1b[31mred\x7f  li\tb.so+0x20  li\tb.so        1        1           0      +0.0%       9       9          0     +0.0%      9      9         0    +0.0%      9      9         0    +0.0%      9      9         0    +0.0%'
expect_no_ctl $LINENO "$T/out"
run_cmd "$CS_CMD" report -f csv --diff "$T/ctl.rpt" "$T/ctl.rpt" --event tsc
expect_status $LINENO 0
expect_line $LINENO "$T/out" "$(printf '\033[31mred\177,*,*,tsc,1,1,0,0,9,9,0,0,9,9,0,0,9,9,0,0,9,9,0,0,ok')"

# Two functions named touch, in two modules (mkfixture's samename.rpt):
# two rows, each labelled with its module, each matched with itself
# (before, they had one label and key: one row, 2 of the 5 calls, the
# other's values lost without a word).
"$CS_BUILDDIR/tests/report/mkfixture" "$T" >/dev/null || { echo "mkfixture failed" >&2; exit 99; }
run_cmd "$CS_CMD" report -f csv --diff "$T/samename.rpt" "$T/samename.rpt" --event perf::PAGE-FAULTS
expect_status $LINENO 0
expect_no_err $LINENO
expect_out $LINENO <<'END'
function,callsite,module,event,calls_a,calls_b,calls_diff,calls_pct,mean_a,mean_b,mean_diff,mean_pct,p50_a,p50_b,p50_diff,p50_pct,p90_a,p90_b,p90_diff,p90_pct,p99_a,p99_b,p99_diff,p99_pct,status
touch@liba.so,*,*,perf::PAGE-FAULTS,3,3,0,0,2,2,0,0,2,2,0,0,2,2,0,0,2,2,0,0,ok
touch@libb.so,*,*,perf::PAGE-FAULTS,2,2,0,0,5,5,0,0,5,5,0,0,5,5,0,0,5,5,0,0,ok
END
# A run without the interposer (libb.so's touch only, labelled touch in
# it): libb.so's rows match, liba.so's is only in A (review helper 89:
# the key was each run's label, touch@libb.so against touch: no row
# matched).  And a library installed under another directory is the same
# function (the key had the module's whole path).
run_cmd "$CS_CMD" report -f csv --diff "$T/samename.rpt" "$T/samename_b.rpt" --event perf::PAGE-FAULTS
expect_status $LINENO 0
csv_pick function,calls_a,calls_b,status
expect_out $LINENO <<'END'
function,calls_a,calls_b,status
touch@liba.so,3,0,only a
touch@libb.so,2,2,ok
END
run_cmd "$CS_CMD" report -f csv --diff "$T/samename_b.rpt" "$T/moved.rpt" --event tsc
expect_status $LINENO 0
csv_pick function,calls_a,calls_b,status
expect_out $LINENO <<'END'
function,calls_a,calls_b,status
touch,2,2,ok
END
# One run holding both (merged: two modules of one file name): two rows,
# told apart by the modules' paths.
mkdir -p "$T/twopaths"
cp "$T/samename_b.rpt" "$T/moved.rpt" "$T/twopaths/"
run_cmd "$CS_CMD" report -f csv --diff "$T/twopaths" "$T/moved.rpt" --event tsc
expect_status $LINENO 0
csv_pick function,calls_a,calls_b,status
expect_out $LINENO <<'END'
function,calls_a,calls_b,status
touch@/elsewhere/libb.so,2,2,ok
touch@/nonexistent/libb.so,2,0,only a
END
# --function selects one of them as labelled (name@FILE or name@PATH of
# its module; it matched the bare name only).
run_cmd "$CS_CMD" report -f csv --by function --event tsc --function 'touch@/elsewhere/*' "$T"/twopaths/*.rpt
expect_status $LINENO 0
csv_pick function,calls
expect_out $LINENO <<'END'
function,calls
touch@/elsewhere/libb.so,2
END
run_cmd "$CS_CMD" report -f csv --by function --event tsc --function 'touch@liba.so' "$T/samename.rpt"
expect_status $LINENO 0
csv_pick function,calls
expect_out $LINENO <<'END'
function,calls
touch@liba.so,3
END
# The report of that run labels them by their paths too (both were
# touch@libb.so).
run_cmd "$CS_CMD" report -f csv --by function --event tsc "$T"/twopaths/*.rpt
expect_status $LINENO 0
csv_pick function,calls
expect_out $LINENO <<'END'
function,calls
touch@/elsewhere/libb.so,2
touch@/nonexistent/libb.so,2
END
# The report itself labels them so too, in the table and the CSV.
run_cmd "$CS_CMD" report -f csv --by function --event tsc "$T/samename.rpt"
expect_status $LINENO 0
csv_pick function,calls,mean
expect_out $LINENO <<'END'
function,calls,mean
touch@liba.so,3,100
touch@libb.so,2,200
END

finish
