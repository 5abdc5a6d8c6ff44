#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim report --format csv: exact lines for fixtures with known values
# (two threads at one call site, an unknown module, a name that needs
# quoting, keyed targets, a failed event, a killed process).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

# malloc at prog+0x1234: tsc 10 20 30 40 (thread 100) and 50 (thread 101):
# mean 30, stddev sqrt(200) = 14.142; page faults 0 0 1 0 2: mean 0.6,
# stddev 0.8.  free: one call entered but not returned.
# The same file with its site blocks behind padding blocks (as the shim
# writes them), and in format version 1 (site counts in the old order).
for rpt in basic aligned v1; do
	run_cmd "$CS_CMD" report --format csv "$T/$rpt.rpt"
	expect_status $LINENO 0
	expect_out $LINENO <<END
$CSV_HEADER,source
free,prog+0x1300,prog,tsc,2,16,8,1,7,7,9,9,9,3,0,ok,,
free,prog+0x1300,prog,perf::PAGE-FAULTS,2,0,0,0,0,0,0,0,0,3,0,ok,,
malloc,libfoo.so+0x20,libfoo.so,tsc,3,3000,1000,0,1000,1000,1000,1000,1000,4,1,ok,,
malloc,libfoo.so+0x20,libfoo.so,perf::PAGE-FAULTS,3,0,0,0,0,0,0,0,0,4,1,ok,,
malloc,prog+0x1234,prog,tsc,5,150,30,14.142,10,30,50,50,50,5,0,ok,,
malloc,prog+0x1234,prog,perf::PAGE-FAULTS,5,3,0.6,0.8,0,0,2,2,2,5,0,ok,,
"odd,""name",0xabc,?,tsc,1,3,3,0,3,3,3,3,3,1,0,ok,,
"odd,""name",0xabc,?,perf::PAGE-FAULTS,1,1,1,0,1,1,1,1,1,1,0,ok,,
END
	expect_err $LINENO "calls that did not return: 1"
done

# --by function: malloc's two call sites in one row:
# tsc 10 20 30 40 50 1000 1000 1000.
run_cmd "$CS_CMD" report --format=csv --by=function "$T/basic.rpt"
expect_status $LINENO 0
expect_out $LINENO <<END
$CSV_HEADER,source
free,*,*,tsc,2,16,8,1,7,7,9,9,9,3,0,ok,,
free,*,*,perf::PAGE-FAULTS,2,0,0,0,0,0,0,0,0,3,0,ok,,
malloc,*,*,tsc,8,3150,393.75,469.732,10,40,1000,1000,1000,9,1,ok,,
malloc,*,*,perf::PAGE-FAULTS,8,3,0.375,0.696,0,0,2,2,2,9,1,ok,,
"odd,""name",*,*,tsc,1,3,3,0,3,3,3,3,3,1,0,ok,,
"odd,""name",*,*,perf::PAGE-FAULTS,1,1,1,0,1,1,1,1,1,1,0,ok,,
END

# An event that could not be opened: no numbers at all.
run_cmd "$CS_CMD" report -f csv "$T/failed.rpt"
expect_status $LINENO 0
expect_out $LINENO <<END
$CSV_HEADER,source
fn,prog+0x10,prog,tsc,1,5,5,0,5,5,5,5,5,1,0,ok,,
fn,prog+0x10,prog,cycles,,,,,,,,,,,,not counted,,
fn,prog+0x10,prog,perf::PAGE-FAULTS,1,1,1,0,1,1,1,1,1,1,0,ok,,
END
expect_no_err $LINENO

