#!/bin/bash
# SPDX-License-Identifier: MIT
# prog_abi under the shim: every calling convention survives the wrapper
# (same stdout, same status) and every call is counted exactly.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

# The expected counts include the library's calls to its own functions:
# they must go through its PLT (see libcstarget.c), or the shim can't see
# them and this test would blame it wrongly.
for f in cs_recurse cs_recurse_step cs_inner; do
	readelf -rW "$CS_TESTLIBS/libcstarget.so" |
		grep -q "JUMP_SLOT .* $f + 0\$" ||
		fail "libcstarget.so calls $f without its PLT: build it with -fsemantic-interposition"
done

plain_run plain "$P/prog_abi"
if [ "$status" -ne 0 ]; then
	show "$T/plain.out"
	fail "prog_abi fails without the shim"
fi

# "calls NAME N" lines: the exact number of calls of each function.
grep '^calls ' "$T/plain.out" >"$T/counts"
[ "$(wc -l <"$T/counts")" -ge 20 ] || fail "prog_abi printed too few counts"
list=$(awk '{ printf "%s%s", (NR > 1 ? "," : ""), $2 }' "$T/counts")

# Once by a glob, once by the explicit list of names.
for run in glob list; do
	if [ $run = glob ]; then
		targets='cs_*'
	else
		targets=$list
	fi
	shim_run $run tsc "$targets" "$P/prog_abi"
	if [ "$status" -ne 0 ]; then
		grep FAIL "$T/$run.out" >&2 || true
		show "$T/$run.err"
		fail "prog_abi under the shim ($run) exits $status"
	fi
	same_output plain $run
	no_shim_lines $run

	report_csv $run --by function
	while read -r _ fn n; do
		if [ "$n" -eq 0 ]; then
			# cs_avx on a CPU without AVX: never called.
			rows=$(csv_select "$T/$run.csv" "function=$fn,event=tsc" calls)
			[ -z "$rows" ] || [ "$rows" = 0 ] ||
				fail "$run: $fn never called, report says $rows"
			continue
		fi
		row=$(csv_one $run "function=$fn,event=tsc" calls,callsite)
		IFS=$'\t' read -r calls site <<<"$row"
		[ "$calls" = "$n" ] || {
			show "$T/$run.csv"
			fail "$run: $fn: report has $calls calls, prog_abi made $n"
		}
		[ "$site" = '*' ] || fail "$run: --by function gave call site '$site'"
	done <"$T/counts"
	echo "$run: all $(wc -l <"$T/counts") functions counted exactly"
done
