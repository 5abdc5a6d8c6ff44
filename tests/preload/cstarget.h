/* SPDX-License-Identifier: MIT */
/* Functions of libcstarget.so, the library the preload tests wrap. */
#ifndef CACHESHIM_TESTS_CSTARGET_H
#define CACHESHIM_TESTS_CSTARGET_H

/* Each function has a distinctive, exactly checkable result: arguments are
 * weighted by position, so a lost, swapped or truncated argument changes
 * it.  Floating-point values used by the tests are dyadic (exact sums). */

struct cs_pair {
	long a, b; /* returned in rax:rdx */
};

struct cs_vec2 {
	double x, y; /* returned in xmm0:xmm1 */
};

struct cs_mixed {
	long i; /* rax */
	double d; /* xmm0 */
};

struct cs_big {
	long v[9]; /* 72 bytes: returned in memory through a hidden pointer */
};

struct cs_blob96 {
	long v[12]; /* 96 bytes: passed by value on the stack */
};

/* Maps k fresh anonymous pages, writes one byte in each, unmaps them:
 * exactly k (user) page faults.  Returns k, or -1 if mmap failed. */
long cs_touch_pages(long k);

/* Ten longs: the last four are passed on the stack. */
long cs_args10(long a, long b, long c, long d, long e, long f, long g, long h, long i, long j);
/* Eight doubles and three ints, interleaved: all in registers. */
double cs_mix_dbl(double d1, int i1, double d2, double d3, int i2, double d4, double d5, double d6,
		  int i3, double d7, double d8);
/* Ten doubles and seven longs: two doubles and one long on the stack. */
double cs_mix_stack(double d1, long l1, double d2, long l2, double d3, long l3, double d4, long l4,
		    double d5, long l5, double d6, long l6, double d7, double d8, double d9,
		    long l7, double d10);
/* Variadic: sum of (i + 1) * arg_i over n longs. */
long cs_sum_var(int n, ...);
/* Variadic: sum of (i + 1) * arg_i over n doubles (al = vector registers). */
double cs_sum_var_dbl(int n, ...);
float cs_floats(float a, float b, double c, float d);
struct cs_pair cs_ret_pair(long a, long b);
struct cs_vec2 cs_ret_vec2(double x, double y);
struct cs_mixed cs_ret_mixed(long i, double d);
struct cs_big cs_ret_big(long seed);
/* long double arguments are always passed in memory; result in st0. */
long double cs_ld(long double a, long double b, int c);
/* Result in st0 and st1. */
_Complex long double cs_ret_cld(long double re, long double im);
__int128 cs_i128(__int128 a, __int128 b);
/* h lands on the stack at a 16-byte aligned offset after padding. */
__int128 cs_i128_stack(long a, long b, long c, long d, long e, long f, long g, __int128 h);
long cs_byval(struct cs_blob96 s, long k);
char *cs_ret_ptr(char *buf, long off);
/* Sets errno to e and returns -1. */
long cs_fail_errno(int e);
/* n + (n - 1) + ... + 0, recursing through cs_recurse_step: both go
 * through the library's own PLT, so every level is a wrapped call
 * (cs_recurse n + 1 times, cs_recurse_step n times). */
long cs_recurse(long n);
long cs_recurse_step(long n);
/* cs_inner(x) + cs_inner(x + 1): a wrapped call inside a wrapped call. */
long cs_outer(long x);
long cs_inner(long x);
/* Sum of fn(x + i) for i < times. */
long cs_apply(long (*fn)(long), long x, int times);

/* In libcstarget_avx.c, built with -mavx; call only when the CPU has AVX.
 * The prototype needs AVX enabled, so it is declared where it is used. */
#ifdef __AVX__
#include <immintrin.h>
/* a * 2 + b, and the sum of all elements of a and b in *sum. */
__m256d cs_avx(__m256d a, __m256d b, double *sum);
#endif

#endif /* CACHESHIM_TESTS_CSTARGET_H */
