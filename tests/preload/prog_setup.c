/* SPDX-License-Identifier: MIT */
/* The shim's own set-up inside a measured call: ps_outer calls each of 64
 * functions ps_inner_0 ... ps_inner_63 once.  With all of them targets, the
 * first ps_outer call is where the shim meets 64 new targets (a call site
 * block and a series block each), all inside ps_outer's bracket; the later
 * calls meet nothing new.  Prints the sum, the same with or without the
 * shim.  Usage: prog_setup CALLS */
#include <stdio.h>
#include <stdlib.h>

#define INNER(i)                                               \
	__attribute__((noinline)) int ps_inner_##i(int x);     \
	__attribute__((noinline)) int ps_inner_##i(int x)      \
	{                                                      \
		__asm__ volatile("" : "+r"(x));                \
		return x + i;                                  \
	}
#define INNER8(a)                                                              \
	INNER(a##0) INNER(a##1) INNER(a##2) INNER(a##3) INNER(a##4) INNER(a##5) \
	INNER(a##6) INNER(a##7)
INNER8(0) INNER8(1) INNER8(2) INNER8(3) INNER8(4) INNER8(5) INNER8(6) INNER8(7)

#define REF(i) ps_inner_##i
#define REF8(a) REF(a##0), REF(a##1), REF(a##2), REF(a##3), REF(a##4), REF(a##5), \
		REF(a##6), REF(a##7)
static int (*const volatile inner[64])(int) = {REF8(0), REF8(1), REF8(2), REF8(3),
					       REF8(4), REF8(5), REF8(6), REF8(7)};

__attribute__((noinline)) int ps_outer(int x);
__attribute__((noinline)) int ps_outer(int x)
{
	unsigned i;

	for (i = 0; i < 64; i++)
		x = inner[i](x);
	return x;
}

int main(int argc, char **argv)
{
	int calls = argc > 1 ? atoi(argv[1]) : 3, i;
	long sum = 0;

	for (i = 0; i < calls; i++)
		sum += ps_outer(i);
	printf("%ld\n", sum);
	return 0;
}
