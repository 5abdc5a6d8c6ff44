/* SPDX-License-Identifier: MIT */
/* Wrapped calls on both sides of fork and vfork.
 *
 * Usage:
 *   prog_fork fork K N   makes N/2 calls, forks K children that make N
 *                        calls each and exit, makes the other N - N/2
 *                        calls: (K + 1) * N calls in K + 1 processes, and
 *                        no child may count the calls its parent made
 *                        before the fork.
 *   prog_fork _Fork K N  the same with _Fork (no fork handlers run): the
 *                        children's calls are not the parent's either.
 *   prog_fork clone K N  the same with glibc's clone (a new process, no
 *                        fork handlers), each child on a stack of its own.
 *   prog_fork vfork N PROG ARGS...
 *                        makes N/2 calls, vforks a child that execs PROG
 *                        with ARGS (the parent's memory is shared until
 *                        then), then a second child whose exec fails and
 *                        that _exits, each after one call of its own (not
 *                        the parent's); then the other N - N/2 calls.
 *   prog_fork vfork-thread N
 *                        a new thread, before any call of its own, vforks
 *                        a child that makes N calls and _exits, then
 *                        makes clone(CLONE_VM | CLONE_VFORK) children
 *                        the same, the first from a second new thread;
 *                        then the threads make N calls each: 2 * N are
 *                        the parent's, the children's none of them.
 * The children of fork make their calls from the call site of the
 * parent's first N/2, the parent makes its other calls from a new one.
 * Prints the sums; exits 1 if a child failed. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/robust/robust.h"

static long calls(long from, long n)
{
	long i, s = 0;

	for (i = from; i < from + n; i++)
		s += rt_leaf(i);
	return s;
}

/* The parent's calls after fork and vfork come from this other call site:
 * they need a new site block, which a file sealed or unmapped behind the
 * parent's back (by a child) could no longer give. */
__attribute__((noinline)) static long calls_late(long from, long n)
{
	long i, s = 0;

	for (i = from; i < from + n; i++)
		s += rt_leaf(i) * 1;
	__asm__ volatile("" ::: "memory");
	return s;
}

/* The sum calls(from, n) must have. */
static long expect(long from, long n)
{
	return n * (2 * from + n - 1) + n;
}

static int wait_for(pid_t pid, int want)
{
	int st;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != want) {
		fprintf(stderr, "child %d: status 0x%x, want exit %d\n", (int)pid, st, want);
		return -1;
	}
	return 0;
}

static long child_n;

/* Child i's calls: 0 if their sum is right. */
static int child_calls(void *arg)
{
	long from = 1000 * ((long)arg + 1);

	return calls(from, child_n) == expect(from, child_n) ? 0 : 1;
}

/* Make child i, a new process running child_calls(i).  (No "fork" in
 * their names: test_fork.sh wraps *fork*, and a wrapped function whose
 * child exits inside it would be a call that did not return.) */
static pid_t make_posix(int i)
{
	pid_t pid = fork();

	if (pid == 0)
		exit(child_calls((void *)(long)i));
	return pid;
}

static pid_t make_nohandlers(int i)
{
	pid_t pid = _Fork();

	if (pid == 0)
		exit(child_calls((void *)(long)i));
	return pid;
}

static pid_t make_clone(int i)
{
	static char stacks[64][64 * 1024] __attribute__((aligned(16)));

	return clone(child_calls, stacks[i] + sizeof(stacks[i]), SIGCHLD, (void *)(long)i);
}

static int do_fork(int k, long n, pid_t (*make)(int))
{
	pid_t pid[64];
	long s;
	int i, bad = 0;

	child_n = n;
	s = calls(0, n / 2);
	fflush(stdout);
	for (i = 0; i < k; i++) {
		pid[i] = make(i);
		if (pid[i] < 0) {
			perror("fork");
			return 1;
		}
	}
	s += calls_late(n / 2, n - n / 2);
	for (i = 0; i < k; i++)
		bad |= wait_for(pid[i], 0);
	printf("parent sum %ld (want %ld), %d children %s\n", s, expect(0, n), k,
	       bad ? "FAILED" : "ok");
	return bad || s != expect(0, n);
}

