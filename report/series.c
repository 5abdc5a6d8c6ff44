/* SPDX-License-Identifier: MIT */
/* Series over time: the windows of calls of every (thread, target). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

/*
 * Window i of a thread's series holds that thread's calls number
 * (i << shift) + 1 to (i + 1) << shift of the target.  The threads of one
 * target are merged window by window only when they all have the same
 * shift: then window i means the same call numbers in each of them (the
 * i-th 2^shift calls of every thread).  With different shifts a window of
 * one thread would cover two or more of another's, and merging would
 * mix calls of different ages, so each thread keeps its own line, named
 * by its tid.  Files are merged the same way, by target (its name, or
 * name@module+0xOFF when functions share the name, as the rows): the
 * threads of all processes are the threads of the target.
 *
 * Values are as measured: --subtract-overhead and --self apply to the
 * tables, not to the series (a window keeps no nested values; the
 * command refuses them with --series).  The
 * windows are read from the files' own blocks (cs_merge_keep keeps the
 * files that have series), not copied: a series block is 1.2 KiB per
 * window and event, and most of a run's windows are read only once.
 * Series of the shim's calibration target are left out, as its rows are.
 */

/* One series block of a kept file. */
struct sthread {
	const struct cs_series_block *sb;
	const struct cs_file *f;
	const size_t *evmap; /* the file's events -> the report's */
	char target[CS_FUNCTION_MAX]; /* cs_merge_target_label */
	unsigned nwin; /* windows in use */
};

uint64_t cs_series_percentile(const uint64_t *hist, uint64_t n, double q, uint64_t min,
			      uint64_t max)
{
	uint64_t rank, qm, cum = 0, c = 0, lo, w, v;
	unsigned b, k;
	long double fr;

	if (n == 0)
		return 0;
	/* ceil(q * n) in integers, as cs_stats_percentile does. */
	qm = q >= 1.0 ? 1000000 : q <= 0.0 ? 0 : (uint64_t)llround(q * 1e6);
	rank = (uint64_t)(((cs_u128)qm * n + 999999) / 1000000);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	for (b = 0; b < CS_WHIST_BUCKETS; b++) {
		c = hist[b];
		if (c && c >= rank - cum)
			break;
		cum += c;
	}
	if (b == CS_WHIST_BUCKETS)
		return max; /* n disagrees with the histogram */
	if (b < CS_WHIST_EXACT) {
		v = b;
	} else {
		k = 4u + (b - CS_WHIST_EXACT) / (1u << CS_WHIST_SUB_BITS);
		lo = cs_whist_lower(b);
		w = 1ull << (k - CS_WHIST_SUB_BITS);
		if (b == CS_WHIST_BUCKETS - 1)
			w = max >= lo ? max - lo + 1 : w;
		/* Even spread within the bucket, away from its very edges
		 * (see cs_stats_percentile). */
		fr = ((long double)(rank - cum) - 0.5L) / (long double)c;
		if (fr < 0.05L)
			fr = 0.05L;
		if (fr > 0.95L)
			fr = 0.95L;
		v = lo + (uint64_t)(fr * (long double)w);
	}
	if (min <= max) {
		if (v < min)
			v = min;
		if (v > max)
			v = max;
	}
	return v;
}

/* Index of event ev of the report in thread t's file, or -1 when the
 * thread did not count it. */
static int thread_event(const struct sthread *t, size_t ev)
{
	unsigned e;

	for (e = 0; e < t->sb->nevents; e++)
		if (t->evmap[e] == ev)
			return cs_reader_tid_usable(t->f, t->sb->tid, e) ? (int)e : -1;
	return -1;
}

static int cmp_threads(const void *a, const void *b)
{
	const struct sthread *x = a, *y = b;
	int c = strcmp(x->target, y->target);

	if (c)
		return c;
	if (x->f->hdr->pid != y->f->hdr->pid)
		return x->f->hdr->pid < y->f->hdr->pid ? -1 : 1;
	return x->sb->tid < y->sb->tid ? -1 : x->sb->tid > y->sb->tid;
}

/* Fills line from the threads t[0, n) (one, or several of one shift) for
 * report event ev.  Returns 0 or -ENOMEM. */
