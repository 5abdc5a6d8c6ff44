#!/bin/bash
# SPDX-License-Identifier: MIT
# Processes that leave by _exit or _Exit (no destructors, no exit
# handlers: a forked child's usual way out, dash at the end of `sh -c`):
# their files stayed RUNNING and `cacheshim report` called each of them
# incomplete ("did not exit cleanly") although every call had ended.  The
# shim now seals the file in its _exit and _Exit wrappers, but not in a
# vfork child, whose file is still its parent's.  The program's status
# and output are unchanged and every call is counted.
#
# quick_exit too (review helper 71): it runs the at_quick_exit handlers
# and then glibc's own _exit, not the exported one, and left the file
# RUNNING; the calls its handlers make must be counted.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=1000
cd "$T"
cat >prog.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/robust/robust.h"

static long calls(long n)
{
	long s = 0;

	for (long i = 0; i < n; i++)
		s += rt_leaf(i);
	return s;
}

static long n;

static void at_quick(void)
{
	printf("at_quick_exit sum %ld\n", calls(n));
	fflush(stdout);
}

/* prog HOW N: N calls, then by HOW:
 *   _exit, _Exit   leave so, status 3;
 *   quick_exit     leave so, status 3, after a handler made N calls;
 *   fork           a child makes N calls and _exits 0, the parent waits
 *                  and returns 0;
 *   vfork          a vfork child _exits 0 at once (the parent's file is
 *                  not sealed by it), the parent makes N more calls. */
int main(int argc, char **argv)
{
	pid_t pid;

	n = atol(argv[2]);

	printf("sum %ld\n", calls(n));
	fflush(stdout);
	if (!strcmp(argv[1], "_exit"))
		_exit(3);
	if (!strcmp(argv[1], "_Exit"))
		_Exit(3);
	if (!strcmp(argv[1], "quick_exit")) {
		at_quick_exit(at_quick);
		quick_exit(3);
	}
	pid = !strcmp(argv[1], "fork") ? fork() : vfork();
	if (pid == 0) {
		if (!strcmp(argv[1], "fork"))
			calls(n);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, NULL, 0) != pid)
		return 1;
	if (strcmp(argv[1], "fork"))
		calls(n);
	return 0;
}
C
cc=${CC:-cc}
$cc -O1 -I"$CS_SRCDIR" -o prog prog.c -L"$R/.libs" -lcsrobust -Wl,-rpath,"$R/.libs"

# report_clean NAME FILE WANT: the report of FILE says nothing about it
# being incomplete and counts WANT calls of rt_leaf.
report_clean()
{
	local got

	"$CS_CMD" report --format csv "$2" >"$T/$1.csv" 2>"$T/$1.rerr" ||
		{ show "$T/$1.rerr"; fail "$1: report failed"; }
	if grep -q incomplete "$T/$1.rerr"; then
		show "$T/$1.rerr"
		fail "$1: the report calls $2 incomplete"
	fi
	got=$(csv_sum "$1" "function=rt_leaf,event=tsc" calls)
	[ "$got" = "$3" ] || { show "$T/$1.csv"; fail "$1: $got calls of rt_leaf, want $3"; }
}

for how in _exit _Exit; do
	plain_run plain$how ./prog $how $N
	expect_status plain$how 3
	shim_run $how tsc rt_leaf ./prog $how $N
	expect_status $how 3
	same_output plain$how $how
	report_clean $how "$T/$how.csr" $N
	echo "$how: status 3, the file complete, $N calls"
done

plain_run plainquick ./prog quick_exit $N
expect_status plainquick 3
shim_run quick tsc rt_leaf ./prog quick_exit $N
expect_status quick 3
same_output plainquick quick
report_clean quick "$T/quick.csr" $((2 * N))
echo "quick_exit: status 3, the file complete, $((2 * N)) calls (half in the at_quick_exit handler)"

mkdir fork
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
	CACHESHIM_OUTPUT="$T/fork/out.%p" LD_PRELOAD=$CS_SHIM ./prog fork $N >fork.out 2>fork.err ||
	status=$?
expect_status fork 0
n=0
for f in fork/out.*; do
	n=$((n + 1))
	report_clean fork$n "$T/$f" $N
done
[ $n -eq 2 ] || fail "fork: $n report files, want 2"
echo "fork: the child's file (left by _exit) complete, $N calls each"

# The vfork child's _exit leaves the parent's file open: the parent's
# calls after it are all recorded, and its own exit seals the file.
shim_run vfork tsc rt_leaf ./prog vfork $N
expect_status vfork 0
report_clean vfork "$T/vfork.csr" $((2 * N))
echo "vfork: the child's _exit does not seal the parent's file; $((2 * N)) calls"
