/* SPDX-License-Identifier: MIT */
/* The rows an output shows: values per event, labels, order and cut. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

/*
 * Everything is computed once, on first use, and kept: the table prints
 * the same rows once per event, and sorting needs every row's value
 * before the first line is printed.  Rows are kept in the report's hash
 * order, the order they were made in and so close to their order in
 * memory: with 100,000 rows the per-event pass over them is bound by
 * cache and TLB misses, and the sorted order would make each a miss.
 */

static const char *const col_names[CS_NCOLS] = {
	[CS_COL_FUNCTION] = "function",
	[CS_COL_CALLSITE] = "callsite",
	[CS_COL_MODULE] = "module",
	[CS_COL_SOURCE] = "source",
	[CS_COL_CALLS] = "calls",
	[CS_COL_MEAN] = "mean",
	[CS_COL_STDDEV] = "stddev",
	[CS_COL_MIN] = "min",
	[CS_COL_P50] = "p50",
	[CS_COL_P90] = "p90",
	[CS_COL_P99] = "p99",
	[CS_COL_MAX] = "max",
	[CS_COL_TOTAL] = "total",
	[CS_COL_BIN_N] = "bin_n",
	[CS_COL_BIN_P] = "bin_p",
	[CS_COL_COLD_N] = "cold_n",
	[CS_COL_COLD_MEAN] = "cold_mean",
	[CS_COL_COLD_MIN] = "cold_min",
	[CS_COL_COLD_MAX] = "cold_max",
	[CS_COL_WARM_N] = "warm_n",
	[CS_COL_WARM_MEAN] = "warm_mean",
	[CS_COL_WARM_STDDEV] = "warm_stddev",
	[CS_COL_WARM_MIN] = "warm_min",
	[CS_COL_WARM_P50] = "warm_p50",
	[CS_COL_WARM_P90] = "warm_p90",
	[CS_COL_WARM_P99] = "warm_p99",
	[CS_COL_WARM_MAX] = "warm_max",
	[CS_COL_WARM_TOTAL] = "warm_total",
	[CS_COL_INCL] = "incl",
	[CS_COL_SELF] = "self",
	[CS_COL_RAW_MEAN] = "raw_mean",
};

/* One (row, event). */
struct vstat {
	unsigned char have; /* s holds values */
	unsigned char have_cold, have_warm; /* cold, warm hold values */
	struct cs_summary s;
};

struct coldwarm {
	struct cs_summary cold, warm;
};

/* Where the text of the rows is kept: chunks that never move. */
struct chunk {
	struct chunk *next;
	size_t used, size;
	char b[];
};

struct cs_view {
	struct chunk *text_chunks;
	int all_text; /* every row's text is made (2: with source) */
	int any_source; /* some row has a source line: -1 not known yet */
	const struct cs_report *r;
	struct cs_symbols *syms;
	const struct cs_output_opts *o;
	struct cs_row **rows; /* hash order */
	size_t nrows;
	size_t *pos; /* pos[i]: place of row i in cs_merge_sorted order */
	size_t *sorted; /* row indexes in that order */
	size_t *evs, nevs; /* events shown */
	unsigned char *filled; /* [r->nevents]: st of that event computed */
	struct vstat *st; /* [nrows * r->nevents] */
	struct coldwarm *cw; /* [nrows * r->nevents] when r->cold */
	char **text; /* [nrows * 4]: function, callsite, module, source */
	signed char *dkind; /* [nrows * nderive]: enum cs_cell, -1 not yet */
	long double *dval;
};

int cs_view_column(const char *name, const struct cs_output_opts *o)
{
	size_t i;

	for (i = 0; i < CS_NCOLS; i++)
		if (strcmp(name, col_names[i]) == 0)
			return (int)i;
	for (i = 0; o && i < o->nderive; i++)
		if (strcmp(name, o->derive[i].name) == 0)
			return CS_COL_DERIVED + (int)i;
	return -1;
}

