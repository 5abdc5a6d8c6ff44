/* SPDX-License-Identifier: MIT */
/* Units: sparse and dense aggregates, taking first calls out of an
 * aggregate (cold/warm), and the rows of --hist. */
#include <CUnit/Basic.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* A stat of the n values v, as the shim would write it. */
static struct cs_stat *stat_of(const uint64_t *v, size_t n)
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
		if (i == 0)
			s->first = v[i];
		s->sum += v[i];
		sq += (cs_u128)v[i] * v[i];
		s->hist[cs_hist_index(v[i])]++;
	}
	s->sumsq_lo = (uint64_t)sq;
	s->sumsq_hi = (uint64_t)(sq >> 64);
	return s;
}

/* Every bucket of a is ref[]. */
static int same_buckets(const struct cs_agg *a, const uint64_t *ref)
{
	unsigned b;

	for (b = 0; b < CS_HIST_BUCKETS; b++)
		if (cs_stats_bucket(a, b) != ref[b])
			return 0;
	return 1;
}

/* Stats of a few values spread wide (sparse), of many values close
 * together (dense), merged in every way, give the buckets of a plain
 * array of counts, and the same percentiles whatever the order. */
static void test_sparse_dense(void)
{
	static uint64_t ref[CS_HIST_BUCKETS];
	struct cs_agg *a = cs_stats_new(), *b = cs_stats_new(), *c = cs_stats_new();
	uint64_t v[400], p1, p2;
	struct cs_stat *s;
	size_t i, n, round;

	CU_ASSERT_FATAL(a && b && c);
	memset(ref, 0, sizeof(ref));
	for (round = 0; round < 200; round++) {
		/* Alternately: 3..20 values over 3 decades, or 400 close. */
		n = round % 2 ? 3 + rnd() % 18 : 400;
		for (i = 0; i < n; i++) {
			v[i] = round % 2 ? 100 + rnd() % 100000 : 5000 + rnd() % 200;
			ref[cs_hist_index(v[i])]++;
		}
		s = stat_of(v, n);
		CU_ASSERT_EQUAL(cs_stats_add_calls(a, s, n), n);
		/* b gets the same through a one-stat agg, merged. */
		cs_stats_fini(c);
		cs_stats_add(c, s);
		if (round < 3)
			CU_ASSERT_EQUAL(c->sparse, round % 2);
		cs_stats_merge(b, c);
		free(s);
		CU_ASSERT(same_buckets(a, ref));
		CU_ASSERT(same_buckets(b, ref));
	}
	CU_ASSERT_EQUAL(a->n, b->n);
	CU_ASSERT(a->sum == b->sum);
	p1 = cs_stats_percentile(a, 0.9);
	p2 = cs_stats_percentile(b, 0.9);
	CU_ASSERT_EQUAL(p1, p2);
	/* A copy is equal and independent. */
	CU_ASSERT_EQUAL(cs_stats_copy(c, a), 0);
	CU_ASSERT(same_buckets(c, ref));
	cs_stats_add_value(c, 7);
	CU_ASSERT(same_buckets(a, ref));
	CU_ASSERT_EQUAL(cs_stats_bucket(c, 7), ref[7] + 1);
	cs_stats_free(a);
	cs_stats_free(b);
	cs_stats_free(c);
}

/* Warm = all - cold: exact counts and sums; min and max exact when no
 * cold value was an extreme, else bucket bounds. */
