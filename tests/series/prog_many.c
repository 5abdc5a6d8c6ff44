/* SPDX-License-Identifier: MIT */
/* N calls of a tiny library function: the series must stay within its
 * bound of windows however many calls there are. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/preload/cstarget.h"

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000, i, s = 0;

	for (i = 0; i < n; i++)
		s += cs_inner(i & 7);
	printf("%ld\n", s);
	return 0;
}
