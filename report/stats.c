/* SPDX-License-Identifier: MIT */
/* Mean, standard deviation and percentiles from the file's histograms. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "report/internal.h"

void cs_stats_init(struct cs_agg *a)
{
	memset(a, 0, sizeof(*a));
}

static void add192(uint64_t acc[3], uint64_t lo, uint64_t mid, uint64_t hi)
{
	cs_u128 t;

	t = (cs_u128)acc[0] + lo;
	acc[0] = (uint64_t)t;
	t = (cs_u128)acc[1] + mid + (uint64_t)(t >> 64);
	acc[1] = (uint64_t)t;
	acc[2] += hi + (uint64_t)(t >> 64);
}

static void add_minmax(struct cs_agg *a, uint64_t n, uint64_t min, uint64_t max)
{
	if (a->n == 0) {
		a->min = min;
		a->max = max;
	} else {
		if (min < a->min)
			a->min = min;
		if (max > a->max)
			a->max = max;
	}
	a->n += n;
}

uint64_t cs_stats_add(struct cs_agg *a, const struct cs_stat *s)
{
	uint64_t n = 0;
	unsigned b;

	for (b = 0; b < CS_HIST_BUCKETS; b++) {
		a->hist[b] += s->hist[b];
		n += s->hist[b];
	}
	/* min and max of a stat that recorded nothing are whatever the
	 * writer initialised them to: they must not widen the range. */
	if (n == 0)
		return 0;
	a->sum += s->sum;
	add192(a->sumsq, s->sumsq_lo, s->sumsq_hi, 0);
	add_minmax(a, n, s->min, s->max);
	return n;
}

void cs_stats_merge(struct cs_agg *a, const struct cs_agg *b)
{
	unsigned i;

	if (b->n == 0)
		return;
	for (i = 0; i < CS_HIST_BUCKETS; i++)
		a->hist[i] += b->hist[i];
	a->sum += b->sum;
	a->shift += b->shift;
	add192(a->sumsq, b->sumsq[0], b->sumsq[1], b->sumsq[2]);
	add_minmax(a, b->n, b->min, b->max);
}

uint64_t cs_stats_percentile(const struct cs_agg *a, double q)
{
	uint64_t rank, qm, cum = 0, c = 0, lo, w, v;
	long double f;
	unsigned b;

	if (a->n == 0)
		return 0;
	/* ceil(q * n) in integers, q taken to a millionth: in floating
	 * point 0.9 * 10 is a hair above 9 and would round up to 10. */
	if (q >= 1.0)
		qm = 1000000;
	else if (q <= 0.0)
		qm = 0;
	else
		qm = (uint64_t)llround(q * 1e6);
	rank = (uint64_t)(((cs_u128)qm * a->n + 999999) / 1000000);
	if (rank < 1)
		rank = 1;
	if (rank > a->n)
		rank = a->n;
	for (b = 0; b < CS_HIST_BUCKETS; b++) {
		c = a->hist[b];
		if (c && c >= rank - cum)
			break;
		cum += c;
	}
	if (b == CS_HIST_BUCKETS) /* n disagrees with hist: corrupt input */
		return a->max;
	if (b < CS_HIST_EXACT) {
		v = b;
	} else {
		lo = cs_hist_lower(b);
		w = cs_hist_width(b);
		/* The last bucket is open-ended: it reaches up to max. */
		if (b == CS_HIST_BUCKETS - 1)
			w = a->max >= lo ? a->max - lo + 1 : w;
		/* Assume the bucket's values are spread evenly and take the
		 * rank's position among them.  Keeping the position within
		 * [0.05, 0.95] bounds the error by 0.95 * width / lower
		 * < 3% (width <= lower / 32) whatever the distribution,
		 * which a value at the very edge of the bucket could break. */
		f = ((long double)(rank - cum) - 0.5L) / (long double)c;
		if (f < 0.05L)
			f = 0.05L;
		if (f > 0.95L)
			f = 0.95L;
		v = lo + (uint64_t)(f * (long double)w);
	}
	if (a->min <= a->max) {
		if (v < a->min)
			v = a->min;
		if (v > a->max)
			v = a->max;
	}
	return v;
}