const char *cs_view_column_name(int col, const struct cs_output_opts *o)
{
	if (col >= CS_COL_DERIVED)
		return o->derive[col - CS_COL_DERIVED].name;
	return col >= 0 && col < CS_NCOLS ? col_names[col] : "?";
}

int cs_view_text_column(int col)
{
	return col >= CS_COL_FUNCTION && col <= CS_COL_SOURCE;
}

/* The order of cs_merge_sorted (name, argn, key, module path, offset),
 * with the names and paths replaced by their ranks: comparing strings in
 * 100,000 rows scattered over memory took a twentieth of the report. */
struct okey {
	uint32_t name, argn, module;
	uint32_t i, tmodule;
	uint64_t key, offset, toff;
};

static int cmp_okey(const void *a, const void *b)
{
	const struct okey *x = a, *y = b;

	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->tmodule != y->tmodule)
		return x->tmodule < y->tmodule ? -1 : 1;
	if (x->toff != y->toff)
		return x->toff < y->toff ? -1 : 1;
	if (x->argn != y->argn)
		return x->argn < y->argn ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return 0;
}

struct rank {
	const char *s;
	uint32_t rank;
	UT_hash_handle hh;
};

static int cmp_rank(const void *a, const void *b)
{
	return strcmp((*(struct rank *const *)a)->s, (*(struct rank *const *)b)->s);
}

/* Sets ranks[i] (i < n) to the rank of s[i] among the distinct strings
 * of s (equal strings, equal ranks).  Returns 0 or -ENOMEM. */
static int rank_strings(const char *const *s, size_t n, uint32_t *ranks)
{
	struct rank *h = NULL, *e, *t, **v = NULL, *all = calloc(n + 1, sizeof(*all));
	size_t i, k = 0;
	uint32_t r = 0;

	if (!all)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		HASH_FIND_STR(h, s[i], e);
		if (!e) {
			e = &all[k++];
			e->s = s[i];
			HASH_ADD_KEYPTR(hh, h, e->s, strlen(e->s), e);
		}
	}
	v = malloc((k + 1) * sizeof(*v));
	if (v) {
		for (i = 0; i < k; i++)
			v[i] = &all[i];
		qsort(v, k, sizeof(*v), cmp_rank);
		for (i = 0; i < k; i++) {
			if (i && strcmp(v[i - 1]->s, v[i]->s) != 0)
				r++;
			v[i]->rank = r;
		}
		for (i = 0; i < n; i++) {
			HASH_FIND_STR(h, s[i], e);
			ranks[i] = e->rank;
		}
	}
	HASH_ITER(hh, h, e, t)
	HASH_DEL(h, e);
	free(v);
	free(all);
	return v ? 0 : -ENOMEM;
}

/* Fills v->sorted with the rows in cs_merge_sorted order.  Returns 0 or
 * -ENOMEM. */
static int merge_order(struct cs_view *v)
{
	const struct cs_report *r = v->r;
	const char **s = malloc((v->nrows + r->nmodules + 2) * sizeof(*s));
	uint32_t *nr = malloc((v->nrows + r->nmodules + 2) * sizeof(*nr));
	struct okey *k = malloc((v->nrows + 1) * sizeof(*k));
	size_t i;
	int ret = -ENOMEM;

	if (!s || !nr || !k)
		goto out;
	for (i = 0; i < v->nrows; i++)
		s[i] = v->rows[i]->k.name;
	if (rank_strings(s, v->nrows, nr))
		goto out;
	for (i = 0; i < v->nrows; i++) {
		k[i].name = nr[i];
		k[i].argn = v->rows[i]->k.argn;
		k[i].key = v->rows[i]->k.key;
		k[i].offset = v->rows[i]->k.offset;
		k[i].toff = v->rows[i]->k.toff;
		k[i].i = (uint32_t)i;
	}
	/* Module 0 (none) has the path "", as in merge.c. */
	s[0] = "";
	for (i = 0; i < r->nmodules; i++)
		s[i + 1] = r->modules[i]->path;
	if (rank_strings(s, r->nmodules + 1, nr))
		goto out;
	for (i = 0; i < v->nrows; i++) {
		k[i].module = v->rows[i]->k.module <= r->nmodules ? nr[v->rows[i]->k.module] : 0;
		k[i].tmodule = v->rows[i]->k.tmodule <= r->nmodules ? nr[v->rows[i]->k.tmodule] : 0;
	}
	qsort(k, v->nrows, sizeof(*k), cmp_okey);
	for (i = 0; i < v->nrows; i++)
		v->sorted[i] = k[i].i;
	ret = 0;
out:
	free(s);
	free(nr);
	free(k);
	return ret;
}

