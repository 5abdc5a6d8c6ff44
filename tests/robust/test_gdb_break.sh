#!/bin/bash
# SPDX-License-Identifier: MIT
# A debugger's breakpoint on a target, set before the program runs (gdb:
# `break leaf`, then `run`): the int3 gdb wrote at the entry was moved into
# the shim's copy of the first instructions, which trapped where gdb knows
# of no breakpoint (a bare SIGTRAP), and on `continue` the program died of
# SIGSEGV (review helper 91).  Now an int3 in the bytes to move refuses
# entry patching (the calls are caught through the GOT instead): the
# breakpoint stops in leaf as without the shim, the program ends as
# without it, and every call through the PLT is counted.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

command -v gdb >/dev/null || { echo "SKIP: no gdb"; exit 77; }
cd "$T"
cat >leaf.c <<'C'
int leaf(int x) { return x * 3 + 1; }
C
cat >main.c <<'C'
#include <stdio.h>
int leaf(int);
int main(void)
{
	int i, s = 0;

	for (i = 0; i < 50; i++)
		s += leaf(i);
	printf("sum %d\n", s);
	return 0;
}
C
cc=${CC:-cc}
$cc -O1 -g -fPIC -shared -o libleaf.so leaf.c
$cc -O1 -g -o main main.c -L. -lleaf -Wl,-rpath,"$T"
plain_run plain ./main
expect_status plain 0
# gdb_run NAME [shim]: break leaf, run, delete the breakpoint, continue.
gdb_run()
{
	local name=$1 env=()

	[ "${2:-}" = shim ] && env=(-ex "set environment LD_PRELOAD $CS_SHIM"
		-ex "set environment CACHESHIM_TARGETS leaf" -ex "set environment CACHESHIM_EVENTS tsc"
		-ex "set environment CACHESHIM_QUIET 1" -ex "set environment CACHESHIM_OUTPUT $T/$name.csr")
	timeout -s KILL 120 gdb -nx -q -batch -ex 'set startup-with-shell off' "${env[@]}" \
		-ex 'break leaf' -ex run -ex delete -ex continue ./main >"$T/$name.gdb" 2>&1 || true
}
gdb_run gplain
grep -q '^Breakpoint 1, leaf' gplain.gdb || { show gplain.gdb; echo "SKIP: gdb cannot run programs here"; exit 77; }
gdb_run gshim shim
grep -q '^Breakpoint 1, leaf' gshim.gdb || { show gshim.gdb; fail "the breakpoint did not stop in leaf"; }
grep -q 'SIGTRAP\|SIGSEGV' gshim.gdb && { show gshim.gdb; fail "a signal under the shim"; }
grep -q "^sum $(sed -n 's/^sum //p' plain.out)\$" gshim.gdb || { show gshim.gdb; fail "other output"; }
grep -q 'exited normally' gshim.gdb || { show gshim.gdb; fail "the program did not end normally"; }
report_csv gshim --by function
want_count gshim "function=leaf,event=tsc" calls 50
echo "gdb: break leaf, run, continue: stopped in leaf, ended normally, 50 calls counted"
