/* SPDX-License-Identifier: MIT */
/* --hist: the distribution of the values per function and event, as text. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

/*
 * A row of the picture is a run of adjacent histogram buckets, so its
 * count is exact: the file has no finer information.  Runs are a power
 * of two buckets long and aligned to it, which keeps the row bounds at
 * round values (the buckets of a power of two come in 32 equal parts):
 * groups of 1, 2, 4 ... buckets, the smallest that shows the used range
 * in at most MAX_ROWS rows.  Values below 64 have a bucket each, so a
 * small count (page faults per call) gets one row per value.
 */

#define MAX_ROWS 20
#define BAR 40 /* characters of the longest bar */

unsigned cs_hist_rows(const struct cs_agg *a, unsigned maxrows, unsigned *group, unsigned *first,
		      unsigned *last)
{
	unsigned lo, hi, g;

	if (maxrows == 0 || cs_stats_range(a, &lo, &hi))
		return 0;
	for (g = 1; g < CS_HIST_BUCKETS; g *= 2)
		if (hi / g - lo / g + 1 <= maxrows)
			break;
	*group = g;
	*first = lo / g * g;
	*last = hi / g * g + g - 1;
	if (*last > CS_HIST_BUCKETS - 1)
		*last = CS_HIST_BUCKETS - 1;
	return hi / g - lo / g + 1;
}

/* The bar of count out of max, BAR characters for max. */
static void bar(FILE *out, uint64_t count, uint64_t max, int ascii)
{
	/* Eighths of a character cell: U+258F (1/8) ... U+2589 (7/8). */
	static const char *const part[8] = {"",	      "\u258f", "\u258e", "\u258d",
					    "\u258c", "\u258b", "\u258a", "\u2589"};
	unsigned long long eighths;
	unsigned i;

	if (!count || !max)
		return;
	eighths = (unsigned long long)((long double)count * BAR * 8 / max + 0.5L);
	if (eighths == 0)
		eighths = 1; /* a count is never drawn as nothing */
	if (ascii) {
		for (i = 0; i < (eighths + 4) / 8 || i == 0; i++)
			putc('#', out);
		return;
	}
	for (i = 0; i < eighths / 8; i++)
		fputs("\u2588", out);
	fputs(part[eighths % 8], out);
}

static void range(char *buf, size_t len, uint64_t lo, uint64_t hi)
{
	char a[32], b[32];

	cs_util_human((long double)lo, a, sizeof(a));
	if (lo == hi) {
		snprintf(buf, len, "%s", a);
		return;
	}
	cs_util_human((long double)hi, b, sizeof(b));
	snprintf(buf, len, "%s - %s", a, b);
}

/* Prints the histogram of a, indented. */
static void picture(FILE *out, const struct cs_agg *a, int ascii)
{
	char lab[MAX_ROWS + 1][80], cnt[MAX_ROWS + 1][32];
	uint64_t counts[MAX_ROWS + 1], max = 0, lo, hi, c = 0;
	unsigned g, first, last, n, i, b, k;
	size_t wl = 0, wc = 0;

	/* --subtract-overhead: the buckets hold the values as measured; the
	 * rows are taken down as the summary line's minimum, percentiles and
	 * maximum are (cs_stats_summarize), by the average overhead per
	 * value, never below 0. */
	if (a->shift && a->n)
		c = (uint64_t)llroundl((long double)a->shift / (long double)a->n);
	n = cs_hist_rows(a, MAX_ROWS, &g, &first, &last);
	for (i = 0; i < n; i++) {
		counts[i] = 0;
		for (k = 0; k < g; k++) {
			b = first + i * g + k;
			if (b < CS_HIST_BUCKETS)
				counts[i] += cs_stats_bucket(a, b);
		}
		if (counts[i] > max)
			max = counts[i];
		b = first + i * g;
		lo = cs_hist_lower(b);
		b = b + g - 1 < CS_HIST_BUCKETS ? b + g - 1 : CS_HIST_BUCKETS - 1;
		/* The last bucket is open-ended: it reaches max. */
		hi = b == CS_HIST_BUCKETS - 1 ? a->max : cs_hist_lower(b) + cs_hist_width(b) - 1;
		/* The outer rows end where the values do (min, max exact). */
		if (lo < a->min)
			lo = a->min;
		if (hi > a->max)
			hi = a->max;
		lo = lo > c ? lo - c : 0;
		hi = hi > c ? hi - c : 0;
		range(lab[i], sizeof(lab[i]), lo, hi);
		snprintf(cnt[i], sizeof(cnt[i]), "%llu", (unsigned long long)counts[i]);
		if (strlen(lab[i]) > wl)
			wl = strlen(lab[i]);
		if (strlen(cnt[i]) > wc)
			wc = strlen(cnt[i]);
	}
	for (i = 0; i < n; i++) {
		fprintf(out, "    %*s  %*s  %5.1f%%", (int)wl, lab[i], (int)wc, cnt[i],
			100.0 * (double)counts[i] / (double)a->n);
		if (counts[i])
			fputs("  ", out);
		bar(out, counts[i], max, ascii);
		fputc('\n', out);
	}
}

/* The rows of r merged per function: rows in cs_merge_sorted order have
 * a function's rows next to each other. */
struct fn {
	char name[CS_FUNCTION_MAX];
	char *shown; /* name demangled (malloc'd), NULL: name as it is */
	struct cs_agg agg;
	struct cs_summary s;
	int have;
};

static struct fn *functions(const struct cs_report *r, size_t ev, int raw_names, size_t *nfn)
{
	char name[CS_FUNCTION_MAX];
	struct cs_row **rows;
	const struct cs_agg *a;
	struct fn *f = NULL;
	size_t n, i, k = 0;