int cs_view_new(const struct cs_report *r, struct cs_symbols *syms, const struct cs_output_opts *o,
		struct cs_view **out)
{
	struct cs_view *v = calloc(1, sizeof(*v));
	struct cs_row *row, *tmp;
	size_t i, ne = r->nevents ? r->nevents : 1;

	*out = NULL;
	if (!v)
		return -ENOMEM;
	v->r = r;
	v->any_source = -1;
	v->syms = syms;
	v->o = o;
	v->nrows = r->nrows;
	v->rows = calloc(v->nrows + 1, sizeof(*v->rows));
	v->pos = calloc(v->nrows + 1, sizeof(*v->pos));
	v->sorted = calloc(v->nrows + 1, sizeof(*v->sorted));
	v->evs = calloc(ne, sizeof(*v->evs));
	v->filled = calloc(ne, 1);
	v->st = calloc(v->nrows * ne + 1, sizeof(*v->st));
	v->text = calloc(v->nrows * 4 + 1, sizeof(*v->text));
	if (r->cold)
		v->cw = calloc(v->nrows * ne + 1, sizeof(*v->cw));
	if (o->nderive) {
		v->dkind = malloc(v->nrows * o->nderive + 1);
		v->dval = calloc(v->nrows * o->nderive + 1, sizeof(*v->dval));
		if (v->dkind)
			memset(v->dkind, -1, v->nrows * o->nderive + 1);
	}
	if (!v->rows || !v->pos || !v->sorted || !v->evs || !v->filled || !v->st || !v->text ||
	    (r->cold && !v->cw) || (o->nderive && (!v->dkind || !v->dval))) {
		cs_view_free(v);
		return -ENOMEM;
	}
	i = 0;
	HASH_ITER(hh, r->rows, row, tmp)
	v->rows[i++] = row;
	v->nrows = i;
	if (merge_order(v)) {
		cs_view_free(v);
		return -ENOMEM;
	}
	for (i = 0; i < v->nrows; i++)
		v->pos[v->sorted[i]] = i;
	if (o->event_order) {
		for (i = 0; i < o->nevent_order && i < r->nevents; i++)
			v->evs[v->nevs++] = o->event_order[i];
	} else {
		for (i = 0; i < r->nevents; i++)
			if (!o->event_shown || o->event_shown[i])
				v->evs[v->nevs++] = i;
	}
	*out = v;
	return 0;
}

void cs_view_free(struct cs_view *v)
{

	if (!v)
		return;
	while (v->text_chunks) {
		struct chunk *c = v->text_chunks;

		v->text_chunks = c->next;
		free(c);
	}
	free(v->text);
	free(v->rows);
	free(v->pos);
	free(v->sorted);
	free(v->evs);
	free(v->filled);
	free(v->st);
	free(v->cw);
	free(v->dkind);
	free(v->dval);
	free(v);
}

const size_t *cs_view_events(const struct cs_view *v, size_t *n)
{
	*n = v->nevs;
	return v->evs;
}

size_t cs_view_nrows(const struct cs_view *v)
{
	return v->nrows;
}

const struct cs_row *cs_view_row(const struct cs_view *v, size_t i)
{
	return v->rows[i];
}

