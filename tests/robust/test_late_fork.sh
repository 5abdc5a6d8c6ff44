#!/bin/bash
# SPDX-License-Identifier: MIT
# fork in the destructor of a library the program linked, which glibc runs
# after the shim's own finalization; parent and child then call a target
# 100,000 times each at the same time.  The child's calls go to a file of
# its own, the parent's file counts the parent's calls only.  Before, the
# shim's fork handlers were registered for the shim (pthread_atfork) and
# glibc unregistered them when it finalized the shim: the child kept
# measuring into the parent's file, and the two processes' unlocked updates
# tore its counts (the reader called the site block damaged).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=100000
cd "$T"
cat >t.c <<'C'
volatile long sink;
__attribute__((noinline)) long t_leaf(long x) { sink += x; return x + 1; }
C
cat >linked.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
long t_leaf(long);
__attribute__((destructor)) static void at_end(void)
{
	pid_t p = fork();
	int st;

	for (int i = 0; i < N; i++)
		t_leaf(i);
	if (p == 0)
		return; /* the child goes on exiting */
	if (p < 0 || waitpid(p, &st, 0) != p || st != 0)
		_exit(9);
	puts("parent done");
}
void linked_here(void) {}
C
cat >main.c <<'C'
#include <stdio.h>
long t_leaf(long);
void linked_here(void);
int main(void)
{
	linked_here();
	for (int i = 0; i < 1000; i++)
		t_leaf(i);
	puts("main done");
	return 0;
}
C
cc=${CC:-cc}
$cc -O2 -shared -fPIC -o libt.so t.c
$cc -O2 -shared -fPIC -DN=$N -o liblinked.so linked.c -L. -lt -Wl,-rpath,"$T"
$cc -O2 -o main main.c -L. -llinked -lt -Wl,-rpath,"$T"

plain_run plain ./main
expect_status plain 0
shim_run late tsc t_leaf ./main
expect_status late 0
same_output plain late
[ -f "$T/late.csr.1" ] || { ls "$T"; fail "no report file of the child"; }
report_files parent "$T/late.csr"
want_count parent "function=t_leaf,event=tsc" calls $((1000 + N))
report_files child "$T/late.csr.1"
want_count child "function=t_leaf,event=tsc" calls $N
for f in late.csr late.csr.1; do
	"$CS_CMD" report "$T/$f" >"$T/$f.txt" 2>&1
	if grep -q 'damaged\|not recorded' "$T/$f.txt"; then
		show "$T/$f.txt"
		fail "$f: damaged or calls not recorded"
	fi
done
echo "fork in a late destructor: parent $((1000 + N)) calls, child $N, each in its own file"
