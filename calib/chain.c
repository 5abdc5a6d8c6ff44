/* SPDX-License-Identifier: MIT */
/* cs_calib_chain: random pointer chains for the kernels and the latency curve. */
#include <stdlib.h>

#include "calib/cscalib.h"

#define LINE 64u

/* xorshift64*: cheap unpredictable bits, not crypto. */
uint64_t cs_calib_random(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

void *cs_calib_chain(char *buf, uint64_t n, uint64_t stride, int random_offset, uint64_t *seed)
{
	uint64_t *perm, *off, i;
	void *first;

	if (n == 0)
		return NULL;
	perm = malloc(2 * n * sizeof(*perm));
	if (!perm)
		return NULL;
	off = perm + n;
	for (i = 0; i < n; i++) {
		perm[i] = i;
		/* A random line inside each block: lines at the same offset
		 * of every page would all fall into a few cache sets. */
		off[i] = random_offset ? cs_calib_random(seed) % (stride / LINE) * LINE : 0;
	}
	for (i = n - 1; i > 0; i--) {
		uint64_t j = cs_calib_random(seed) % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (i = 0; i < n; i++)
		*(void **)(buf + perm[i] * stride + off[perm[i]]) =
			buf + perm[(i + 1) % n] * stride + off[perm[(i + 1) % n]];
	first = buf + perm[0] * stride + off[perm[0]];
	free(perm);
	return first;
}