static int make_line(struct cs_series_line *line, struct sthread **t, const int *tev, size_t n,
		     size_t ev)
{
	static uint64_t hist[CS_WHIST_BUCKETS];
	struct cs_series_point *p;
	unsigned nwin = 0, i, b;
	uint64_t cnt, most, min, max, tsc;
	unsigned __int128 sum; /* of several threads' windows: past 2^64 */
	size_t j;

	memset(line, 0, sizeof(*line));
	memcpy(line->target, t[0]->target, sizeof(line->target));
	line->event = ev;
	line->shift = t[0]->sb->shift;
	if (n == 1) {
		line->tid = t[0]->sb->tid;
		line->pid = t[0]->f->hdr->pid;
	}
	for (j = 0; j < n; j++) {
		if (t[j]->nwin > nwin)
			nwin = t[j]->nwin;
		line->skipped += t[j]->sb->skipped;
	}
	if (nwin == 0)
		return 0;
	line->points = calloc(nwin, sizeof(*line->points));
	if (!line->points)
		return -ENOMEM;
	for (i = 0; i < nwin; i++) {
		memset(hist, 0, sizeof(hist));
		cnt = most = sum = max = tsc = 0;
		min = UINT64_MAX;
		for (j = 0; j < n; j++) {
			const struct cs_window *win;
			const struct cs_wstat *w;
			uint64_t c = 0;

			if (i >= t[j]->nwin)
				continue;
			win = cs_reader_window(t[j]->sb, i);
			w = cs_reader_wstat(t[j]->sb, i, (unsigned)tev[j]);
			for (b = 0; b < CS_WHIST_BUCKETS; b++) {
				hist[b] += w->hist[b];
				c += w->hist[b];
			}
			if (c == 0)
				continue;
			cnt += c;
			sum += w->sum;
			if (w->min < min)
				min = w->min;
			if (w->max > max)
				max = w->max;
			if (win->calls > most)
				most = win->calls;
			if (win->first_tsc && (!tsc || win->first_tsc < tsc))
				tsc = win->first_tsc;
		}
		if (cnt == 0)
			continue; /* nothing measured (a running file) */
		p = &line->points[line->npoints++];
		p->first_call = ((uint64_t)i << line->shift) + 1;
		p->last_call = ((uint64_t)i << line->shift) + (most ? most : cnt);
		p->calls = cnt;
		p->mean = (long double)sum / (long double)cnt;
		p->min = min;
		p->max = max;
		p->p50 = cs_series_percentile(hist, cnt, 0.50, min, max);
		p->p99 = cs_series_percentile(hist, cnt, 0.99, min, max);
		p->first_tsc = tsc;
	}
	return 0;
}

void cs_series_lines_free(struct cs_series_line *lines, size_t n)
{
	size_t i;

	for (i = 0; lines && i < n; i++)
		free(lines[i].points);
	free(lines);
}

/* Appends a line for threads t[0, n) and event ev to *v. */
static int push_line(struct cs_series_line **v, size_t *nv, size_t *cap, struct sthread **t,
		     const int *tev, size_t n, size_t ev)
{
	struct cs_series_line *nl;

	if (*nv == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		nl = realloc(*v, *cap * sizeof(*nl));
		if (!nl)
			return -ENOMEM;
		*v = nl;
	}
	if (make_line(&(*v)[*nv], t, tev, n, ev))
		return -ENOMEM;
	(*nv)++;
	return 0;
}

int cs_series_lines(const struct cs_report *r, struct cs_series_line **lines, size_t *n)
{
	struct cs_series_line *v = NULL;
	struct sthread *all = NULL, **use = NULL;
	size_t nv = 0, cap = 0, nall = 0, i, j, k, m, ev;
	int *tev = NULL, same, ret = -ENOMEM;

	*lines = NULL;
	*n = 0;
	for (i = 0; i < r->nkept; i++)
		nall += r->kept[i].f->nseries;
	if (nall == 0)
		return 0;
	all = malloc(nall * sizeof(*all));
	use = malloc(nall * sizeof(*use));
	tev = malloc(nall * sizeof(*tev));
	if (!all || !use || !tev)
		goto out;
	for (i = 0, k = 0; i < r->nkept; i++) {
		const struct cs_file *f = r->kept[i].f;

		for (j = 0; j < f->nseries; j++) {
			const struct cs_target_block *t = cs_reader_target(f, f->series[j]->target);

			/* The shim's own calibration calls: not the program's. */
			if (t->how & CS_HOOK_CALIBRATION)
				continue;
			all[k].sb = f->series[j];
			all[k].f = f;
			all[k].evmap = r->kept[i].evmap;
			cs_merge_target_label(r, f, t, all[k].target, sizeof(all[k].target));
			all[k].nwin = cs_reader_windows_used(f->series[j]);
			k++;
		}
	}
	nall = k;
	qsort(all, nall, sizeof(*all), cmp_threads);
	for (i = 0; i < nall; i = j) {
		for (j = i + 1; j < nall && strcmp(all[j].target, all[i].target) == 0; j++)
			;
		for (ev = 0; ev < r->nevents; ev++) {
			if (cs_merge_not_counted(r, ev))
				continue;
			for (k = i, m = 0, same = 1; k < j; k++) {
				int e = thread_event(&all[k], ev);

				if (e < 0 || all[k].nwin == 0)
					continue;
				if (m && all[k].sb->shift != use[0]->sb->shift)
					same = 0;
				use[m] = &all[k];
				tev[m++] = e;
			}
			if (m == 0)
				continue;
			if (same) {
				if (push_line(&v, &nv, &cap, use, tev, m, ev))
					goto out;
				continue;
			}
			for (k = 0; k < m; k++)
				if (push_line(&v, &nv, &cap, use + k, tev + k, 1, ev))
					goto out;
		}
	}
	ret = 0;
out:
	free(all);
	free(use);
	free(tev);
	if (ret) {
		cs_series_lines_free(v, nv);
		return ret;
	}
	*lines = v;
	*n = nv;
	return 0;
}

