#!/bin/bash
# SPDX-License-Identifier: MIT
# A thread per task: 2,000 threads one after another, each calling rt_leaf
# 5 times from each of two call sites, in a 2 MB report file (room for
# ~110 site blocks of 9 KB).  Before, each thread made blocks of its own
# (one per call site, and one overflow row past CACHESHIM_MAX_SITES):
# the file was full after ~110 threads and 18,390 of the 20,000 calls
# were not recorded (a review helper: 10,000 threads, one call site, 4
# events, the default 256 MB: 45,850 of 100,000 calls lost).  An exited
# thread's blocks now pass to the next thread calling the same call site
# (its row) or going to the same overflow row: every call is counted,
# in one row per call site, and the file holds a few blocks.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=2000
K=5
plain_run plain "$R/prog_churn" $N $K
expect_status plain 0
for max in 0 1; do
	if [ $max = 1 ]; then
		export CACHESHIM_MAX_SITES=1 # call site 1: the overflow row
	fi
	CACHESHIM_CAPACITY_MB=2 CACHESHIM_SERIES=0 shim_run churn$max tsc rt_leaf \
		"$R/prog_churn" $N $K
	unset CACHESHIM_MAX_SITES
	expect_status churn$max 0
	same_output plain churn$max
	report_csv churn$max
	if grep -qE 'lost|not recorded|full|damaged' "$T/churn$max.rerr" "$T/churn$max.csv"; then
		show "$T/churn$max.rerr"
		fail "max sites $max: calls lost or file damaged"
	fi
	want_count churn$max "function=rt_leaf,event=tsc" calls $((2 * N * K))
	rows=$(csv_select "$T/churn$max.csv" "function=rt_leaf,event=tsc" callsite,calls | sort)
	sites=$(csv_select "$T/churn$max.csv" "function=rt_leaf,event=tsc" callsite | sort -u | wc -l)
	[ "$sites" = 2 ] || { show "$T/churn$max.csv"; fail "max sites $max: $sites rows, want 2"; }
	for c in $(csv_select "$T/churn$max.csv" "function=rt_leaf,event=tsc" calls); do
		[ "$c" = $((N * K)) ] || { echo "$rows" >&2; fail "max sites $max: a row of $c calls, want $((N * K))"; }
	done
	if [ $max = 1 ]; then
		echo "$rows" | grep -q '^\[overflow\]' || { echo "$rows" >&2; fail "no overflow row"; }
	fi
	size=$(stat -c %s "$T/churn$max.csr")
	echo "max sites $max: $N threads x 2 call sites: rows '$(echo $rows)', a $size-byte file"
done

# Each thread leaves by pthread_exit inside a call of rt_callback, a call
# that never returns: the thread's blocks passed on only without a call in
# flight, so each such thread kept a block of rt_callback's call site for
# good and a thread per task filled the file again (review helper 78: 8
# creators x 300 threads, 2,400 calls, 1,985 not recorded).  At a thread's
# exit a call still entered is abandoned for good (its frames are gone):
# its block passes on too, the call counted as entered, not returned.
plain_run pexit "$R/prog_churn" $N $K exit
expect_status pexit 0
CACHESHIM_CAPACITY_MB=2 CACHESHIM_SERIES=0 shim_run churnexit tsc rt_leaf,rt_callback \
	"$R/prog_churn" $N $K exit
expect_status churnexit 0
same_output pexit churnexit
report_csv churnexit --by function
if grep -qE 'lost|not recorded|full|damaged' "$T/churnexit.rerr" "$T/churnexit.csv"; then
	show "$T/churnexit.rerr"
	fail "exit inside: calls lost or file damaged"
fi
want_count churnexit "function=rt_leaf,event=tsc" calls $((2 * N * K))
want_count churnexit "function=rt_callback,event=tsc" entered $N
want_count churnexit "function=rt_callback,event=tsc" calls 0
echo "exit inside: $N threads each left a call of rt_callback; every call counted, a $(stat -c %s "$T/churnexit.csr")-byte file"
