/* SPDX-License-Identifier: MIT */
/* Calls made after the report file filled up (tests/robust/test_not_made.sh).
 *
 * prog_full fill ROUNDS, in order:
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
 *
 * prog_full nest SITES: first rt_callback(first, 0) from each of SITES
 * call sites (1 to 48; each call site's block and its nested block), then
 * rt_leaf from the 48 call sites, site i (i + 1) times: nested blocks made
 * first must leave room for the call sites after them.
 *
 * Either way the program then prints the sum of all results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static long after_fill(long rounds)
{
	long k, s = rt_callback_at(0, fill, 0);

	for (k = 0; k < rounds; k++)
		s += rt_callback_at(0, first, k);
	for (k = 0; k < rounds; k++)
		s += rt_leaf_at(RT_CALL_SITES - 1, k);
	return s;
}

static long nest_first(int sites)
{
	long s = 0;
	int i;

	for (i = 0; i < sites; i++)
		s += rt_callback_at(i, first, 0);
	return s + fill(0);
}

int main(int argc, char **argv)
{
	long n = argc == 3 ? atol(argv[2]) : 0, s;

	if (argc == 3 && !strcmp(argv[1], "fill") && n >= 1) {
		s = after_fill(n);
	} else if (argc == 3 && !strcmp(argv[1], "nest") && n >= 1 && n <= RT_CALL_SITES) {
		s = nest_first((int)n);
	} else {
		fprintf(stderr, "usage: %s fill ROUNDS | nest SITES\n", argv[0]);
		return 2;
	}
	printf("sum %ld\n", s);
	return 0;
}
