/* SPDX-License-Identifier: MIT */
/* Merges the sites of any number of report files into report rows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

struct cs_report *cs_merge_new(enum cs_by by)
{
	struct cs_report *r = calloc(1, sizeof(*r));

	if (r)
		r->by = by;
	return r;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 8;
	void *np;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	np = realloc(*p, n * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = n;
	return 0;
}

/* Returns the global index of event i of f, adding it when new, or -1
 * when out of memory.  Events are matched by name; a file that lists a
 * name twice has its second one matched to the second of that name. */
static long map_event(struct cs_report *r, const struct cs_file_header *h, unsigned i)
{
	const struct cs_file_event *e = &h->events[i];
	unsigned occ = 0, j;
	struct cs_event_info *g;
	size_t k;

	for (j = 0; j < i; j++)
		if (strcmp(h->events[j].name, e->name) == 0)
			occ++;
	for (k = 0; k < r->nevents; k++)
		if (r->events[k].occurrence == occ && strcmp(r->events[k].name, e->name) == 0)
			break;
	if (k == r->nevents) {
		if (grow((void **)&r->events, &r->events_cap, k + 1, sizeof(*r->events)))
			return -1;
		g = &r->events[k];
		memset(g, 0, sizeof(*g));
		memcpy(g->name, e->name, sizeof(g->name));
		g->kind = e->kind;
		g->occurrence = occ;
		r->nevents++;
	}
	g = &r->events[k];
	if (e->flags & CS_EVENT_COUNTED)
		g->counted = 1;
	if (e->flags & CS_EVENT_FAILED)
		g->failed = 1;
	return (long)k;
}

/* Returns the 1-based index of the module at path, adding it when new;
 * 0 when out of memory. */
static uint32_t intern_module(struct cs_report *r, const struct cs_module_block *mb)
{
	struct cs_module_info *m;
	struct cs_module_info **nm;

	HASH_FIND_STR(r->module_hash, mb->path, m);
	if (m) {
		/* A process that could read the build id wins over one
		 * that could not. */
		if (m->build_id_len == 0 && mb->build_id_len) {
			memcpy(m->build_id, mb->build_id, mb->build_id_len);
			m->build_id_len = mb->build_id_len;
		}
		return m->idx;
	}
	nm = realloc(r->modules, (r->nmodules + 1) * sizeof(*nm));
	if (!nm)
		return 0;
	r->modules = nm;
	m = calloc(1, sizeof(*m));
	if (!m)
		return 0;
	m->path = strdup(mb->path);
	if (!m->path) {
		free(m);
		return 0;
	}
	memcpy(m->build_id, mb->build_id, mb->build_id_len);
	m->build_id_len = mb->build_id_len;
	m->idx = (uint32_t)++r->nmodules;
	r->modules[m->idx - 1] = m;
	HASH_ADD_KEYPTR(hh, r->module_hash, m->path, strlen(m->path), m);
	return m->idx;
}

static struct cs_row *find_row(struct cs_report *r, const struct cs_row_key *k)
{
	struct cs_row *row;

	HASH_FIND(hh, r->rows, k, sizeof(*k), row);
	if (row)
		return row;
	row = calloc(1, sizeof(*row));
	if (!row)
		return NULL;
	row->k = *k;
	HASH_ADD(hh, r->rows, k, sizeof(row->k), row);
	r->nrows++;
	return row;
}

static struct cs_agg *row_agg(struct cs_row *row, size_t ev)
{
	struct cs_agg **na;

	if (ev >= row->naggs) {
		na = realloc(row->aggs, (ev + 1) * sizeof(*na));
		if (!na)
			return NULL;
		memset(na + row->naggs, 0, (ev + 1 - row->naggs) * sizeof(*na));
		row->aggs = na;
		row->naggs = ev + 1;
	}
	if (!row->aggs[ev]) {
		row->aggs[ev] = malloc(sizeof(struct cs_agg));
		if (!row->aggs[ev])
			return NULL;
		cs_stats_init(row->aggs[ev]);
	}
	return row->aggs[ev];
}

