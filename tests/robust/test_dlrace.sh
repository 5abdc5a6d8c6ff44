#!/bin/bash
# SPDX-License-Identifier: MIT
# Two threads dlopen plugins at the same time (prog_dlrace), so that one
# thread's patching pass runs while the other thread is inside dlopen.
# The GOT pass used to call dlsym inside dl_iterate_phdr: with the
# loader's locks taken in opposite orders both threads hung (7 runs in 10
# with 32 plugins).  Every run must end, with the program's own output,
# and with exactly N calls of each plugin's plug_leaf and 32 N + 1 of
# rt_leaf (each plugin's calls and the program's one).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=100
PLUGINS=32
RUNS=5
list=
for i in $(seq 0 $((PLUGINS - 1))); do
	cp "$R/.libs/libcsplug.so" "$T/plug$i.so"
	list="$list $T/plug$i.so"
done

plain_run plain "$R/prog_dlrace" $N $list
expect_status plain 0
for run in $(seq 1 $RUNS); do
	# A hang is this test's failure: give up on it long before CI does
	# (shim_run's variables set inside timeout, so that only the program
	# runs with the shim).
	status=0
	timeout 60 env CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc \
		CACHESHIM_TARGETS=plug_leaf,rt_leaf CACHESHIM_OUTPUT="$T/run$run.csr" \
		LD_PRELOAD="$CS_SHIM" "$R/prog_dlrace" $N $list \
		>"$T/run$run.out" 2>"$T/run$run.err" || status=$?
	if [ "$status" = 124 ]; then
		fail "run $run hung (killed after 60 s): two threads' dlopen deadlocked"
	fi
	expect_status run$run 0
	same_output plain run$run
	report_csv run$run
	want_count run$run "function=rt_leaf,event=tsc" calls $((PLUGINS * N + 1))
	for i in $(seq 0 $((PLUGINS - 1))); do
		want_count run$run "function=plug_leaf@*,module=plug$i.so,event=tsc" calls $N
	done
done
echo "$RUNS runs, each with $PLUGINS plugins loaded by two threads at once: exact counts"