/* Cold and warm summaries of row i, event ev: warm = all - cold. */
static void fill_coldwarm(struct cs_view *v, size_t i, size_t ev, struct vstat *st)
{
	const struct cs_agg *all = cs_merge_agg(v->rows[i], ev);
	const struct cs_agg *cold = cs_merge_cold(v->rows[i], ev);
	struct coldwarm *cw = &v->cw[i * v->r->nevents + ev];
	struct cs_agg warm;

	if (!cold || !all)
		return;
	st->have_cold = cs_stats_summarize(cold, &cw->cold) == 0;
	cs_stats_init(&warm);
	if (cs_stats_copy(&warm, all) == 0 && cs_stats_sub(&warm, cold) == 0)
		st->have_warm = cs_stats_summarize(&warm, &cw->warm) == 0;
	cs_stats_fini(&warm);
}

/* Computes the summaries of event ev for every row. */
static void fill(struct cs_view *v, size_t ev)
{
	const struct cs_agg *a;
	struct vstat *st;
	size_t i;

	if (v->filled[ev])
		return;
	v->filled[ev] = 1;
	for (i = 0; i < v->nrows; i++) {
		st = &v->st[i * v->r->nevents + ev];
		a = cs_merge_agg(v->rows[i], ev);
		st->have = a && cs_stats_summarize(a, &st->s) == 0;
		if (v->cw && st->have)
			fill_coldwarm(v, i, ev, st);
	}
}

struct fill_work {
	struct cs_view *v;
	size_t next;
};

static void *fill_events(void *arg)
{
	struct fill_work *w = arg;
	size_t k;

	while ((k = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED)) < w->v->nevs)
		fill(w->v, w->v->evs[k]);
	return NULL;
}

void cs_view_fill_all(struct cs_view *v)
{
	struct fill_work w = {.v = v};
	pthread_t helper;
	int started = 0;

	/* Each event's summaries are apart from the others': two threads
	 * can make them. */
	if (v->nevs > 1 && v->nrows >= 1000)
		started = pthread_create(&helper, NULL, fill_events, &w) == 0;
	fill_events(&w);
	if (started)
		pthread_join(helper, NULL);
}

const struct cs_summary *cs_view_summary(struct cs_view *v, size_t i, size_t ev)
{
	struct vstat *st;

	if (ev >= v->r->nevents)
		return NULL;
	fill(v, ev);
	st = &v->st[i * v->r->nevents + ev];
	return st->have ? &st->s : NULL;
}

void cs_view_prefetch(const struct cs_view *v, size_t i, size_t ev, int strings)
{
	char *const *t = &v->text[i * 4];

	if (!strings) {
		if (ev < v->r->nevents)
			__builtin_prefetch(&v->st[i * v->r->nevents + ev]);
		__builtin_prefetch(t);
		return;
	}
	if (t[0])
		__builtin_prefetch(t[0]);
	if (t[1])
		__builtin_prefetch(t[1]);
	if (t[2])
		__builtin_prefetch(t[2]);
}

/* A copy of s[0, n) in v's text chunks, or NULL when out of memory. */
static char *keep(struct cs_view *v, const char *s, size_t n)
{
	struct chunk *c = v->text_chunks;
	size_t size;
	char *p;

	if (!c || c->size - c->used < n + 1) {
		size = n + 1 > (1u << 20) ? n + 1 : (1u << 20);
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->next = v->text_chunks;
		c->used = 0;
		c->size = size;
		v->text_chunks = c;
	}
	p = c->b + c->used;
	memcpy(p, s, n);
	p[n] = '\0';
	c->used += n + 1;
	return p;
}

/* Makes the text columns of row i (source only when source is set):
 * C++ names demangled unless o->raw_names. */
