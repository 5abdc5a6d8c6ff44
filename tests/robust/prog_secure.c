/* SPDX-License-Identifier: MIT */
/* A program linked against libcacheshim.so itself (DT_NEEDED with an
 * rpath), so that the shim is loaded even where ld.so ignores LD_PRELOAD:
 * in a setuid program (AT_SECURE).  The shim must then stay inert.
 *
 * Usage: prog_secure N.  Prints whether the process runs with AT_SECURE
 * and the sum of N wrapped calls. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>

#include "tests/robust/robust.h"

int main(int argc, char **argv)
{
	long n, i, s = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s N\n", argv[0]);
		return 2;
	}
	n = atol(argv[1]);
	for (i = 0; i < n; i++)
		s += rt_leaf(i);
	printf("AT_SECURE %lu, %ld calls, sum %ld\n", getauxval(AT_SECURE), n, s);
	return 0;
}
