#!/bin/bash
# SPDX-License-Identifier: MIT
# Merging files: two processes of one program (the same module under
# different ids, events in a different order, an event only one has), and
# the same file given twice.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

# work: tsc 10 20 (a) + 30 (b); faults 1 1 (a) + 5 (b); minor faults 4 (b).
# only_a has no minor faults: "no data".
want_merged()
{
	cat <<END
$CSV_HEADER,source
only_a,prog+0x50,prog,tsc,1,5,5,0,5,5,5,5,5,1,0,ok,,
only_a,prog+0x50,prog,perf::PAGE-FAULTS,1,0,0,0,0,0,0,0,0,1,0,ok,,
only_a,prog+0x50,prog,perf::MINOR-FAULTS,0,0,,,,,,,,1,0,no data,,
work,prog+0x40,prog,tsc,3,60,20,8.165,10,20,30,30,30,3,0,ok,,
work,prog+0x40,prog,perf::PAGE-FAULTS,3,7,2.333,1.886,1,1,5,5,5,3,0,ok,,
work,prog+0x40,prog,perf::MINOR-FAULTS,1,4,4,0,4,4,4,4,4,3,0,ok,,
END
}

run_cmd "$CS_CMD" report -f csv "$T/merge_a.rpt" "$T/merge_b.rpt"
expect_status $LINENO 0
want_merged | expect_out $LINENO
expect_no_err $LINENO

# The order of the files changes the order of the events only.
run_cmd "$CS_CMD" report -f csv "$T/merge_b.rpt" "$T/merge_a.rpt"
expect_status $LINENO 0
sort "$T/out" >"$T/out.sorted"
want_merged | sort | diff - "$T/out.sorted" >/dev/null ||
	fail $LINENO "merge depends on the order of the files"

# --by function over three files.
run_cmd "$CS_CMD" report -f csv --by function "$T/merge_a.rpt" "$T/merge_b.rpt" "$T/basic.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'work,*,*,tsc,3,60,20,8.165,10,20,30,30,30,3,0,ok,,'
expect_line $LINENO "$T/out" 'malloc,*,*,tsc,8,3150,393.75,469.732,10,40,1000,1000,1000,9,1,ok,,'
expect_line $LINENO "$T/out" 'free,*,*,perf::MINOR-FAULTS,0,0,,,,,,,,3,0,no data,,'

# Two runs alike (the file as another process would have written it):
# every count doubles, the spread stays.
other_run "$T/basic.rpt" "$T/basic_copy.rpt"
run_cmd "$CS_CMD" report -f csv "$T/basic.rpt" "$T/basic_copy.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'malloc,prog+0x1234,prog,tsc,10,300,30,14.142,10,30,50,50,50,10,0,ok,,'
expect_line $LINENO "$T/out" 'free,prog+0x1300,prog,tsc,4,32,8,1,7,7,9,9,9,6,0,ok,,'
expect_err $LINENO "calls that did not return: 2"

# The same file named twice is read once, and said (it doubled every
# count silently).
run_cmd "$CS_CMD" report -f csv "$T/basic.rpt" "$T/./basic.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'malloc,prog+0x1234,prog,tsc,5,150,30,14.142,10,30,50,50,50,5,0,ok,,'
expect_err $LINENO "cacheshim: warning: $T/./basic.rpt is the same file as $T/basic.rpt: read once"
# Named twice by the same name: said so ("X is the same file as X" read
# oddly, more so after X was skipped as a copy).
run_cmd "$CS_CMD" report -f csv "$T/basic_snap.rpt" "$T/basic.rpt" "$T/basic_snap.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'malloc,prog+0x1234,prog,tsc,5,150,30,14.142,10,30,50,50,50,5,0,ok,,'
expect_err $LINENO "cacheshim: warning: $T/basic_snap.rpt is named more than once: read once"

