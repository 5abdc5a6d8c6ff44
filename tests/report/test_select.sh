#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim report --sort, --top, --function, --module and --event on a
# fixture with known values (mkviews: see tests/report/mkviews.c).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"
"$CS_BUILDDIR/tests/report/mkviews" "$T" || { echo "mkviews failed" >&2; exit 99; }
V=$T/views.rpt

# rows LINE: the rows of the first table (after its header line), just
# function and callsite, in order.
rows()
{
	awk '/^  function/ { on = 1; next } on && /^  / { print $1, $2 } on && !/^  / { exit }' \
		"$T/out"
}

# expect_rows LINE < EXPECTED: rows of the first table are EXPECTED.
expect_rows()
{
	rows >"$T/rows"
	if ! diff -u - "$T/rows" >"$T/diff"; then
		fail "$1" "rows in another order"
		show "$T/diff"
	fi
}

# The default: biggest total first.
run_cmd "$CS_CMD" report --event tsc "$V"
expect_status $LINENO 0
expect_rows $LINENO <<'END'
delta app+0x500
alpha libx.so+0x200
alpha app+0x100
beta liby.so+0x300
gamma app+0x400
END

# Numbers sort descending, text ascending; ties keep the row order
# (function, module, offset).  tsc means: delta 50014, alpha 310 and 250,
# beta 15, gamma 7; p50s: alpha@app 202, alpha@libx 60.
run_cmd "$CS_CMD" report --event tsc --sort mean:asc "$V"
expect_rows $LINENO <<'END'
gamma app+0x400
beta liby.so+0x300
alpha app+0x100
alpha libx.so+0x200
delta app+0x500
END
run_cmd "$CS_CMD" report --event tsc --sort p50 "$V"
expect_rows $LINENO <<'END'
delta app+0x500
alpha app+0x100
alpha libx.so+0x200
beta liby.so+0x300
gamma app+0x400
END
run_cmd "$CS_CMD" report --event tsc --sort function "$V"
expect_rows $LINENO <<'END'
alpha app+0x100
alpha libx.so+0x200
beta liby.so+0x300
delta app+0x500
gamma app+0x400
END
run_cmd "$CS_CMD" report --event tsc --sort callsite:desc "$V"
expect_rows $LINENO <<'END'
beta liby.so+0x300
alpha libx.so+0x200
delta app+0x500
gamma app+0x400
alpha app+0x100
END
# Each event's table has its own order: page faults (totals delta 850,
# alpha@libx 9, beta 6, alpha@app 4, gamma 0).
run_cmd "$CS_CMD" report --event perf::PAGE-FAULTS --sort max "$V"
expect_rows $LINENO <<'END'
alpha libx.so+0x200
beta liby.so+0x300
delta app+0x500
alpha app+0x100
gamma app+0x400
END

# --top N: the first N rows of every table.
run_cmd "$CS_CMD" report --top 2 "$V"
expect_status $LINENO 0
n=$(grep -c '^  alpha\|^  beta\|^  gamma\|^  delta' "$T/out")
[ "$n" -eq 6 ] || { fail $LINENO "--top 2: $n rows in 3 tables, want 6"; show "$T/out"; }
expect_line $LINENO "$T/out" 'cycles'
expect_line $LINENO "$T/out" '  not counted (the event could not be opened)'

# --event: only those tables, in that order.
run_cmd "$CS_CMD" report --event 'cycles,perf::MINOR-FAULTS' "$V"
expect_status $LINENO 0
grep -qx 'tsc (TSC ticks)' "$T/out" && fail $LINENO "tsc shown"
grep -qx 'perf::PAGE-FAULTS' "$T/out" && fail $LINENO "page faults shown"
expect_line $LINENO "$T/out" 'perf::MINOR-FAULTS'
expect_line $LINENO "$T/out" 'cycles'

# --function and --module (fnmatch globs, repeatable: any of them).
run_cmd "$CS_CMD" report -f csv --event tsc --function 'al*' --function gamma "$V"
expect_status $LINENO 0
csv_pick function,callsite,calls,mean
expect_out $LINENO <<'END'
function,callsite,calls,mean
alpha,app+0x100,4,250
alpha,libx.so+0x200,7,310
gamma,app+0x400,1,7
END
run_cmd "$CS_CMD" report -f csv --event tsc --module 'lib*' "$V"
csv_pick function,callsite,calls
expect_out $LINENO <<'END'
function,callsite,calls
alpha,libx.so+0x200,7
beta,liby.so+0x300,2
END
# A module glob may name the whole path; per function, only the calls
# from the modules selected count.
run_cmd "$CS_CMD" report -f csv --event tsc --by function --module /nonexistent/app "$V"
csv_pick function,calls,mean,max
expect_out $LINENO <<'END'
function,calls,mean,max
alpha,4,250,400
delta,1000,50014,99964
gamma,1,7,7
END
# A function that is a target but made no call from the modules
# selected: the header alone.
run_cmd "$CS_CMD" report -f csv --function beta --module /nonexistent/app "$V"
expect_status $LINENO 0
expect_out $LINENO <<END
$CSV_HEADER,source
END

# CSV: the order of the rows is kept unless --sort says, by the first
# event of --event; --top cuts rows (all their events).
run_cmd "$CS_CMD" report -f csv --event 'perf::PAGE-FAULTS,tsc' --sort mean --top 2 "$V"
expect_status $LINENO 0
csv_pick function,callsite,event,mean
expect_out $LINENO <<'END'
function,callsite,event,mean
beta,liby.so+0x300,perf::PAGE-FAULTS,3
beta,liby.so+0x300,tsc,15
alpha,libx.so+0x200,perf::PAGE-FAULTS,1.286
alpha,libx.so+0x200,tsc,310
END