	*nfn = 0;
	rows = cs_merge_sorted(r, &n);
	if (r->nrows && !rows)
		return NULL;
	f = calloc(n + 1, sizeof(*f));
	if (!f) {
		free(rows);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		cs_merge_function(rows[i], name, sizeof(name));
		if (k == 0 || strcmp(f[k - 1].name, name) != 0) {
			memcpy(f[k].name, name, sizeof(name));
			cs_stats_init(&f[k].agg);
			k++;
		}
		a = cs_merge_agg(rows[i], ev);
		if (a)
			cs_stats_merge(&f[k - 1].agg, a);
	}
	free(rows);
	for (i = 0; i < k; i++) {
		f[i].have = cs_stats_summarize(&f[i].agg, &f[i].s) == 0;
		f[i].shown = raw_names ? NULL : cs_demangle(f[i].name, CS_DEMANGLE_CUT);
	}
	*nfn = k;
	return f;
}

static int sort_col, sort_desc;

static long double key(const struct fn *f)
{
	switch (sort_col) {
	case CS_COL_CALLS:
		return (long double)f->s.n;
	case CS_COL_MEAN:
		return f->s.mean;
	case CS_COL_STDDEV:
		return f->s.stddev;
	case CS_COL_MIN:
		return (long double)f->s.min;
	case CS_COL_P50:
		return (long double)f->s.p50;
	case CS_COL_P90:
		return (long double)f->s.p90;
	case CS_COL_P99:
		return (long double)f->s.p99;
	case CS_COL_MAX:
		return (long double)f->s.max;
	default:
		return (long double)f->s.total;
	}
}

static int cmp_fn(const void *x, const void *y)
{
	const struct fn *a = *(const struct fn *const *)x, *b = *(const struct fn *const *)y;
	long double ka, kb;
	int c = 0;

	if (a->have != b->have)
		return a->have ? -1 : 1;
	/* By the name shown, as the tables sort. */
	if (sort_col == CS_COL_FUNCTION) {
		c = strcmp(a->shown ? a->shown : a->name, b->shown ? b->shown : b->name);
	} else if (a->have) {
		ka = key(a);
		kb = key(b);
		c = ka < kb ? -1 : ka > kb;
	}
	if (c)
		return sort_desc ? -c : c;
	return strcmp(a->name, b->name);
}

int cs_hist_print(FILE *out, const struct cs_report *r, const struct cs_output_opts *o)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], name[4 * CS_FUNCTION_MAX];
	struct fn *f, **p;
	size_t ev, n, i, k, shown = 0;

	cs_table_summary(out, r);
	/* Per function: a sort column that is not a statistic of the
	 * function's values falls back to the total. */
	sort_col = o->sort ? o->sort - 1 : CS_COL_TOTAL;
	if (sort_col != CS_COL_FUNCTION && (sort_col < CS_COL_CALLS || sort_col > CS_COL_TOTAL))
		sort_col = CS_COL_TOTAL;
	sort_desc = o->sort_dir ? o->sort_dir == 2 : sort_col != CS_COL_FUNCTION;
	for (k = 0; k < (o->event_order ? o->nevent_order : r->nevents); k++) {
		ev = o->event_order ? o->event_order[k] : k;
		if (o->event_shown && !o->event_shown[ev])
			continue;
		/* Names are the program's bytes: no control character
		 * reaches the terminal. */
		fprintf(out, "\n%s\n", cs_util_escape_ctl(r->events[ev].name, name, sizeof(name)));
		shown++;
		if (cs_merge_not_counted(r, ev)) {
			fputs("  not counted (the event could not be opened)\n", out);
			continue;
		}
		f = functions(r, ev, o->raw_names, &n);
		p = f ? calloc(n + 1, sizeof(*p)) : NULL;
		if (!p) {
			free(f);
			return -ENOMEM;
		}
		/* Aggs must not move (cs_agg): sort pointers to them. */
		for (i = 0; i < n; i++)
			p[i] = &f[i];
		qsort(p, n, sizeof(*p), cmp_fn);
		if (n == 0)
			fputs("  no calls recorded\n", out);
		for (i = 0; i < n && (!o->top || i < o->top); i++) {
			cs_util_escape_ctl(p[i]->shown ? p[i]->shown : p[i]->name, name,
					   sizeof(name));
			if (!p[i]->have) {
				fprintf(out, "  %s: no calls with values\n", name);
				continue;
			}
			fprintf(out, "  %s: %s call%s, mean %s, p50 %s, p99 %s, max %s\n", name,
				cs_util_human((long double)p[i]->s.n, b1, sizeof(b1)),
				p[i]->s.n == 1 ? "" : "s",
				cs_util_human(p[i]->s.mean, b2, sizeof(b2)),
				cs_util_human((long double)p[i]->s.p50, b3, sizeof(b3)),
				cs_util_human((long double)p[i]->s.p99, b4, sizeof(b4)),
				cs_util_human((long double)p[i]->s.max, b5, sizeof(b5)));
			picture(out, &p[i]->agg, o->ascii);
		}
		for (i = 0; i < n; i++) {
			if (f[i].agg.nomem)
				shown = (size_t)-1;
			else if (f[i].agg.overflow && shown != (size_t)-1)
				shown = (size_t)-2;
			cs_stats_fini(&f[i].agg);
			free(f[i].shown);
		}
		free(p);
		free(f);
		if (shown == (size_t)-1)
			return -ENOMEM;
		if (shown == (size_t)-2)
			return -EOVERFLOW;
	}
	if (!shown)
		fputs("\nno events recorded\n", out);
	return cs_util_flushed(out);
}
