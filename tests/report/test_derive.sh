#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim report --derive NAME=EXPR: expressions over the means per call
# of each row's events; "not counted" propagates, division by 0 is none.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"
"$CS_BUILDDIR/tests/report/mkviews" "$T" || { echo "mkviews failed" >&2; exit 99; }
V=$T/views.rpt
D=(--derive 'per1k=1000*{perf::PAGE-FAULTS}/tsc' --derive 'nc=cycles*0+1'
	--derive 'z=tsc/{perf::MINOR-FAULTS}' --derive 'twice=-(-per1k*2)')

# Means (mkviews.c): alpha@app tsc 250, faults 1; alpha@libx.so 310 and
# 9/7; beta 15 and 3 (minor faults 0: z divides by 0); gamma 7 and 0;
# delta 50014 and 0.85.  cycles was not counted: nc is never a number,
# even multiplied by 0.  twice uses an earlier derived column.
run_cmd "$CS_CMD" report -f csv --event tsc "${D[@]}" "$V"
expect_status $LINENO 0
csv_pick function,callsite,per1k,nc,z,twice
expect_out $LINENO <<'END'
function,callsite,per1k,nc,z,twice
alpha,app+0x100,4,not counted,250,8
alpha,libx.so+0x200,4.147,not counted,241.111,8.295
beta,liby.so+0x300,200,not counted,,400
delta,app+0x500,0.017,not counted,58840,0.034
gamma,app+0x400,0,not counted,,0
END

# The table: one section after the events, sorted by the first derived
# column unless --sort says; "-" where undefined.
run_cmd "$CS_CMD" report --event tsc "${D[@]}" "$V"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'derived, per row from the means per call of its events: per1k = 1000*{perf::PAGE-FAULTS}/tsc; nc = cycles*0+1; z = tsc/{perf::MINOR-FAULTS}; twice = -(-per1k*2)'
# An expression with a newline and a tab in it (white space to the
# parser): escaped in the title, not printed raw.
run_cmd "$CS_CMD" report --event tsc --derive "$(printf 'nl=tsc\n+\t1')" "$V"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'derived, per row from the means per call of its events: nl = tsc\n+\t1'
run_cmd "$CS_CMD" report --event tsc "${D[@]}" "$V"
sed -n '/^derived/,$p' "$T/out" | tail -n +2 >"$T/section"
cat >"$T/want" <<'END'
  function  callsite       module   calls  per1k           nc      z  twice
  beta      liby.so+0x300  liby.so      2    200  not counted      -    400
  alpha     libx.so+0x200  libx.so      7    4.1  not counted  241.1    8.3
  alpha     app+0x100      app          4      4  not counted    250      8
  delta     app+0x500      app       1000  0.017  not counted  58840  0.034
  gamma     app+0x400      app          1      0  not counted      -      0
END
diff -u "$T/want" "$T/section" >"$T/diff" || { fail $LINENO "derived table"; show "$T/diff"; }

# Sorting by a derived column, ascending; rows without a value last.
run_cmd "$CS_CMD" report -f csv --event tsc "${D[@]}" --sort z:asc "$V"
csv_pick function,callsite,z
expect_out $LINENO <<'END'
function,callsite,z
alpha,libx.so+0x200,241.111
alpha,app+0x100,250
delta,app+0x500,58840
beta,liby.so+0x300,
gamma,app+0x400,
END

# An event a row has no values of ("no data") counts as not counted:
# only_a has no minor faults (merge_a + merge_b of mkfixture).  work's
# tsc is over its 3 calls in both files, its minor faults over the one
# call of merge_b: the means of different calls make no value (it was 24,
# tsc's mean of 3 calls plus the minor faults of 1), and one line says so
# (once, though the CSV has a line per event).  Page faults, counted in
# both files, over the same 3 calls as tsc: p has a value.
run_cmd "$CS_CMD" report -f csv --derive 'm=tsc+{perf::MINOR-FAULTS}' \
	--derive 'p=tsc+{perf::PAGE-FAULTS}' "$T/merge_a.rpt" "$T/merge_b.rpt"
