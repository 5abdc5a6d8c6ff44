#!/bin/bash
# SPDX-License-Identifier: MIT
# 4,096 call sites of one function in one thread: the shim's site table
# starts at 1,024 slots and grows three times while calls are measured.
# Every call site keeps a row of its own with its exact call count.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

R=3
plain_run plain "$P/prog_manysites" $R
[ "$status" -eq 0 ] || fail "prog_manysites exits $status without the shim"
shim_run shim tsc cs_inner "$P/prog_manysites" $R
[ "$status" -eq 0 ] || { show "$T/shim.err"; fail "prog_manysites exits $status"; }
same_output plain shim
no_shim_lines shim

report_csv shim
csv_select "$T/shim.csv" "function=cs_inner,event=tsc" calls,callsite >"$T/rows"
rows=$(wc -l <"$T/rows")
sites=$(cut -f2 "$T/rows" | sort -u | wc -l)
other=$(awk -F'\t' -v r=$R '$1 != r' "$T/rows" | wc -l)
[ "$rows" -eq 4096 ] && [ "$sites" -eq 4096 ] || {
	head -5 "$T/rows" >&2
	fail "want 4096 rows of 4096 call sites, got $rows rows of $sites"
}
[ "$other" -eq 0 ] || fail "$other call sites do not have $R calls"
report_csv shim --by function
calls=$(csv_one shim "function=cs_inner,event=tsc" calls)
[ "$calls" = $((4096 * R)) ] || fail "--by function: $calls calls, want $((4096 * R))"
echo "4096 call sites, $R calls each"
