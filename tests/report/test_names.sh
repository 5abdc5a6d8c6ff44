#!/bin/bash
# SPDX-License-Identifier: MIT
# Names in the text outputs: cut to the table's 60 columns at a whole
# character or escape (cutting the escaped bytes split \x01 and UTF-8
# characters), and columns as wide as the names' characters, not bytes;
# C1 controls and bytes that are not UTF-8 escaped as C0 controls are.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

"$CS_BUILDDIR/tests/report/mkpresets" "$T" || { echo "mkpresets failed" >&2; exit 99; }

# expect_utf8 LINE FILE: FILE is valid UTF-8 (no character cut in two).
expect_utf8()
{
	if ! iconv -f UTF-8 -t UTF-8 "$2" >/dev/null 2>&1; then
		fail "$1" "$(basename "$2") is not valid UTF-8"
		show "$2"
	fi
}

# rep N TEXT: TEXT N times.
rep()
{
	local i s=

	for ((i = 0; i < $1; i++)); do
		s+=$2
	done
	printf '%s' "$s"
}

# names.rpt (mkfixture.c): 56 a's, \001, bcdef; 50 a's and 20 e-acutes;
# 40 e-acutes (80 bytes, 40 columns); module möd.so.  The first is cut
# before the escape that crosses column 57, the second after the 7th
# e-acute; the third fits.  The columns line up by characters.
run_cmd "$CS_CMD" report "$T/names.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" "  function$(rep 52 ' ')  callsite     module  calls  mean  stddev  min  p50  p90  p99  max  total"
expect_line $LINENO "$T/out" "  $(rep 56 a)...   möd.so+0x10  möd.so      1    30       0   30   30   30   30   30     30"
expect_line $LINENO "$T/out" "  $(rep 50 a)$(rep 7 é)...  möd.so+0x20  möd.so      1    20       0   20   20   20   20   20     20"
expect_line $LINENO "$T/out" "  $(rep 40 é)$(rep 20 ' ')  möd.so+0x30  möd.so      1    10       0   10   10   10   10   10     10"
expect_utf8 $LINENO "$T/out"
expect_no_ctl $LINENO "$T/out"
run_cmd "$CS_CMD" report --by function --event tsc "$T/names.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" "  $(rep 50 a)$(rep 7 é)...      1    20       0   20   20   20   20   20     20"
expect_line $LINENO "$T/out" "  $(rep 40 é)$(rep 20 ' ')      1    10       0   10   10   10   10   10     10"
expect_utf8 $LINENO "$T/out"

# The preset formulas' tables cut names the same way (skllong.rpt,
# mkpresets.c: 55 a's, \001 across column 57, 20 e-acutes).
run_cmd "$CS_CMD" report --by callsite "$T/skllong.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" "  function$(rep 50 ' ')  callsite   module  calls         mean  stddev  min  p50  p90  p99  max  total"
expect_line $LINENO "$T/out" "  $(rep 55 a)...  prog+0x30  prog        2    undefined       -    -    -    -    -    -      -"
expect_utf8 $LINENO "$T/out"
expect_no_ctl $LINENO "$T/out"

# --targets and --diff do not cut names; their columns line up by
# characters too.
run_cmd "$CS_CMD" report --targets "$T/names.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" "  $(rep 50 a)$(rep 20 é)  ?       0x400020  GOT (0 slots)              1"
expect_line $LINENO "$T/out" "  $(rep 40 é)$(rep 30 ' ')  ?       0x400030  GOT (0 slots)              1"
expect_utf8 $LINENO "$T/out"
run_cmd "$CS_CMD" report --diff "$T/names.rpt" "$T/names.rpt" --event tsc --top 1 \
	--sort mean_b:asc
