/* SPDX-License-Identifier: MIT */
/* Calls from 48 distinct call sites of the including program:
 * rt_leaf_at(i, x) calls rt_leaf(x + i) from call site i (0 to 47), and
 * rt_callback_at(i, fn, x) calls rt_callback(fn, x + i) from call site i.
 * Not inlined: every caller of rt_leaf_at(i, ...) calls from the same
 * site. */
#ifndef CACHESHIM_TESTS_ROBUST_CALLSITES_H
#define CACHESHIM_TESTS_ROBUST_CALLSITES_H

#include "tests/robust/robust.h"

#define RT_CALL_SITES 48

/* One call instruction per case: an asm statement of its own in each
 * keeps the compiler from merging the cases into one call with x + i,
 * and one after the call from making it a jump (whose call site would be
 * the caller's).  CALL(v) is the call. */
#define RT_SITE1(i, CALL)                                                                        \
	case i:                                                                                  \
		__asm__ volatile("# call site " #i);                                             \
		r = CALL(x + i);                                                                 \
		__asm__ volatile("" : "+r"(r));                                                  \
		return r;
#define RT_SITE8(i, CALL)                                                                        \
	RT_SITE1(i, CALL) RT_SITE1(i + 1, CALL) RT_SITE1(i + 2, CALL) RT_SITE1(i + 3, CALL)      \
	RT_SITE1(i + 4, CALL) RT_SITE1(i + 5, CALL) RT_SITE1(i + 6, CALL) RT_SITE1(i + 7, CALL)
#define RT_SITES(CALL)                                                                           \
	switch (i) {                                                                             \
		RT_SITE8(0, CALL) RT_SITE8(8, CALL) RT_SITE8(16, CALL) RT_SITE8(24, CALL)        \
		RT_SITE8(32, CALL) RT_SITE8(40, CALL)                                            \
	}

static __attribute__((noinline, unused)) long rt_leaf_at(int i, long x)
{
	long r;

	RT_SITES(rt_leaf)
	return 0;
}

static __attribute__((noinline, unused)) long rt_callback_at(int i, long (*fn)(long), long x)
{
#define RT_CALLBACK(v) rt_callback(fn, v)
	long r;

	RT_SITES(RT_CALLBACK)
#undef RT_CALLBACK
	return 0;
}

#endif /* CACHESHIM_TESTS_ROBUST_CALLSITES_H */
