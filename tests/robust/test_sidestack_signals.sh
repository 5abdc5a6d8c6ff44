#!/bin/bash
# SPDX-License-Identifier: MIT
# Signals around the slow path's side stacks (shim/sidestack.c).  The
# program's handlers must run on the thread's own stack: a signal left
# pending while a slow path ran with signals blocked used to be handled on
# the 256 KiB side stack, where a handler needing 300 KiB overflowed
# (SIGSEGV), and a handler that siglongjmps left that side stack taken for
# good (after 8, a small-stack thread overflowed again).  Main makes its
# first calls of rt_leaf from 2,000 call sites (2,000 slow paths) while
# another thread signals it every 20 us.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

SITES=2000
{
	cat <<'C'
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

long rt_leaf(long x);
static pthread_t main_thread;
static volatile int done, jump, started;
static volatile long handled, sink;
static sigjmp_buf env;

/* 300 KiB of stack, which the main thread's 8 MiB allow. */
static __attribute__((noinline)) long deep(long n)
{
	volatile char buf[1024];

	buf[0] = (char)n;
	return n <= 1 ? buf[0] : deep(n - 1) + buf[0];
}

static void handler(int sig)
{
	(void)sig;
	handled++;
	if (jump)
		siglongjmp(env, 1);
	sink += deep(300);
}

static long now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

static void *signaller(void *arg)
{
	(void)arg;
	while (!done) {
		long t = now_us();

		pthread_kill(main_thread, SIGUSR1);
		while (now_us() - t < 20)
			;
	}
	return NULL;
}

static __attribute__((noinline)) long site(int k)
{
	long s = 0;

	switch (k) {
C
	for ((i = 0; i < SITES; i++)); do
		echo "	case $i: s += rt_leaf($i); break;"
	done
	cat <<'C'
	}
	return s;
}

/* A PTHREAD_STACK_MIN thread with 5,000 bytes left makes its first calls
 * (test_smallstack.sh): its slow path needs a free side stack. */
static uintptr_t lo;
static long __attribute__((noinline)) bottom(void)
{
	volatile char pad[128];
	long i, s = 0;

	pad[0] = 1;
	if ((uintptr_t)pad - lo > 5000)
		return bottom() + pad[0] - 1;
	for (i = 0; i < 10; i++)
		s += rt_leaf(i);
	return s;
}

static void *small(void *arg)
{
	pthread_attr_t a;
	void *addr;
	size_t size;

	pthread_getattr_np(pthread_self(), &a);
	pthread_attr_getstack(&a, &addr, &size);
	pthread_attr_destroy(&a);
	lo = (uintptr_t)addr;
	*(long *)arg = bottom();
	return arg;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_attr_t a;
	pthread_t sig, t;
	volatile int i = 0;
	long sum = 0, small_sum = -1;

	jump = argc > 1 && strcmp(argv[1], "jump") == 0;
	main_thread = pthread_self();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigaction(SIGUSR1, &sa, NULL);
	sigsetjmp(env, 1);
	if (!started) {
		/* Signals arriving before the first call: they then arrive
		 * all along the slow paths, whatever this machine's speed. */
		started = 1;
		if (pthread_create(&sig, NULL, signaller, NULL))
			return 1;
		while (!handled)
			;
	}
	while (i < C_SITES) {
		int k = i++;

		sum += site(k);
	}
	done = 1;
	pthread_join(sig, NULL);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN);
	if (pthread_create(&t, &a, small, &small_sum))
		return 1;
	pthread_join(t, NULL);
	/* With jumps some sums are skipped: only the small thread's is
	 * printed, and whether signals arrived. */
	printf("%s: small thread sum %ld, signals handled: %s\n", jump ? "jump" : "deep",
	       small_sum, handled ? "yes" : "no");
	(void)sum;
	return 0;
}
C
} | sed "s/C_SITES/$SITES/" >"$T/sig.c"
${CC:-cc} -O1 -o "$T/sig" "$T/sig.c" -L"$R/.libs" -lcsrobust -Wl,-rpath,"$R/.libs" -lpthread
for mode in deep jump; do
	plain_run plain_$mode "$T/sig" $mode
	expect_status plain_$mode 0
	grep -q 'signals handled: yes' "$T/plain_$mode.out" || fail "$mode: no signal arrived"
	shim_run shim_$mode tsc rt_leaf "$T/sig" $mode
	expect_status shim_$mode 0
	same_output plain_$mode shim_$mode
	no_shim_lines shim_$mode
	echo "$mode: $SITES slow paths under signals every 20 us, then a small-stack thread"
done
