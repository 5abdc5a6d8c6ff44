/* SPDX-License-Identifier: MIT */
/* A per-call cost that changes at a known call index: the first M calls of
 * cs_touch_pages touch K1 pages each, the next M calls K2 pages.  The series
 * windows before and after the change must have means K1 and K2. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/preload/cstarget.h"

int main(int argc, char **argv)
{
	long m, k1, k2, i, total = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: prog_phase M K1 K2\n");
		return 2;
	}
	m = atol(argv[1]);
	k1 = atol(argv[2]);
	k2 = atol(argv[3]);
	for (i = 0; i < m; i++)
		total += cs_touch_pages(k1);
	for (i = 0; i < m; i++)
		total += cs_touch_pages(k2);
	printf("touched %ld pages\n", total);
	return 0;
}
