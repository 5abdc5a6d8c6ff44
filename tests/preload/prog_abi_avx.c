/* SPDX-License-Identifier: MIT */
/* prog_abi's check of cs_avx: built with -mavx, run only on AVX CPUs. */
#include <stdio.h>

#include "tests/preload/cstarget.h"
#include "tests/preload/prog_abi.h"

void abi_check_avx(void)
{
	__m256d a = _mm256_set_pd(-4.5, 3.25, -2.0, 1.125);
	__m256d b = _mm256_set_pd(1024.0, -0.5, 0.0625, 7.0);
	const double want_sum = 1.125 + 2 * -2.0 + 3 * 3.25 + 4 * -4.5 + 7.0 * 5 + 6 * 0.0625 +
				7 * -0.5 + 8 * 1024.0;
	double v[4], sum = 0;
	char got[160], want[40];
	int ok;

	/* _mm256_set_pd lists elements high to low: a = {1.125, -2.0, 3.25,
	 * -4.5}, b = {7.0, 0.0625, -0.5, 1024.0}. */
	_mm256_storeu_pd(v, cs_avx(a, b, &sum));
	abi_called("cs_avx", 1);
	ok = v[0] == 9.25 && v[1] == -3.9375 && v[2] == 6.0 && v[3] == 1015.0;
	snprintf(got, sizeof(got), "{%a, %a, %a, %a}", v[0], v[1], v[2], v[3]);
	abi_result("cs_avx result (ymm0, upper half included)", ok, got,
		   "{9.25, -3.9375, 6, 1015}");
	snprintf(got, sizeof(got), "%a", sum);
	snprintf(want, sizeof(want), "%a", want_sum);
	abi_result("cs_avx arguments (ymm0, ymm1)", sum == want_sum, got, want);
}