static void make_text(struct cs_view *v, size_t i, int source)
{
	char fn[CS_FUNCTION_MAX], cs[4096], mod[4096];
	const struct cs_row *row = v->rows[i];
	const struct cs_module_info *m;
	char **t = &v->text[i * 4], *dm;

	if (!t[0]) {
		cs_merge_function(row, fn, sizeof(fn));
		dm = v->o->raw_names ? NULL : cs_demangle(fn, CS_DEMANGLE_CUT);
		t[0] = dm ? keep(v, dm, strlen(dm)) : keep(v, fn, strlen(fn));
		free(dm);
	}
	if (!t[1]) {
		cs_output_callsite(v->r, row, v->syms, cs, sizeof(cs), mod, sizeof(mod));
		/* A call site's symbol is the symbol table's, whole. */
		dm = v->o->raw_names ? NULL : cs_demangle(cs, 0);
		t[1] = dm ? keep(v, dm, strlen(dm)) : keep(v, cs, strlen(cs));
		free(dm);
		t[2] = keep(v, mod, strlen(mod));
	}
	if (source && !t[3]) {
		cs[0] = '\0';
		if (v->r->by == CS_BY_CALLSITE && row->k.module &&
		    row->k.module <= v->r->nmodules) {
			m = v->r->modules[row->k.module - 1];
			cs_symbols_source(m->builds_differ ? NULL : v->syms, m->path, m->build_id, m->build_id_len,
					  row->k.offset, 1, cs, sizeof(cs));
		}
		t[3] = keep(v, cs, strlen(cs));
	}
}

void cs_view_all_text(struct cs_view *v, int source)
{
	size_t i;

	/* In the order of the rows in memory, into consecutive chunk
	 * space: printing then finds a row's texts side by side. */
	if (v->all_text >= 1 + source)
		return;
	for (i = 0; i < v->nrows; i++)
		make_text(v, i, source);
	v->all_text = 1 + source;
}

int cs_view_any_source(struct cs_view *v, const size_t *order, size_t n)
{
	size_t i;

	if (v->r->by != CS_BY_CALLSITE || n == 0)
		return 0;
	if (n == v->nrows && v->any_source >= 0)
		return v->any_source;
	for (i = 0; i < n; i++)
		if (cs_view_text(v, order ? order[i] : i, CS_COL_SOURCE)[0])
			break;
	if (n == v->nrows)
		v->any_source = i < n;
	return i < n;
}

const char *cs_view_text(struct cs_view *v, size_t i, int col)
{
	char **t = &v->text[i * 4];

	if (!cs_view_text_column(col))
		return "";
	if (!t[col])
		make_text(v, i, col == CS_COL_SOURCE);
	return t[col] ? t[col] : "";
}

/* A derived column of row i. */
static int derived(struct cs_view *v, size_t i, size_t j, long double *val)
{
	const struct cs_derive *d = &v->o->derive[j];
	size_t k, nv = cs_expr_nvars(d->expr), idx = i * v->o->nderive + j;
	long double vals[64];
	int kinds[64];
	const struct cs_agg *a;
	uint64_t calls = 0, mask = 0;
	int mixed = 0;
	long e;

	if (v->dkind[idx] >= 0) {
		*val = v->dval[idx];
		return v->dkind[idx];
	}
	if (nv > 64) {
		v->dkind[idx] = CS_CELL_NONE;
		return CS_CELL_NONE;
	}
	for (k = 0; k < nv; k++) {
		e = d->var[k];
		vals[k] = 0;
		if (e < 0) {
			kinds[k] = derived(v, i, (size_t)(-1 - e), &vals[k]);
			continue;
		}
		/* "no data" is "not counted" here: a ratio that leaves out
		 * an event the row never measured would look measured. */
		a = cs_merge_not_counted(v->r, (size_t)e) ? NULL
							  : cs_merge_agg(v->rows[i], (size_t)e);
		if (!a) {
			kinds[k] = CS_CELL_NOT_COUNTED;
			continue;
		}
		kinds[k] = CS_CELL_NUM;
		vals[k] = cs_stats_mean(a);
		/* Merged files that measured other events: one event's mean
		 * is over calls another's is not over, and their ratio would
		 * look measured. */
		if (calls && a->n != calls)
			mixed = 1;
		calls = a->n;
		if (e < 64)
			mask |= 1ull << e;
	}
	/* As many calls each, but not the same ones (two runs of one
	 * program, each with one of the events). */
	if (!mixed && cs_merge_mixed_events(v->rows[i], mask))
		mixed = 1;
	v->dkind[idx] = (signed char)cs_expr_eval(d->expr, vals, kinds, &v->dval[idx]);
	if (mixed && v->dkind[idx] == CS_CELL_NUM) {
		v->dkind[idx] = CS_CELL_NONE;
		/* (The options' own flag: said once per column.) */
		if (!__atomic_exchange_n(&((struct cs_derive *)d)->said_mixed, 1, __ATOMIC_RELAXED))
			cs_warn("--derive %s: its events were counted over different calls of a row "
				"(merged files measured different events); such rows have no value",
				d->name);
	}
	*val = v->dval[idx];
	return v->dkind[idx];
}

