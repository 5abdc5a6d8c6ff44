#!/bin/bash
# SPDX-License-Identifier: MIT
# The exit's punch of the series windows no call reached (shim/output.c,
# punch_unused) while another thread goes on calling.  The punch reads a
# series' ready and then makes its hole; a thread that maps more windows
# in and fills them in between lost those calls to the hole (a report
# called damaged: "its windows hold 288 calls, not 1100"), and on a full
# disk its stores were a SIGBUS.  test_threads.sh met it about one run in
# a few hundred: the punch's fallocate waits for the inode lock that the
# other thread's zeroing write holds.  Here a tracer holds the exiting
# thread at the entry of its first punch (as a preemption there would)
# until the other thread has made its calls: every call must be in the
# report and in the series.  Needs ptrace and a file system that punches.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cc=${CC:-cc}
cd "$T"
echo 'long h_fn(long x) { return x + 1; }' >h.c
cat >prog.c <<'C'
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
long h_fn(long);
__attribute__((noinline)) static long call(long i)
{
	long r = h_fn(i);

	__asm__ volatile("");
	return r;
}
static int started;
static long sum;

/* 100 calls (7 of the 16 windows mapped in at first), then, once the
 * exit is punching ("go"), 1,000 more: past the windows it has. */
static void *worker(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < 100; i++)
		sum += call(i);
	__atomic_store_n(&started, 1, __ATOMIC_RELEASE);
	while (access("go", F_OK))
		;
	for (i = 0; i < 1000; i++)
		sum += call(i);
	close(creat("done", 0600));
	for (;;)
		pause();
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL))
		return 2;
	while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
		;
	puts("exiting");
	exit(0);
}
C
cat >tracer.c <<'C'
/* tracer CMD...: runs CMD with its first thread traced (threads it starts
 * are not); at that thread's first fallocate(FALLOC_FL_PUNCH_HOLE) makes
 * the file "go" and holds it there until the file "done" exists.  Exits
 * as CMD did; prints "held" if it held it; 77 if ptrace is refused. */
#include <fcntl.h>
#include <linux/falloc.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int st, entry = 0, held = 0, sig = 0;
	pid_t pid;

	(void)argc;
	pid = fork();
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0))
			_exit(77);
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFSTOPPED(st)) /* the exec's stop */
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	ptrace(PTRACE_SETOPTIONS, pid, 0,
	       PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC);
	for (;;) {
		ptrace(PTRACE_SYSCALL, pid, 0, sig);
		sig = 0;
		if (waitpid(pid, &st, __WALL) < 0 || WIFEXITED(st) || WIFSIGNALED(st))
			break;
		if (WSTOPSIG(st) == (SIGTRAP | 0x80)) {
			struct user_regs_struct r;

			entry = !entry;
			ptrace(PTRACE_GETREGS, pid, 0, &r);
			if (entry && !held && r.orig_rax == SYS_fallocate &&
			    (r.rsi & FALLOC_FL_PUNCH_HOLE)) {
				held = 1;
				close(creat("go", 0600));
				while (access("done", F_OK))
					usleep(1000);
			}
			continue;
		}
		if (!(st >> 16)) /* a signal, not an exec event: delivered */
			sig = WSTOPSIG(st);
	}
	if (held)
		puts("held");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
C
$cc -shared -fPIC -o libh.so h.c
$cc -o prog prog.c -L. -lh -Wl,-rpath,"$T" -pthread
$cc -o tracer tracer.c

plain_run plain ./prog
expect_status plain 0
# The variables set inside the tracer: only prog runs with the shim.
status=0
timeout 60 ./tracer env CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=h_fn \
	CACHESHIM_OUTPUT="$T/race.csr" LD_PRELOAD="$CS_SHIM" ./prog >"$T/race.out" \
	2>"$T/race.err" || status=$?
[ "$status" != 124 ] || fail "hung (killed after 60 s)"
if [ "$status" = 77 ]; then
	echo "SKIP: ptrace refused here"
	exit 77
fi
expect_status race 0
if ! grep -qx held "$T/race.out"; then
	# tmpfs (never backed, never punched) or no punch support.
	echo "SKIP: no punch made on $T's file system"
	exit 77
fi
grep -vx held "$T/race.out" >"$T/race.prog"
cmp -s "$T/plain.out" "$T/race.prog" || { show "$T/race.out"; fail "stdout differs"; }
report_files race "$T/race.csr"
grep -q damaged "$T/race.rerr" && { show "$T/race.rerr"; fail "report called the file damaged"; }
want_count race "function=h_fn,event=tsc" calls 1100
"$CS_CMD" report --series --format csv "$T/race.csr" >"$T/race.series" 2>"$T/race.serr" ||
	{ show "$T/race.serr"; fail "report --series refused the file"; }
grep -q damaged "$T/race.serr" && { show "$T/race.serr"; fail "report --series: damaged"; }
got=$(csv_select "$T/race.series" "target=h_fn,event=tsc" calls | awk '{ n += $1 } END { print n + 0 }')
[ "$got" = 1100 ] || { show "$T/race.series"; fail "the series holds $got calls, want 1100"; }
echo "1,000 calls while the exit punched: all in the report and in its series"
