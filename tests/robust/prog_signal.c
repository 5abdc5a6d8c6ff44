/* SPDX-License-Identifier: MIT */
/* Timer signals whose handler calls a target while threads are inside one.
 *
 * Usage: prog_signal T K L.  An interval timer (ITIMER_REAL, SIGALRM every
 * 500 us) runs while the main thread and T more threads each wait K times
 * in the target rt_spin for the handler to run on their own thread, then
 * call leaf() L times.  The handler calls leaf() as well: the same call
 * site as the threads' own calls, so a handler's call updates the very
 * site block the interrupted code may be updating.
 *
 * Before its signals are unblocked each thread calls both targets once, so
 * that no handler can interrupt the shim's per-thread set-up (a call then
 * would pass through unmeasured, counted as lost by design).
 *
 * stdout is the same in every run; the number of handler calls, which is
 * not, goes to stderr as "handled H": the report must have exactly
 * (T + 1) * (K + 1) calls of rt_spin and (T + 1) * (L + 1) + H of rt_leaf. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "tests/robust/robust.h"

static long nspin, nleaf;
static _Atomic long handled, leaf_sum;
static __thread volatile sig_atomic_t mine; /* handler runs on this thread */

/* The one call site of rt_leaf. */
__attribute__((noinline)) static long leaf(long x)
{
	long r = rt_leaf(x);

	__asm__ volatile("" ::: "memory"); /* keep the call a call, not a jump */
	return r;
}

/* The one call site of rt_spin. */
__attribute__((noinline)) static long spin(long want)
{
	long r = rt_spin(&mine, want);

	__asm__ volatile("" ::: "memory");
	return r;
}

static void on_alarm(int sig)
{
	leaf(mine);
	mine++;
	handled++;
}

static void *worker(void *arg)
{
	sigset_t set;
	long i, s = 0;

	/* Set up this thread's measuring with signals still blocked. */
	s += leaf(0);
	spin(0);
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	for (i = 1; i <= nspin; i++)
		spin(i);
	for (i = 0; i < nleaf; i++)
		s += leaf(i);
	/* Done: later signals go to threads still waiting. */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	leaf_sum += s;
	return NULL;
}

int main(int argc, char **argv)
{
	struct itimerval it = {{0, 500}, {0, 500}}, off = {{0, 0}, {0, 0}};
	struct sigaction sa;
	pthread_t tid[16];
	sigset_t set;
	int t, n;

	if (argc != 4 || atoi(argv[1]) < 0 || atoi(argv[1]) > 16) {
		fprintf(stderr, "usage: %s THREADS(0-16) K L\n", argv[0]);
		return 2;
	}
	n = atoi(argv[1]);
	nspin = atol(argv[2]);
	nleaf = atol(argv[3]);

	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &set, NULL); /* threads start blocked */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	if (setitimer(ITIMER_REAL, &it, NULL)) {
		perror("setitimer");
		return 1;
	}
	for (t = 0; t < n; t++) {
		if (pthread_create(&tid[t], NULL, worker, NULL)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	worker(NULL);
	for (t = 0; t < n; t++)
		pthread_join(tid[t], NULL);
	setitimer(ITIMER_REAL, &off, NULL);
	/* Every thread blocks SIGALRM by now: no handler runs after this. */
	printf("%d threads waited %ld signals each, leaf sum %ld\n", n + 1, nspin, (long)leaf_sum);
	fprintf(stderr, "handled %ld\n", (long)handled);
	return 0;
}