expect_status $LINENO 0
expect_line $LINENO "$T/out" "  function$(rep 32 ' ')  calls_a  calls_b  calls_diff  calls_pct  mean_a  mean_b  mean_diff  mean_pct  p50_a  p50_b  p50_diff  p50_pct  p90_a  p90_b  p90_diff  p90_pct  p99_a  p99_b  p99_diff  p99_pct"
expect_line $LINENO "$T/out" "  $(rep 40 é)        1        1           0      +0.0%      10      10          0     +0.0%     10     10         0    +0.0%     10     10         0    +0.0%     10     10         0    +0.0%"
expect_utf8 $LINENO "$T/out"

# C1 controls (U+0080..U+009F: \xc2\x9b is CSI, which terminals obey as
# they do ESC [) and bytes that are not UTF-8 are escaped in every text
# output, as C0 controls are (c1.rpt, c1bad.rpt: mkfixture.c); valid
# UTF-8 (caf\xc3\xa9) stays as it is.
run_cmd "$CS_CMD" report "$T/c1.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'program:  /usr/bin/p\xc2\x9b2Jq'
expect_line $LINENO "$T/out" 'events:   tsc, page\xc2\x9b7mfaults'
expect_line $LINENO "$T/out" 'page\xc2\x9b7mfaults'
expect_line $LINENO "$T/out" '  c1\xc2\x9b31mred  li\xc2\x85b\xff.so+0x10  li\xc2\x85b\xff.so      1     7       0    7    7    7    7    7      7'
expect_line $LINENO "$T/out" '  bad\xffutf\xc3    li\xc2\x85b\xff.so+0x20  li\xc2\x85b\xff.so      1     9       0    9    9    9    9    9      9'
expect_line $LINENO "$T/out" "  café              li\\xc2\\x85b\\xff.so+0x30  li\\xc2\\x85b\\xff.so      1     5       0    5    5    5    5    5      5"
expect_no_ctl $LINENO "$T/out"
run_cmd "$CS_CMD" report --hist "$T/c1.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '  c1\xc2\x9b31mred: 1 call, mean 7, p50 7, p99 7, max 7'
expect_line $LINENO "$T/out" '  bad\xffutf\xc3: 1 call, mean 9, p50 9, p99 9, max 9'
expect_no_ctl $LINENO "$T/out"
run_cmd "$CS_CMD" report --targets "$T/c1.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '  ti\xc2\x9dtle     li\xc2\x85b\xff.so  li\xc2\x85b\xff.so+0x40  GOT (entry refused)              0  a\xc2\x9bKb\xff (+0x2)'
expect_no_ctl $LINENO "$T/out"
run_cmd "$CS_CMD" report --series "$T/c1.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'c1\xc2\x9b31mred, page\xc2\x9b7mfaults: thread 964 (pid 964), 1 call per window'
expect_no_ctl $LINENO "$T/out"
run_cmd "$CS_CMD" report --diff "$T/c1.rpt" "$T/c1.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" 'page\xc2\x9b7mfaults'
grep -qF '  bad\xffutf\xc3          1        1           0      +0.0%' "$T/out" ||
	{ fail $LINENO "no bad\\xffutf\\xc3 row in the diff"; show "$T/out"; }
expect_no_ctl $LINENO "$T/out"
run_cmd "$CS_CMD" report "$T/sklc1.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '  lo\xc2\x9bk\xffup  prog+0x10  prog        4       0.75       -    -    -    -    -    -      -'
expect_no_ctl $LINENO "$T/out"
run_cmd "$CS_CMD" report "$T/c1bad.rpt"
expect_status $LINENO 1
expect_err $LINENO 'target 1 (bad\xc2\x85name) refers to module 42'
expect_no_ctl $LINENO "$T/err"
# The CSV keeps the bytes as they are (it quotes only commas, double
# quotes and line breaks: docs/report-format.md).
run_cmd "$CS_CMD" report -f csv --event tsc "$T/c1.rpt"
expect_status $LINENO 0
grep -qF $'c1\xc2\x9b31mred,li\xc2\x85b\xff.so+0x10,li\xc2\x85b\xff.so,tsc,1,' "$T/out" ||
	{ fail $LINENO "the CSV changed the bytes of a name"; show "$T/out"; }

finish