# So is a copy of a file (cp, or a snapshot taken while it was written):
# the same process's, the first one named is read (counted twice before).
cp "$T/basic.rpt" "$T/basic_cp.rpt"
run_cmd "$CS_CMD" report -f csv "$T/basic_cp.rpt" "$T/basic.rpt" "$T/basic_copy.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'malloc,prog+0x1234,prog,tsc,10,300,30,14.142,10,30,50,50,50,10,0,ok,,'
expect_err $LINENO "cacheshim: warning: $T/basic.rpt is a copy of $T/basic_cp.rpt (the file of the same process, pid 100): read once"

# Of a snapshot taken while the file was written and the file, the file
# is read, whichever is named first: the snapshot, named first, was read
# and the file skipped as its copy (odd,"name's call, made since, lost).
run_cmd "$CS_CMD" report -f csv "$T/basic_snap.rpt" "$T/basic.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'malloc,prog+0x1234,prog,tsc,5,150,30,14.142,10,30,50,50,50,5,0,ok,,'
expect_line $LINENO "$T/out" '"odd,""name",0xabc,?,tsc,1,3,3,0,3,3,3,3,3,1,0,ok,,'
expect_err $LINENO "cacheshim: warning: $T/basic_snap.rpt is a copy of $T/basic.rpt (the file of the same process, pid 100): read once"
grep -q incomplete "$T/err" && fail $LINENO "the snapshot was read"
run_cmd "$CS_CMD" report -f csv "$T/basic.rpt" "$T/basic_snap.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '"odd,""name",0xabc,?,tsc,1,3,3,0,3,3,3,3,3,1,0,ok,,'
expect_err $LINENO "cacheshim: warning: $T/basic_snap.rpt is a copy of $T/basic.rpt (the file of the same process, pid 100): read once"

# A copy of the finished file cut short (cp interrupted), named first: the
# whole file is read.  The cut one was, as damaged (status 1), and the
# whole one skipped as its copy.
head -c 60000 "$T/basic.rpt" >"$T/basic_cut.rpt"
run_cmd "$CS_CMD" report -f csv "$T/basic_cut.rpt" "$T/basic.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'malloc,prog+0x1234,prog,tsc,5,150,30,14.142,10,30,50,50,50,5,0,ok,,'
expect_err $LINENO "cacheshim: warning: $T/basic_cut.rpt is a copy of $T/basic.rpt (the file of the same process, pid 100): read once"
grep -q damaged "$T/err" && { fail $LINENO "the cut copy was read"; show "$T/err"; }

# Two snapshots of a running file between which no block was reserved
# (its calls went on in the blocks it had; a long run reserves none for
# seconds): alike by their headers, the one that had entered more calls is
# read, whichever is named first.  The first named was, and the calls
# made since were lost, the live file said to be a copy of the snapshot.
for order in "basic_early.rpt basic_live.rpt" "basic_live.rpt basic_early.rpt"; do
	set -- $order
	run_cmd "$CS_CMD" report -f csv "$T/$1" "$T/$2"
	expect_status $LINENO 0
	expect_line $LINENO "$T/out" 'malloc,prog+0x1234,prog,tsc,6,180,30,12.91,10,30,50,50,50,6,0,ok,,'
	expect_err $LINENO "cacheshim: warning: $T/basic_early.rpt is a copy of $T/basic_live.rpt (the file of the same process, pid 100): read once"
done

# The same pid, parent and start time but another program (an exec in one
# tick of a coarse clock, or processes of two pid namespaces): two
# processes, both read.
cp "$T/basic.rpt" "$T/basic_exec.rpt"
printf X | dd of="$T/basic_exec.rpt" bs=1 seek=149 conv=notrunc 2>/dev/null
run_cmd "$CS_CMD" report -f csv "$T/basic.rpt" "$T/basic_exec.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'malloc,prog+0x1234,prog,tsc,10,300,30,14.142,10,30,50,50,50,10,0,ok,,'
grep -q "copy of" "$T/err" && { fail $LINENO "another program's file taken for a copy"; show "$T/err"; }