# Keyed by the third argument; the calibration target is not a row.
run_cmd "$CS_CMD" report -f csv "$T/keyed.rpt"
expect_status $LINENO 0
expect_out $LINENO <<END
$CSV_HEADER,source
memcpy[arg3:64],prog+0x70,prog,tsc,2,42,21,1,20,20,22,22,22,2,0,ok,64-127,
memcpy[arg3:64],prog+0x70,prog,perf::PAGE-FAULTS,2,0,0,0,0,0,0,0,0,2,0,ok,64-127,
memcpy[arg3:128],prog+0x70,prog,tsc,1,30,30,0,30,30,30,30,30,1,0,ok,128-255,
memcpy[arg3:128],prog+0x70,prog,perf::PAGE-FAULTS,1,0,0,0,0,0,0,0,0,1,0,ok,128-255,
END

# The same, less the overhead: 20 22 and 30 less the median of 4 5 6;
# the mean as measured and the overhead taken off per call at the end.
run_cmd "$CS_CMD" report -f csv -s "$T/keyed.rpt"
expect_status $LINENO 0
expect_out $LINENO <<END
$CSV_HEADER,source,raw_mean,overhead
memcpy[arg3:64],prog+0x70,prog,tsc,2,32,16,1,15,15,17,17,17,2,0,ok,64-127,,21,5
memcpy[arg3:64],prog+0x70,prog,perf::PAGE-FAULTS,2,0,0,0,0,0,0,0,0,2,0,ok,64-127,,0,0
memcpy[arg3:128],prog+0x70,prog,tsc,1,25,25,0,25,25,25,25,25,1,0,ok,128-255,,30,5
memcpy[arg3:128],prog+0x70,prog,perf::PAGE-FAULTS,1,0,0,0,0,0,0,0,0,1,0,ok,128-255,,0,0
END

# A killed process: reported, with a warning, status 0.
run_cmd "$CS_CMD" report -f csv "$T/running.rpt"
expect_status $LINENO 0
expect_out $LINENO <<END
$CSV_HEADER,source
spin,prog+0x60,prog,tsc,3,39,13,1.633,11,13,15,15,15,5,0,ok,,
spin,prog+0x60,prog,perf::PAGE-FAULTS,3,0,0,0,0,0,0,0,0,5,0,ok,,
END
expect_err $LINENO "cacheshim: warning: $T/running.rpt is incomplete (program still running or did not exit cleanly)"
expect_err $LINENO "calls that did not return: 2"

# The same file saying it uses 3 GiB, a sparse file of that size: it was
# read whole into memory (3 GB, seconds); its holes are now skipped.  Same
# rows (the zeros after the blocks end the walk), memory of the file's
# data only.
cp "$T/running.rpt" "$T/sparse.rpt"
for off in 16 24; do # capacity, used: 3 << 30, little-endian
	printf '\000\000\000\300\000\000\000\000' |
		dd of="$T/sparse.rpt" bs=1 seek=$off conv=notrunc status=none
done
truncate -s 3G "$T/sparse.rpt"
maxrss=$(python3 -c 'import resource, subprocess, sys
with open(sys.argv[2], "w") as o, open(sys.argv[3], "w") as e:
    subprocess.run([sys.argv[1], "report", "-f", "csv", sys.argv[4]], stdout=o, stderr=e)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
	"$CS_CMD" "$T/out" "$T/err" "$T/sparse.rpt")
[ "$maxrss" -lt 262144 ] || fail $LINENO "reading a sparse 3 GiB file took $maxrss KB of memory"
grep -q '^spin,prog+0x60,prog,tsc,3,39,' "$T/out" || { show "$T/out"; show "$T/err"; fail $LINENO "sparse.rpt: spin's row is not there"; }

# Every row has as many fields as the header (quoted commas aside).
for f in basic failed keyed running merge_a; do
	"$CS_CMD" report -f csv "$T/$f.rpt" 2>/dev/null |
		sed 's/"[^"]*"//g' | awk -F, -v f=$f '
		NR == 1 { n = NF; next }
		NF != n { print f ": line " NR " has " NF " fields, want " n; bad = 1 }
		END { exit bad }' >&2 || fail $LINENO "$f: ragged CSV"
done

finish