static int do_vfork(long n, char **argv)
{
	static char *const nothing[] = {"cs-no-such-program", NULL};
	pid_t pid;
	long s;
	int bad = 0;

	s = calls(0, n / 2);
	fflush(stdout);
	pid = vfork();
	if (pid < 0) {
		perror("vfork");
		return 1;
	}
	if (pid == 0) {
		rt_leaf(-1); /* the child's, not the parent's */
		execv(argv[0], argv);
		_exit(126);
	}
	bad |= wait_for(pid, 0);
	pid = vfork();
	if (pid == 0) {
		rt_leaf(-1);
		execv("/nonexistent/cs-no-such-program", nothing);
		_exit(127);
	}
	bad |= wait_for(pid, 127);
	s += calls_late(n / 2, n - n / 2);
	printf("parent sum %ld (want %ld), vfork children %s\n", s, expect(0, n),
	       bad ? "FAILED" : "ok");
	return bad || s != expect(0, n);
}

static long vt_n;

static int vt_clone_child(void *arg)
{
	(void)arg;
	_exit(calls(5000, vt_n) == expect(5000, vt_n) ? 0 : 1);
}

/* A thread whose first calls are its vfork children's: its shim state is
 * not set up when it vforks.  Returns NULL if all went well. */
static void *vt_body(void *how)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	pid_t pid;
	long s;

	if (how) {
		pid = clone(vt_clone_child, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD,
			    NULL);
	} else {
		pid = vfork();
		if (pid == 0)
			_exit(calls(5000, vt_n) == expect(5000, vt_n) ? 0 : 1);
	}
	if (pid < 0) {
		perror(how ? "clone" : "vfork");
		return (void *)1;
	}
	if (wait_for(pid, 0))
		return (void *)1;
	/* Set up now, and a child again. */
	s = calls(0, vt_n);
	pid = clone(vt_clone_child, stack + sizeof(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
	if (pid < 0 || wait_for(pid, 0))
		return (void *)1;
	return s == expect(0, vt_n) ? NULL : (void *)1;
}

static int do_vfork_thread(long n)
{
	pthread_t th;
	void *r1 = (void *)1, *r2 = (void *)1;

	vt_n = n;
	fflush(stdout);
	if (pthread_create(&th, NULL, vt_body, NULL) == 0)
		pthread_join(th, &r1);
	if (pthread_create(&th, NULL, vt_body, (void *)1) == 0)
		pthread_join(th, &r2);
	printf("vfork and clone(CLONE_VM | CLONE_VFORK) from fresh threads: %s\n",
	       r1 || r2 ? "FAILED" : "ok");
	return r1 || r2;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "fork") && atoi(argv[2]) >= 0 && atoi(argv[2]) <= 64)
		return do_fork(atoi(argv[2]), atol(argv[3]), make_posix);
	if (argc == 4 && !strcmp(argv[1], "_Fork") && atoi(argv[2]) >= 0 && atoi(argv[2]) <= 64)
		return do_fork(atoi(argv[2]), atol(argv[3]), make_nohandlers);
	if (argc == 4 && !strcmp(argv[1], "clone") && atoi(argv[2]) >= 0 && atoi(argv[2]) <= 64)
		return do_fork(atoi(argv[2]), atol(argv[3]), make_clone);
	if (argc == 3 && !strcmp(argv[1], "vfork-thread"))
		return do_vfork_thread(atol(argv[2]));
	if (argc >= 4 && !strcmp(argv[1], "vfork"))
		return do_vfork(atol(argv[2]), argv + 3);
	fprintf(stderr, "usage: %s fork|_Fork|clone K N | vfork N PROG ARGS... | vfork-thread N\n",
		argv[0]);
	return 2;
}