# Mistakes are usage errors.
run_cmd "$CS_CMD" report --event nosuch "$V"
expect_status $LINENO 2
expect_err $LINENO "report: --event nosuch: no such event in the files"
run_cmd "$CS_CMD" report --sort nosuch "$V"
expect_status $LINENO 2
expect_err $LINENO "report: --sort nosuch: no such column"
run_cmd "$CS_CMD" report --sort mean:up "$V"
expect_status $LINENO 2
expect_err $LINENO "report: --sort mean:up: ':up' is no order (:asc or :desc)"
for bad in , ,tsc tsc, 'tsc,,tsc'; do
	run_cmd "$CS_CMD" report --event "$bad" "$V"
	expect_status $LINENO 2
	expect_err $LINENO "report: --event '$bad': an empty event name"
done
run_cmd "$CS_CMD" report --event tsc,tsc "$V"
expect_status $LINENO 2
expect_err $LINENO "report: --event tsc: named twice"
# A glob that matches no function of the files: a typo, or '[' unclosed.
for bad in nosuch '[' 'alpha['; do
	run_cmd "$CS_CMD" report --function "$bad" "$V"
	expect_status $LINENO 2
	expect_err $LINENO "report: --function $bad: no function in the files matches"
	[ -s "$T/out" ] && fail $LINENO "--function $bad: a report"
done
# The same for a module glob that no caller's module matches (it printed
# empty tables with exit 0), one of several included.
for args in "--module nosuch" "--module libx.so --module nosuch" "--function alpha --module nosuch"; do
	# shellcheck disable=SC2086 # the words of $args are options
	run_cmd "$CS_CMD" report $args "$V"
	expect_status $LINENO 2
	expect_err $LINENO "report: --module nosuch: no call in the files is made from a matching module"
	[ -s "$T/out" ] && fail $LINENO "$args: a report"
done
# A directory option naming no directory was accepted silently.
for opt in --debug-dir -d --search-path; do
	run_cmd "$CS_CMD" report "$opt" "$T/nosuch" "$V"
	expect_status $LINENO 2
	expect_err $LINENO "report: ${opt/#-d/--debug-dir} $T/nosuch: No such file or directory"
	[ -s "$T/out" ] && fail $LINENO "$opt: a report"
	run_cmd "$CS_CMD" report "$opt" "$V" "$V"
	expect_status $LINENO 2
	expect_err $LINENO ": Not a directory"
done
run_cmd "$CS_CMD" report --debug-dir "$T" --search-path "$T" -f csv "$V"
expect_status $LINENO 0
for bad in -1 x 3x ''; do
	run_cmd "$CS_CMD" report --top "$bad" "$V"
	expect_status $LINENO 2
	expect_err $LINENO "report: --top wants a number (0: every row), not '$bad'"
done
# --top 0: every row, as without it (and as run's --top 0).
run_cmd "$CS_CMD" report -f csv "$V"
cp "$T/out" "$T/all.csv"
run_cmd "$CS_CMD" report -f csv --top 0 "$V"
expect_status $LINENO 0
cmp -s "$T/out" "$T/all.csv" || fail $LINENO "--top 0 is not every row"
# --diff takes its two runs right after it: an option there is said so
# (it was taken for run A: "one run B after A, not more").
run_cmd "$CS_CMD" report --diff --by callsite "$V" "$V"
expect_status $LINENO 2
expect_err $LINENO "report: --diff A B: the two runs come right after --diff, not '--by' (options go before --diff or after B)"

# Options a mode does not apply are refused, never silently ignored.
check_refused()
{
	local line=$1 msg=$2

	shift 2
	run_cmd "$CS_CMD" report "$@"
	expect_status "$line" 2
	expect_err "$line" "$msg"
	[ -s "$T/out" ] && fail "$line" "'report $*' printed a report"
}
check_refused $LINENO "report: --series does not apply --function, --event, --top" \
	--series --function alpha --event tsc --top 1 "$V"
# The windows keep no nested values nor counts (review helper 72: they
# were accepted and the values printed as measured).
check_refused $LINENO "report: --series does not apply --self, --subtract-overhead" \
	--series --self -s "$V"
check_refused $LINENO "report: --series does not apply --subtract-overhead" \
	--series -f csv --subtract-overhead "$V"
check_refused $LINENO "report: --targets does not apply --module, --sort" \
	--targets --module x --sort calls "$V"
check_refused $LINENO "report: --hist does not apply --derive, --cold" \
	--hist --derive x=tsc --cold "$V"
check_refused $LINENO "report: --diff does not apply --format json, --self" \
	--diff "$V" --format json --self "$V"
# --by: the series are per target and thread, the targets per target;
# it was silently ignored.  The JSON document has rows too: it applies.
check_refused $LINENO "report: --series does not apply --by" --series --by function "$V"
check_refused $LINENO "report: --series does not apply --by" --series -f csv -b callsite "$V"
check_refused $LINENO "report: --targets does not apply --by, --sort" \
	--targets --by key --sort calls "$V"
check_refused $LINENO "report: --targets does not apply --by" --targets -f csv --by function "$V"
for mode in --series --targets; do
	run_cmd "$CS_CMD" report $mode -f json --by function "$V"
	expect_status $LINENO 0
	grep -q '"by":"function"' "$T/out" || fail $LINENO "$mode -f json: rows not by function"
done

finish
