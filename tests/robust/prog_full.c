/* SPDX-License-Identifier: MIT */
/* Calls made after the report file filled up (tests/robust/test_not_made.sh).
 *
 * Usage: prog_full ROUNDS.  In order:
 *  1. rt_callback(fill, 0) once: fill calls rt_leaf from each of the 48
 *     call sites of callsites.h, site i (i + 1) times (1,176 calls), so
 *     that on a small file system the report file fills up inside it and
 *     the nested block of rt_callback's call site, made at its exit,
 *     finds no room;
 *  2. ROUNDS times rt_callback(first, k) from the same call site: first
 *     calls rt_leaf from call site 0, whose block was made before the file
 *     filled up (a nested call, for a site without a nested block);
 *  3. ROUNDS times rt_leaf from call site 47, the last one filled (its
 *     block could not be made).
 * Then prints the sum of all results. */
#include <stdio.h>
#include <stdlib.h>

#include "tests/robust/callsites.h"

static long fill(long x)
{
	long s = 0, k;
	int i;

	for (i = 0; i < RT_CALL_SITES; i++)
		for (k = 0; k <= i; k++)
			s += rt_leaf_at(i, x + k);
	return s;
}

static long first(long x)
{
	return rt_leaf_at(0, x);
}

/* One call site of rt_callback for both uses (the asm statement after
 * the call keeps it from becoming a jump, whose call site is the caller's). */
static __attribute__((noinline)) long callback_at(long (*fn)(long), long x)
{
	long r = rt_callback(fn, x);

	__asm__ volatile("" : "+r"(r));
	return r;
}

int main(int argc, char **argv)
{
	long rounds, k, s;

	if (argc != 2 || (rounds = atol(argv[1])) < 1) {
		fprintf(stderr, "usage: %s ROUNDS (at least 1)\n", argv[0]);
		return 2;
	}
	s = callback_at(fill, 0);
	for (k = 0; k < rounds; k++)
		s += callback_at(first, k);
	for (k = 0; k < rounds; k++)
		s += rt_leaf_at(RT_CALL_SITES - 1, k);
	printf("sum %ld\n", s);
	return 0;
}
