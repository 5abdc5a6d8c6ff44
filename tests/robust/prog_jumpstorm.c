/* SPDX-License-Identifier: MIT */
/* A timer's signal handler that siglongjmps out of wherever the program
 * is, over and over, while it calls rt_leaf in a loop.
 *
 * Usage: prog_jumpstorm N [ping].  Calls rt_leaf once, then N times (a call the
 * handler left is made again), with SIGALRM every 40 us jumping back into the
 * loop; prints "N calls returned" and, to stderr, "jumps J".  With "ping"
 * each call is rt_ping(3) instead (rt_ping, rt_pong, rt_ping, rt_pong, each
 * inside the one before: two targets, nested four deep).  Under the
 * shim the handler lands in its wrapper too: between taking a side stack
 * and blocking signals (which leaked the side stack; after 16 such jumps
 * every slow path waited for a free one and the program hung), and in the
 * middle of recording a call (which left the site's and the series'
 * counts apart, and the report refused the file as damaged). */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "tests/robust/robust.h"

static sigjmp_buf env;
static volatile long jumps;

static void on_alarm(int sig)
{
	(void)sig;
	jumps++;
	siglongjmp(env, 1);
}

int main(int argc, char **argv)
{
	struct itimerval every = {{0, 40}, {0, 40}}, off = {{0, 0}, {0, 0}};
	struct sigaction sa = {0};
	volatile long i = 0;
	long n;
	int ping;

	if (argc < 2 || argc > 3 || (n = atol(argv[1])) <= 0 ||
	    (argc == 3 && strcmp(argv[2], "ping") != 0)) {
		fprintf(stderr, "usage: %s N [ping]\n", argv[0]);
		return 2;
	}
	ping = argc == 3;
	/* Bound before the storm: a jump out of the dynamic linker's lazy
	 * binding is not this test's business. */
	rt_leaf(-1);
	rt_ping(3);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	/* Set once, before the timer runs: a jump while sigsetjmp saves the
	 * signal mask would find the buffer half-written. */
	if (sigsetjmp(env, 1) == 0)
		setitimer(ITIMER_REAL, &every, NULL);
	while (i < n) {
		if (ping)
			rt_ping(3);
		else
			rt_leaf(i);
		i = i + 1;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	printf("%ld calls returned\n", (long)i);
	fprintf(stderr, "jumps %ld\n", (long)jumps);
	return 0;
}
