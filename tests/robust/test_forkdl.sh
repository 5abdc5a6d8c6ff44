#!/bin/bash
# SPDX-License-Identifier: MIT
# fork while another thread is inside dlopen or dlclose (prog_forkdl): the
# loader's lock that thread holds stays held in the child.  The shim's
# fork handler used to rescan the modules with dl_iterate_phdr, which
# waits for that lock: the child hung (the 18th of 300 in one run).  So
# did a child's call from generated code (a JIT's: its call site is in no
# module, and an unknown address made the shim rescan the modules; the 6th
# child hung).  Every child must end, with its two calls of rt_leaf in its
# own report file: one attributed to the program (the child's module
# blocks are the parent's, with the same ids), one to no module.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=300
mkdir "$T/out"
cp "$R/.libs/libcsplug.so" "$T/plug.so"
status=0
# The shim's variables are set inside timeout: only the program runs with it.
timeout 120 env CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
	CACHESHIM_OUTPUT="$T/out/r.%p" LD_PRELOAD="$CS_SHIM" \
	"$R/prog_forkdl" $N "$T/plug.so" >"$T/fork.out" 2>"$T/fork.err" || status=$?
if [ "$status" = 124 ]; then
	fail "a child hung (killed after 120 s): $(ls "$T/out" | wc -l) of $((N + 1)) report files"
fi
expect_status fork 0
if [ "$(cat "$T/fork.out")" != "children $N, failed 0" ]; then
	show "$T/fork.out"
	fail "children failed"
fi
files=$(ls "$T/out" | wc -l)
[ "$files" = $((N + 1)) ] || fail "$files report files, want $((N + 1)) (the program and its $N children)"
report_files all "$T"/out/r.*
want_count all "function=rt_leaf,module=prog_forkdl,event=tsc" calls $N
want_count all "function=rt_leaf,module=?,event=tsc" calls $N
want_count all "function=rt_leaf,event=tsc" calls $((2 * N))
echo "$N children forked beside a thread in dlopen/dlclose: all ended, $((2 * N)) calls of rt_leaf"
