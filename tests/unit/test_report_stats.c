/* SPDX-License-Identifier: MIT */
/* Units: histogram bucketing, percentiles, mean and stddev from 128-bit sums. */
#include <CUnit/Basic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

/* Deterministic pseudo-random numbers (xorshift64*): the same values on
 * every run, so a failure can be reproduced. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static double rnd01(void)
{
	return (double)(rnd() >> 11) / 9007199254740992.0; /* [0, 1) */
}

static void check_bucket(uint64_t v)
{
	unsigned b = cs_hist_index(v);
	uint64_t lo;

	CU_ASSERT_FATAL(b < CS_HIST_BUCKETS);
	lo = cs_hist_lower(b);
	CU_ASSERT(lo <= v);
	if (b < CS_HIST_BUCKETS - 1)
		CU_ASSERT(v - lo < cs_hist_width(b));
	if (lo > v || (b < CS_HIST_BUCKETS - 1 && v - lo >= cs_hist_width(b)))
		printf("\nvalue %llu: bucket %u [%llu, +%llu)\n", (unsigned long long)v, b,
		       (unsigned long long)lo, (unsigned long long)cs_hist_width(b));
}

static void test_hist_buckets(void)
{
	uint64_t v;
	unsigned k, i;

	for (v = 0; v < 200000; v++)
		check_bucket(v);
	for (k = 6; k < 64; k++) {
		check_bucket((1ull << k) - 1);
		check_bucket(1ull << k);
		check_bucket((1ull << k) + 1);
	}
	check_bucket(UINT64_MAX);
	for (i = 0; i < 100000; i++)
		check_bucket(rnd() >> (rnd() % 64));
}

static void test_hist_monotone(void)
{
	unsigned b, prev = 0;
	uint64_t v;

	/* Buckets tile the values without gaps or overlaps... */
	for (b = 0; b + 1 < CS_HIST_BUCKETS; b++) {
		CU_ASSERT_EQUAL(cs_hist_lower(b) + cs_hist_width(b), cs_hist_lower(b + 1));
		CU_ASSERT_EQUAL(cs_hist_index(cs_hist_lower(b)), b);
	}
	CU_ASSERT_EQUAL(cs_hist_lower(CS_HIST_BUCKETS - 1),
			(1ull << CS_HIST_MAX_BITS) - (1ull << (CS_HIST_MAX_BITS - 6)));
	/* ...and the index never decreases as the value grows. */
	for (v = 0; v < (1ull << 24); v += 1 + v / 997) {
		b = cs_hist_index(v);
		CU_ASSERT(b >= prev);
		prev = b;
	}
	/* A bucket above the exact range is at most 1/32 of its bound. */
	for (b = CS_HIST_EXACT; b < CS_HIST_BUCKETS; b++)
		CU_ASSERT(cs_hist_width(b) * 32 <= cs_hist_lower(b));
}

static void fill(struct cs_agg *a, const uint64_t *v, size_t n)
{
	struct cs_stat *s = calloc(1, sizeof(*s));
	cs_u128 sq = 0;
	size_t i;

	CU_ASSERT_FATAL(s != NULL);
	for (i = 0; i < n; i++) {
		if (i == 0 || v[i] < s->min)
			s->min = v[i];
		if (i == 0 || v[i] > s->max)
			s->max = v[i];
		s->sum += v[i];
		sq += (cs_u128)v[i] * v[i];
		s->hist[cs_hist_index(v[i])]++;
	}
	s->sumsq_lo = (uint64_t)sq;
	s->sumsq_hi = (uint64_t)(sq >> 64);
	cs_stats_fini(a);
	cs_stats_add(a, s);
	free(s);
}

struct pct_case {
	int line;
	uint64_t values[12];
	size_t n;
	double q;
	uint64_t want;
};