expect_status $LINENO 0
csv_pick function,event,m,p
expect_out $LINENO <<'END'
function,event,m,p
only_a,tsc,not counted,5
only_a,perf::PAGE-FAULTS,not counted,5
only_a,perf::MINOR-FAULTS,not counted,5
work,tsc,,22.333
work,perf::PAGE-FAULTS,,22.333
work,perf::MINOR-FAULTS,,22.333
END
expect_line $LINENO "$T/err" 'cacheshim: warning: --derive m: its events were counted over different calls of a row (merged files measured different events); such rows have no value'
[ "$(grep -c derive "$T/err")" = 1 ] || fail $LINENO "want one line, for m only"

# Two runs of as many calls each, each with another second event (the
# first spelled perf::page-faults, found as {perf::PAGE-FAULTS} as files
# merge it): the means are over different calls, though as many (review
# helper 89: m was 5, the check compared only the numbers of calls).
run_cmd "$CS_CMD" report -f csv --event tsc --derive 'm={perf::PAGE-FAULTS}+{perf::MINOR-FAULTS}' \
	"$T/disjoint_a.rpt" "$T/disjoint_b.rpt"
expect_status $LINENO 0
csv_pick function,m
expect_out $LINENO <<'END'
function,m
work,
END
expect_line $LINENO "$T/err" 'cacheshim: warning: --derive m: its events were counted over different calls of a row (merged files measured different events); such rows have no value'
run_cmd "$CS_CMD" report -f csv --event tsc --derive 'm={perf::PAGE-FAULTS}*2' "$T/disjoint_a.rpt"
expect_status $LINENO 0
csv_pick function,m
expect_out $LINENO <<'END'
function,m
work,8
END

# Huge and tiny derived values: an exponent, whole (the CSV cut 1e200 to
# 127 digits, the table printed 180 digits and an E; 1e-9 was 0).
run_cmd "$CS_CMD" report -f csv --event tsc --function gamma --derive 'big=1e200' \
	--derive 'neg=-1e130' --derive 'e20=1e20' --derive 'tiny=tsc/7e9' "$V"
expect_status $LINENO 0
csv_pick function,big,neg,e20,tiny
expect_out $LINENO <<'END'
function,big,neg,e20,tiny
gamma,1e+200,-1e+130,1e+20,1e-09
END
run_cmd "$CS_CMD" report --event tsc --function gamma --derive 'big=1e200' \
	--derive 'neg=-1e130' "$V"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '  gamma     app+0x400  app         1  1e+200  -1e+130'

# Mistakes: usage errors that say what is wrong.
check_err()
{
	local line=$1 msg=$2

	shift 2
	run_cmd "$CS_CMD" report "$@" "$V"
	expect_status "$line" 2
	expect_err "$line" "$msg"
}
check_err $LINENO "--derive x: no expression after '='" --derive 'x='
check_err $LINENO "--derive x: no expression after '='" --derive 'x=  '
check_err $LINENO "--derive '=tsc': bad name" --derive '=tsc'
check_err $LINENO "--derive '1x=tsc': bad name" --derive '1x=tsc'
check_err $LINENO "--derive 'tsc': NAME=EXPR expected" --derive 'tsc'
check_err $LINENO "--derive x: unexpected end at position 5 of 'tsc/'" --derive 'x=tsc/'
check_err $LINENO "--derive x: ')' expected at position 5 of '(tsc'" --derive 'x=(tsc'
check_err $LINENO "--derive x: '}' expected at position 5 of '{tsc'" --derive 'x={tsc'
check_err $LINENO "--derive x: unexpected 't' at position 5 of 'tsc tsc'" --derive 'x=tsc tsc'
check_err $LINENO "--derive 'mean=tsc': mean is the name of a column" --derive 'mean=tsc'
check_err $LINENO "--derive x is given twice" --derive 'x=tsc' --derive 'x=1'
check_err $LINENO "--derive tsc: tsc is the name of an event" --derive 'tsc=1'
check_err $LINENO "--derive x: no event or earlier derived column named 'nosuch'" \
	--derive 'x=nosuch'
check_err $LINENO "--derive x: no event or earlier derived column named 'y'" \
	--derive 'x=y' --derive 'y=tsc'

finish
