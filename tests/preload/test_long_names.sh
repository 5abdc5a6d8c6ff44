#!/bin/bash
# SPDX-License-Identifier: MIT
# Targets with names as long as C++ ones (prog_longname.c): two of 128
# characters that differ in their last one only, one of 308.  An exact
# name of 128 to 136 characters passed `cacheshim run`'s check and then
# overran the shim's 128-byte pattern (matching nothing); a longer one
# was refused ("longer than 136 characters"); and a glob matching past
# the 127 bytes of a name that a report file keeps (*_b) was said to match
# no function though its calls were measured (review helper 62).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

X=$(printf '%*s' 118 '' | tr ' ' x)
C=$(printf '%*s' 300 '' | tr ' ' c)
A=cs_long_${X}_a # 128 characters
B_GLOB='cs_long_*_b'
LONG_C=cs_long_$C # 308 characters

# run_long NAME TARGETS: cacheshim run of prog_longname in $T/NAME.d.
run_long()
{
	mkdir "$T/$1.d"
	status=0
	(cd "$T/$1.d" && CACHESHIM_LIB=$CS_SHIM "$CS_CMD" run -q -e tsc -t "$2" -- \
		"$P/prog_longname") >"$T/$1.out" 2>"$T/$1.err" || status=$?
	[ "$status" -eq 0 ] || { show "$T/$1.err"; fail "$1: status $status, want 0"; }
	if grep -q 'matched no function\|longer than' "$T/$1.err"; then
		show "$T/$1.err"
		fail "$1: a target said to match nothing, or too long"
	fi
	"$CS_CMD" report --format csv --by function "$T/$1.d"/cacheshim.out.* >"$T/$1.csv"
}

# The two 128-character names: the file keeps their first 127 bytes, the
# same for both, and the report tells them apart by their addresses.
run_long ab "$A,$B_GLOB"
calls=$(csv_select "$T/ab.csv" "event=tsc" calls | sort -n | tr '\n' ' ')
[ "$calls" = "3 5 " ] || { show "$T/ab.csv"; fail "ab: calls '$calls', want 3 and 5"; }
echo "a 128-character exact name and a glob matching past 127 bytes: 3 and 5 calls"

run_long c "$LONG_C"
calls=$(csv_select "$T/c.csv" "event=tsc" calls)
[ "$calls" = 7 ] || { show "$T/c.csv"; fail "c: calls '$calls', want 7"; }
echo "a 308-character exact name: 7 calls"

# Longer than the shim takes: refused before the program runs.
status=0
CACHESHIM_LIB=$CS_SHIM "$CS_CMD" run -q -e tsc -t "cs_$(printf '%*s' 4093 '' | tr ' ' l)" -- \
	"$P/prog_longname" >"$T/over.out" 2>"$T/over.err" || status=$?
[ "$status" -eq 2 ] && grep -q "is longer than 4095 characters" "$T/over.err" ||
	{ show "$T/over.err"; fail "a 4096-character name: status $status"; }
echo "a 4096-character name: refused"
