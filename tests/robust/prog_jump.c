/* SPDX-License-Identifier: MIT */
/* Wrapped calls left by longjmp and siglongjmp instead of returning.
 *
 * Usage: prog_jump N R.  Four rounds, each printing how many wrapped calls
 * it left without returning:
 *   longjmp     N calls of rt_callback whose callback longjmps out of it
 *               for every third x;
 *   nested      N calls of rt_callback whose callback calls rt_callback
 *               again, the inner callback longjmping out of both for every
 *               fifth x (two abandoned calls per jump);
 *   siglongjmp  N calls of rt_callback whose callback raises SIGUSR1 for
 *               every other x; the handler siglongjmps out;
 *   timer       R calls of rt_callback whose callback arms a one-shot
 *               timer and waits in rt_spin for a flag nobody sets; the
 *               SIGALRM handler siglongjmps out of both (out of the
 *               callback alone if the signal came before rt_spin started:
 *               how many rt_spin calls started goes to stderr as
 *               "rt_spin started S", as it could differ between runs).
 * Every call that returned was also measured: the report must show
 * exactly the printed number of calls that did not return. */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "tests/robust/robust.h"

static jmp_buf env;
static sigjmp_buf senv;
static volatile sig_atomic_t never, always = 1;

static long jump_every3(long x)
{
	if (x % 3 == 0)
		longjmp(env, 1);
	return x;
}

static long jump_every5(long x)
{
	if (x % 5 == 0)
		longjmp(env, 2);
	return x;
}

static long nest(long x)
{
	return rt_callback(jump_every5, x) * 2;
}

static long raise_every2(long x)
{
	if (x % 2 == 0)
		raise(SIGUSR1);
	return x;
}

/* rt_spin's one call site (not a tail call): made before the timer
 * rounds by a call that returns at once, so that no round's timer can
 * fire while the shim makes it, its signals blocked, and be taken right
 * after, before rt_spin started (one entered call more than started:
 * test_nonlocal.sh on a loaded machine). */
static __attribute__((noinline)) long spin(volatile sig_atomic_t *flag)
{
	long polls = rt_spin(flag, 1);

	__asm__ volatile("" ::: "memory");
	return polls;
}

static long arm_then_spin(long x)
{
	static const struct itimerval once = {{0, 0}, {0, 300}};

	setitimer(ITIMER_REAL, &once, NULL);
	return spin(&never);
}

static void on_signal(int sig)
{
	siglongjmp(senv, sig);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	volatile long i, s, jumps;
	long n, r;

	if (argc != 3) {
		fprintf(stderr, "usage: %s N R\n", argv[0]);
		return 2;
	}
	n = atol(argv[1]);
	r = atol(argv[2]);

	for (i = 0, s = 0, jumps = 0; i < n; i++) {
		if (setjmp(env) == 0)
			s += rt_callback(jump_every3, i);
		else
			jumps++;
	}
	printf("longjmp: %ld of %ld calls did not return, sum %ld\n", (long)jumps, n, (long)s);

	for (i = 0, s = 0, jumps = 0; i < n; i++) {
		if (setjmp(env) == 0)
			s += rt_callback(nest, i);
		else
			jumps += 2;
	}
	printf("nested: %ld of %ld calls did not return, sum %ld\n", (long)jumps, 2 * n, (long)s);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	for (i = 0, s = 0, jumps = 0; i < n; i++) {
		if (sigsetjmp(senv, 1) == 0)
			s += rt_callback(raise_every2, i);
		else
			jumps++;
	}
	printf("siglongjmp: %ld of %ld calls did not return, sum %ld\n", (long)jumps, n, (long)s);

	spin(&always);
	rt_spin_started = 0;
	for (i = 0, jumps = 0; i < r; i++) {
		if (sigsetjmp(senv, 1) == 0) {
			rt_callback(arm_then_spin, i);
			printf("rt_callback returned\n");
			return 1;
		}
		jumps++;
	}
	printf("timer: %ld of %ld calls did not return\n", (long)jumps, r);
	fprintf(stderr, "rt_spin started %ld\n", rt_spin_started);
	/* After all that, calls still work and are still counted. */
	printf("after: rt_leaf(20) = %ld\n", rt_leaf(20));
	return 0;
}
