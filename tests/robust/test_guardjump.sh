#!/bin/bash
# SPDX-License-Identifier: MIT
# A signal handler's siglongjmp out of the shim's own code (its exec
# wrapper, reached through the program's own getpid): the shim's "own code
# is running" guard is left up by the jump.  Measuring must go on: every
# one of the N later calls is counted (before the fix, none was: every call
# passed through unmeasured).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=2000
plain_run plain "$R/prog_guardjump" $N
expect_status plain 0
grep -qx "jumped 0" "$T/plain.err" || { show "$T/plain.err"; fail "the handler jumped without the shim"; }
shim_run shim tsc rt_leaf "$R/prog_guardjump" $N
expect_status shim 0
same_output plain shim
grep -qx "jumped 1" "$T/shim.err" ||
	{ show "$T/shim.err"; fail "the shim's exec wrapper did not reach the program's getpid: nothing tested"; }
report_csv shim --by function
row=$(csv_one shim "function=rt_leaf,event=tsc" calls,entered,dropped)
[ "$row" = "$N	$N	0" ] || { show "$T/shim.csv"; fail "rt_leaf: calls, entered, dropped = $row, want $N $N 0"; }
echo "a siglongjmp out of the shim's exec wrapper; the $N calls after it all counted"
