/* SPDX-License-Identifier: MIT */
/* Calls cs_inner from two call sites, A and B times.
 *
 * Usage: prog_sites A B [T].  The sites are in site_a() and site_b(), kept
 * apart (noinline, different bodies so no identical-code folding).  With
 * T, T threads first call site_a A times each, one after another. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/preload/cstarget.h"

__attribute__((noinline)) static long site_a(long a)
{
	long i, s = 0;

	for (i = 0; i < a; i++)
		s += cs_inner(i);
	return s;
}

__attribute__((noinline)) static long site_b(long b)
{
	long i, s = 0;

	for (i = 0; i < b; i++)
		s -= cs_inner(3 * i + 1);
	return s;
}

static void *thread_a(void *a)
{
	return (void *)site_a((long)a);
}

int main(int argc, char **argv)
{
	long a, b, t;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s A B [T]\n", argv[0]);
		return 2;
	}
	a = atol(argv[1]);
	b = atol(argv[2]);
	for (t = argc == 4 ? atol(argv[3]) : 0; t > 0; t--) {
		pthread_t th;
		void *s;

		if (pthread_create(&th, NULL, thread_a, (void *)a) || pthread_join(th, &s))
			return 3;
		printf("thread site_a %ld\n", (long)s);
	}
	printf("site_a %ld\n", site_a(a));
	printf("site_b %ld\n", site_b(b));
	return 0;
}
