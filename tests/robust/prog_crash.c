/* SPDX-License-Identifier: MIT */
/* Makes N wrapped calls, then ends abruptly, or pauses to be looked at.
 *
 * Usage: prog_crash N HOW, HOW one of
 *   segv    write through a null pointer in main (SIGSEGV);
 *   segv-in crash inside a wrapped call (rt_crash: entered, never returns);
 *   abort   abort() (SIGABRT);
 *   kill    kill(getpid(), SIGKILL);
 * or prog_crash N pause READY GO: after the N calls write a line to the
 * FIFO READY, wait for a line on the FIFO GO, make N more calls, exit 0.
 * stdout gets the sum of the first N calls, flushed before the end. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/robust/robust.h"

static long calls(long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++)
		s += rt_leaf(i);
	return s;
}

static void null_write(long v)
{
	volatile long *volatile p = NULL;

	/* cppcheck-suppress nullPointer ; the crash is the point */
	*p = v;
}

static int pause_on_fifos(long n, const char *ready, const char *go)
{
	char line[64];
	FILE *f;

	f = fopen(ready, "w");
	if (!f || fputs("ready\n", f) == EOF || fclose(f)) {
		perror(ready);
		return 1;
	}
	f = fopen(go, "r");
	if (!f || !fgets(line, sizeof(line), f)) {
		perror(go);
		return 1;
	}
	fclose(f);
	printf("then %ld more calls, sum %ld\n", n, calls(n));
	return 0;
}

int main(int argc, char **argv)
{
	long n;

	if (argc < 3) {
		fprintf(stderr, "usage: %s N segv|segv-in|abort|kill|pause READY GO\n",
			argv[0]);
		return 2;
	}
	n = atol(argv[1]);
	printf("%ld calls, sum %ld\n", n, calls(n));
	fflush(stdout);
	if (!strcmp(argv[2], "segv")) {
		signal(SIGSEGV, SIG_DFL);
		null_write(n);
	} else if (!strcmp(argv[2], "segv-in")) {
		signal(SIGSEGV, SIG_DFL);
		rt_crash(n);
	} else if (!strcmp(argv[2], "abort")) {
		abort();
	} else if (!strcmp(argv[2], "kill")) {
		kill(getpid(), SIGKILL);
	} else if (!strcmp(argv[2], "pause") && argc == 5) {
		return pause_on_fifos(n, argv[3], argv[4]);
	} else {
		fprintf(stderr, "%s: unknown way to end '%s'\n", argv[0], argv[2]);
		return 2;
	}
	fprintf(stderr, "%s: still alive\n", argv[0]);
	return 2;
}