/* 256-bit unsigned integers as four little-endian limbs. */
static void mul_192_64(const uint64_t x[3], uint64_t y, uint64_t out[4])
{
	cs_u128 t = 0;
	unsigned i;

	for (i = 0; i < 3; i++) {
		t += (cs_u128)x[i] * y;
		out[i] = (uint64_t)t;
		t >>= 64;
	}
	out[3] = (uint64_t)t;
}

static void square_128(cs_u128 x, uint64_t out[4])
{
	uint64_t lo = (uint64_t)x, hi = (uint64_t)(x >> 64);
	cs_u128 ll = (cs_u128)lo * lo, lh = (cs_u128)lo * hi, hh = (cs_u128)hi * hi, t;

	/* x^2 = hh << 128 + 2*lh << 64 + ll */
	out[0] = (uint64_t)ll;
	t = (ll >> 64) + (uint64_t)lh + (uint64_t)lh;
	out[1] = (uint64_t)t;
	t = (t >> 64) + (lh >> 64) + (lh >> 64) + (uint64_t)hh;
	out[2] = (uint64_t)t;
	out[3] = (uint64_t)((t >> 64) + (hh >> 64));
}

/* out = x - y; returns 1 when y > x (out is then garbage). */
static int sub_256(const uint64_t x[4], const uint64_t y[4], uint64_t out[4])
{
	uint64_t borrow = 0;
	unsigned i;

	for (i = 0; i < 4; i++) {
		cs_u128 t = (cs_u128)x[i] - y[i] - borrow;

		out[i] = (uint64_t)t;
		borrow = (uint64_t)(t >> 64) ? 1 : 0;
	}
	return (int)borrow;
}

long double cs_stats_stddev(const struct cs_agg *a)
{
	uint64_t nss[4], s2[4], d[4];
	long double dd;

	if (a->n == 0)
		return 0.0L;
	/* Var = (n * sumsq - sum^2) / n^2.  Computed exactly in integers:
	 * the textbook sumsq/n - mean^2 in floating point cancels to noise
	 * when the spread is small next to the mean (e.g. 1e12 +- 1). */
	mul_192_64(a->sumsq, a->n, nss);
	square_128(a->sum, s2);
	if (sub_256(nss, s2, d))
		return 0.0L; /* sums that no set of values can have */
	dd = ldexpl((long double)d[3], 192) + ldexpl((long double)d[2], 128) +
	     ldexpl((long double)d[1], 64) + (long double)d[0];
	return sqrtl(dd) / (long double)a->n;
}

static uint64_t sub0(uint64_t v, uint64_t c)
{
	return v > c ? v - c : 0;
}

/* Takes the overhead off a summary.  Exact for total and mean when no
 * value was below its overhead; for the order statistics the average
 * overhead per value is taken off, which is exact when all files had the
 * same one. */
static void unshift(const struct cs_agg *a, struct cs_summary *out)
{
	long double per = (long double)a->shift / (long double)a->n;
	uint64_t c = (uint64_t)llroundl(per);

	out->total = a->sum > a->shift ? a->sum - a->shift : 0;
	out->mean = out->mean > per ? out->mean - per : 0.0L;
	out->min = sub0(out->min, c);
	out->max = sub0(out->max, c);
	out->p50 = sub0(out->p50, c);
	out->p90 = sub0(out->p90, c);
	out->p99 = sub0(out->p99, c);
}

int cs_stats_summarize(const struct cs_agg *a, struct cs_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->n = a->n;
	out->total = a->sum;
	if (a->n == 0)
		return -ENODATA;
	out->mean = (long double)a->sum / (long double)a->n;
	out->stddev = cs_stats_stddev(a);
	out->min = a->min;
	out->max = a->max;
	out->p50 = cs_stats_percentile(a, 0.50);
	out->p90 = cs_stats_percentile(a, 0.90);
	out->p99 = cs_stats_percentile(a, 0.99);
	if (a->shift)
		unshift(a, out);
	return 0;
}
