/* SPDX-License-Identifier: MIT */
/* A writer of report files with known contents, for the report tests. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/report/fixture.h"

/* Tests abort on allocation failure: there is nothing to recover. */
static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n);
	if (!p) {
		fputs("fixture: out of memory\n", stderr);
		abort();
	}
	return p;
}

static void reserve(struct fx *f, size_t more)
{
	size_t cap = f->cap;

	while (f->len + more > cap)
		cap *= 2;
	if (cap != f->cap) {
		f->buf = xrealloc(f->buf, cap);
		f->cap = cap;
	}
}

static uint64_t files_made;

struct fx *fx_new(const char *program, uint32_t pid, unsigned nevents,
		  const struct fx_event *events)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct cs_file_header *h;
	unsigned i;

	if (!f)
		return NULL;
	f->cap = 1u << 16;
	f->buf = xrealloc(NULL, f->cap);
	memset(f->buf, 0, CS_HEADER_SIZE);
	f->len = CS_HEADER_SIZE;
	h = fx_header(f);
	memcpy(h->magic, CS_MAGIC, sizeof(h->magic));
	h->version = CS_FORMAT_VERSION;
	h->header_size = CS_HEADER_SIZE;
	h->state = CS_STATE_COMPLETE;
	h->nevents = nevents;
	h->pid = pid;
	h->ppid = 1;
	/* Each file another process's: files of one process (a copy) are
	 * read once (cs_reader_same_writer). */
	h->start_ns = 1700000000000000000ull + ++files_made;
	snprintf(h->program, sizeof(h->program), "%s", program);
	for (i = 0; i < nevents && i < CS_MAX_EVENTS; i++) {
		snprintf(h->events[i].name, sizeof(h->events[i].name), "%s", events[i].name);
		h->events[i].kind = events[i].kind;
		h->events[i].flags = events[i].flags;
	}
	f->next_module = 1;
	f->next_target = 1;
	return f;
}

struct cs_file_header *fx_header(struct fx *f)
{
	return (struct cs_file_header *)f->buf;
}

void *fx_at(struct fx *f, size_t off)
{
	return f->buf + off;
}

size_t fx_block(struct fx *f, uint32_t type, uint32_t size)
{
	struct cs_block *b;
	size_t off;

	size = (size + 7u) & ~7u;
	reserve(f, size);
	off = f->len;
	memset(f->buf + off, 0, size);
	b = fx_at(f, off);
	b->type = type;
	b->size = size;
	f->len += size;
	return off;
}

uint32_t fx_module(struct fx *f, const char *path, const uint8_t *build_id, uint32_t build_id_len,
		   uint64_t base)
{
	size_t plen = strlen(path) + 1;
	struct cs_module_block *m;
	size_t off;

	off = fx_block(f, CS_BLOCK_MODULE, (uint32_t)(sizeof(*m) + plen));
	m = fx_at(f, off);
	m->id = f->next_module++;
	m->build_id_len = build_id_len;
	if (build_id_len)
		memcpy(m->build_id, build_id, build_id_len);
	m->base = base;
	m->lo = base;
	m->hi = base + 0x100000;
	memcpy(m->path, path, plen);
	return m->id;
}

uint32_t fx_target(struct fx *f, const char *name, uint32_t module, uint32_t argn, uint32_t how)
{
	struct cs_target_block *t;
	size_t off;

	off = fx_block(f, CS_BLOCK_TARGET, sizeof(*t));
	t = fx_at(f, off);
	t->id = f->next_target++;
	t->how = how;
	t->module = module;
	t->argn = argn;
	t->addr = 0x400000 + 16 * t->id;
	snprintf(t->name, sizeof(t->name), "%s", name);
	return t->id;
}

uint32_t fx_target_at(struct fx *f, const char *name, uint32_t module, uint64_t addr, uint32_t how,
		      uint32_t got_slots)
{
	uint32_t id = fx_target(f, name, module, 0, how);
	struct cs_target_block *t = fx_at(f, f->len - sizeof(*t));

	t->addr = addr;
	t->got_slots = got_slots;
	return id;
}