/* p = 1 - var/mean, n = mean/p: a count that is the sum of n
 * independent trials of probability p has that mean and variance.  The
 * variance comes from the agg (exact), not from the rounded stddev. */
static int binomial(const struct cs_summary *s, const struct cs_agg *a, int want_p,
		    long double *val)
{
	long double var = a ? cs_stats_variance(a) : s->stddev * s->stddev, p;

	if (!(s->mean > 0.0L))
		return CS_CELL_NONE;
	p = 1.0L - var / s->mean;
	if (!(p > 0.0L) || p > 1.0L)
		return CS_CELL_NONE;
	*val = want_p ? p : s->mean / p;
	return CS_CELL_NUM;
}

static int stat_value(const struct cs_summary *s, int col, long double *val)
{
	switch (col) {
	case CS_COL_CALLS:
		*val = (long double)s->n;
		break;
	case CS_COL_MEAN:
		*val = s->mean;
		break;
	case CS_COL_STDDEV:
		*val = s->stddev;
		break;
	case CS_COL_MIN:
		*val = (long double)s->min;
		break;
	case CS_COL_P50:
		*val = (long double)s->p50;
		break;
	case CS_COL_P90:
		*val = (long double)s->p90;
		break;
	case CS_COL_P99:
		*val = (long double)s->p99;
		break;
	case CS_COL_MAX:
		*val = (long double)s->max;
		break;
	case CS_COL_TOTAL:
		*val = (long double)s->total;
		break;
	default:
		return CS_CELL_NONE;
	}
	return CS_CELL_NUM;
}

int cs_view_value(struct cs_view *v, size_t i, size_t ev, int col, long double *val)
{
	const struct cs_agg *a;
	struct coldwarm *cw;
	struct vstat *st;

	*val = 0;
	if (col >= CS_COL_DERIVED)
		return derived(v, i, (size_t)(col - CS_COL_DERIVED), val);
	if (ev >= v->r->nevents || cs_view_text_column(col))
		return CS_CELL_NONE;
	if (cs_merge_not_counted(v->r, ev))
		return CS_CELL_NOT_COUNTED;
	fill(v, ev);
	st = &v->st[i * v->r->nevents + ev];
	if (!st->have)
		return col == CS_COL_CALLS ? CS_CELL_NUM : CS_CELL_NONE;
	if (col <= CS_COL_TOTAL)
		return stat_value(&st->s, col, val);
	if (col == CS_COL_BIN_N || col == CS_COL_BIN_P) {
		if (v->r->events[ev].kind == CS_EVENT_TSC)
			return CS_CELL_NONE;
		return binomial(&st->s, cs_merge_agg(v->rows[i], ev), col == CS_COL_BIN_P, val);
	}
	if (col == CS_COL_RAW_MEAN) {
		a = cs_merge_agg(v->rows[i], ev);
		if (!a || a->n == 0)
			return CS_CELL_NONE;
		*val = cs_stats_raw_mean(a);
		return CS_CELL_NUM;
	}
	if (col == CS_COL_INCL || col == CS_COL_SELF) {
		a = cs_merge_view(v->r, v->rows[i], ev, col == CS_COL_SELF);
		if (!a || a->n == 0)
			return CS_CELL_NONE;
		*val = cs_stats_mean(a);
		return CS_CELL_NUM;
	}
	if (!v->cw)
		return CS_CELL_NONE;
	cw = &v->cw[i * v->r->nevents + ev];
	if (col == CS_COL_COLD_N || col == CS_COL_WARM_N) {
		*val = (long double)(col == CS_COL_COLD_N ? cw->cold.n : cw->warm.n);
		return CS_CELL_NUM;
	}
	if (col >= CS_COL_COLD_MEAN && col <= CS_COL_COLD_MAX) {
		if (!st->have_cold)
			return CS_CELL_NONE;
		if (col == CS_COL_COLD_MEAN)
			*val = cw->cold.mean;
		else
			*val = (long double)(col == CS_COL_COLD_MIN ? cw->cold.min : cw->cold.max);
		return CS_CELL_NUM;
	}
	if (!st->have_warm)
		return CS_CELL_NONE;
	return stat_value(&cw->warm, col - CS_COL_WARM_MEAN + CS_COL_MEAN, val);
}

