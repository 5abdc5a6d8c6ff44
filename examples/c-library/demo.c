/* SPDX-License-Identifier: MIT */
/* Calls libdemo from two call sites each, with growing sizes. */
#include <stdio.h>
#include <stdlib.h>

#include "demo.h"

int main(void)
{
	size_t sizes[] = { 1000, 100000, 10000000 }, i, j, pages;
	long *a = malloc(sizes[2] * sizeof(*a));
	long total = 0;

	if (!a)
		return 1;
	for (j = 0; j < sizes[2]; j++)
		a[j] = (long)j;
	for (i = 0; i < 3; i++) {
		for (j = 0; j < 10; j++)
			total += demo_sum(a, sizes[i]); /* call site 1 */
		printf("demo_sum of %zu longs: %ld\n", sizes[i],
		       demo_sum(a, sizes[i])); /* call site 2 */
	}
	for (pages = 1; pages <= 256; pages *= 16) {
		for (j = 0; j < 10; j++)
			if (demo_touch(pages)) /* call site 1 */
				return 1;
		printf("demo_touch of %zu pages\n", pages);
	}
	if (demo_touch(1000)) /* call site 2 */
		return 1;
	printf("done (%ld)\n", total);
	free(a);
	return 0;
}