size_t fx_refusal(struct fx *f, uint32_t target, uint64_t offset, const char *why)
{
	struct cs_refusal_block *r;
	size_t off;

	off = fx_block(f, CS_BLOCK_REFUSAL, sizeof(*r));
	r = fx_at(f, off);
	r->target = target;
	r->offset = offset;
	snprintf(r->why, sizeof(r->why), "%s", why);
	return off;
}

size_t fx_note(struct fx *f, const char *text)
{
	struct cs_note_block *n;
	size_t off;

	off = fx_block(f, CS_BLOCK_NOTE, sizeof(*n));
	n = fx_at(f, off);
	snprintf(n->text, sizeof(n->text), "%s", text);
	return off;
}

void fx_thread(struct fx *f, uint32_t tid, uint32_t events_open)
{
	fx_thread_setup(f, tid, events_open, 0, sizeof(struct cs_thread_block));
}

void fx_thread_setup(struct fx *f, uint32_t tid, uint32_t events_open, uint64_t setup_ticks,
		     uint32_t size)
{
	struct cs_thread_block *t;
	size_t off;

	off = fx_block(f, CS_BLOCK_THREAD, size);
	t = fx_at(f, off);
	t->tid = tid;
	t->events_open = events_open;
	if (size >= sizeof(*t))
		t->setup_ticks = setup_ticks;
}

size_t fx_site(struct fx *f, uint32_t target, uint32_t tid, uint32_t module, uint64_t offset,
	       uint64_t key)
{
	unsigned n = fx_header(f)->nevents;
	struct cs_site_block *s;
	size_t off;

	if (f->align_sites && f->len % CS_SITE_ALIGN)
		fx_block(f, CS_BLOCK_PAD, CS_SITE_ALIGN - f->len % CS_SITE_ALIGN);
	off = fx_block(f, CS_BLOCK_SITE, (uint32_t)cs_site_block_size(n));
	s = fx_at(f, off);
	s->target = target;
	s->tid = tid;
	s->module = module;
	s->nevents = n;
	s->offset = offset;
	s->callsite = offset + (module ? 0x7f0000000000ull : 0);
	s->key = key;
	return off;
}

/* Adds value v to the stat st. */
static void stat_add(struct cs_stat *st, uint64_t v)
{
	unsigned __int128 sq = (unsigned __int128)v * v, acc;
	uint64_t n = 0;
	unsigned b;

	for (b = 0; b < CS_HIST_BUCKETS; b++)
		n += st->hist[b];
	if (n == 0) {
		st->min = st->max = st->first = v;
	} else {
		if (v < st->min)
			st->min = v;
		if (v > st->max)
			st->max = v;
	}
	st->sum += v;
	acc = ((unsigned __int128)st->sumsq_hi << 64 | st->sumsq_lo) + sq;
	st->sumsq_lo = (uint64_t)acc;
	st->sumsq_hi = (uint64_t)(acc >> 64);
	st->hist[cs_hist_index(v)]++;
}

void fx_value(struct fx *f, size_t site, unsigned ev, uint64_t v)
{
	struct cs_site_block *s = fx_at(f, site);

	stat_add(&s->stat[ev], v);
}

void fx_call(struct fx *f, size_t site, const uint64_t *values)
{
	unsigned n = fx_header(f)->nevents, i;
	struct cs_site_block *s = fx_at(f, site);

	s->calls++;
	s->entered++;
	for (i = 0; i < n; i++)
		fx_value(f, site, i, values[i]);
}

int fx_write(struct fx *f, const char *path, int complete, size_t extra)
{
	struct cs_file_header *h = fx_header(f);
	size_t len = f->len;
	FILE *fp;
	int ret = 0;

	h->used = (f->used ? f->used : len) | (complete ? CS_USED_SEALED : 0);
	h->state = complete ? CS_STATE_COMPLETE : CS_STATE_RUNNING;
	h->capacity = len + extra;
	h->end_ns = complete ? h->start_ns + 1000000000ull : 0;
	reserve(f, extra);
	memset(f->buf + len, 0, extra);
	fp = fopen(path, "wb");
	if (!fp) {
		perror(path);
		return -1;
	}
	if (fwrite(f->buf, 1, len + extra, fp) != len + extra)
		ret = -1;
	if (fclose(fp) != 0)
		ret = -1;
	if (ret)
		perror(path);
	return ret;
}

