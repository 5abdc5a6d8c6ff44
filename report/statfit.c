/* SPDX-License-Identifier: MIT */
/*
 * Whether an aggregate read from a file can be what the shim wrote: its
 * histogram counts the calls, and its sum and sum of squares lie within
 * what the histogram's buckets allow.  A damaged or crafted
 * file that passes the block checks would otherwise print means above
 * the maximum or a deviation of 0 for values 100..1200, with exit 0.
 *
 * The bounds come from the buckets, not from min and max, because the
 * shim's updates are unlocked: a signal handler's call of the same site
 * during the site's very first call can leave min and max describing
 * that call alone (both take the "first" path), or even min above max.  What the order of the
 * shim's updates guarantees (shim/hotpath.c stat_add: sum of squares,
 * sum, extremes, then the bucket; calls after all events):
 *   - every value counted in the histogram is in the sums;
 *   - a thread still running when the file was sealed (the process then
 *     ended anywhere) may have one call half-recorded per site: in the
 *     sums or extremes but not yet in the histogram, or in the
 *     histogram but not yet in calls;
 *   - a signal handler that left a call by siglongjmp while the shim
 *     recorded it leaves that call half-recorded for good: as many such
 *     calls as the site has calls in flight (entered, not returned).
 * So the lower bounds are exact and the upper bounds allow one value of
 * at most max more; and max is a value of the histogram or that one.
 * Except where calls are known to be in flight (in_flight: how many; a
 * site with more calls entered than returned, the windows of a series
 * with claimed but unrecorded calls): killed between adding its value to
 * the sums and storing it as the new maximum, a call leaves sums above
 * any bound max gives (one busy-exit run in ~60 was called damaged so),
 * and there only the lower bounds hold, and the histogram may count up
 * to in_flight calls more.  Only complete files are checked: in a running
 * file a live writer may be anywhere.
 */
#include "report/internal.h"

/* a + b, at most the largest cs_u128. */
static cs_u128 sat_add(cs_u128 a, cs_u128 b)
{
	return a + b < a ? ~(cs_u128)0 : a + b;
}

/* c * v, at most the largest cs_u128 (both below 2^64: no overflow). */
static cs_u128 mul(uint64_t c, uint64_t v)
{
	return (cs_u128)c * v;
}

struct bounds {
	cs_u128 n; /* values in the histogram */
	cs_u128 lo, hi; /* the least and most their sum can be */
	long double sqlo, sqhi; /* the same for their squares */
	int open; /* a value in the open-ended last bucket: no upper bound */
	uint64_t top; /* the most a value of the highest bucket can be */
};

/* Adds c values of bucket i of a histogram of nb buckets, whose least
 * values lower() gives (the last bucket is open-ended), to b. */
static void add_bucket(struct bounds *b, uint64_t c, unsigned i, unsigned nb,
		       uint64_t (*lower)(unsigned))
{
	uint64_t lo = lower(i), hi = i + 1 < nb ? lower(i + 1) - 1 : lo;

	if (i + 1 == nb)
		b->open = 1;
	b->n += c;
	b->top = hi; /* buckets are added in order */
	b->lo = sat_add(b->lo, mul(c, lo));
	b->hi = sat_add(b->hi, mul(c, hi));
	b->sqlo += (long double)c * (long double)lo * (long double)lo;
	b->sqhi += (long double)c * (long double)hi * (long double)hi;
}

/* Checks what every aggregate has; sq is the sum of squares or negative
 * when there is none.  Returns NULL or why it does not fit. */
static const char *fits(const struct bounds *b, uint64_t calls, uint64_t sum, long double sq,
			uint64_t max, uint64_t in_flight)
{
	/* Relative error of the long double sums: ~1,300 rounded terms. */
	const long double eps = 1e-12L;

	if (b->n < calls || b->n > (cs_u128)calls + (in_flight > 1 ? in_flight : 1))
		return "its histogram does not count its calls";
	/* Nothing finished (a first call half-recorded at most): min and
	 * max may not have been written yet. */
	if (calls == 0)
		return NULL;
	/* Not min <= max: a handler's call of the same site between the
	 * stores of min and max of the site's first call leaves the
	 * handler's min with the first call's max. */
	if ((cs_u128)sum < b->lo ||
	    (!b->open && !in_flight && (cs_u128)sum > sat_add(b->hi, max)))
		return "its sum is not that of its histogram's values";
	/* The maximum is a value in the sum (added before it is stored): a
	 * value of the histogram, or the half-recorded call's, which is at
	 * most what the sum holds beyond the histogram's least. */
	if (max > sum || (!b->open && max > b->top && (cs_u128)max > (cs_u128)sum - b->lo))
		return "its maximum is not among its values";
	if (sq >= 0 &&
	    (sq < b->sqlo * (1 - eps) ||
	     (!b->open && !in_flight &&
	      sq > (b->sqhi + (long double)max * (long double)max) * (1 + eps))))
		return "its sum of squares is not that of its histogram's values";
	return NULL;
}

const char *cs_statfit_stat(const struct cs_stat *st, uint64_t calls, uint64_t in_flight)
{
	struct bounds b = {0};
	unsigned i;

	for (i = 0; i < CS_HIST_BUCKETS; i++)
		if (st->hist[i])
			add_bucket(&b, st->hist[i], i, CS_HIST_BUCKETS, cs_hist_lower);
	return fits(&b, calls, st->sum,
		    (long double)(((cs_u128)st->sumsq_hi << 64) | st->sumsq_lo), st->max, in_flight);
}

const char *cs_statfit_wstat(const struct cs_wstat *w, uint64_t calls, uint64_t in_flight)
{
	struct bounds b = {0};
	unsigned i;

	for (i = 0; i < CS_WHIST_BUCKETS; i++)
		if (w->hist[i])
			add_bucket(&b, w->hist[i], i, CS_WHIST_BUCKETS, cs_whist_lower);
	return fits(&b, calls, w->sum, -1, w->max, in_flight);
}