# The table's summary lists both processes.
run_cmd "$CS_CMD" report "$T/merge_a.rpt" "$T/merge_b.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'pids:     200, 201'
expect_line $LINENO "$T/out" 'files:    2'
expect_line $LINENO "$T/out" 'events:   tsc, perf::PAGE-FAULTS, perf::MINOR-FAULTS'
# Files of one pid (an exec chain writes one per program): the pid once,
# every file counted (it said "pids: 100, 100").
run_cmd "$CS_CMD" report "$T/basic.rpt" "$T/basic_copy.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'pid:      100'
expect_line $LINENO "$T/out" 'files:    2'
run_cmd "$CS_CMD" report "$T/merge_a.rpt" "$T/basic.rpt" "$T/merge_b.rpt" "$T/basic_copy.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'pids:     200, 100, 201'
expect_line $LINENO "$T/out" 'files:    4'

# Sums over files wider than 64 bits: 2^63 calls entered, not recorded
# and set-up ticks in each of two files are 2^64 in all, not 0.
H=$T/huge.rpt
# Other processes' files alike (a copy is read once).
for c in 2 3 4; do other_run "$H" "$T/huge_$c.rpt" "$c"; done
H2=$T/huge_2.rpt H3=$T/huge_3.rpt H4=$T/huge_4.rpt
run_cmd "$CS_CMD" report -f csv "$H" "$H2"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'malloc,prog+0x1234,prog,tsc,9223372036854775808,0,0,0,0,0,0,0,0,18446744073709551616,0,ok,,'
run_cmd "$CS_CMD" report "$H" "$H2"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'calls not recorded (file full, file sealed at exit, thread without counters or past its end, re-entry, or a seccomp filter): 18446744073709551616'
expect_line $LINENO "$T/out" 'set-up:   18446744073709551616 TSC ticks spent by the shim making call sites and blocks; what ran inside measured calls is taken off their tsc'
# The same files saying why (a writer with header.lost_why: the file's
# capacity, and a thread without counters): only those reasons; merged
# with a file that did not say, every possible one, and "unsaid" in JSON.
for c in 5 6; do other_run "$H" "$T/huge_$c.rpt" "$c"; done
printf '\x09' | dd of="$T/huge_5.rpt" bs=1 seek=96 conv=notrunc status=none
printf '\x01' | dd of="$T/huge_6.rpt" bs=1 seek=96 conv=notrunc status=none
run_cmd "$CS_CMD" report "$T/huge_5.rpt" "$T/huge_6.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'calls not recorded (report file full (CACHESHIM_CAPACITY_MB); thread without counters or past its end): 18446744073709551616'
run_cmd "$CS_CMD" report "$T/huge_5.rpt" "$H2"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'calls not recorded (file full, file sealed at exit, thread without counters or past its end, re-entry, or a seccomp filter): 18446744073709551616'
run_cmd "$CS_CMD" report -f json "$T/huge_5.rpt" "$H2"
expect_status $LINENO 0
grep -qF '"lost_why":["file_full","thread","unsaid"],"setup_ticks"' "$T/out" ||
	fail $LINENO "JSON totals' lost_why is not file_full, thread, unsaid"
run_cmd "$CS_CMD" report -f json "$H" "$H2"
expect_status $LINENO 0
for k in entered lost_calls setup_ticks; do
	grep -qF "\"$k\":18446744073709551616" "$T/out" || fail $LINENO "JSON $k is not 2^64"
done
# 2^64 measured calls in one row (four files): no count can hold them.
for args in "-f csv" "-f json" "--hist" "--by function"; do
	run_cmd "$CS_CMD" report $args "$H" "$H2" "$H3" "$H4"
	expect_status $LINENO 1
	expect_err $LINENO "cacheshim: $H4: 2^64 calls or more in one row: no real run records as many"
	[ -s "$T/out" ] && fail $LINENO "$args: a report of wrapped counts"
done
# Two call sites of 2^63 calls each: the rows fit, their function does
# not (the histogram and JSON views add the rows of a function up).
run_cmd "$CS_CMD" report -f csv "$T/huge2.rpt"
expect_status $LINENO 0
for args in "-f json" "--hist"; do
	run_cmd "$CS_CMD" report $args "$T/huge2.rpt"
	expect_status $LINENO 1
	expect_err $LINENO "cacheshim: report: 2^64 calls or more in one function: no real run records as many"
done

finish
