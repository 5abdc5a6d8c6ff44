/* SPDX-License-Identifier: MIT */
/* The calibration kernels: tiny functions whose cost per call is known by construction. */
#include "calib/cscalib.h"

/* Inline asm where the count matters: the compiler must not turn the
 * branch into a cmov or the loop into a closed form. */

uint64_t cs_calib_null(void)
{
	return 0;
}

uint64_t cs_calib_loop(uint64_t n)
{
	uint64_t c = n;

	if (!c)
		return 0;
	__asm__ volatile("1:\n\tdec %0\n\tjnz 1b" : "+r"(c) : : "cc");
	return n;
}

uint64_t cs_calib_branch(const uint8_t *data, uint64_t n, uint64_t mode)
{
	uint64_t acc = 0, i;

	(void)mode;
	/* Unrolled by 4 so that the loop's own branch is a quarter of
	 * them: the constant case then runs near one branch per cycle and
	 * the mispredictions of the random case stand out. */
#define CS_BRANCH_ONE(k)                                       \
	__asm__ volatile("testb $1, %1\n\tjz 1f\n\tinc %0\n1:" \
			 : "+r"(acc)                           \
			 : "m"(data[i + (k)])                  \
			 : "cc")
	for (i = 0; i + 4 <= n; i += 4) {
		CS_BRANCH_ONE(0);
		CS_BRANCH_ONE(1);
		CS_BRANCH_ONE(2);
		CS_BRANCH_ONE(3);
	}
	for (; i < n; i++)
		CS_BRANCH_ONE(0);
#undef CS_BRANCH_ONE
	return acc;
}

/* Follows the chain k times: every load depends on the one before, so
 * neither out-of-order execution nor the prefetchers can overlap them. */
static uint64_t chase(void *chain, uint64_t k)
{
	void **p = chain;

	while (k--)
		p = *(void **)p;
	return (uint64_t)(uintptr_t)p;
}

uint64_t cs_calib_resident(void *chain, uint64_t k)
{
	return chase(chain, k);
}

uint64_t cs_calib_cold(void *chain, uint64_t k)
{
	return chase(chain, k);
}

uint64_t cs_calib_level(void *chain, uint64_t footprint)
{
	(void)footprint;
	return chase(chain, CS_CALIB_LEVEL_LOADS);
}

uint64_t cs_calib_dtlb(void *chain, uint64_t k)
{
	return chase(chain, k);
}

uint64_t cs_calib_fault(char *p, uint64_t k)
{
	volatile char *v = p;
	uint64_t i;

	for (i = 0; i < k; i++)
		v[i * 4096u] = 1;
	return k;
}
