#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim run summarizes when its program ends; a process of the run
# that is still running then (a background job, a daemon) makes its calls
# later, and only `cacheshim report` of its file has them.  The summary
# says which processes were still running: before, one that had made no
# call yet was left out without a word (its file is not incomplete then),
# and the summary looked whole.  A run whose processes have all ended
# says nothing of the kind.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

# late A B C FIFO: A calls, then a child (its own session, as a daemon)
# makes B calls, prints its pid, and the parent exits without waiting;
# the child opens FIFO (blocks until a writer comes), makes C calls and
# exits.  FIFO "-": the child does not block, the parent waits for it.
cat >"$T/late.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/robust/robust.h"

static void calls(long n)
{
	for (long i = 0; i < n; i++)
		rt_leaf(i);
}

int main(int argc, char **argv)
{
	int fds[2], fd;
	pid_t pid;
	char c;

	if (argc != 5 || pipe(fds))
		return 2;
	calls(atol(argv[1]));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		close(fds[0]);
		setsid();
		calls(atol(argv[2]));
		printf("child %ld\n", (long)getpid());
		fflush(stdout);
		close(fds[1]);
		if (strcmp(argv[4], "-")) {
			fd = open(argv[4], O_RDONLY);
			if (fd < 0)
				return 1;
			close(fd);
		}
		calls(atol(argv[3]));
		return 0;
	}
	close(fds[1]);
	(void)!read(fds[0], &c, 1); /* the child's B calls are made */
	if (!strcmp(argv[4], "-"))
		waitpid(pid, NULL, 0);
	return 0;
}
C
${CC:-cc} -I"$CS_SRCDIR" -o "$T/late" "$T/late.c" -L"$R/.libs" -lcsrobust \
	-Wl,-rpath,"$R/.libs"

# outlive NAME B: the run of late 5 B 7 FIFO; the summary has 5 + B calls
# and names the child, still running; once it has ended the report of the
# run's files has 12 + B.
outlive()
{
	local name=$1 b=$2 child

	mkdir "$T/$name"
	mkfifo "$T/$name.fifo"
	status=0
	CACHESHIM_LIB=$CS_SHIM timeout 60 "$CS_CMD" run -e tsc -t rt_leaf \
		-o "$T/$name/out.%p" -- "$T/late" 5 "$b" 7 "$T/$name.fifo" \
		>"$T/$name.out" 2>"$T/$name.err" || status=$?
	expect_status $name 0
	child=$(sed -n 's/^child \([0-9]*\)$/\1/p' "$T/$name.out")
	[ -n "$child" ] || { show "$T/$name.out"; fail "$name: the child said no pid"; }
	# Let the child go on and end.
	exec 3>"$T/$name.fifo"
	exec 3>&-
	for i in $(seq 600); do
		kill -0 "$child" 2>/dev/null || break
		sleep 0.1
	done
	! kill -0 "$child" 2>/dev/null || fail "$name: the child $child did not end"
	grep -q "^calls: *$((5 + b)) measured" "$T/$name.err" || {
		show "$T/$name.err"
		fail "$name: the summary does not have the $((5 + b)) calls made until the program ended"
	}
	grep -q "run: 1 process of this run was still running .*(pid $child)" "$T/$name.err" || {
		show "$T/$name.err"
		fail "$name: the summary does not say that pid $child was still running"
	}
	report_files $name "$T/$name"/out.* -- --by function
	want_count $name "function=rt_leaf,event=tsc" calls $((12 + b))
	echo "$name: the summary had $((5 + b)) calls and named pid $child; the report has $((12 + b))"
}

# A child that had made no call when the summary was made.
outlive nocall 0
# One that had (its file was said to be incomplete before too).
outlive somecalls 3

# Every process ended: nothing said.
status=0
CACHESHIM_LIB=$CS_SHIM "$CS_CMD" run -e tsc -t rt_leaf -o "$T/ended.%p" -- \
	"$T/late" 5 3 7 - >"$T/ended.out" 2>"$T/ended.err" || status=$?
expect_status ended 0
grep -q "^calls: *15 measured" "$T/ended.err" || { show "$T/ended.err"; fail "ended: not 15 calls"; }
! grep -q "still running" "$T/ended.err" || {
	show "$T/ended.err"
	fail "ended: a process was said to be still running"
}
echo "ended: 15 calls, no process said to be running"
