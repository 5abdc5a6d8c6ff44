#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim report --series: windows of calls over time (merged across
# threads of one shift, per thread otherwise, merged windows of a long
# run), and keyed targets: one row per argument size class, CSV `key`.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

SERIES_HEADER='target,event,first_call,last_call,calls,mean,p50,p99,tid,pid,min,max,first_tsc'

# v1series.rpt is series.rpt in format version 1 (windows not rounded up
# to 64 bytes, site counts in the old order), v1series1.rpt series1.rpt
# (one event: windows of 1,256 bytes then, 1,280 now): every view reads
# the same.
for name in series series1; do
	for args in "--series --format csv" "--series" "--format csv"; do
		# shellcheck disable=SC2086 # the options are words
		"$CS_CMD" report $args "$T/$name.rpt" >"$T/v2.out" 2>&1
		# shellcheck disable=SC2086
		"$CS_CMD" report $args "$T/v1$name.rpt" >"$T/v1.out" 2>&1
		sed -i "s|$T/v1$name.rpt|$T/$name.rpt|g" "$T/v1.out"
		cmp -s "$T/v2.out" "$T/v1.out" || {
			fail $LINENO "$name, report $args: version 1 reads differently"
			diff -u "$T/v2.out" "$T/v1.out" >&2
		}
	done
done

# series.rpt (tests/report/mkfixture.c).  grow: thread 900 has 1 call per
# window, thread 901 has 2: not merged, a tid each.  lookup: both threads
# have 4 calls per window, merged by window: the first window holds
# thread 900's calls 1-4 (10 ticks) and thread 901's (30 ticks).
run_cmd "$CS_CMD" report --series --format csv "$T/series.rpt"
expect_status $LINENO 0
expect_no_err $LINENO
grep -v '^long,' "$T/out" >"$T/short"
if ! diff -u - "$T/short" >"$T/diff" <<END; then
$SERIES_HEADER
grow,tsc,1,1,1,5,5,5,900,900,5,5,1001
grow,tsc,2,2,1,6,6,6,900,900,6,6,1002
grow,tsc,3,3,1,7,7,7,900,900,7,7,1003
grow,tsc,1,2,2,8,8,8,901,900,8,8,1001
grow,tsc,3,4,2,9,9,9,901,900,9,9,1003
grow,perf::PAGE-FAULTS,1,1,1,0,0,0,900,900,0,0,1001
grow,perf::PAGE-FAULTS,2,2,1,0,0,0,900,900,0,0,1002
grow,perf::PAGE-FAULTS,3,3,1,0,0,0,900,900,0,0,1003
grow,perf::PAGE-FAULTS,1,2,2,0,0,0,901,900,0,0,1001
grow,perf::PAGE-FAULTS,3,4,2,0,0,0,901,900,0,0,1003
lookup,tsc,1,4,8,20,10,30,*,*,10,30,1001
lookup,tsc,5,8,4,10,10,10,*,*,10,10,1005
lookup,tsc,9,12,4,50,50,50,*,*,50,50,1009
lookup,tsc,13,16,4,50,50,50,*,*,50,50,1013
lookup,tsc,17,19,3,90,90,90,*,*,90,90,1017
lookup,perf::PAGE-FAULTS,1,4,8,1,0,2,*,*,0,2,1001
lookup,perf::PAGE-FAULTS,5,8,4,0,0,0,*,*,0,0,1005
lookup,perf::PAGE-FAULTS,9,12,4,1,1,1,*,*,1,1,1009
lookup,perf::PAGE-FAULTS,13,16,4,1,1,1,*,*,1,1,1013
lookup,perf::PAGE-FAULTS,17,19,3,0,0,0,*,*,0,0,1017
END
	fail $LINENO "unexpected series"
	show "$T/diff"
fi

# long: 3072 calls; tsc 100, 200, 300 for 1024 calls each.  The windows
# merged until they held them all: 2^SHIFT calls per window, WINDOWS of
# them (mkfixture computes both from CS_SERIES_WINDOWS).
read -r shift nwin <"$T/series.expected"
per=$((1 << shift))
n=$(grep -c '^long,tsc,' "$T/out")
[ "$n" = "$nwin" ] || fail $LINENO "long has $n tsc windows, want $nwin"
for c in 1 1025 2049 $((3072 - per + 1)); do
	v=$((100 + (c - 1) / 1024 * 100))
	expect_line $LINENO "$T/out" \
		"long,tsc,$c,$((c + per - 1)),$per,$v,$v,$v,900,900,$v,$v,$((1000 + c))"
done
# Every window is full, and the calls add up.
awk -F, -v per=$per '$1 == "long" && $2 == "tsc" { if ($5 != per) bad = 1; s += $5 }
	END { exit bad || s != 3072 }' "$T/out" || fail $LINENO "long: windows do not add up"

