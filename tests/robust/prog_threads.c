/* SPDX-License-Identifier: MIT */
/* T threads each make N wrapped calls, then exit before the program does.
 *
 * Usage: prog_threads T N.  Prints the sum of the results, which depends
 * on T and N only.  T = 0 makes the N calls in the main thread.
 *
 * prog_threads T busy: T threads call rt_leaf and rt_ping (which nests
 * rt_pong) by turns without end; once each has made 1,000 of them the
 * program exits under them, wherever they are (half-way through recording
 * a call, say).  Prints "busy". */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/robust/robust.h"

static long ncalls;
static long started; /* busy threads past their first 1,000 calls */

static void *busy(void *arg)
{
	long i, s = 0;

	for (i = 0;; i++) {
		s += (i & 1) ? rt_leaf(i) : rt_ping(3); /* rt_ping nests rt_pong */
		if (i == 1000)
			__atomic_add_fetch(&started, 1, __ATOMIC_RELEASE);
	}
	return (void *)s;
}

static void *worker(void *arg)
{
	long i, s = 0;

	for (i = 0; i < ncalls; i++)
		s += rt_leaf(i);
	*(long *)arg = s;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tid[64];
	long sum[64], total = 0;
	int t, n;

	if (argc != 3) {
		fprintf(stderr, "usage: %s THREADS CALLS\n", argv[0]);
		return 2;
	}
	n = atoi(argv[1]);
	ncalls = atol(argv[2]);
	if (n < 0 || n > 64) {
		fprintf(stderr, "%s: 0 to 64 threads\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[2], "busy") == 0) {
		for (t = 0; t < n; t++) {
			if (pthread_create(&tid[t], NULL, busy, NULL)) {
				fprintf(stderr, "%s: pthread_create failed\n", argv[0]);
				return 1;
			}
		}
		while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < n)
			sched_yield();
		puts("busy");
		fflush(stdout);
		exit(0);
	}
	if (n == 0) {
		worker(&total);
	} else {
		for (t = 0; t < n; t++) {
			if (pthread_create(&tid[t], NULL, worker, &sum[t])) {
				fprintf(stderr, "%s: pthread_create failed\n", argv[0]);
				return 1;
			}
		}
		for (t = 0; t < n; t++) {
			pthread_join(tid[t], NULL);
			total += sum[t];
		}
	}
	printf("%d threads x %ld calls: sum %ld\n", n, ncalls, total);
	return 0;
}