static void test_sub(void)
{
	static const uint64_t all[] = {1000, 50, 50, 50, 900, 60, 60};
	struct cs_agg *a = cs_stats_new(), *cold = cs_stats_new();
	struct cs_stat *s = stat_of(all, 7);
	struct cs_summary w;

	CU_ASSERT_FATAL(a && cold);
	cs_stats_add(a, s);
	cs_stats_add_value(cold, 1000);
	cs_stats_add_value(cold, 900);
	CU_ASSERT_EQUAL(cs_stats_sub(a, cold), 0);
	CU_ASSERT_EQUAL(cs_stats_summarize(a, &w), 0);
	CU_ASSERT_EQUAL(w.n, 5);
	CU_ASSERT(w.total == 270);
	CU_ASSERT_EQUAL(w.min, 50); /* not a cold value: exact */
	CU_ASSERT_EQUAL(w.max, 60); /* below 64: buckets are exact */
	CU_ASSERT(w.stddev > 4.898L && w.stddev < 4.899L);
	/* Taking out values that are not there fails and changes nothing. */
	cs_stats_fini(cold);
	cs_stats_add_value(cold, 7);
	CU_ASSERT_EQUAL(cs_stats_sub(a, cold), -EINVAL);
	CU_ASSERT_EQUAL(a->n, 5);
	/* A cold max: the warm max is the top of the highest bucket. */
	cs_stats_fini(a);
	cs_stats_fini(cold);
	cs_stats_add_value(a, 400);
	cs_stats_add_value(a, 1000);
	cs_stats_add_value(cold, 1000);
	CU_ASSERT_EQUAL(cs_stats_sub(a, cold), 0);
	CU_ASSERT_EQUAL(a->max, 407); /* 400 is in 400..407 */
	CU_ASSERT_EQUAL(a->min, 400);
	/* Everything out: empty. */
	cs_stats_fini(cold);
	cs_stats_add_value(cold, 400);
	CU_ASSERT_EQUAL(cs_stats_sub(a, cold), 0);
	CU_ASSERT_EQUAL(a->n, 0);
	CU_ASSERT_EQUAL(cs_stats_summarize(a, &w), -ENODATA);
	free(s);
	cs_stats_free(a);
	cs_stats_free(cold);
}

static const struct {
	int line;
	uint64_t lo, hi; /* values lo and hi */
	unsigned rows, group;
} rows_cases[] = {
	{__LINE__, 0, 3, 4, 1}, /* small counts: a row per value */
	{__LINE__, 5, 5, 1, 1},
	{__LINE__, 0, 19, 20, 1},
	{__LINE__, 0, 20, 11, 2},
	{__LINE__, 10, 63, 14, 4},
	{__LINE__, 64, 99964, 11, 32}, /* a power of two per row */
	{__LINE__, 1000, 1100, 5, 1}, /* buckets 190 (992..1007) to 194 */
	{__LINE__, 0, 1ull << 50, 18, 64},
};

static void test_hist_rows(void)
{
	struct cs_agg *a = cs_stats_new();
	unsigned g, first, last, n;
	size_t i;

	CU_ASSERT_FATAL(a != NULL);
	for (i = 0; i < sizeof(rows_cases) / sizeof(rows_cases[0]); i++) {
		cs_stats_fini(a);
		cs_stats_add_value(a, rows_cases[i].lo);
		cs_stats_add_value(a, rows_cases[i].hi);
		n = cs_hist_rows(a, 20, &g, &first, &last);
		CU_ASSERT_EQUAL(n, rows_cases[i].rows);
		CU_ASSERT_EQUAL(g, rows_cases[i].group);
		CU_ASSERT(n <= 20);
		/* Aligned groups that hold both values. */
		CU_ASSERT_EQUAL(first % g, 0);
		CU_ASSERT(first <= cs_hist_index(rows_cases[i].lo));
		CU_ASSERT(last >= cs_hist_index(rows_cases[i].hi));
		CU_ASSERT_EQUAL((last - first + 1 + g - 1) / g, n);
		if (n != rows_cases[i].rows || g != rows_cases[i].group)
			printf("\nline %d: %u rows of %u\n", rows_cases[i].line, n, g);
	}
	cs_stats_fini(a);
	CU_ASSERT_EQUAL(cs_hist_rows(a, 20, &g, &first, &last), 0);
	cs_stats_free(a);
}

int main(void)
{
	CU_pSuite s;
	unsigned fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	s = CU_add_suite("report_views", NULL, NULL);
	CU_add_test(s, "sparse and dense aggregates agree", test_sparse_dense);
	CU_add_test(s, "warm = all - cold", test_sub);
	CU_add_test(s, "histogram rows", test_hist_rows);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
