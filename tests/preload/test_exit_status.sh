#!/bin/bash
# SPDX-License-Identifier: MIT
# `cacheshim run` ends as its program ends: the same exit status, the same
# death by signal; and the calls made before the end are in the report,
# also when no destructor ran (_exit, SIGTERM, SIGKILL).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

N=25
for how in exit _exit term kill; do
	plain_run plain_$how "$P/prog_exit" $N $how
	want=$status
	case $how in
	exit|_exit) [ "$want" -eq 3 ] ;;
	term) [ "$want" -eq $((128 + 15)) ] ;;
	kill) [ "$want" -eq $((128 + 9)) ] ;;
	esac || fail "prog_exit $how exits $want without the shim"

	# CACHESHIM_LIB: the launcher preloads the shim under test.
	status=0
	CACHESHIM_LIB=$CS_SHIM "$CS_CMD" run -e tsc -t cs_inner -o "$T/run_$how.csr" -- \
		"$P/prog_exit" $N $how >"$T/run_$how.out" 2>"$T/run_$how.err" ||
		status=$?
	[ "$status" -eq "$want" ] || {
		show "$T/run_$how.err"
		fail "cacheshim run -- prog_exit $how: status $status, want $want"
	}
	same_output plain_$how run_$how

	report_csv run_$how --by function
	row=$(csv_one run_$how "function=cs_inner,event=tsc" calls)
	[ "$row" = $N ] || {
		show "$T/run_$how.csv"
		fail "prog_exit $how: report has $row calls, want $N"
	}
	echo "$how: status $status, $row calls reported"
done
