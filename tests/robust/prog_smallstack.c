/* SPDX-License-Identifier: MIT */
/*
 * A thread with the smallest stack (PTHREAD_STACK_MIN) uses it up to
 * HEADROOM bytes above its end, then makes its first wrapped calls there
 * (the process's first too: every set-up happens in them).
 *
 * Usage: prog_smallstack HEADROOM.  Prints the sum of 10 rt_leaf calls.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/robust/robust.h"

static uintptr_t lo, headroom;

static long __attribute__((noinline)) bottom(void)
{
	volatile char pad[128];
	long i, s = 0;

	pad[0] = 1;
	if ((uintptr_t)pad - lo > headroom)
		return bottom() + pad[0] - 1;
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
	pthread_attr_t a;
	pthread_t t;
	long sum = -1;

	if (argc != 2)
		return 2;
	headroom = strtoul(argv[1], NULL, 10);
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN);
	if (pthread_create(&t, &a, thread, &sum)) {
		fputs("prog_smallstack: pthread_create failed\n", stderr);
		return 1;
	}
	pthread_join(t, NULL);
	printf("sum %ld\n", sum);
	return sum < 0;
}
