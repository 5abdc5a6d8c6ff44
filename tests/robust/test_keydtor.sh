#!/bin/bash
# SPDX-License-Identifier: MIT
# Calls made by a program's pthread key destructors as threads exit are
# measured: 4 threads, 1 call each and 10 more each from the destructor,
# 44 in all.  The shim's own key destructor took the thread down in the
# first round, before the program's ran, and those 40 calls were lost
# (counted as not recorded).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

plain_run plain "$R/prog_keydtor" 4
expect_status plain 0
for events in tsc perf::PAGE-FAULTS; do
	name=k_${events//[^a-zA-Z]/_}
	shim_run $name $events rt_leaf "$R/prog_keydtor" 4
	expect_status $name 0
	same_output plain $name
	no_shim_lines $name
	report_csv $name --by function
	want_count $name "function=rt_leaf,event=$events" calls 44
	"$CS_CMD" report "$T/$name.csr" >"$T/$name.txt" 2>&1
	! grep -q 'calls not recorded' "$T/$name.txt" || { show "$T/$name.txt"; fail "calls lost"; }
	echo "$events: 44 calls, none lost"
done

# A thread whose first call comes in glibc's last round of key
# destructors: set up then, it had no round left to be taken down in, and
# kept its counters (a descriptor each) and memory: 300 threads, 300
# descriptors more, until the program ran out.  Such calls are now not
# recorded (and said), and nothing leaks.
plain_run lplain "$R/prog_keydtor" 300 late
expect_status lplain 0
grep -q 'descriptors gained 0$' "$T/lplain.out" || { show "$T/lplain.out"; fail "premise: no descriptor gained"; }
shim_run late perf::PAGE-FAULTS rt_leaf "$R/prog_keydtor" 300 late
expect_status late 0
same_output lplain late
"$CS_CMD" report "$T/late.csr" >"$T/late.txt" 2>&1
grep -qx 'calls not recorded (thread without counters or past its end): 300' "$T/late.txt" || { show "$T/late.txt"; fail "the 300 late calls are not said"; }
echo "first calls in the last destructor round: 300 not recorded, no descriptor kept"

