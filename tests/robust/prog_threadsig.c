/* SPDX-License-Identifier: MIT */
/* Short-lived threads signalled without pause, whose handler calls a target.
 *
 * Usage: prog_threadsig R T K.  R rounds of T threads, each calling
 * rt_leaf K times and exiting, while another thread sends SIGUSR1 to the
 * threads of the last 64 started (tgkill, a thread that is gone is
 * skipped) as fast as it can.  The handler calls rt_leaf too, so many
 * handler calls land while a thread starts or is being taken down, the
 * shim's own code running on it.  Each thread waits for its first
 * handler call before it exits.
 *
 * stdout is the same in every run; the number of handler calls goes to
 * stderr as "handled H": each of the R * T * K + H calls must be measured
 * or counted as lost (a handler's call after the shim took the thread
 * down cannot be measured), none passed by uncounted. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/robust/robust.h"

#define RECENT 64

static _Atomic long handled;
static __thread volatile sig_atomic_t mine; /* a handler ran on this thread */
static _Atomic int stop;
static _Atomic pid_t recent[RECENT];
static long calls_each;

static void on_usr1(int sig)
{
	(void)sig;
	rt_leaf(1);
	handled++;
	mine = 1;
}

static void *worker(void *arg)
{
	long i;

	recent[(long)arg % RECENT] = (pid_t)syscall(SYS_gettid);
	for (i = 0; i < calls_each; i++)
		rt_leaf(i);
	/* At least one handler call per thread, however loaded the machine
	 * (the signaller may get no CPU for a while). */
	while (!mine)
		sched_yield();
	return NULL;
}

static void *signaller(void *arg)
{
	unsigned r = 1;
	pid_t tid;

	(void)arg;
	while (!stop) {
		r = r * 1103515245u + 12345u;
		tid = recent[(r >> 8) % RECENT];
		if (tid)
			syscall(SYS_tgkill, getpid(), tid, SIGUSR1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
	pthread_t sig, t[256];
	long rounds, threads, n = 0;
	sigset_t usr1;

	if (argc != 4 || (rounds = atol(argv[1])) < 1 || (threads = atol(argv[2])) < 1 ||
	    threads > 256 || (calls_each = atol(argv[3])) < 0) {
		fprintf(stderr, "usage: prog_threadsig ROUNDS THREADS(<=256) CALLS\n");
		return 2;
	}
	sigaction(SIGUSR1, &sa, NULL);
	/* Not the signaller itself: it would spend its time in handlers. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (pthread_create(&sig, NULL, signaller, NULL))
		return 1;
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	for (long r = 0; r < rounds; r++) {
		for (long i = 0; i < threads; i++)
			if (pthread_create(&t[i], NULL, worker, (void *)n++))
				return 1;
		for (long i = 0; i < threads; i++)
			pthread_join(t[i], NULL);
	}
	stop = 1;
	pthread_join(sig, NULL);
	printf("%ld threads, %ld calls each\n", n, calls_each);
	fprintf(stderr, "handled %ld\n", (long)handled);
	return 0;
}
