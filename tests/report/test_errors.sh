#!/bin/bash
# SPDX-License-Identifier: MIT
# Files the reader must reject (exit 1, a message naming the file and the
# problem, nothing on stdout) or report as damaged (exit 1, the message,
# and the report of what could be read).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

# LINE FILE MESSAGE
rejected=(
	$LINENO empty.rpt "not a cacheshim report (bad magic)"
	$LINENO badmagic.rpt "not a cacheshim report (bad magic)"
	$LINENO short.rpt "truncated header (100 bytes, 4096 expected)"
	$LINENO version.rpt "unsupported format version 3 (this cacheshim reads versions 1 to 2)"
	$LINENO nevents.rpt "1000 events in the header (at most 16)"
	$LINENO self.expected "not a cacheshim report (bad magic)"
	$LINENO nonexistent.rpt "cannot open: No such file or directory"
	$LINENO . "not a regular file"
	$LINENO fifo "not a regular file"
)
mkfifo "$T/fifo"
for ((i = 0; i < ${#rejected[@]}; i += 3)); do
	line=${rejected[i]} file=$T/${rejected[i + 1]} msg=${rejected[i + 2]}
	for fmt in table csv; do
		run_cmd timeout 20 "$CS_CMD" report --format $fmt "$file"
		expect_status "$line" 1
		expect_err "$line" "cacheshim: $file: $msg"
		[ -s "$T/out" ] && { fail "$line" "output for a rejected file"; show "$T/out"; }
	done
done

# One bad file among good ones: no report at all, every bad one named.
run_cmd "$CS_CMD" report -f csv "$T/basic.rpt" "$T/short.rpt" "$T/version.rpt"
expect_status $LINENO 1
expect_err $LINENO "$T/short.rpt: truncated header"
expect_err $LINENO "$T/version.rpt: unsupported format version 3"
[ -s "$T/out" ] && fail $LINENO "output although a file was rejected"

# LINE FILE MESSAGE CSV-LINES-KEPT (data lines)
damaged=(
	$LINENO blocksize.rpt "damaged: block at offset 42072: bad size 12 (must be a multiple of 8, at least 8)" 2
	$LINENO dangling.rpt "damaged: site block at offset 42072 refers to target 42, which does not exist" 6
	$LINENO truncated.rpt "damaged: truncated: the header says 97896 bytes are used, the file has 88896 (and 1 more problem)" 6
	$LINENO badmax.rpt "damaged: site block at offset 4392: event 0: its maximum is not among its values (3 calls)" 0
	$LINENO nohalf.rpt "damaged: site block at offset 4392: event 0: its sum is not that of its histogram's values (3 calls) (and 1 more problem)" 0
)
for ((i = 0; i < ${#damaged[@]}; i += 4)); do
	line=${damaged[i]} file=$T/${damaged[i + 1]} msg=${damaged[i + 2]}
	run_cmd "$CS_CMD" report -f csv "$file"
	expect_status "$line" 1
	expect_err "$line" "cacheshim: $file: $msg; the report shows what could be read"
	n=$(($(wc -l <"$T/out") - 1))
	[ "$n" -eq "${damaged[i + 3]}" ] || {
		fail "$line" "$n rows kept, want ${damaged[i + 3]}"
		show "$T/out"
	}
done
# What was kept is right: the blocks before the damage are whole.
run_cmd "$CS_CMD" report -f csv "$T/blocksize.rpt"
expect_out $LINENO <<END
$CSV_HEADER,source
malloc,prog+0x1234,prog,tsc,5,150,30,14.142,10,30,50,50,50,5,0,ok,,
malloc,prog+0x1234,prog,perf::PAGE-FAULTS,5,3,0.6,0.8,0,0,2,2,2,5,0,ok,,
END

# A busy exit: a call cut between adding its value to the sums and
# storing it as the maximum, in the site (entered, not counted) and in
# its series window (numbered, not counted), is not damage (one test_threads
# busy run in ~60 was called damaged so).  nohalf.rpt above has the same
# sums with nothing in flight.
run_cmd "$CS_CMD" report -f csv "$T/halfcall.rpt"
expect_status $LINENO 0
grep -q damaged "$T/err" && { fail $LINENO "halfcall.rpt called damaged"; show "$T/err"; }
run_cmd "$CS_CMD" report --series -f csv "$T/halfcall.rpt"
expect_status $LINENO 0
grep -q damaged "$T/err" && { fail $LINENO "halfcall.rpt's series called damaged"; show "$T/err"; }

# Another process writes into the file while it is read: the version in
# the mapping turns 1 after the header was checked (version 2).  Reading
# as version 1 would rewrite site blocks in place, in a read-only mapping
# (SIGSEGV); the header as checked decides.
cp "$T/nested.rpt" "$T/tamper.rpt"
CS_TAMPER=8:1 LD_PRELOAD=$CS_BUILDDIR/tests/report/.libs/libcstamper.so \
	run_cmd "$CS_CMD" report -f csv "$T/tamper.rpt"
expect_status $LINENO 0
cmp -s "$T/out" <("$CS_CMD" report -f csv "$T/nested.rpt") ||
	fail $LINENO "the tampered file reads differently from its original"
[ "$(od -An -tu4 -j8 -N4 "$T/tamper.rpt" | tr -d ' ')" = 1 ] ||
	fail $LINENO "the file was not written into while it was read"

# A damage message that quotes a name from the file (ctlbad.rpt: a
# target "bad\nname" of a module that does not exist) escapes its control
# characters: the message stays one line.
run_cmd "$CS_CMD" report "$T/ctlbad.rpt"
expect_status $LINENO 1
expect_err $LINENO 'damaged: target 1 (bad\nname) refers to module 42, which does not exist'
[ "$(wc -l <"$T/err")" -eq 1 ] || { fail $LINENO "the message is not one line"; show "$T/err"; }
expect_no_ctl $LINENO "$T/err"

finish
