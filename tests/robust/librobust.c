/* SPDX-License-Identifier: MIT */
/* libcsrobust.so: small exported functions for the robustness tests. */
#include <stddef.h>

#include "tests/robust/robust.h"

/* Built with -fsemantic-interposition: rt_ping and rt_pong call each other
 * through the library's own PLT (no inlining, no loop), so each level of
 * the recursion is a wrapped call. */

long rt_leaf(long x)
{
	return 2 * x + 1;
}

volatile long rt_spin_started;

long rt_spin(volatile sig_atomic_t *flag, long want)
{
	long polls = 0;

	rt_spin_started++;
	do
		polls++;
	while (*flag < want);
	return polls;
}

long rt_callback(long (*fn)(long), long x)
{
	return fn(x) + 1;
}

long rt_ping(long n)
{
	if (n <= 0)
		return 0;
	return n + rt_pong(n - 1);
}

long rt_pong(long n)
{
	if (n <= 0)
		return 0;
	return n + rt_ping(n - 1);
}

long rt_crash(long x)
{
	volatile long *volatile p = NULL;

	/* cppcheck-suppress nullPointer ; the crash is the point */
	*p = x;
	return x;
}
