#!/bin/bash
# SPDX-License-Identifier: MIT
# Names in the text outputs: cut to the table's 60 columns at a whole
# character or escape (cutting the escaped bytes split \x01 and UTF-8
# characters), and columns as wide as the names' characters, not bytes.
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

finish
