/* SPDX-License-Identifier: MIT */
/*
 * Threads with the smallest stack (PTHREAD_STACK_MIN) use it up to
 * HEADROOM bytes above its end, then make their first wrapped calls there
 * (the process's first too: every set-up happens in them), all THREADS
 * threads at the same moment (a barrier), so that their set-ups overlap.
 *
 * Usage: prog_smallstack HEADROOM [THREADS].  THREADS defaults to 1, at
 * most 256.  Prints the sum of 10 rt_leaf calls per thread.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/robust/robust.h"

static uintptr_t headroom;
static pthread_barrier_t start;
static __thread uintptr_t lo;

static long __attribute__((noinline)) bottom(void)
{
	volatile char pad[128];
	long i, s = 0;

	pad[0] = 1;
	if ((uintptr_t)pad - lo > headroom)
		return bottom() + pad[0] - 1;
	pthread_barrier_wait(&start);
	for (i = 0; i < 10; i++)
		s += rt_leaf(i);
	return s;
}

static void *thread(void *arg)
{
	pthread_attr_t a;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &a) || pthread_attr_getstack(&a, &addr, &size))
		return NULL;
	pthread_attr_destroy(&a);
	lo = (uintptr_t)addr;
	*(long *)arg = bottom();
	return arg;
}

int main(int argc, char **argv)
{
	static pthread_t t[256];
	static long sums[256];
	pthread_attr_t a;
	long sum = 0;
	int i, n = argc == 3 ? atoi(argv[2]) : 1;

	if (argc < 2 || argc > 3 || n < 1 || n > 256)
		return 2;
	headroom = strtoul(argv[1], NULL, 10);
	pthread_barrier_init(&start, NULL, (unsigned)n);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN);
	for (i = 0; i < n; i++) {
		sums[i] = -1;
		if (pthread_create(&t[i], &a, thread, &sums[i])) {
			fputs("prog_smallstack: pthread_create failed\n", stderr);
			return 1;
		}
	}
	for (i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		if (sums[i] < 0)
			return 1;
		sum += sums[i];
	}
	printf("sum %ld\n", sum);
	return 0;
}
