#!/bin/bash
# SPDX-License-Identifier: MIT
# A wrapped C++ function that catches an exception from a wrapped call,
# then calls another target through a deeper call chain: the abandoned
# call left the nesting stack only when a new call was made at or above
# its frame, so the deeper call took it for its enclosing call, and the
# catching function's exclusive (--self) values kept that call's values
# (self = incl).  The trampoline's personality routine now drops it as the
# exception passes (review helper 90).
set -eu
. "$(dirname "$0")/robust-test.sh"

N=20
plain_run plain "$R/prog_catch" $N
expect_status plain 0
shim_run catch perf::PAGE-FAULTS '_ZN2cx5outerEPcS0_i,_ZN2cx6middleEi,_ZN2cx5innerEPc' \
	"$R/prog_catch" $N
expect_status catch 0
same_output plain catch
no_shim_lines catch
report_csv catch --by function --nested
want_count catch "function=_ZN2cx5outerEPcS0_i,event=perf::PAGE-FAULTS" calls $N
want_count catch "function=_ZN2cx5outerEPcS0_i,event=perf::PAGE-FAULTS" total $((5 * N))
want_count catch "function=_ZN2cx5innerEPc,event=perf::PAGE-FAULTS" total $((4 * N))
left=$(not_returned catch "function=_ZN2cx6middleEi,event=perf::PAGE-FAULTS")
[ "$left" = $N ] || { show "$T/catch.csv"; fail "cx::middle: $left calls did not return, want $N"; }
self=$(csv_one catch "function=_ZN2cx5outerEPcS0_i,event=perf::PAGE-FAULTS" self_mean)
num_eq "$self" 1 || { show "$T/catch.csv"; fail "cx::outer: self mean $self page faults, want 1 (incl 5 less cx::inner's 4)"; }
echo "cx::outer: self 1 page fault of 5 after catching cx::middle's exception"