static int add_file_info(struct cs_report *r, const struct cs_file *f)
{
	struct cs_file_info *fi, *nf;

	nf = realloc(r->files, (r->nfiles + 1) * sizeof(*nf));
	if (!nf)
		return -ENOMEM;
	r->files = nf;
	fi = &r->files[r->nfiles];
	memset(fi, 0, sizeof(*fi));
	fi->path = strdup(f->path);
	if (!fi->path)
		return -ENOMEM;
	memcpy(fi->program, f->hdr->program, sizeof(fi->program));
	fi->pid = f->hdr->pid;
	fi->incomplete = f->incomplete;
	fi->lost_calls = f->hdr->lost_calls;
	fi->tsc_hz = f->hdr->tsc_hz;
	fi->session = f->hdr->session;
	r->nfiles++;
	r->lost_calls += f->hdr->lost_calls;
	return 0;
}

static int stat_empty(const struct cs_stat *s)
{
	unsigned b;

	for (b = 0; b < CS_HIST_BUCKETS; b++)
		if (s->hist[b])
			return 0;
	return 1;
}

/* The shim's calibration target: the wrapper around an empty function.
 * Not a row: its values are the cost of the measurement itself. */
static int add_calibration(struct cs_report *r, const struct cs_file *f,
			   const struct cs_site_block *s, const size_t *evmap)
{
	struct cs_agg **nc;
	unsigned e;
	size_t g;

	if (r->ncalib < r->nevents) {
		nc = realloc(r->calib, r->nevents * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		memset(nc + r->ncalib, 0, (r->nevents - r->ncalib) * sizeof(*nc));
		r->calib = nc;
		r->ncalib = r->nevents;
	}
	for (e = 0; e < f->hdr->nevents; e++) {
		if (!cs_reader_event_usable(f, s, e) || stat_empty(&s->stat[e]))
			continue;
		g = evmap[e];
		if (!r->calib[g]) {
			r->calib[g] = malloc(sizeof(struct cs_agg));
			if (!r->calib[g])
				return -ENOMEM;
			cs_stats_init(r->calib[g]);
		}
		cs_stats_add(r->calib[g], &s->stat[e]);
	}
	return 0;
}

/* The median per event of the calibration calls of f alone, 0 for an
 * event without them: the overhead of every call in this process.
 * Returns 0 or -ENOMEM. */
static int file_overhead(const struct cs_file *f, uint64_t *over)
{
	struct cs_agg *a = malloc(sizeof(*a));
	unsigned e;
	size_t i;

	if (!a)
		return -ENOMEM;
	for (e = 0; e < f->hdr->nevents; e++) {
		cs_stats_init(a);
		for (i = 0; i < f->nsites; i++) {
			const struct cs_site_block *s = f->sites[i];

			if ((cs_reader_target(f, s->target)->how & CS_HOOK_CALIBRATION) &&
			    cs_reader_event_usable(f, s, e))
				cs_stats_add(a, &s->stat[e]);
		}
		over[e] = cs_stats_percentile(a, 0.5);
	}
	free(a);
	return 0;
}

int cs_merge_add(struct cs_report *r, const struct cs_file *f)
{
	const struct cs_file_header *h = f->hdr;
	uint64_t over[CS_MAX_EVENTS] = {0}, n;
	size_t evmap[CS_MAX_EVENTS];
	struct cs_row_key k;
	struct cs_row *row;
	struct cs_agg *agg;
	size_t i;
	unsigned e;
	long g;

	if (add_file_info(r, f))
		return -ENOMEM;
	for (e = 0; e < h->nevents; e++) {
		g = map_event(r, h, e);
		if (g < 0)
			return -ENOMEM;
		evmap[e] = (size_t)g;
	}
	if (r->subtract_overhead && file_overhead(f, over))
		return -ENOMEM;

	for (i = 0; i < f->nsites; i++) {
		const struct cs_site_block *s = f->sites[i];
		const struct cs_target_block *t = cs_reader_target(f, s->target);
		const struct cs_module_block *m;

		if (t->how & CS_HOOK_CALIBRATION) {
			if (add_calibration(r, f, s, evmap))
				return -ENOMEM;
			continue;
		}
		memset(&k, 0, sizeof(k)); /* padding is part of the hash key */
		memcpy(k.name, t->name, sizeof(k.name));
		k.key = s->key;
		if (s->key != CS_KEY_NONE)
			k.argn = t->argn;
		if (r->by == CS_BY_CALLSITE) {
			m = s->module ? cs_reader_module(f, s->module) : NULL;
			if (m) {
				k.module = intern_module(r, m);
				if (k.module == 0)
					return -ENOMEM;
				k.offset = s->offset;
			} else {
				k.offset = s->callsite;
			}
		}
		row = find_row(r, &k);
		if (!row)
			return -ENOMEM;
		row->calls += s->calls;
		row->entered += s->entered;
		row->dropped += s->dropped;
		r->calls += s->calls;
		r->entered += s->entered;
		r->dropped += s->dropped;
		/* Entered but neither returned nor dropped: still running,
		 * or left by longjmp, exit or a crash. */
		if (s->entered > s->calls && s->entered - s->calls > s->dropped)
			r->not_returned += s->entered - s->calls - s->dropped;
		for (e = 0; e < h->nevents; e++) {
			if (!cs_reader_event_usable(f, s, e) || stat_empty(&s->stat[e]))
				continue;
			agg = row_agg(row, evmap[e]);
			if (!agg)
				return -ENOMEM;
			n = cs_stats_add(agg, &s->stat[e]);
			agg->shift += (cs_u128)n * over[e];
		}
	}
	return 0;
}

static const char *module_path(const struct cs_report *r, uint32_t idx)
{
	return idx && idx <= r->nmodules ? r->modules[idx - 1]->path : "";
}

/* qsort has no context argument: the report being sorted. */
static const struct cs_report *sort_report;

static int cmp_rows(const void *a, const void *b)
{
	const struct cs_row *x = *(const struct cs_row *const *)a;
	const struct cs_row *y = *(const struct cs_row *const *)b;
	int c;

	c = strcmp(x->k.name, y->k.name);
	if (c)
		return c;
	if (x->k.argn != y->k.argn)
		return x->k.argn < y->k.argn ? -1 : 1;
	if (x->k.key != y->k.key)
		return x->k.key < y->k.key ? -1 : 1;
	if (x->k.module != y->k.module) {
		c = strcmp(module_path(sort_report, x->k.module),
			   module_path(sort_report, y->k.module));
		if (c)
			return c;
	}
	if (x->k.offset != y->k.offset)
		return x->k.offset < y->k.offset ? -1 : 1;
	return 0;
}

struct cs_row **cs_merge_sorted(const struct cs_report *r, size_t *n)
{
	struct cs_row **v, *row, *tmp;
	size_t i = 0;

	*n = 0;
	if (r->nrows == 0)
		return NULL;
	v = malloc(r->nrows * sizeof(*v));
	if (!v)
		return NULL;
	HASH_ITER(hh, r->rows, row, tmp)
	v[i++] = row;
	sort_report = r;
	qsort(v, i, sizeof(*v), cmp_rows);
	sort_report = NULL;
	*n = i;
	return v;
}

const struct cs_agg *cs_merge_calibration(const struct cs_report *r, size_t ev)
{
	if (ev >= r->ncalib || !r->calib[ev] || r->calib[ev]->n == 0)
		return NULL;
	return r->calib[ev];
}

const struct cs_agg *cs_merge_agg(const struct cs_row *row, size_t ev)
{
	if (ev >= row->naggs || !row->aggs[ev] || row->aggs[ev]->n == 0)
		return NULL;
	return row->aggs[ev];
}

int cs_merge_not_counted(const struct cs_report *r, size_t ev)
{
	return ev < r->nevents && r->events[ev].failed && !r->events[ev].counted;
}

char *cs_merge_function(const struct cs_row *row, char *buf, size_t len)
{
	if (row->k.key == CS_KEY_NONE)
		snprintf(buf, len, "%s", row->k.name);
	else
		snprintf(buf, len, "%s[arg%u:%llu]", row->k.name, row->k.argn,
			 (unsigned long long)row->k.key);
	return buf;
}

void cs_merge_free(struct cs_report *r)
{
	struct cs_row *row, *tmp;
	struct cs_module_info *m, *mt;
	size_t i;

	if (!r)
		return;
	HASH_ITER(hh, r->rows, row, tmp)
	{
		HASH_DEL(r->rows, row);
		for (i = 0; i < row->naggs; i++)
			free(row->aggs[i]);
		free(row->aggs);
		free(row);
	}
	HASH_ITER(hh, r->module_hash, m, mt)
	{
		HASH_DEL(r->module_hash, m);
		free(m->path);
		free(m);
	}
	free(r->modules);
	for (i = 0; i < r->ncalib; i++)
		free(r->calib[i]);
	free(r->calib);
	for (i = 0; i < r->nfiles; i++)
		free(r->files[i].path);
	free(r->files);
	free(r->events);
	free(r);
}
