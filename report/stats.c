/* SPDX-License-Identifier: MIT */
/* Mean, standard deviation and percentiles from the file's histograms. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

/*
 * An agg keeps only the buckets that can hold values: a report of 100,000
 * call sites x 4 events would need 3.7 GB of dense 1,152-bucket
 * histograms.  Two forms:
 *
 *   dense:  h[i] is the count of bucket hlo + i, for i < hlen (the window
 *           from the lowest to the highest used bucket);
 *   sparse: h[2i], h[2i + 1] are the bucket and count of entry i < hlen,
 *           by increasing bucket: a few calls spread over three decades
 *           use 16 of 430 buckets.
 *
 * An agg is sparse while that takes less than half the memory of its
 * window, and turns dense for good once it would not.
 */

/* A copy by value would share h with its original: caught here, loudly,
 * rather than as a double free or silently wrong counts. */
static void check_self(const struct cs_agg *a)
{
	if (a->self != a && (a->h || a->self)) {
		cs_err("internal error: a struct cs_agg was copied by value (use cs_stats_copy)");
		abort();
	}
}

void cs_stats_init(struct cs_agg *a)
{
	memset(a, 0, sizeof(*a));
	a->self = a;
}

void cs_stats_fini(struct cs_agg *a)
{
	if (!a)
		return;
	check_self(a);
	free(a->h);
	cs_stats_init(a);
}

struct cs_agg *cs_stats_new(void)
{
	struct cs_agg *a = malloc(sizeof(*a));

	if (a)
		cs_stats_init(a);
	return a;
}

void cs_stats_free(struct cs_agg *a)
{
	if (!a)
		return;
	cs_stats_fini(a);
	free(a);
}

/* Entry i of a: its bucket and count. */
static inline unsigned ent_b(const struct cs_agg *a, size_t i)
{
	return a->sparse ? (unsigned)a->h[2 * i] : a->hlo + (unsigned)i;
}

static inline uint64_t ent_c(const struct cs_agg *a, size_t i)
{
	return a->sparse ? a->h[2 * i + 1] : a->h[i];
}