# The table: one section per (target, event), a title saying whose
# windows and how wide.
run_cmd "$CS_CMD" report --series "$T/series.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'lookup, tsc: all threads, 4 calls per window'
expect_line $LINENO "$T/out" 'grow, tsc: thread 900 (pid 900), 1 call per window'
expect_line $LINENO "$T/out" 'grow, tsc: thread 901 (pid 900), 2 calls per window'
expect_line $LINENO "$T/out" "long, perf::PAGE-FAULTS: thread 900 (pid 900), $per calls per window"
sed -n '/^lookup, tsc:/,/^$/p' "$T/out" >"$T/lookup"
if ! diff -u - "$T/lookup" >"$T/diff" <<'END'; then
lookup, tsc: all threads, 4 calls per window
  first call  last call  calls  mean  p50  p99
           1          4      8    20   10   30
           5          8      4    10   10   10
           9         12      4    50   50   50
          13         16      4    50   50   50
          17         19      3    90   90   90

END
	fail $LINENO "unexpected series table"
	show "$T/diff"
fi

# The file as another process would have written it: the same threads
# in two processes, merged.
other_run "$T/series.rpt" "$T/series_copy.rpt"
run_cmd "$CS_CMD" report --series -f csv "$T/series.rpt" "$T/series_copy.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'lookup,tsc,1,4,16,20,10,30,*,*,10,30,1001'

# A file without series blocks.
run_cmd "$CS_CMD" report --series "$T/basic.rpt"
expect_status $LINENO 0
expect_out $LINENO <<<'no series recorded'
run_cmd "$CS_CMD" report --series -f csv "$T/basic.rpt"
expect_out $LINENO <<<"$SERIES_HEADER"

# Keyed by argument: one row per size class; `key` is the class.
run_cmd "$CS_CMD" report -f csv --by key "$T/classes.rpt"
csv_pick "$CSV_HEADER"
expect_status $LINENO 0
expect_out $LINENO <<END
$CSV_HEADER
touch[arg1:0],*,*,tsc,1,20,20,0,20,20,20,20,20,1,0,ok,0
touch[arg1:0],*,*,perf::PAGE-FAULTS,1,0,0,0,0,0,0,0,0,1,0,ok,0
touch[arg1:1],*,*,tsc,1,30,30,0,30,30,30,30,30,1,0,ok,1
touch[arg1:1],*,*,perf::PAGE-FAULTS,1,1,1,0,1,1,1,1,1,1,0,ok,1
touch[arg1:2],*,*,tsc,3,126,42,1.633,40,42,44,44,44,3,0,ok,2-3
touch[arg1:2],*,*,perf::PAGE-FAULTS,3,8,2.667,0.471,2,3,3,3,3,3,0,ok,2-3
touch[arg1:4],*,*,tsc,2,120,60,0,60,60,60,60,60,2,0,ok,4-7
touch[arg1:4],*,*,perf::PAGE-FAULTS,2,10,5,0,5,5,5,5,5,2,0,ok,4-7
END
# Per call site, the class is still one row each.
run_cmd "$CS_CMD" report -f csv "$T/classes.rpt"
csv_pick "$CSV_HEADER"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'touch[arg1:2],prog+0x480,prog,tsc,1,42,42,0,42,42,42,42,42,1,0,ok,2-3'
expect_line $LINENO "$T/out" 'touch[arg1:2],prog+0x400,prog,tsc,2,84,42,2,40,40,44,44,44,2,0,ok,2-3'
run_cmd "$CS_CMD" report --by key "$T/classes.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '  touch[arg1:2]      3    42     1.6   40   42   44   44   44    126'

# The program ended while "long"'s windows merged (its series block has
# CS_SERIES_MERGING in shift): that series is left out and said, the file
# is not called damaged, the other series are whole.
run_cmd "$CS_CMD" report --series -f csv "$T/merging.rpt"
expect_status $LINENO 0
expect_err $LINENO "cacheshim: warning: $T/merging.rpt: 1 series over time not shown: their windows were being merged when the program ended"
grep -q '^long,' "$T/out" && fail $LINENO "the half-merged series of long is shown"
[ "$(grep -c '^lookup,tsc,' "$T/out")" -eq 5 ] || { show "$T/out"; fail $LINENO "lookup's windows are not all there"; }

# Two threads' windows whose sums fit 64 bits each but not together
# (bigseries.rpt: 4 calls of 9e18 ticks): the merged window's mean is
# 9e18, not what a 64-bit sum wrapped to (4.39E).
run_cmd "$CS_CMD" report --series -f csv "$T/bigseries.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'lookup,tsc,1,2,4,9000000000000000000,9000000000000000000,9000000000000000000,*,*,9000000000000000000,9000000000000000000,1001'

# Control characters in the target and event names (ctl.rpt) are written
# as escapes in the titles of the table; the CSV quotes them as they are.
run_cmd "$CS_CMD" report --series "$T/ctl.rpt"
expect_status $LINENO 0
expect_out $LINENO <<'EOF'
new\nline, tsc: thread 961 (pid 961), 1 call per window
  first call  last call  calls  mean  p50  p99
           1          1      1     7    7    7

new\nline, page\x1b[7mfaults: thread 961 (pid 961), 1 call per window
  first call  last call  calls  mean  p50  p99
           1          1      1     0    0    0
EOF
expect_no_ctl $LINENO "$T/out"
run_cmd "$CS_CMD" report --series -f csv "$T/ctl.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" "$(printf 'line",page\033[7mfaults,1,1,1,0,0,0,961,961,0,0,1001')"

finish
