/* SPDX-License-Identifier: MIT */
/* Calls cs_inner from 4,096 call sites, R rounds of all of them.
 *
 * Usage: prog_manysites R.  Enough call sites to make the shim's per-thread
 * site table grow several times while calls are being measured
 * (tests/preload/test_many_sites.sh). */
#include <stdio.h>
#include <stdlib.h>

#include "tests/preload/cstarget.h"

/* Each expansion is a call instruction of its own: cs_inner is in another
 * module, so no two calls can be merged. */
#define SITE1 s += cs_inner(s & 0xff);
#define SITE4 SITE1 SITE1 SITE1 SITE1
#define SITE16 SITE4 SITE4 SITE4 SITE4
#define SITE64 SITE16 SITE16 SITE16 SITE16
#define SITE256 SITE64 SITE64 SITE64 SITE64
#define SITE1024 SITE256 SITE256 SITE256 SITE256

__attribute__((noinline)) static long all_sites(long s)
{
	SITE1024 SITE1024 SITE1024 SITE1024
	return s;
}

int main(int argc, char **argv)
{
	long r, s = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: %s ROUNDS\n", argv[0]);
		return 2;
	}
	for (r = atol(argv[1]); r > 0; r--)
		s = all_sites(s);
	printf("sum %ld\n", s);
	return 0;
}