/* Index of the entry of bucket b in a, or -1. */
static long find(const struct cs_agg *a, unsigned b)
{
	size_t lo = 0, hi = a->hlen, mid;

	if (!a->sparse)
		return b >= a->hlo && b - a->hlo < a->hlen ? (long)(b - a->hlo) : -1;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (a->h[2 * mid] == b)
			return (long)mid;
		if (a->h[2 * mid] < b)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

uint64_t cs_stats_bucket(const struct cs_agg *a, unsigned b)
{
	long i;

	check_self(a);
	i = find(a, b);
	return i < 0 ? 0 : ent_c(a, (size_t)i);
}

int cs_stats_range(const struct cs_agg *a, unsigned *lo, unsigned *hi)
{
	size_t l = 0, r;

	check_self(a);
	r = a->hlen;
	while (l < r && !ent_c(a, l))
		l++;
	while (r > l && !ent_c(a, r - 1))
		r--;
	if (l == r)
		return -ENODATA;
	*lo = ent_b(a, l);
	*hi = ent_b(a, r - 1);
	return 0;
}

/* Makes the window of dense a cover buckets [lo, hi].  Returns 0 or
 * -ENOMEM (a unchanged). */
static int cover(struct cs_agg *a, unsigned lo, unsigned hi)
{
	unsigned nlo, nhi, len, cap;
	uint64_t *nh;

	if (a->hlen == 0) {
		nlo = lo;
		nhi = hi;
	} else {
		nlo = lo < a->hlo ? lo : a->hlo;
		nhi = hi > a->hlo + a->hlen - 1 ? hi : a->hlo + a->hlen - 1;
	}
	len = nhi - nlo + 1;
	if (a->hlen && nlo == a->hlo && len <= a->hcap) {
		if (len > a->hlen)
			memset(a->h + a->hlen, 0, (len - a->hlen) * sizeof(*a->h));
		a->hlen = len;
		return 0;
	}
	/* Room to grow a little when merging: sites merged into one row
	 * rarely have exactly the same range. */
	cap = a->hlen ? len + len / 4 : len;
	if (cap > CS_HIST_BUCKETS)
		cap = CS_HIST_BUCKETS;
	if (cap < len)
		cap = len;
	nh = calloc(cap, sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	if (a->hlen)
		memcpy(nh + (a->hlo - nlo), a->h, a->hlen * sizeof(*nh));
	free(a->h);
	a->h = nh;
	a->hlo = nlo;
	a->hlen = len;
	a->hcap = cap;
	return 0;
}

/* Turns sparse a dense, covering at least [lo, hi].  Returns 0 or
 * -ENOMEM (a unchanged). */
static int densify(struct cs_agg *a, unsigned lo, unsigned hi)
{
	struct cs_agg d;
	size_t i;

	memset(&d, 0, sizeof(d));
	if (a->hlen) {
		if (ent_b(a, 0) < lo)
			lo = ent_b(a, 0);
		if (ent_b(a, a->hlen - 1) > hi)
			hi = ent_b(a, a->hlen - 1);
	}
	if (cover(&d, lo, hi))
		return -ENOMEM;
	for (i = 0; i < a->hlen; i++)
		d.h[ent_b(a, i) - d.hlo] += ent_c(a, i);
	free(a->h);
	a->h = d.h;
	a->hlo = d.hlo;
	a->hlen = d.hlen;
	a->hcap = d.hcap;
	a->sparse = 0;
	return 0;
}

/* Adds counts cnt[i] to buckets bk[i], i < k, bk increasing.  Returns 0
 * or -ENOMEM (a unchanged). */
static int add_list(struct cs_agg *a, const unsigned *bk, const uint64_t *cnt, size_t k)
{
	unsigned lo, hi;
	size_t i, j, m, cap;
	uint64_t *nh;

	if (k == 0)
		return 0;
	lo = bk[0];
	hi = bk[k - 1];
	if (a->hlen == 0 && 2 * k < hi - lo + 1) {
		/* Empty: sparse when that is smaller. */
		nh = malloc(2 * k * sizeof(*nh));
		if (!nh)
			return -ENOMEM;
		for (i = 0; i < k; i++) {
			nh[2 * i] = bk[i];
			nh[2 * i + 1] = cnt[i];
		}
		free(a->h);
		a->h = nh;
		a->hlen = (uint32_t)k;
		a->hcap = (uint32_t)(2 * k);
		a->sparse = 1;
		return 0;
	}
	if (a->sparse) {
		if (ent_b(a, 0) < lo)
			lo = ent_b(a, 0);
		if (ent_b(a, a->hlen - 1) > hi)
			hi = ent_b(a, a->hlen - 1);
		if (2 * (a->hlen + k) >= hi - lo + 1) {
			if (densify(a, lo, hi))
				return -ENOMEM;
		} else {
			/* Merge the two sorted lists. */
			cap = 2 * (a->hlen + k);
			nh = malloc(cap * sizeof(*nh));
			if (!nh)
				return -ENOMEM;
			for (i = j = m = 0; i < a->hlen || j < k; m++) {
				if (j == k || (i < a->hlen && a->h[2 * i] < bk[j])) {
					nh[2 * m] = a->h[2 * i];
					nh[2 * m + 1] = a->h[2 * i + 1];
					i++;
				} else if (i == a->hlen || bk[j] < a->h[2 * i]) {
					nh[2 * m] = bk[j];
					nh[2 * m + 1] = cnt[j];
					j++;
				} else {
					nh[2 * m] = bk[j];
					nh[2 * m + 1] = a->h[2 * i + 1] + cnt[j];
					i++;
					j++;
				}
			}
			free(a->h);
			a->h = nh;
			a->hlen = (uint32_t)m;
			a->hcap = (uint32_t)cap;
			return 0;
		}
	}
	if (cover(a, bk[0], bk[k - 1]))
		return -ENOMEM;
	for (i = 0; i < k; i++)
		a->h[bk[i] - a->hlo] += cnt[i];
	return 0;
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

/* acc -= (hi:mid:lo); the caller knows the result is not negative. */
static void sub192(uint64_t acc[3], uint64_t lo, uint64_t mid, uint64_t hi)
{
	cs_u128 t;
	uint64_t borrow;

	t = (cs_u128)acc[0] - lo;
	acc[0] = (uint64_t)t;
	borrow = (uint64_t)(t >> 64) ? 1 : 0;
	t = (cs_u128)acc[1] - mid - borrow;
	acc[1] = (uint64_t)t;
	borrow = (uint64_t)(t >> 64) ? 1 : 0;
	acc[2] -= hi + borrow;
}

static void add_minmax(struct cs_agg *a, uint64_t n, uint64_t min, uint64_t max)
{
	if (a->n + n < a->n)
		a->overflow = 1;
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

/* Scratch for the entries of one histogram, per thread (tables are made
 * by two). */
static __thread unsigned sbk[CS_HIST_BUCKETS];
static __thread uint64_t scnt[CS_HIST_BUCKETS];

/* Adds buckets [lo, hi] of s, which hold all its values, and its sums. */
static uint64_t add_range(struct cs_agg *a, const struct cs_stat *s, unsigned lo, unsigned hi)
{
	cs_u128 n = 0;
	size_t k = 0;
	unsigned b;

	for (b = lo; b <= hi; b++) {
		if (!s->hist[b])
			continue;
		sbk[k] = b;
		scnt[k++] = s->hist[b];
		n += s->hist[b];
	}
	if (add_list(a, sbk, scnt, k)) {
		a->nomem = 1;
		return 0;
	}
	if (n > UINT64_MAX) {
		/* Only a running file's histogram can: the reader checks a
		 * complete one against its calls. */
		a->overflow = 1;
		n = UINT64_MAX;
	}
	a->sum += s->sum;
	add192(a->sumsq, s->sumsq_lo, s->sumsq_hi, 0);
	add_minmax(a, (uint64_t)n, s->min, s->max);
	return (uint64_t)n;
}

uint64_t cs_stats_add(struct cs_agg *a, const struct cs_stat *s)
{
	unsigned lo = 0, hi = CS_HIST_BUCKETS - 1;

	check_self(a);
	while (lo < CS_HIST_BUCKETS && !s->hist[lo])
		lo++;
	/* min and max of a stat that recorded nothing are whatever the
	 * writer initialised them to: they must not widen the range. */
	if (lo == CS_HIST_BUCKETS)
		return 0;
	while (!s->hist[hi])
		hi--;
	return add_range(a, s, lo, hi);
}

uint64_t cs_stats_add_calls(struct cs_agg *a, const struct cs_stat *s, uint64_t calls)
{
	unsigned lo, hi, b;
	uint64_t n = 0;

	check_self(a);
	/* Counts are never negative: when the buckets from min's to max's
	 * hold all the calls, the other 1,000-odd are 0 and need not be
	 * read, which is most of the time of a large report. */
	if (calls && s->min <= s->max) {
		lo = cs_hist_index(s->min);
		hi = cs_hist_index(s->max);
		for (b = lo; b <= hi; b++)
			n += s->hist[b];
		if (n == calls && s->hist[lo] && s->hist[hi])
			return add_range(a, s, lo, hi);
	}
	return cs_stats_add(a, s);
}

int cs_stats_add_value(struct cs_agg *a, uint64_t v)
{
	cs_u128 sq = (cs_u128)v * v;
	unsigned b = cs_hist_index(v);
	uint64_t one = 1;

	check_self(a);
	if (add_list(a, &b, &one, 1)) {
		a->nomem = 1;
		return -ENOMEM;
	}
	a->sum += v;
	add192(a->sumsq, (uint64_t)sq, (uint64_t)(sq >> 64), 0);
	add_minmax(a, 1, v, v);
	return 0;
}

void cs_stats_merge(struct cs_agg *a, const struct cs_agg *b)
{
	size_t i, k = 0;

	check_self(a);
	check_self(b);
	if (b->n == 0 || b->hlen == 0)
		return;
	for (i = 0; i < b->hlen; i++) {
		if (!ent_c(b, i))
			continue;
		sbk[k] = ent_b(b, i);
		scnt[k++] = ent_c(b, i);
	}
	if (add_list(a, sbk, scnt, k)) {
		a->nomem = 1;
		return;
	}
	a->sum += b->sum;
	a->shift += b->shift;
	add192(a->sumsq, b->sumsq[0], b->sumsq[1], b->sumsq[2]);
	add_minmax(a, b->n, b->min, b->max);
	if (b->nomem)
		a->nomem = 1;
	if (b->overflow)
		a->overflow = 1;
}

int cs_stats_copy(struct cs_agg *dst, const struct cs_agg *src)
{
	check_self(src);
	cs_stats_fini(dst);
	dst->nomem = src->nomem;
	if (src->n == 0 && src->hlen == 0)
		return 0;
	cs_stats_merge(dst, src);
	/* merge adds n, sums, shift and the buckets to an empty agg: a copy */
	return dst->nomem && !src->nomem ? -ENOMEM : 0;
}

/* 1 when the values of b can be among those of a: no bucket, count or
 * sum of b exceeds a's. */
static int subset(const struct cs_agg *a, const struct cs_agg *b)
{
	size_t i;
	long j;

	if (b->n > a->n || b->sum > a->sum || b->shift > a->shift)
		return 0;
	for (i = 0; i < b->hlen; i++) {
		if (!ent_c(b, i))
			continue;
		j = find(a, ent_b(b, i));
		if (j < 0 || ent_c(a, (size_t)j) < ent_c(b, i))
			return 0;
	}
	return 1;
}

int cs_stats_sub(struct cs_agg *a, const struct cs_agg *b)
{
	unsigned lo, hi;
	uint64_t min, max;
	size_t i;
	long j;

	check_self(a);
	check_self(b);
	if (b->n == 0)
		return 0;
	if (!subset(a, b))
		return -EINVAL;
	for (i = 0; i < b->hlen; i++) {
		if (!ent_c(b, i))
			continue;
		j = find(a, ent_b(b, i));
		a->h[a->sparse ? 2 * (size_t)j + 1 : (size_t)j] -= ent_c(b, i);
	}
	a->n -= b->n;
	a->sum -= b->sum;
	a->shift -= b->shift;
	sub192(a->sumsq, b->sumsq[0], b->sumsq[1], b->sumsq[2]);
	if (a->n == 0 || cs_stats_range(a, &lo, &hi)) {
		cs_stats_fini(a);
		return 0;
	}
	/* The extremes left are exact when none of b's values was one;
	 * otherwise the bounds of the outermost buckets still holding
	 * values, within the exact range of a (exact below CS_HIST_EXACT). */
	min = a->min;
	if (b->min <= a->min) {
		min = cs_hist_lower(lo);
		if (min < a->min)
			min = a->min;
	}
	max = a->max;
	if (b->max >= a->max && hi < CS_HIST_BUCKETS - 1) {
		max = cs_hist_lower(hi) + cs_hist_width(hi) - 1;
		if (max > a->max)
			max = a->max;
	}
	a->min = min;
	a->max = max;
	return 0;
}

/* The rank of the q-quantile among a's n values: ceil(q * n) in
 * integers, q taken to a millionth (in floating point 0.9 * 10 is a hair
 * above 9 and would round up to 10), within [1, n]. */
static uint64_t rank_of(const struct cs_agg *a, double q)
{
	uint64_t qm, rank;

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
	return rank;
}

/* The value of the rank-th smallest value.  *i and *cum are where the
 * walk over the entries is (entry, values before it): a later rank goes
 * on from there, so three percentiles cost one walk. */
static uint64_t value_at(const struct cs_agg *a, uint64_t rank, size_t *i, uint64_t *cum)
{
	uint64_t c = 0, lo, w, v;
	long double f;
	unsigned b;

	for (; *i < a->hlen; (*cum) += c, (*i)++) {
		c = ent_c(a, *i);
		if (c && c >= rank - *cum)
			break;
	}
	if (*i == a->hlen) /* n disagrees with hist: corrupt input */
		return a->max;
	b = ent_b(a, *i);
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
		f = ((long double)(rank - *cum) - 0.5L) / (long double)c;
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

uint64_t cs_stats_percentile(const struct cs_agg *a, double q)
{
	uint64_t cum = 0;
	size_t i = 0;

	check_self(a);
	if (a->n == 0)
		return 0;
	return value_at(a, rank_of(a, q), &i, &cum);
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

long double cs_stats_variance(const struct cs_agg *a)
{
	uint64_t nss[4], s2[4], d[4];
	long double dd;

	check_self(a);
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
	return dd / ((long double)a->n * (long double)a->n);
}

long double cs_stats_stddev(const struct cs_agg *a)
{
	return sqrtl(cs_stats_variance(a));
}

long double cs_stats_mean(const struct cs_agg *a)
{
	long double mean, per;

	check_self(a);
	if (a->n == 0)
		return 0.0L;
	mean = (long double)a->sum / (long double)a->n;
	if (!a->shift)
		return mean;
	per = (long double)a->shift / (long double)a->n;
	return mean > per ? mean - per : 0.0L;
}

long double cs_stats_raw_mean(const struct cs_agg *a)
{
	return a->n ? (long double)a->sum / (long double)a->n : 0.0L;
}

long double cs_stats_overhead(const struct cs_agg *a)
{
	return a->n ? (long double)a->shift / (long double)a->n : 0.0L;
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
	uint64_t cum;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->n = a->n;
	out->total = a->sum;
	if (a->n == 0)
		return -ENODATA;
	out->mean = (long double)a->sum / (long double)a->n;
	out->stddev = cs_stats_stddev(a);
	out->min = a->min;
	out->max = a->max;
	i = 0;
	cum = 0;
	out->p50 = value_at(a, rank_of(a, 0.50), &i, &cum);
	out->p90 = value_at(a, rank_of(a, 0.90), &i, &cum);
	out->p99 = value_at(a, rank_of(a, 0.99), &i, &cum);
	if (a->shift)
		unshift(a, out);
	return 0;
}