void fx_free(struct fx *f)
{
	if (!f)
		return;
	free(f->buf);
	free(f);
}

size_t fx_nested(struct fx *f, size_t site)
{
	unsigned n = fx_header(f)->nevents;
	struct cs_nested_block *nb;
	size_t off;

	off = fx_block(f, CS_BLOCK_NESTED, (uint32_t)cs_nested_block_size(n));
	nb = fx_at(f, off);
	nb->site = site;
	nb->nevents = n;
	((struct cs_site_block *)fx_at(f, site))->nested = off;
	return off;
}

void fx_nested_call(struct fx *f, size_t site, size_t nested, const uint64_t *incl,
		    const uint64_t *excl, uint64_t children)
{
	unsigned n = fx_header(f)->nevents, i;
	struct cs_nested_block *nb;

	fx_call(f, site, incl);
	nb = fx_at(f, nested);
	nb->calls++;
	nb->children += children;
	for (i = 0; i < n; i++) {
		stat_add(&nb->stat[i], incl[i]);
		stat_add(&nb->stat[n + i], excl[i]);
	}
}

size_t fx_series(struct fx *f, uint32_t target, uint32_t tid, unsigned shift)
{
	unsigned n = fx_header(f)->nevents;
	struct cs_series_block *sb;
	size_t off;

	uint64_t wsize = f->v1_windows ? cs_window_size_v1(n) : cs_window_size(n);

	off = fx_block(f, CS_BLOCK_SERIES, (uint32_t)(sizeof(*sb) + CS_SERIES_WINDOWS * wsize));
	sb = fx_at(f, off);
	sb->target = target;
	sb->tid = tid;
	sb->nevents = n;
	sb->shift = shift;
	sb->window_size = wsize;
	return off;
}

static struct cs_window *window(struct cs_series_block *sb, unsigned i)
{
	return (struct cs_window *)((unsigned char *)(sb + 1) + (size_t)i * sb->window_size);
}

/* Halves the resolution: window i becomes windows 2i and 2i+1. */
static void series_merge(struct cs_series_block *sb)
{
	unsigned i, e, b;

	for (i = 0; i < CS_SERIES_WINDOWS / 2; i++) {
		struct cs_window *d = window(sb, i), *x = window(sb, 2 * i),
				 *y = window(sb, 2 * i + 1);
		struct cs_wstat *dw = (struct cs_wstat *)(d + 1), *xw = (struct cs_wstat *)(x + 1);
		struct cs_wstat *yw = (struct cs_wstat *)(y + 1);

		for (e = 0; e < sb->nevents; e++) {
			struct cs_wstat m = xw[e];

			if (y->calls) {
				m.sum += yw[e].sum;
				if (!x->calls || yw[e].min < m.min)
					m.min = yw[e].min;
				if (yw[e].max > m.max)
					m.max = yw[e].max;
				for (b = 0; b < CS_WHIST_BUCKETS; b++)
					m.hist[b] += yw[e].hist[b];
			}
			dw[e] = m;
		}
		d->first_tsc = x->first_tsc;
		d->calls = x->calls + y->calls;
	}
	for (i = CS_SERIES_WINDOWS / 2; i < CS_SERIES_WINDOWS; i++)
		memset(window(sb, i), 0, sb->window_size);
	sb->shift++;
}

void fx_series_call(struct fx *f, size_t series, const uint64_t *values)
{
	struct cs_series_block *sb = fx_at(f, series);
	struct cs_window *w;
	struct cs_wstat *ws;
	unsigned e;

	if ((sb->calls >> sb->shift) >= CS_SERIES_WINDOWS)
		series_merge(sb);
	w = window(sb, (unsigned)(sb->calls >> sb->shift));
	ws = (struct cs_wstat *)(w + 1);
	if (w->calls == 0)
		w->first_tsc = 1000 + sb->calls + 1;
	for (e = 0; e < sb->nevents; e++) {
		if (w->calls == 0 || values[e] < ws[e].min)
			ws[e].min = values[e];
		if (values[e] > ws[e].max)
			ws[e].max = values[e];
		ws[e].sum += values[e];
		ws[e].hist[cs_whist_index(values[e])]++;
	}
	w->calls++;
	sb->calls++;
}
