/* SPDX-License-Identifier: MIT */
/* libcstarget.so: functions with every calling-convention shape, to wrap. */
#include <errno.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/preload/cstarget.h"

/* Built with -fsemantic-interposition: calls between these exported
 * functions stay calls through the library's own PLT (gcc would otherwise
 * turn self-recursion into a loop, clang would inline), so the shim sees
 * them.  test_abi.sh checks the JUMP_SLOT relocations are there. */

static long page_size;

/* noinline: the constructor below must run this very code, not a copy. */
__attribute__((noinline)) long cs_touch_pages(long k)
{
	volatile char *p;
	long i;

	if (k <= 0)
		return k;
	p = mmap(NULL, (size_t)(k * page_size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return -1;
	for (i = 0; i < k; i++)
		p[i * page_size] = 1;
	munmap((void *)p, (size_t)(k * page_size));
	return k;
}

/* Same code, called directly (not through the PLT), so unwrapped. */
extern long touch_pages_direct(long k)
	__attribute__((alias("cs_touch_pages"), visibility("hidden")));

/* Runs cs_touch_pages once before the program does, so that its first
 * wrapped call faults no text page (its own, or libc's mmap and munmap)
 * and costs exactly k faults like every later call. */
__attribute__((constructor)) static void warm_up(void)
{
	page_size = sysconf(_SC_PAGESIZE);
	touch_pages_direct(1);
}

long cs_args10(long a, long b, long c, long d, long e, long f, long g, long h, long i, long j)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j;
}

double cs_mix_dbl(double d1, int i1, double d2, double d3, int i2, double d4, double d5, double d6,
		  int i3, double d7, double d8)
{
	return d1 + 2 * d2 + 3 * d3 + 4 * d4 + 5 * d5 + 6 * d6 + 7 * d7 + 8 * d8 + 100.0 * i1 +
	       1000.0 * i2 + 10000.0 * i3;
}

double cs_mix_stack(double d1, long l1, double d2, long l2, double d3, long l3, double d4, long l4,
		    double d5, long l5, double d6, long l6, double d7, double d8, double d9,
		    long l7, double d10)
{
	return d1 + 2 * d2 + 3 * d3 + 4 * d4 + 5 * d5 + 6 * d6 + 7 * d7 + 8 * d8 + 9 * d9 +
	       10 * d10 + (double)(l1 + 3 * l2 + 5 * l3 + 7 * l4 + 11 * l5 + 13 * l6 + 17 * l7);
}

long cs_sum_var(int n, ...)
{
	va_list ap;
	long s = 0;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		s += (i + 1) * va_arg(ap, long);
	va_end(ap);
	return s;
}

double cs_sum_var_dbl(int n, ...)
{
	va_list ap;
	double s = 0;
	int i;

	va_start(ap, n);
	for (i = 0; i < n; i++)
		s += (i + 1) * va_arg(ap, double);
	va_end(ap);
	return s;
}

float cs_floats(float a, float b, double c, float d)
{
	return (float)(a + 2 * b + 4 * c + 8 * d);
}

struct cs_pair cs_ret_pair(long a, long b)
{
	struct cs_pair p = {a * 3, b - 7};

	return p;
}

struct cs_vec2 cs_ret_vec2(double x, double y)
{
	struct cs_vec2 v = {x * 2, y - 1};

	return v;
}

struct cs_mixed cs_ret_mixed(long i, double d)
{
	struct cs_mixed m = {i + 1, d * 4};

	return m;
}

struct cs_big cs_ret_big(long seed)
{
	struct cs_big b;
	int i;

	for (i = 0; i < 9; i++)
		b.v[i] = seed * (i + 1) + i;
	return b;
}

long double cs_ld(long double a, long double b, int c)
{
	return a * c + b;
}

_Complex long double cs_ret_cld(long double re, long double im)
{
	/* A complex is laid out as {real, imaginary} (C11 6.2.5): this builds
	 * one without CMPLXL, which glibc offers to gcc only. */
	union {
		_Complex long double z;
		long double part[2];
	} u;

	u.part[0] = re * 2;
	u.part[1] = im - 1;
	return u.z;
}

__int128 cs_i128(__int128 a, __int128 b)
{
	return a * 3 + b;
}

__int128 cs_i128_stack(long a, long b, long c, long d, long e, long f, long g, __int128 h)
{
	return h + (a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g);
}

long cs_byval(struct cs_blob96 s, long k)
{
	long r = 1000 * k;
	int i;

	for (i = 0; i < 12; i++)
		r += (i + 1) * s.v[i];
	return r;
}

char *cs_ret_ptr(char *buf, long off)
{
	return buf + off;
}

long cs_fail_errno(int e)
{
	errno = e;
	return -1;
}

long cs_recurse(long n)
{
	if (n <= 0)
		return 0;
	return n + cs_recurse_step(n - 1);
}

long cs_recurse_step(long n)
{
	return cs_recurse(n);
}

long cs_inner(long x)
{
	return x * x;
}

long cs_outer(long x)
{
	return cs_inner(x) + cs_inner(x + 1);
}

long cs_apply(long (*fn)(long), long x, int times)
{
	long s = 0;
	int i;

	for (i = 0; i < times; i++)
		s += fn(x + i);
	return s;
}
