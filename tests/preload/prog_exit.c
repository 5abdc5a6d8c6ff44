/* SPDX-License-Identifier: MIT */
/* Makes N wrapped calls, then ends in a chosen way.
 *
 * Usage: prog_exit N HOW, HOW one of: exit (exit(3)), _exit (_exit(3)),
 * term (raise SIGTERM), kill (raise SIGKILL).  The calls made before the
 * end must be in the report whatever the way. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/preload/cstarget.h"

int main(int argc, char **argv)
{
	long n, i, s = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s N exit|_exit|term|kill\n", argv[0]);
		return 2;
	}
	n = atol(argv[1]);
	for (i = 0; i < n; i++)
		s += cs_inner(i);
	printf("sum %ld\n", s);
	fflush(stdout);
	if (!strcmp(argv[2], "exit"))
		exit(3);
	if (!strcmp(argv[2], "_exit"))
		_exit(3);
	if (!strcmp(argv[2], "term")) {
		signal(SIGTERM, SIG_DFL); /* it may have been inherited ignored */
		raise(SIGTERM);
	} else if (!strcmp(argv[2], "kill")) {
		raise(SIGKILL);
	} else {
		fprintf(stderr, "%s: unknown way to end '%s'\n", argv[0], argv[2]);
		return 2;
	}
	fprintf(stderr, "%s: still alive after raise\n", argv[0]);
	return 2;
}
