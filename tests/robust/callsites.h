/* SPDX-License-Identifier: MIT */
/* rt_leaf called from 48 distinct call sites of the including program:
 * rt_leaf_at(i, x) calls it from call site i (0 to 47) with x + i.  Not
 * inlined: every caller of rt_leaf_at(i, ...) calls from the same site. */
#ifndef CACHESHIM_TESTS_ROBUST_CALLSITES_H
#define CACHESHIM_TESTS_ROBUST_CALLSITES_H

#include "tests/robust/robust.h"

#define RT_CALL_SITES 48

/* One call instruction per case: an asm statement of its own in each
 * keeps the compiler from merging the cases into one call of rt_leaf with
 * x + i, and one after the call from making it a jump (whose call site
 * would be rt_leaf_at's caller's). */
#define RT_SITE1(i)                                                                              \
	case i:                                                                                  \
		__asm__ volatile("# call site " #i);                                             \
		r = rt_leaf(x + i);                                                              \
		__asm__ volatile("" : "+r"(r));                                                  \
		return r;
#define RT_SITE8(i)                                                                              \
	RT_SITE1(i) RT_SITE1(i + 1) RT_SITE1(i + 2) RT_SITE1(i + 3) RT_SITE1(i + 4)              \
	RT_SITE1(i + 5) RT_SITE1(i + 6) RT_SITE1(i + 7)

static __attribute__((noinline, unused)) long rt_leaf_at(int i, long x)
{
	long r;

	switch (i) {
		RT_SITE8(0) RT_SITE8(8) RT_SITE8(16) RT_SITE8(24) RT_SITE8(32) RT_SITE8(40)
	}
	return 0;
}

#endif /* CACHESHIM_TESTS_ROBUST_CALLSITES_H */