static void line_title(FILE *out, const struct cs_report *r, const struct cs_series_line *l,
		       int raw_names)
{
	char b[48], target[4 * CS_FUNCTION_MAX], event[4 * CS_EVENT_NAME_MAX];
	char *dm = raw_names ? NULL : cs_demangle(l->target, CS_DEMANGLE_CUT);

	/* Names are the program's bytes: no control character reaches the
	 * terminal (the CSV quotes them). */
	fprintf(out, "%s, %s: ", cs_util_escape_ctl(dm ? dm : l->target, target, sizeof(target)),
		cs_util_escape_ctl(r->events[l->event].name, event, sizeof(event)));
	free(dm);
	if (l->tid)
		fprintf(out, "thread %u (pid %u)", l->tid, l->pid);
	else
		fputs("all threads", out);
	fprintf(out, ", %s call%s per window", cs_util_u128((cs_u128)1 << l->shift, b, sizeof(b)),
		l->shift ? "s" : "");
	if (l->skipped)
		fprintf(out, ", %s calls not in any window",
			cs_util_u128(l->skipped, b, sizeof(b)));
	fputc('\n', out);
}

#define SCOLS 6
#define SCELL 40

int cs_series_print_table(FILE *out, const struct cs_report *r, int raw_names)
{
	static const char *const names[SCOLS] = {"first call", "last call", "calls",
						 "mean",       "p50",	    "p99"};
	struct cs_series_line *lines;
	char(*cell)[SCOLS][SCELL] = NULL;
	size_t n, i, k, w[SCOLS];
	unsigned c;
	int ret;

	ret = cs_series_lines(r, &lines, &n);
	if (ret)
		return ret;
	if (n == 0)
		fputs("no series recorded\n", out);
	for (i = 0; i < n; i++) {
		const struct cs_series_line *l = &lines[i];

		if (i)
			fputc('\n', out);
		line_title(out, r, l, raw_names);
		free(cell);
		cell = calloc(l->npoints ? l->npoints : 1, sizeof(*cell));
		if (!cell) {
			cs_series_lines_free(lines, n);
			return -ENOMEM;
		}
		for (c = 0; c < SCOLS; c++)
			w[c] = strlen(names[c]);
		for (k = 0; k < l->npoints; k++) {
			const struct cs_series_point *p = &l->points[k];

			cs_util_u128(p->first_call, cell[k][0], SCELL);
			cs_util_u128(p->last_call, cell[k][1], SCELL);
			cs_util_u128(p->calls, cell[k][2], SCELL);
			cs_util_human(p->mean, cell[k][3], SCELL);
			cs_util_human((long double)p->p50, cell[k][4], SCELL);
			cs_util_human((long double)p->p99, cell[k][5], SCELL);
			for (c = 0; c < SCOLS; c++)
				if (strlen(cell[k][c]) > w[c])
					w[c] = strlen(cell[k][c]);
		}
		for (k = 0; k <= l->npoints; k++) {
			for (c = 0; c < SCOLS; c++)
				fprintf(out, "  %*s", (int)w[c], k ? cell[k - 1][c] : names[c]);
			fputc('\n', out);
		}
	}
	free(cell);
	cs_series_lines_free(lines, n);
	return cs_util_flushed(out);
}

/* The first 8 columns are the contract of the series CSV; new ones go at
 * the end. */
static const char csv_header[] = "target,event,first_call,last_call,calls,mean,p50,p99,"
				 "tid,pid,min,max,first_tsc\n";

int cs_series_print_csv(FILE *out, const struct cs_report *r)
{
	struct cs_series_line *lines;
	size_t n, i, k;
	char b[64];
	int ret;

	ret = cs_series_lines(r, &lines, &n);
	if (ret)
		return ret;
	fputs(csv_header, out);
	for (i = 0; i < n; i++) {
		const struct cs_series_line *l = &lines[i];

		for (k = 0; k < l->npoints; k++) {
			const struct cs_series_point *p = &l->points[k];

			cs_csv_field(out, l->target);
			fputc(',', out);
			cs_csv_field(out, r->events[l->event].name);
			fprintf(out, ",%llu,%llu,%llu,%s,%llu,%llu,",
				(unsigned long long)p->first_call, (unsigned long long)p->last_call,
				(unsigned long long)p->calls,
				cs_util_decimal(p->mean, b, sizeof(b)), (unsigned long long)p->p50,
				(unsigned long long)p->p99);
			if (l->tid)
				fprintf(out, "%u,%u", l->tid, l->pid);
			else
				fputs("*,*", out);
			fprintf(out, ",%llu,%llu,%llu\n", (unsigned long long)p->min,
				(unsigned long long)p->max, (unsigned long long)p->first_tsc);
		}
	}
	cs_series_lines_free(lines, n);
	return cs_util_flushed(out);
}
