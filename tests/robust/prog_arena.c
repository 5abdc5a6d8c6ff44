/* SPDX-License-Identifier: MIT */
/* Many call sites in several threads: the shim carves their blocks from
 * per-thread arenas of the report file (shim/output.c).
 *
 * Usage: prog_arena T SITES exit|kill.  Each of T threads (T = 0: the
 * main thread alone) calls rt_leaf from SITES (1 to 48) call sites of its
 * own, site i (i + 1) times, and with 8 sites or more rt_ping(4) once
 * (three nested levels); then the program prints the sum of the results
 * and exits, or kills itself with SIGKILL (after printing).  The threads
 * wait for each other before they exit: an exited thread's blocks pass
 * to the next thread of the same call sites, which then makes none. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/robust/callsites.h"

#define SITES RT_CALL_SITES

static int nsites;
static pthread_barrier_t all_done;
static long main_sum;

static void *worker(void *arg)
{
	long s = 0;
	int i, k;

	for (i = 0; i < nsites; i++)
		for (k = 0; k <= i; k++)
			s += rt_leaf_at(i, k);
	if (nsites >= 8)
		s += rt_ping(4);
	*(long *)arg = s;
	if (arg != &main_sum)
		pthread_barrier_wait(&all_done);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t tid[64];
	long sum[64], total = 0;
	int t, n;

	if (argc != 4 || (strcmp(argv[3], "exit") && strcmp(argv[3], "kill"))) {
		fprintf(stderr, "usage: %s THREADS SITES exit|kill\n", argv[0]);
		return 2;
	}
	n = atoi(argv[1]);
	nsites = atoi(argv[2]);
	if (n < 0 || n > 64 || nsites < 1 || nsites > SITES) {
		fprintf(stderr, "%s: 0 to 64 threads, 1 to %d sites\n", argv[0], SITES);
		return 2;
	}
	if (n == 0) {
		worker(&main_sum);
		total = main_sum;
	} else {
		pthread_barrier_init(&all_done, NULL, (unsigned)n);
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
	printf("%d threads: sum %ld\n", n, total);
	fflush(stdout);
	if (!strcmp(argv[3], "kill"))
		raise(SIGKILL);
	return 0;
}
