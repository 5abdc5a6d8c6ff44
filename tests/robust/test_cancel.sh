#!/bin/bash
# SPDX-License-Identifier: MIT
# pthread_cancel requests (deferred, the default) pending when a thread
# reaches the shim's own code: that code called libc functions that are
# cancellation points (close, write, open, read, nanosleep), and the
# request acted inside the shim instead of at the program's next
# cancellation point.  A thread's first wrapped call was cancelled in
# the shim's set-up before the target ran (prog_cancel first: every
# thread's rt_leaf result lost, the calls in no count); a dlopen was
# cancelled in the shim's patching pass, which kept its lock, and the
# program's next dlopen hung; a fork child was cancelled in the shim's
# fork handler and exited 0 instead of its own status.  Each run must be
# as without the shim, with every call counted exactly once.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=20
plain_run plain_first "$R/prog_cancel" first $N
expect_status plain_first 0
shim_run first tsc,perf::PAGE-FAULTS rt_leaf "$R/prog_cancel" first $N
expect_status first 0
same_output plain_first first
no_shim_lines first
report_csv first --by function
for ev in tsc perf::PAGE-FAULTS; do
	want_count first "function=rt_leaf,event=$ev" calls $((N + 1))
	want_count first "function=rt_leaf,event=$ev" entered $((N + 1))
done
echo "first: $N cancelled threads' first calls made and counted"

PLUG=$R/.libs/libcsplug.so
plain_run plain_dlopen "$R/prog_cancel" dlopen "$PLUG"
expect_status plain_dlopen 0
shim_run dlopen tsc plug_leaf,rt_leaf timeout 60 "$R/prog_cancel" dlopen "$PLUG"
[ "$status" -ne 124 ] || { show "$T/dlopen.err"; fail "dlopen: the program hung"; }
expect_status dlopen 0
same_output plain_dlopen dlopen
# (timeout's own file is dlopen.csr, the program's dlopen.csr.1.)
report_files dlopen "$T"/dlopen.csr* -- --by function
want_count dlopen "function=plug_leaf,event=tsc" calls 100
want_count dlopen "function=rt_leaf,event=tsc" calls 100
echo "dlopen: the cancelled thread's dlopen leaves the next one working"

plain_run plain_fork "$R/prog_cancel" fork 3
expect_status plain_fork 0
grep -q 'status 0x700' "$T/plain_fork.out" || { show "$T/plain_fork.out"; fail "fork: the plain child did not exit 7"; }
shim_run fork tsc rt_leaf "$R/prog_cancel" fork 3
expect_status fork 0
same_output plain_fork fork
no_shim_lines fork
report_files fork "$T"/fork.csr* -- --by function
want_count fork "function=rt_leaf,event=tsc" calls 2
[ "$(ls "$T"/fork.csr* | wc -l)" = 2 ] || fail "fork: want 2 report files, have $(ls "$T"/fork.csr*)"
echo "fork: the child of a cancelled thread exits with its own status, its call in its own file"
