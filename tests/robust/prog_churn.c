/* SPDX-License-Identifier: MIT */
/* A thread per task: N threads, one after another, each calling rt_leaf
 * K times from call site 0 and K times from call site 1; with "exit", each
 * then leaves by pthread_exit inside a call of rt_callback (a call that
 * never returns).
 *
 * Usage: prog_churn N K [exit].  Prints the sum of the results
 * (tests/robust/test_thread_churn.sh). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/robust/callsites.h"
#include "tests/robust/robust.h"

static long k;
static int exit_inside;

static long leave(long x)
{
	(void)x;
	pthread_exit(NULL);
}

static void *task(void *arg)
{
	long s = 0, j;

	for (j = 0; j < k; j++)
		s += rt_leaf_at(0, j) + rt_leaf_at(1, j);
	*(long *)arg = s;
	if (exit_inside)
		rt_callback(leave, 0);
	return NULL;
}

int main(int argc, char **argv)
{
	long n, i, sum = 0, one;
	pthread_t t;

	if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "exit"))) {
		fprintf(stderr, "usage: %s THREADS CALLS [exit]\n", argv[0]);
		return 2;
	}
	exit_inside = argc == 4;
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
