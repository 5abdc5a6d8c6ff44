/* SPDX-License-Identifier: MIT */
/* memcpy of sizes from 1 byte to 4 MiB, each a few hundred times: run
 * under cacheshim with the target memcpy:arg3 to see the cost per call by
 * copy size (one row per power-of-two size class). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	size_t max = 4u << 20, size, sum = 0;
	char *src = malloc(max), *dst = malloc(max);
	int i;

	if (!src || !dst)
		return 1;
	memset(src, 1, max);
	for (size = 1; size <= max; size *= 4) {
		for (i = 0; i < 200; i++) {
			/* Odd sizes too, so classes are not only their lower bounds. */
			size_t n = size + (size_t)(i % 3) * (size / 3);

			memcpy(dst, src, n < max ? n : max);
			sum += (unsigned char)dst[0];
		}
	}
	printf("copied, checksum %zu\n", sum);
	free(src);
	free(dst);
	return 0;
}