/* bin_p: three significant digits for a human, six decimals (trailing
 * zeros dropped) for a script: a probability of 0.0004 is not 0. */
static char *format_p(long double p, int csv, char *buf, size_t len)
{
	char *end;

	if (!csv) {
		snprintf(buf, len, "%.3Lg", p);
		return buf;
	}
	snprintf(buf, len, "%.6Lf", p);
	end = buf + strlen(buf);
	while (end > buf && end[-1] == '0')
		*--end = '\0';
	if (end > buf && end[-1] == '.')
		*--end = '\0';
	return buf;
}

static char *format(struct cs_view *v, size_t i, size_t ev, int col, int csv, char *buf, size_t len)
{
	long double val;
	int kind;

	if (cs_view_text_column(col)) {
		snprintf(buf, len, "%s", cs_view_text(v, i, col));
		return buf;
	}
	kind = cs_view_value(v, i, ev, col, &val);
	if (kind == CS_CELL_NOT_COUNTED) {
		snprintf(buf, len, "not counted");
		return buf;
	}
	if (kind != CS_CELL_NUM) {
		snprintf(buf, len, "%s", csv ? "" : "-");
		return buf;
	}
	if (col == CS_COL_BIN_P)
		return format_p(val, csv, buf, len);
	/* A derived ratio can be far below the three decimals of a mean:
	 * 1e-9 is not 0. */
	if (csv && col >= CS_COL_DERIVED && val != 0 && fabsl(val) < 0.001L) {
		snprintf(buf, len, "%.6Lg", val);
		return buf;
	}
	if (!csv && val >= 0 && val < 100000 && val == (long double)(uint64_t)val)
		return cs_util_human_u64((uint64_t)val, buf, len);
	return csv ? cs_util_decimal(val, buf, len) : cs_util_human(val, buf, len);
}

char *cs_view_format(struct cs_view *v, size_t i, size_t ev, int col, char *buf, size_t len)
{
	return format(v, i, ev, col, 0, buf, len);
}

char *cs_view_format_csv(struct cs_view *v, size_t i, size_t ev, int col, char *buf, size_t len)
{
	return format(v, i, ev, col, 1, buf, len);
}

struct skey {
	long double v;
	const char *t;
	size_t i, pos;
	int kind;
};

static __thread int sort_desc; /* qsort has no context; threads sort too */

static int cmp_skey(const void *a, const void *b)
{
	const struct skey *x = a, *y = b;
	int c = 0;

	/* Rows without a value go last, whatever the direction. */
	if ((x->kind == CS_CELL_NUM) != (y->kind == CS_CELL_NUM))
		return x->kind == CS_CELL_NUM ? -1 : 1;
	if (x->t)
		c = strcmp(x->t, y->t);
	else if (x->kind == CS_CELL_NUM && x->v != y->v)
		c = x->v < y->v ? -1 : 1;
	if (c)
		return sort_desc ? -c : c;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

struct rkey {
	uint64_t key;
	size_t i;
};

/* Sorts k[0, n) by key, stably: LSD radix, one pass per byte that is not
 * the same in all keys.  tmp has room for n.  A comparison sort of
 * 100,000 rows per event table took a tenth of the report's time. */
static void radix_sort(struct rkey *k, struct rkey *tmp, size_t n)
{
	size_t count[256], i, sum, c;
	struct rkey *src = k, *dst = tmp, *t;
	unsigned shift;

	for (shift = 0; shift < 64; shift += 8) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(src[i].key >> shift) & 255]++;
		if (count[(src[0].key >> shift) & 255] == n)
			continue; /* the same byte everywhere */
		for (i = 0, sum = 0; i < 256; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[(src[i].key >> shift) & 255]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != k)
		memcpy(k, src, n * sizeof(*k));
}

