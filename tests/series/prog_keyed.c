/* SPDX-License-Identifier: MIT */
/* Calls cs_touch_pages(k) for each k on the command line, N times each:
 * the keyed target cs_touch_pages:arg1 must give one row per size class
 * with exact page-fault counts. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/preload/cstarget.h"

int main(int argc, char **argv)
{
	long n, total = 0;
	int i;

	if (argc < 3) {
		fprintf(stderr, "usage: prog_keyed N K...\n");
		return 2;
	}
	n = atol(argv[1]);
	for (i = 2; i < argc; i++) {
		long k = atol(argv[i]), j;

		for (j = 0; j < n; j++)
			total += cs_touch_pages(k);
	}
	printf("touched %ld pages\n", total);
	return 0;
}
