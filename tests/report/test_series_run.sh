#!/bin/bash
# SPDX-License-Identifier: MIT
# End to end: a real program under the real shim (tests/report/
# prog_series), read back by cacheshim report.  Page faults are counted
# exactly, so the series windows, the size classes of a keyed target and
# the inclusive/exclusive split of a target calling a target are known.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

CS_SHIM=${CS_SHIM:-$CS_BUILDDIR/.libs/libcacheshim.so}
PROG=$CS_BUILDDIR/tests/report/prog_series
[ -f "$CS_SHIM" ] || { echo "no shim at $CS_SHIM" >&2; exit 99; }
[ -x "$PROG" ] || { echo "$PROG is not built" >&2; exit 99; }
unset CACHESHIM_TARGETS CACHESHIM_EVENTS CACHESHIM_OUTPUT CACHESHIM_WINDOW \
	CACHESHIM_CAPACITY_MB CACHESHIM_SESSION CACHESHIM_QUIET CACHESHIM_LIB \
	CACHESHIM_SERIES LD_PRELOAD
export LC_ALL=C

# shim_run NAME TARGETS ARGS...: prog_series ARGS under the shim, counting
# page faults, its report in $T/NAME.csr.
shim_run()
{
	local name=$1 targets=$2

	shift 2
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=perf::PAGE-FAULTS CACHESHIM_TARGETS=$targets \
		CACHESHIM_OUTPUT="$T/$name.csr" LD_PRELOAD=$CS_SHIM "$PROG" "$@" \
		>"$T/$name.out" 2>"$T/$name.err" || status=$?
	if [ "$status" -ne 0 ] || [ ! -s "$T/$name.csr" ]; then
		fail "$BASH_LINENO" "prog_series $* under the shim: status $status"
		show "$T/$name.err"
	fi
}

# per_window CALLS [START]: the calls per window once CALLS calls are in:
# windows start at START calls (CACHESHIM_SERIES, default 16) and merge
# pairwise whenever all CS_SERIES_WINDOWS of them are full.
W=$("$PROG" --windows)
per_window()
{
	local per=${2:-16}

	while [ $((W * per)) -lt "$1" ]; do
		per=$((per * 2))
	done
	echo $per
}
[ "$W" -ge 16 ] || fail $LINENO "CS_SERIES_WINDOWS is $W: too few for these checks"

# 4096 calls, k = 1 + (i / 256) % 4 pages: windows of a power of two calls
# up to 256, so each window has one k: mean, p50 and p99 are k.
per=$(per_window 4096)
shim_run saw cs_touch_pages 4096
run_cmd "$CS_CMD" report --series -f csv "$T/saw.csr"
expect_status $LINENO 0
grep '^cs_touch_pages,perf::PAGE-FAULTS,' "$T/out" >"$T/saw.rows"
awk -F, -v per=$per '
	{ w = NR - 1; k = 1 + int(w * per / 256) % 4
	  want = sprintf("%d,%d,%d,%d,%d,%d", per * w + 1, per * w + per, per, k, k, k)
	  got = $3 "," $4 "," $5 "," $6 "," $7 "," $8
	  if (got != want) { print "window " w ": " got ", want " want; bad = 1 } }
	END { if (NR != 4096 / per) { print NR " windows, want " 4096 / per; bad = 1 }
	      exit bad }' \
	"$T/saw.rows" >"$T/saw.bad" || { fail $LINENO "saw-tooth series"; show "$T/saw.bad"; }
# One thread: its tid, no other target (the calibration target has none).
[ "$(cut -d, -f9 "$T/saw.rows" | sort -u | wc -l)" = 1 ] ||
	fail $LINENO "more than one thread"
grep -v '^target,\|^cs_touch_pages,' "$T/out" >"$T/other"
[ -s "$T/other" ] && { fail $LINENO "series of other targets"; head -5 "$T/other" >&2; }

