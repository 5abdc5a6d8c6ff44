/* SPDX-License-Identifier: MIT */
/* A thread per task: N threads, one after another, each calling rt_leaf
 * K times from call site 0 and K times from call site 1.
 *
 * Usage: prog_churn N K.  Prints the sum of the results
 * (tests/robust/test_thread_churn.sh). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/robust/callsites.h"

static long k;

static void *task(void *arg)
{
	long s = 0, j;

	for (j = 0; j < k; j++)
		s += rt_leaf_at(0, j) + rt_leaf_at(1, j);
	*(long *)arg = s;
	return NULL;
}

int main(int argc, char **argv)
{
	long n, i, sum = 0, one;
	pthread_t t;

	if (argc != 3) {
		fprintf(stderr, "usage: %s THREADS CALLS\n", argv[0]);
		return 2;
	}
	n = atol(argv[1]);
	k = atol(argv[2]);
	for (i = 0; i < n; i++) {
		if (pthread_create(&t, NULL, task, &one) || pthread_join(t, NULL)) {
			fprintf(stderr, "%s: pthread_create failed\n", argv[0]);
			return 1;
		}
		sum += one;
	}
	printf("sum %ld\n", sum);
	return 0;
}