/* Values below 64 have a bucket each: percentiles are exact. */
static const struct pct_case exact_cases[] = {
	{__LINE__, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10, 0.50, 5},
	{__LINE__, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10, 0.90, 9},
	{__LINE__, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10, 0.99, 10},
	{__LINE__, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10, 1.00, 10},
	{__LINE__, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10, 0.10, 1},
	{__LINE__, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10, 0.11, 2},
	{__LINE__, {7}, 1, 0.50, 7},
	{__LINE__, {0, 0, 0, 63}, 4, 0.75, 0},
	{__LINE__, {0, 0, 0, 63}, 4, 0.76, 63},
	{__LINE__, {42, 42, 42}, 3, 0.99, 42},
	/* min and max clamp wider buckets: one value is exact. */
	{__LINE__, {1000}, 1, 0.50, 1000},
	{__LINE__, {5, 1000000}, 2, 0.99, 1000000},
	{__LINE__, {5, 1000000}, 2, 0.50, 5},
	{__LINE__, {1ull << 45}, 1, 0.50, 1ull << 45},
};

static void test_percentile_exact(void)
{
	struct cs_agg *a = cs_stats_new();
	size_t i;
	uint64_t got;

	CU_ASSERT_FATAL(a != NULL);
	for (i = 0; i < sizeof(exact_cases) / sizeof(exact_cases[0]); i++) {
		const struct pct_case *c = &exact_cases[i];

		fill(a, c->values, c->n);
		got = cs_stats_percentile(a, c->q);
		CU_ASSERT_EQUAL(got, c->want);
		if (got != c->want)
			printf("\nline %d: q %g: got %llu, want %llu\n", c->line, c->q,
			       (unsigned long long)got, (unsigned long long)c->want);
	}
	cs_stats_fini(a);
	CU_ASSERT_EQUAL(cs_stats_percentile(a, 0.5), 0);
	cs_stats_free(a);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

enum dist {
	D_UNIFORM,
	D_UNIFORM_SMALL,
	D_EXP,
	D_LOGNORMAL,
	D_BIMODAL,
	D_CONST,
	D_WIDE,
	D_EDGE,
	D_PARETO
};

static uint64_t draw(enum dist d, size_t i)
{
	double u = rnd01();

	switch (d) {
	case D_UNIFORM:
		return 1000 + rnd() % 1001;
	case D_UNIFORM_SMALL:
		return rnd() % 64;
	case D_EXP:
		return (uint64_t)(-5000.0 * log(1.0 - u));
	case D_LOGNORMAL: {
		/* Box-Muller */
		double z = sqrt(-2.0 * log(1.0 - u)) * cos(6.283185307 * rnd01());

		return (uint64_t)exp(8.0 + 1.5 * z);
	}
	case D_BIMODAL:
		return rnd() % 10 < 7 ? 90 + rnd() % 20 : 150000 + rnd() % 5000;
	case D_CONST:
		return 777;
	case D_WIDE:
		return rnd() >> (25 + rnd() % 39);
	case D_EDGE:
		/* All at the bottom of a wide bucket but one at its top: the
		 * case that interpolation by rank gets most wrong. */
		return i == 0 ? 1055 : 1024;
	case D_PARETO:
		return (uint64_t)(100.0 / pow(1.0 - u, 1.0 / 1.2));
	}
	return 0;
}

static const struct {
	int line;
	enum dist d;
	size_t n;
} dist_cases[] = {
	{__LINE__, D_UNIFORM, 20000}, {__LINE__, D_UNIFORM_SMALL, 5000},
	{__LINE__, D_EXP, 20000},     {__LINE__, D_LOGNORMAL, 20000},
	{__LINE__, D_BIMODAL, 20000}, {__LINE__, D_CONST, 1000},
	{__LINE__, D_WIDE, 20000},    {__LINE__, D_EDGE, 1000},
	{__LINE__, D_PARETO, 20000},  {__LINE__, D_EXP, 7},
	{__LINE__, D_LOGNORMAL, 13},  {__LINE__, D_UNIFORM, 101},
};

static void test_percentile_accuracy(void)
{
	static const double qs[] = {0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0};
	struct cs_agg *a = cs_stats_new();
	uint64_t *v, exact, got;
	size_t i, j, k, rank;
	double err;

	CU_ASSERT_FATAL(a != NULL);
	for (i = 0; i < sizeof(dist_cases) / sizeof(dist_cases[0]); i++) {
		size_t n = dist_cases[i].n;

		v = malloc(n * sizeof(*v));
		CU_ASSERT_FATAL(v != NULL);
		for (j = 0; j < n; j++)
			v[j] = draw(dist_cases[i].d, j);
		fill(a, v, n);
		qsort(v, n, sizeof(*v), cmp_u64);
		for (k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
			/* The ceil(q*n)-th smallest, in integers. */
			rank = (size_t)(((uint64_t)llround(qs[k] * 1e6) * n + 999999) / 1000000);
			if (rank < 1)
				rank = 1;
			exact = v[rank - 1];
			got = cs_stats_percentile(a, qs[k]);
			if (exact < CS_HIST_EXACT)
				err = got == exact ? 0.0 : 1.0;
			else
				err = fabs((double)got - (double)exact) / (double)exact;
			CU_ASSERT(err <= 0.03);
			if (err > 0.03)
				printf("\nline %d: q %g: got %llu, exact %llu (%.2f%%)\n",
				       dist_cases[i].line, qs[k], (unsigned long long)got,
				       (unsigned long long)exact, err * 100);
		}
		free(v);
	}
	cs_stats_free(a);
}

/* Two-pass population standard deviation, for comparison. */
static long double ref_stddev(const uint64_t *v, size_t n)
{
	long double mean = 0, ss = 0;
	size_t i;

	for (i = 0; i < n; i++)
		mean += v[i];
	mean /= n;
	for (i = 0; i < n; i++)
		ss += ((long double)v[i] - mean) * ((long double)v[i] - mean);
	return sqrtl(ss / n);
}

static void test_stddev(void)
{
	static const uint64_t small[] = {2, 4, 4, 4, 5, 5, 7, 9};
	struct cs_agg *a = cs_stats_new(), *b = cs_stats_new();
	struct cs_summary s;
	uint64_t *v;
	size_t i, n = 2000;

	CU_ASSERT_FATAL(a && b);
	/* The textbook example: mean 5, stddev 2. */
	fill(a, small, 8);
	CU_ASSERT_EQUAL(cs_stats_summarize(a, &s), 0);
	CU_ASSERT_EQUAL(s.n, 8);
	CU_ASSERT(s.total == 40);
	CU_ASSERT(fabsl(s.mean - 5.0L) < 1e-12L);
	CU_ASSERT(fabsl(s.stddev - 2.0L) < 1e-12L);
	CU_ASSERT_EQUAL(s.min, 2);
	CU_ASSERT_EQUAL(s.max, 9);

	/* Sums of squares far beyond 64 bits, spread tiny next to the
	 * mean: 1e12 and 1e12 + 2 alternating have stddev exactly 1, which
	 * sumsq/n - mean^2 in long double loses to rounding. */
	v = malloc(n * sizeof(*v));
	CU_ASSERT_FATAL(v != NULL);
	for (i = 0; i < n; i++)
		v[i] = 1000000000000ull + (i % 2) * 2;
	fill(a, v, n);
	CU_ASSERT(a->sumsq[1] != 0); /* really past 64 bits */
	CU_ASSERT(fabsl(cs_stats_stddev(a) - 1.0L) < 1e-9L);

	/* Near the top of 64 bits (a file's sum is 64-bit): squares need
	 * all 128 bits of sumsq. */
	for (i = 0; i < 4; i++)
		v[i] = (1ull << 61) + i;
	fill(a, v, 4);
	CU_ASSERT(a->sumsq[1] >= (1ull << 58));
	CU_ASSERT(fabsl(cs_stats_stddev(a) - ref_stddev(v, 4)) < 1e-6L);
	CU_ASSERT_EQUAL(cs_stats_summarize(a, &s), 0);
	CU_ASSERT(fabsl(s.mean - ((long double)(1ull << 61) + 1.5L)) < 1.0L);

	/* Merged sums pass 2^64 and sums of squares 2^128. */
	for (i = 0; i < 4; i++)
		v[i] = 1ull << 61;
	fill(a, v, 4);
	fill(b, v, 4);
	for (i = 0; i < 31; i++)
		cs_stats_merge(a, b);
	CU_ASSERT(a->sum == (cs_u128)128 << 61);
	/* 128 squares of 2^61: 2^129 */
	CU_ASSERT(a->sumsq[0] == 0 && a->sumsq[1] == 0 && a->sumsq[2] == 2);
	CU_ASSERT_EQUAL(cs_stats_summarize(a, &s), 0);
	CU_ASSERT(s.mean == (long double)(1ull << 61));
	CU_ASSERT(s.stddev == 0.0L);

	/* Random values against the two-pass reference. */
	for (i = 0; i < n; i++)
		v[i] = rnd() >> (11 + rnd() % 50);
	fill(a, v, n);
	CU_ASSERT(fabsl(cs_stats_stddev(a) - ref_stddev(v, n)) <= 1e-9L * ref_stddev(v, n));

	/* Merging two halves gives the same as one agg of everything. */
	fill(a, v, n / 2);
	fill(b, v + n / 2, n - n / 2);
	cs_stats_merge(a, b);
	CU_ASSERT_EQUAL(a->n, n);
	CU_ASSERT(fabsl(cs_stats_stddev(a) - ref_stddev(v, n)) <= 1e-9L * ref_stddev(v, n));

	/* Sums no set of values can have (a damaged file): 0, no NaN. */
	cs_stats_fini(a);
	cs_stats_add_value(a, 0);
	cs_stats_add_value(a, 0);
	a->sum = 1000;
	CU_ASSERT(cs_stats_stddev(a) == 0.0L);

	cs_stats_fini(a);
	CU_ASSERT_EQUAL(cs_stats_summarize(a, &s), -ENODATA);
	free(v);
	cs_stats_free(a);
	cs_stats_free(b);
}

static void test_merge_minmax(void)
{
	struct cs_agg *a = cs_stats_new();
	struct cs_stat *s = calloc(1, sizeof(*s));

	CU_ASSERT_FATAL(a && s);
	/* A stat without values must not drag min to its zero. */
	s->min = 0;
	s->max = 0;
	cs_stats_add(a, s);
	CU_ASSERT_EQUAL(a->n, 0);
	s->min = s->max = 50;
	s->sum = 50;
	s->sumsq_lo = 2500;
	s->hist[50] = 1;
	cs_stats_add(a, s);
	s->min = s->max = 10;
	s->sum = 10;
	s->sumsq_lo = 100;
	s->hist[50] = 0;
	s->hist[10] = 1;
	cs_stats_add(a, s);
	CU_ASSERT_EQUAL(a->n, 2);
	CU_ASSERT_EQUAL(a->min, 10);
	CU_ASSERT_EQUAL(a->max, 50);
	CU_ASSERT(a->sum == 60);
	cs_stats_free(a);
	free(s);
}

static const struct {
	int line;
	long double v;
	const char *want;
} decimal_cases[] = {
	{__LINE__, 12.5L, "12.5"},
	{__LINE__, 12.0L, "12"},
	{__LINE__, 1.0L / 3, "0.333"},
	{__LINE__, 2.0L / 3, "0.667"},
	{__LINE__, -0.0001L, "0"},
	/* A mean of 1 in 2500 calls is not 0: six significant digits. */
	{__LINE__, 0.0004L, "0.0004"},
	{__LINE__, 1.0L / 3000000, "3.33333e-07"},
	{__LINE__, 0.0009996L, "0.0009996"},
	{__LINE__, 0.001L, "0.001"},
	{__LINE__, 0.0L, "0"},
	{__LINE__, 1e15L, "1000000000000000"},
	{__LINE__, 1234.5678L, "1234.568"},
	{__LINE__, 0.9999L, "1"},
	/* From 2^64 on: an exponent, never 200 digits cut at the buffer;
	 * below, every counter value exact. */
	{__LINE__, 9e18L, "9000000000000000000"},
	{__LINE__, 18446744073709551615.0L, "18446744073709551615"},
	{__LINE__, 18446744073709551616.0L, "1.84467440737096e+19"},
	{__LINE__, 1e20L, "1e+20"},
	{__LINE__, 1e200L, "1e+200"},
	{__LINE__, -1e130L, "-1e+130"},
	{__LINE__, 1.234567890123456789e127L, "1.23456789012346e+127"},
};

static void test_format(void)
{
	char buf[64];
	size_t i;

	for (i = 0; i < sizeof(decimal_cases) / sizeof(decimal_cases[0]); i++) {
		cs_util_decimal(decimal_cases[i].v, buf, sizeof(buf));
		CU_ASSERT_STRING_EQUAL(buf, decimal_cases[i].want);
		if (strcmp(buf, decimal_cases[i].want))
			printf("\nline %d: got %s\n", decimal_cases[i].line, buf);
	}
	CU_ASSERT_STRING_EQUAL(cs_util_decimal(NAN, buf, sizeof(buf)), "");
	CU_ASSERT_STRING_EQUAL(cs_util_u128(0, buf, sizeof(buf)), "0");
	CU_ASSERT_STRING_EQUAL(cs_util_u128((cs_u128)1 << 100, buf, sizeof(buf)),
			       "1267650600228229401496703205376");
	CU_ASSERT_STRING_EQUAL(cs_util_u128(~(cs_u128)0, buf, sizeof(buf)),
			       "340282366920938463463374607431768211455");
	CU_ASSERT_STRING_EQUAL(cs_util_human(99999, buf, sizeof(buf)), "99999");
	CU_ASSERT_STRING_EQUAL(cs_util_human(123456, buf, sizeof(buf)), "123k");
	CU_ASSERT_STRING_EQUAL(cs_util_human(1234567, buf, sizeof(buf)), "1.23M");
	CU_ASSERT_STRING_EQUAL(cs_util_human(12.25L, buf, sizeof(buf)), "12.2");
	CU_ASSERT_STRING_EQUAL(cs_util_human(1.5e20L, buf, sizeof(buf)), "150E");
	CU_ASSERT_STRING_EQUAL(cs_util_human(1e200L, buf, sizeof(buf)), "1e+200");
	CU_ASSERT_STRING_EQUAL(cs_util_human(-1.2345e130L, buf, sizeof(buf)), "-1.23e+130");
	CU_ASSERT_STRING_EQUAL(cs_util_basename("/a/b/libc.so.6"), "libc.so.6");
	CU_ASSERT_STRING_EQUAL(cs_util_basename("prog"), "prog");
}

/* cs_util_escape_cut: what the text outputs print of a name. */
static const struct {
	int line;
	const char *in;
	size_t cols, len; /* len 0: 256 */
	const char *want;
} escape_cases[] = {
	{__LINE__, "plain", 0, 0, "plain"},
	{__LINE__, "a\nb\tc\rd", 0, 0, "a\\nb\\tc\\rd"},
	{__LINE__, "\x01\x1b[2J\x7f", 0, 0, "\\x01\\x1b[2J\\x7f"},
	/* A backslash doubled: the name \x01 (four characters) is not the
	 * byte 0x01. */
	{__LINE__, "a\\x01\\", 0, 0, "a\\\\x01\\\\"},
	{__LINE__, "a\\\x01", 0, 0, "a\\\\\\x01"},
	/* UTF-8 stays; C1 controls and bytes that are not UTF-8 do not. */
	{__LINE__, "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac", 0, 0,
	 "caf\xc3\xa9 \xf0\x9f\x98\x80 \xe2\x82\xac"},
	{__LINE__, "\xc2\xa0nbsp", 0, 0, "\xc2\xa0nbsp"},
	{__LINE__, "a\302\200b\302\233c\302\237", 0, 0, "a\\xc2\\x80b\\xc2\\x9bc\\xc2\\x9f"},
	{__LINE__, "\xff\xfe", 0, 0, "\\xff\\xfe"},
	{__LINE__, "x\xc3", 0, 0, "x\\xc3"}, /* cut short */
	{__LINE__, "\200a", 0, 0, "\\x80a"}, /* lone continuation */
	{__LINE__, "\xc0\xaf", 0, 0, "\\xc0\\xaf"}, /* overlong '/' */
	{__LINE__, "\xed\xa0\x80", 0, 0, "\\xed\\xa0\\x80"}, /* a surrogate */
	{__LINE__, "\xf4\x90\x80\x80", 0, 0, "\\xf4\\x90\\x80\\x80"}, /* past U+10FFFF */
	/* Cut to cols columns: a character is one, an escape its text. */
	{__LINE__, "abcdefgh", 8, 0, "abcdefgh"},
	{__LINE__, "abcdefghi", 8, 0, "abcde..."},
	{__LINE__, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8, 0,
	 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"},
	{__LINE__, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 8, 0,
	 "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9..."},
	{__LINE__, "abcd\x01xyz", 8, 0, "abcd..."},
	{__LINE__, "a\x01xyzabc", 8, 0, "a\\x01..."},
	{__LINE__, "ab\xc2\x85xyz", 8, 0, "ab..."},
	{__LINE__, "\302\205ab", 4, 0, "..."},
	/* A short buffer: whole characters and escapes only, no mark. */
	{__LINE__, "ab\x01", 0, 6, "ab"},
	{__LINE__, "ab\xc3\xa9", 0, 4, "ab"},
	{__LINE__, "ab\xc3\xa9", 0, 5, "ab\xc3\xa9"},
	{__LINE__, "\xc2\x9b", 0, 8, ""},
};

static void test_escape(void)
{
	char buf[256];
	size_t i, len;

	for (i = 0; i < sizeof(escape_cases) / sizeof(escape_cases[0]); i++) {
		len = escape_cases[i].len ? escape_cases[i].len : sizeof(buf);
		cs_util_escape_cut(escape_cases[i].in, escape_cases[i].cols, buf, len);
		CU_ASSERT_STRING_EQUAL(buf, escape_cases[i].want);
		if (strcmp(buf, escape_cases[i].want))
			printf("\nline %d: got %s\n", escape_cases[i].line, buf);
		if (escape_cases[i].cols)
			CU_ASSERT(cs_util_width(buf, strlen(buf)) <= escape_cases[i].cols);
	}
	/* Display columns: one per character. */
	CU_ASSERT_EQUAL(cs_util_width("a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 10), 4);
	CU_ASSERT_EQUAL(cs_util_field("\xc3\xa9", 3), 4);
}

/* A label cut to the column keeps what tells rows apart: two call sites
 * of one long function (+0x29 and +0x44 printed alike), a function's
 * module and argument class. */
static const struct {
	int line;
	const char *in;
	int callsite;
	size_t cols;
	const char *want;
} keep_cases[] = {
	{__LINE__, "long_function_name_abcdefghijklmnop+0x29", 1, 20, "long_functio...+0x29"},
	{__LINE__, "long_function_name_abcdefghijklmnop+0x44", 1, 20, "long_functio...+0x44"},
	{__LINE__, "short+0x29", 1, 20, "short+0x29"},
	{__LINE__, "no_offset_at_the_end_of_this_name", 1, 20, "no_offset_at_the_..."},
	{__LINE__, "a_long_function_name_here@libfoo.so", 0, 24, "a_long_func...@libfoo.so"},
	{__LINE__, "a_long_function_name_here[arg2:64]", 0, 24, "a_long_funct...[arg2:64]"},
	{__LINE__, "a_long_function_name@libx.so+0x10[arg1:8]", 0, 30,
	 "a_long...@libx.so+0x10[arg1:8]"},
	{__LINE__, "operator[] of some very long class name", 0, 20, "operator[] of som..."},
	{__LINE__, "VeryLongClass<int>::~VeryLongClass() [deleting]", 0, 30,
	 "VeryLongClass<in... [deleting]"},
	/* An end wider than the column: cut as any name. */
	{__LINE__, "f@/a/very/long/path/to/some/library.so", 0, 20, "f@/a/very/long/pa..."},
};

static void test_escape_keep(void)
{
	char buf[256];
	size_t i, keep;

	for (i = 0; i < sizeof(keep_cases) / sizeof(keep_cases[0]); i++) {
		keep = cs_util_label_suffix(keep_cases[i].in, keep_cases[i].callsite,
					    !keep_cases[i].callsite);
		cs_util_escape_cut_keep(keep_cases[i].in, keep, keep_cases[i].cols, buf, sizeof(buf));
		CU_ASSERT_STRING_EQUAL(buf, keep_cases[i].want);
		if (strcmp(buf, keep_cases[i].want))
			printf("\nline %d: got %s\n", keep_cases[i].line, buf);
		CU_ASSERT(cs_util_width(buf, strlen(buf)) <= keep_cases[i].cols);
	}
}

/* Constructor and destructor variants demangle alike: the report marks
 * all but the complete-object one (two rows ~Base() looked the same); a
 * name with those letters inside an identifier is left as it is. */
static void test_demangle_variants(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{"_ZN2ns4BaseD0Ev", "ns::Base::~Base() [deleting]"},
		{"_ZN2ns4BaseD1Ev", "ns::Base::~Base()"},
		{"_ZN2ns4BaseD2Ev", "ns::Base::~Base() [base object]"},
		{"_ZN2ns4BaseC1Ei", "ns::Base::Base(int)"},
		{"_ZN2ns4BaseC2Ei+0x10", "ns::Base::Base(int) [base object]+0x10"},
		{"_ZN3Foo5fooD0Ev", "Foo::fooD0()"},
		{"_ZN3Foo4aC2EEv", "Foo::aC2E()"},
		{"_ZN2ns4BaseD0Ev.cold", "ns::Base::~Base() [deleting] [clone .cold]"},
		/* A constructor template's arguments, an ABI tag, a thunk. */
		{"_ZN2ns4BaseC1IdEET_", "ns::Base::Base<double>(double)"},
		{"_ZN2ns4BaseC2IdEET_", "ns::Base::Base<double>(double) [base object]"},
		{"_ZN2ns4CtagC2B1xEv", "ns::Ctag::Ctag[abi:x]() [base object]"},
		{"_ZThn8_N2ns1VD0Ev", "non-virtual thunk to ns::V::~V() [deleting]"},
		{"_ZThn8_N2ns1VD1Ev", "non-virtual thunk to ns::V::~V()"},
		{"_ZN3Foo4aC2IEv", "Foo::aC2I()"},
	};
	size_t i;
	char *d;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		d = cs_demangle(cases[i].in, 0);
		if (!d) /* no libstdc++ here: nothing to check */
			return;
		CU_ASSERT_STRING_EQUAL(d, cases[i].want);
		if (strcmp(d, cases[i].want))
			printf("\n%s: got %s\n", cases[i].in, d);
		free(d);
	}
	/* --function: the name without the words selects every variant, a
	 * glob on the words only those. */
	CU_ASSERT_EQUAL(cs_demangle_fnmatch("ns::Base::~Base()", "_ZN2ns4BaseD0Ev", 0), 0);
	CU_ASSERT_EQUAL(cs_demangle_fnmatch("ns::Base::~Base()", "_ZN2ns4BaseD1Ev", 0), 0);
	CU_ASSERT_EQUAL(cs_demangle_fnmatch("*\\[deleting\\]", "_ZN2ns4BaseD0Ev", 0), 0);
	CU_ASSERT_NOT_EQUAL(cs_demangle_fnmatch("*\\[deleting\\]", "_ZN2ns4BaseD1Ev", 0), 0);
}

int main(void)
{
	CU_pSuite s;
	unsigned fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	s = CU_add_suite("report_stats", NULL, NULL);
	CU_add_test(s, "histogram buckets hold their values", test_hist_buckets);
	CU_add_test(s, "histogram buckets tile and are monotone", test_hist_monotone);
	CU_add_test(s, "percentiles of small values are exact", test_percentile_exact);
	CU_add_test(s, "percentiles within 3%", test_percentile_accuracy);
	CU_add_test(s, "stddev from 128-bit sums", test_stddev);
	CU_add_test(s, "merge keeps min and max", test_merge_minmax);
	CU_add_test(s, "number formatting", test_format);
	CU_add_test(s, "names escaped and cut", test_escape);
	CU_add_test(s, "labels cut keep their ends", test_escape_keep);
	CU_add_test(s, "constructor and destructor variants", test_demangle_variants);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
