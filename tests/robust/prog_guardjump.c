/* SPDX-License-Identifier: MIT */
/* A signal handler's siglongjmp out of the shim's own code.  The shim calls
 * gettid() while it sets up a thread's first measured call; this program
 * defines gettid (exported, it comes first in the lookup scope, so that
 * call reaches it), and while armed its gettid raises SIGUSR1, whose handler
 * siglongjmps back to the thread's start, abandoning the shim's set-up
 * half-way.  The thread then calls rt_leaf N times: every one of them must
 * still be measured.  Usage: prog_guardjump N; prints the sum of those N
 * calls, and on stderr how often the handler jumped (1 under the shim, 0
 * without). */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/robust/robust.h"

static __thread int armed;
static __thread sigjmp_buf back;
static volatile sig_atomic_t jumped;

pid_t gettid(void);
__attribute__((visibility("default"))) pid_t gettid(void)
{
	if (armed) {
		armed = 0;
		raise(SIGUSR1);
	}
	return (pid_t)syscall(SYS_gettid);
}

static void on_usr1(int sig)
{
	(void)sig;
	jumped++;
	siglongjmp(back, 1);
}

static void *thread_main(void *arg)
{
	long n = (long)arg, i, sum;

	if (!sigsetjmp(back, 1)) {
		armed = 1; /* the shim's set-up for this call reaches gettid */
		(void)rt_leaf(0); /* abandoned under the shim: not in the sum */
	}
	armed = 0;
	for (i = 0, sum = 0; i < n; i++)
		sum += rt_leaf(i);
	return (void *)sum;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	struct sigaction sa = {0};
	pthread_t th;
	void *sum;

	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	if (pthread_create(&th, NULL, thread_main, (void *)n) || pthread_join(th, &sum))
		return 1;
	printf("sum %ld\n", (long)sum);
	fprintf(stderr, "jumped %d\n", (int)jumped);
	return 0;
}