# 1000 calls: windows of fewer calls; the one from call 257 on is at 2.
# By default a window starts at 16 calls (63 windows here); with
# CACHESHIM_SERIES=1 at one call (then 4 calls each after the merges);
# with 64, 64 calls each (16 windows).
for start in "" 1 64; do
	per=$(per_window 1000 $start)
	if [ -n "$start" ]; then export CACHESHIM_SERIES=$start; else unset CACHESHIM_SERIES; fi
	rm -f "$T"/short.csr*
	shim_run short cs_touch_pages 1000
	run_cmd "$CS_CMD" report --series -f csv "$T/short.csr"
	expect_status $LINENO 0
	n=$(grep -c '^cs_touch_pages,perf::PAGE-FAULTS,' "$T/out")
	[ "$n" = $(((1000 + per - 1) / per)) ] ||
		fail $LINENO "CACHESHIM_SERIES=$start: $n windows for 1000 calls of $per"
	grep "^cs_touch_pages,perf::PAGE-FAULTS,257,$((256 + per)),$per,2,2,2," "$T/out" >/dev/null ||
		fail $LINENO "CACHESHIM_SERIES=$start: no window of $per calls from call 257 at 2 faults"
done
unset CACHESHIM_SERIES

# Keyed by the page count: one row per size class (1, 2-3, 4-7).
shim_run keyed cs_touch_pages:arg1 4096
run_cmd "$CS_CMD" report -f csv --by key "$T/keyed.csr"
csv_pick "$CSV_HEADER"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'cs_touch_pages[arg1:1],*,*,perf::PAGE-FAULTS,1024,1024,1,0,1,1,1,1,1,1024,0,ok,1'
expect_line $LINENO "$T/out" 'cs_touch_pages[arg1:2],*,*,perf::PAGE-FAULTS,2048,5120,2.5,0.5,2,2,3,3,3,2048,0,ok,2-3'
expect_line $LINENO "$T/out" 'cs_touch_pages[arg1:4],*,*,perf::PAGE-FAULTS,1024,4096,4,0,4,4,4,4,4,1024,0,ok,4-7'

# Nested: cs_apply calls cs_touch_pages(2), (3), (4) through the wrapper:
# 9 faults per call inclusive, 0 exclusive.  Without series: the shim's
# first touch of a series window's page happens inside the enclosing call
# and would count there.  The first call also pays for the new call site
# blocks (the cold call): only p50 and p90 are exact, and inclusive minus
# exclusive is exactly the inner calls' 450 faults.
CACHESHIM_SERIES=0 shim_run nested cs_apply,cs_touch_pages 0 50
for view in "" --self; do
	run_cmd "$CS_CMD" report -f csv --by function $view "$T/nested.csr"
	csv_pick "$CSV_HEADER"
	expect_status $LINENO 0
	cp "$T/out" "$T/nested$view.csv"
done
expect_line $LINENO "$T/nested.csv" \
	'cs_touch_pages,*,*,perf::PAGE-FAULTS,150,450,3,0.816,2,3,4,4,4,150,0,ok,'
# function event calls total min p50 p90, inclusive then exclusive.
row()
{
	awk -F, -v fn="$1" '$1 == fn && $4 == "perf::PAGE-FAULTS" {
		print $5, $6, $9, $10, $11 }' "$2"
}
read -r calls total min p50 p90 < <(row cs_apply "$T/nested.csv")
read -r xcalls xtotal xmin xp50 xp90 < <(row cs_apply "$T/nested--self.csv")
[ "$calls $min $p50 $p90" = "50 9 9 9" ] ||
	fail $LINENO "cs_apply inclusive: calls $calls min $min p50 $p50 p90 $p90"
[ "$xcalls $xmin $xp50 $xp90" = "50 0 0 0" ] ||
	fail $LINENO "cs_apply exclusive: calls $xcalls min $xmin p50 $xp50 p90 $xp90"
[ $((total - xtotal)) = 450 ] ||
	fail $LINENO "cs_apply: inclusive $total - exclusive $xtotal is not 450"

finish
