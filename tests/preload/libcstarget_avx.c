/* SPDX-License-Identifier: MIT */
/* The one libcstarget function with 256-bit vector arguments (built -mavx). */
#include "tests/preload/cstarget.h"

__m256d cs_avx(__m256d a, __m256d b, double *sum)
{
	double v[8];

	/* Every element counts, so a lost upper half of a ymm shows. */
	_mm256_storeu_pd(v, a);
	_mm256_storeu_pd(v + 4, b);
	*sum = v[0] + 2 * v[1] + 3 * v[2] + 4 * v[3] + 5 * v[4] + 6 * v[5] + 7 * v[6] + 8 * v[7];
	return _mm256_add_pd(_mm256_add_pd(a, a), b);
}