/* An unsigned key that orders as v does (as a double: values closer than
 * that tie, and ties keep the merge order). */
static uint64_t order_key(long double v, int desc)
{
	double d = (double)v;
	uint64_t bits;

	if (d == 0.0)
		d = 0.0; /* -0 and 0 are equal */
	memcpy(&bits, &d, sizeof(bits));
	bits = bits >> 63 ? ~bits : bits | (1ull << 63);
	if (desc)
		bits = ~bits;
	/* UINT64_MAX is kept for rows without a value: last. */
	return bits == UINT64_MAX ? UINT64_MAX - 1 : bits;
}

/* The numeric sort of cs_view_order into out.  Returns 0 or -ENOMEM. */
static int order_numeric(struct cs_view *v, size_t ev, int col, int desc, size_t *out)
{
	struct rkey *k = malloc(2 * v->nrows * sizeof(*k));
	long double val;
	size_t i, r;
	int kind;

	if (!k)
		return -ENOMEM;
	/* Keys in the merge order, so that the stable sort breaks ties by it. */
	for (i = 0; i < v->nrows; i++) {
		r = v->sorted[i];
		kind = cs_view_value(v, r, ev, col, &val);
		k[i].i = r;
		k[i].key = kind == CS_CELL_NUM && !isnan(val) ? order_key(val, desc) : UINT64_MAX;
	}
	radix_sort(k, k + v->nrows, v->nrows);
	for (i = 0; i < v->nrows; i++)
		out[i] = k[i].i;
	free(k);
	return 0;
}

size_t *cs_view_order(struct cs_view *v, size_t ev, int col, int desc, size_t *n)
{
	size_t i, k = v->nrows, *out;
	struct skey *keys;

	*n = 0;
	if (k == 0)
		return NULL;
	out = malloc(k * sizeof(*out));
	if (!out)
		return NULL;
	if (col < 0) {
		memcpy(out, v->sorted, k * sizeof(*out));
	} else if (!cs_view_text_column(col)) {
		if (order_numeric(v, ev, col, desc, out)) {
			free(out);
			return NULL;
		}
	} else {
		keys = malloc(k * sizeof(*keys));
		if (!keys) {
			free(out);
			return NULL;
		}
		for (i = 0; i < k; i++) {
			keys[i].i = i;
			keys[i].pos = v->pos[i];
			keys[i].t = NULL;
			if (cs_view_text_column(col)) {
				keys[i].t = cs_view_text(v, i, col);
				keys[i].kind = CS_CELL_NUM;
			} else {
				keys[i].kind = cs_view_value(v, i, ev, col, &keys[i].v);
				if (keys[i].kind == CS_CELL_NUM && isnan(keys[i].v))
					keys[i].kind = CS_CELL_NONE;
			}
		}
		sort_desc = desc;
		qsort(keys, k, sizeof(*keys), cmp_skey);
		for (i = 0; i < k; i++)
			out[i] = keys[i].i;
		free(keys);
	}
	if (v->o->top && v->o->top < k)
		k = v->o->top;
	*n = k;
	return out;
}

size_t *cs_view_order_opts(struct cs_view *v, size_t ev, int defcol, size_t *n)
{
	int col = v->o->sort ? v->o->sort - 1 : defcol;
	int desc = v->o->sort_dir ? v->o->sort_dir == 2 : !cs_view_text_column(col);

	return cs_view_order(v, ev, col, desc, n);
}
