#!/bin/bash
# SPDX-License-Identifier: MIT
# Targets called from other libraries' destructors at exit: a library the
# program linked (glibc finalizes it after the preloaded shim, which it
# initialized before the shim) and a library the program dlopened and
# never closed.  Every call counts: 1,000 in main, 500 and 700 in the two
# destructors.  Before, the shim's destructor sealed the file first and
# the 1,200 destructor calls were only counted as not recorded.
#
# Second part: the linked library's destructor forks, and parent and child
# then call the target 100,000 times each at the same time.  The child's
# calls go to a file of its own, the parent's file counts the parent's
# calls only.  Before, the shim's fork handlers were registered for the
# shim (pthread_atfork) and glibc unregistered them when it finalized the
# shim: the child kept measuring into the parent's file, and the two
# processes' unlocked updates tore its counts (the reader called the site
# block damaged).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cd "$T"
cat >t.c <<'C'
volatile long sink;
__attribute__((noinline)) long t_leaf(long x) { sink += x; return x + 1; }
C
# linked.c: with -DFORK, the destructor forks first, and both processes
# make the N calls.
cat >linked.c <<'C'
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
long t_leaf(long);
__attribute__((destructor)) static void at_end(void)
{
#ifdef FORK
	pid_t p = fork();
	int st;
#endif

	for (int i = 0; i < N; i++)
		t_leaf(i);
#ifdef FORK
	if (p == 0)
		return; /* the child goes on exiting */
	if (p < 0 || waitpid(p, &st, 0) != p || st != 0)
		_exit(9);
	puts("parent done");
#endif
}
void linked_here(void) {}
C
cat >opened.c <<'C'
long t_leaf(long);
__attribute__((destructor)) static void at_end(void) { for (int i = 0; i < 700; i++) t_leaf(i); }
C
cat >main.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
long t_leaf(long);
void linked_here(void);
int main(void)
{
	linked_here();
	for (int i = 0; i < 1000; i++)
		t_leaf(i);
	if (!dlopen("./libopened.so", RTLD_NOW)) {
		puts(dlerror());
		return 1;
	}
	puts("main done");
	return 0;
}
C
cc=${CC:-cc}
$cc -O2 -shared -fPIC -o libt.so t.c
$cc -O2 -shared -fPIC -DN=500 -o liblinked.so linked.c -L. -lt -Wl,-rpath,"$T"
$cc -O2 -shared -fPIC -o libopened.so opened.c -L. -lt -Wl,-rpath,"$T"
$cc -O2 -o main main.c -L. -llinked -lt -Wl,-rpath,"$T" -ldl

plain_run plain ./main
expect_status plain 0
shim_run late tsc t_leaf ./main
expect_status late 0
same_output plain late
report_csv late
want_count late "function=t_leaf,event=tsc" calls 2200
"$CS_CMD" report "$T/late.csr" >"$T/late.txt" 2>&1
if grep -q 'not recorded' "$T/late.txt"; then
	show "$T/late.txt"
	fail "calls counted as not recorded"
fi
echo "2,200 calls, 1,200 of them in destructors run after the shim's"

# Second part: fork in the linked library's destructor.
N=100000
mkdir fork
$cc -O2 -shared -fPIC -DFORK -DN=$N -o fork/liblinked.so linked.c -L. -lt -Wl,-rpath,"$T"
cp libopened.so fork/
$cc -O2 -o fork/main main.c -Lfork -llinked -L. -lt -Wl,-rpath,"$T/fork" -Wl,-rpath,"$T" -ldl
cd fork
plain_run plain_fork ./main
expect_status plain_fork 0
shim_run fork tsc t_leaf ./main
expect_status fork 0
same_output plain_fork fork
[ -f "$T/fork.csr.1" ] || { ls "$T"; fail "no report file of the child"; }
report_files parent "$T/fork.csr"
want_count parent "function=t_leaf,event=tsc" calls $((1000 + N + 700))
report_files child "$T/fork.csr.1"
want_count child "function=t_leaf,event=tsc" calls $((N + 700))
for f in fork.csr fork.csr.1; do
	"$CS_CMD" report "$T/$f" >"$T/$f.txt" 2>&1
	if grep -q 'damaged\|not recorded' "$T/$f.txt"; then
		show "$T/$f.txt"
		fail "$f: damaged or calls not recorded"
	fi
done
echo "fork in a late destructor: parent $((1000 + N + 700)) calls, child $((N + 700)), each in its own file"
