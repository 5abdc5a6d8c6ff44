/* SPDX-License-Identifier: MIT */
/* Merges the sites of any number of report files into report rows. */
#include <errno.h>
#include <fnmatch.h>
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
 * when out of memory.  Events are matched by name (cs_event_same: case
 * aside, a software event's other names); a file that lists a name twice
 * has its second one matched to the second of that name. */
static long map_event(struct cs_report *r, const struct cs_file_header *h, unsigned i)
{
	const struct cs_file_event *e = &h->events[i];
	unsigned occ = 0, j;
	struct cs_event_info *g;
	size_t k;

	for (j = 0; j < i; j++)
		if (cs_event_same(h->events[j].name, e->name))
			occ++;
	for (k = 0; k < r->nevents; k++)
		if (r->events[k].occurrence == occ && cs_event_same(r->events[k].name, e->name))
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
		} else if (m->build_id_len && mb->build_id_len && !m->builds_differ &&
			   (m->build_id_len != mb->build_id_len ||
			    memcmp(m->build_id, mb->build_id, mb->build_id_len))) {
			m->builds_differ = 1;
			cs_warn("report: %s: the files come from more than one build of it (their "
				"build ids differ): its call sites are merged by offset and shown as "
				"offsets; report each build's files apart",
				mb->path);
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

/* ---- targets: how each function's calls were caught ---- */

/* Counters of names: the functions (cs_target_info) of one name in one
 * module (keyed "name\1module"), which need their address to be told
 * apart (local functions of one name), and the modules that have a
 * function of one name (keyed "name\2"), which need the module (an
 * interposer's malloc and libc's: the table's rows, the CSV's function
 * column and --diff's match could not tell them apart). */
struct cs_name_count {
	unsigned n;
	UT_hash_handle hh;
	char name[]; /* the key */
};

/* Returns the counter of name, made at 0 when new; NULL when out of
 * memory. */
static struct cs_name_count *name_count(struct cs_report *r, const char *name)
{
	struct cs_name_count *c;
	size_t len = strlen(name);

	HASH_FIND(hh, r->names, name, len, c);
	if (c)
		return c;
	c = calloc(1, sizeof(*c) + len + 1);
	if (!c)
		return NULL;
	memcpy(c->name, name, len + 1);
	HASH_ADD_KEYPTR(hh, r->names, c->name, len, c);
	return c;
}

/* Makes the key of t (of file f) in *k but for its module index, and
 * returns the module block the key needs (NULL: module 0). */
static const struct cs_module_block *
target_key(const struct cs_file *f, const struct cs_target_block *t, struct cs_target_key *k)
{
	const struct cs_module_block *m = t->module ? cs_reader_module(f, t->module) : NULL;

	memset(k, 0, sizeof(*k)); /* padding is part of the hash key */
	memcpy(k->name, t->name, sizeof(k->name));
	/* The offset in the module is the same in every process that
	 * loaded it; an address outside its module's range is not
	 * trusted to be one. */
	if (!m || t->addr < m->lo || t->addr >= m->hi || t->addr < m->base)
		return NULL;
	k->offset = t->addr - m->base;
	return m;
}

/* What tells ti apart from other functions of its name, into buf:
 * "@module+0xOFF" (another one in its module), "@module" (others in other
 * modules only: the file name of its module path, or the path where
 * another module of that file name has one too), else "". */
static void where(const struct cs_target_info *ti, char *buf, size_t len, int modules)
{
	const char *base;

	if (!len)
		return;
	buf[0] = '\0';
	if (*ti->same_name > 1) {
		if (len > 1) {
			buf[0] = '@';
			cs_targets_address(ti, buf + 1, len - 1);
		}
	} else if (modules && *ti->name_modules > 1) {
		/* The whole path where two modules of one file name have it
		 * (one library under two directories). */
		base = ti->mod && *ti->base_clash < 2 ? strrchr(ti->mod->path, '/') : NULL;
		snprintf(buf, len, "@%s", base ? base + 1 : ti->mod ? ti->mod->path : "?");
	}
}

char *cs_merge_target_label(const struct cs_report *r, const struct cs_file *f,
			    const struct cs_target_block *t, char *buf, size_t len)
{
	const struct cs_module_block *m;
	struct cs_target_info *ti = NULL;
	struct cs_module_info *mi = NULL;
	struct cs_target_key k;
	size_t n;

	m = target_key(f, t, &k);
	if (m) {
		HASH_FIND_STR(r->module_hash, m->path, mi);
		k.module = mi ? mi->idx : 0;
	}
	if (!m || mi)
		HASH_FIND(hh, r->targets, &k, sizeof(k), ti);
	snprintf(buf, len, "%s", t->name);
	if (ti && (n = strlen(buf)) + 1 < len)
		where(ti, buf + n, len - n, 1);
	return buf;
}

/* Returns the merged target of t (of file f), made when new; NULL when
 * out of memory.  Its how, GOT slots and address are merged in. */
static struct cs_target_info *intern_target(struct cs_report *r, const struct cs_file *f,
					    const struct cs_target_block *t)
{
	const struct cs_module_block *m;
	struct cs_target_key k;
	struct cs_target_info *ti;
	struct cs_name_count *c, *m2, *b3;

	m = target_key(f, t, &k);
	if (m) {
		k.module = intern_module(r, m);
		if (k.module == 0)
			return NULL;
	}
	HASH_FIND(hh, r->targets, &k, sizeof(k), ti);
	if (!ti) {
		char key[CS_TARGET_NAME_MAX + 4096 + 16];
		const char *path = k.module ? r->modules[k.module - 1]->path : "",
			   *base = strrchr(path, '/');

		snprintf(key, sizeof(key), "%s%c%u", k.name, 1, k.module);
		c = name_count(r, key);
		snprintf(key, sizeof(key), "%s%c", k.name, 2);
		m2 = name_count(r, key);
		snprintf(key, sizeof(key), "%s%c%s", k.name, 3, base ? base + 1 : path);
		b3 = name_count(r, key);
		ti = calloc(1, sizeof(*ti));
		if (!c || !m2 || !b3 || !ti) {
			free(ti);
			return NULL;
		}
		if (!c->n) {
			/* The first of this name in this module. */
			m2->n++;
			b3->n++;
		}
		ti->name_modules = &m2->n;
		ti->base_clash = &b3->n;
		ti->k = k;
		ti->mod = k.module ? r->modules[k.module - 1] : NULL;
		ti->addr = t->addr;
		ti->same_name = &c->n;
		c->n++;
		HASH_ADD(hh, r->targets, k, sizeof(ti->k), ti);
		r->ntargets++;
	}
	ti->how |= t->how;
	if (t->got_slots > ti->got_slots)
		ti->got_slots = t->got_slots;
	if (t->data_words > ti->data_words)
		ti->data_words = t->data_words;
	return ti;
}

/* A reason of a target, in the set that finds the ones it already has:
 * a damaged or crafted file may hold a refusal block per byte of a
 * function, and a scan of the list per block is quadratic (100,000
 * blocks: 8.5 s). */
struct cs_refusal_seen {
	struct cs_refusal_info k; /* why zero-padded: the whole is the key */
	UT_hash_handle hh;
};

/* Adds the reason rb to ti unless it already has it (another process of
 * the same program refuses for the same reason).  Returns 0 or -ENOMEM. */
static int add_refusal(struct cs_target_info *ti, const struct cs_refusal_block *rb)
{
	struct cs_refusal_info *nr;
	struct cs_refusal_seen *seen;
	struct cs_refusal_info k;
	size_t cap;

	memset(&k, 0, sizeof(k));
	strcpy(k.why, rb->why); /* the reader checked that it ends in the block */
	k.offset = rb->offset;
	HASH_FIND(hh, ti->refusals_seen, &k, sizeof(k), seen);
	if (seen)
		return 0;
	if (ti->nrefusals == ti->refusals_cap) {
		cap = ti->refusals_cap ? 2 * ti->refusals_cap : 4;
		nr = realloc(ti->refusals, cap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		ti->refusals = nr;
		ti->refusals_cap = cap;
	}
	seen = malloc(sizeof(*seen));
	if (!seen)
		return -ENOMEM;
	seen->k = k;
	HASH_ADD(hh, ti->refusals_seen, k, sizeof(seen->k), seen);
	ti->refusals[ti->nrefusals++] = k;
	return 0;
}

/* Returns the index of the target with that id in f->targets (it exists:
 * the reader dropped the blocks that name another). */
static size_t target_index(const struct cs_file *f, uint32_t id)
{
	size_t lo = 0, hi = f->ntargets, mid;

	while (lo + 1 < hi) {
		mid = lo + (hi - lo) / 2;
		if (f->targets[mid]->id <= id)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Merges the targets and refusals of f into r, and sets ti[i] to the
 * merged target of f->targets[i] (NULL for the calibration target).
 * Returns 0 or -ENOMEM. */
static int add_targets(struct cs_report *r, const struct cs_file *f, struct cs_target_info **ti)
{
	size_t i;

	for (i = 0; i < f->ntargets; i++) {
		ti[i] = NULL;
		if (f->targets[i]->how & CS_HOOK_CALIBRATION)
			continue;
		ti[i] = intern_target(r, f, f->targets[i]);
		if (!ti[i])
			return -ENOMEM;
	}
	for (i = 0; i < f->nrefusals; i++) {
		struct cs_target_info *t = ti[target_index(f, f->refusals[i]->target)];

		if (t && add_refusal(t, f->refusals[i]))
			return -ENOMEM;
	}
	return 0;
}

static int cmp_targets(const void *a, const void *b);

struct cs_target_info **cs_merge_targets(const struct cs_report *r, size_t *n)
{
	struct cs_target_info **v, *t, *tmp;
	size_t i = 0;

	*n = 0;
	if (r->ntargets == 0)
		return NULL;
	v = malloc(r->ntargets * sizeof(*v));
	if (!v)
		return NULL;
	HASH_ITER(hh, r->targets, t, tmp)
	v[i++] = t;
	qsort(v, i, sizeof(*v), cmp_targets);
	*n = i;
	return v;
}

/* FNV-1a of the parts of k that are in use: uthash's own hash of the
 * whole 150-byte key (mostly the zeros after the name) was a tenth of
 * merging 100,000 call sites. */
static unsigned row_hash(const struct cs_row_key *k)
{
	const unsigned char *p = (const unsigned char *)k->name;
	uint64_t h = 0xcbf29ce484222325ull,
		 w[5] = {k->offset, k->key, (uint64_t)k->module << 32 | k->argn, k->tmodule,
			 k->toff};
	size_t i;

	for (i = 0; i < sizeof(k->name) && p[i]; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	for (i = 0; i < 5; i++)
		h = (h ^ w[i]) * 0x100000001b3ull;
	return (unsigned)(h ^ (h >> 32));
}

static struct cs_row *find_row(struct cs_report *r, const struct cs_row_key *k)
{
	unsigned hv = row_hash(k);
	struct cs_row *row;

	HASH_FIND_BYHASHVALUE(hh, r->rows, k, sizeof(*k), hv, row);
	if (row)
		return row;
	row = calloc(1, sizeof(*row));
	if (!row)
		return NULL;
	row->k = *k;
	HASH_ADD_KEYPTR_BYHASHVALUE(hh, r->rows, &row->k, sizeof(row->k), hv, row);
	r->nrows++;
	return row;
}

#define CHUNK_AGGS 4096

struct cs_agg_chunk {
	struct cs_agg_chunk *next;
	size_t used;
	struct cs_agg a[CHUNK_AGGS];
};

/* A new empty agg of r's chunks (freed with r: cs_stats_fini only), or
 * NULL when out of memory. */
static struct cs_agg *chunk_agg(struct cs_report *r)
{
	struct cs_agg_chunk *c = r->chunks;
	struct cs_agg *a;

	if (!c || c->used == CHUNK_AGGS) {
		c = malloc(sizeof(*c));
		if (!c)
			return NULL;
		c->next = r->chunks;
		c->used = 0;
		r->chunks = c;
	}
	a = &c->a[c->used++];
	cs_stats_init(a);
	return a;
}

static struct cs_agg *row_agg(struct cs_report *r, struct cs_row *row, size_t ev)
{
	struct cs_agg **na;
	size_t n;

	if (ev >= row->naggs) {
		/* All the events at once: the array is not grown 4 times. */
		n = ev + 1 > r->nevents ? ev + 1 : r->nevents;
		na = realloc(row->aggs, n * sizeof(*na));
		if (!na)
			return NULL;
		memset(na + row->naggs, 0, (n - row->naggs) * sizeof(*na));
		row->aggs = na;
		row->naggs = n;
	}
	if (!row->aggs[ev])
		row->aggs[ev] = chunk_agg(r);
	return row->aggs[ev];
}

/* The cold agg of event ev of row, made when missing; NULL when out of
 * memory. */
static struct cs_agg *cold_agg(struct cs_row *row, size_t ev)
{
	struct cs_agg **na;

	if (ev >= row->ncold) {
		na = realloc(row->cold, (ev + 1) * sizeof(*na));
		if (!na)
			return NULL;
		memset(na + row->ncold, 0, (ev + 1 - row->ncold) * sizeof(*na));
		row->cold = na;
		row->ncold = ev + 1;
	}
	if (!row->cold[ev])
		row->cold[ev] = cs_stats_new();
	return row->cold[ev];
}

/* Adds the first call of stat st (of a site, with overhead over) to the
 * cold agg of event ev of row.  A first value whose bucket holds no call
 * (a live file caught half-way) is left out: the warm values are the
 * others, and subtracting it would make them wrong.  Returns 0 or
 * -ENOMEM. */
static int add_cold(struct cs_row *row, size_t ev, const struct cs_stat *st, uint64_t over)
{
	struct cs_agg *c;

	if (!st->hist[cs_hist_index(st->first)] || st->first < st->min || st->first > st->max)
		return 0;
	c = cold_agg(row, ev);
	if (!c || cs_stats_add_value(c, st->first))
		return -ENOMEM;
	c->shift += over;
	return 0;
}

/* A glob with an @ (puts@libc.so.6, as labels name a function of a name
 * other modules have too) matches name@FILE or name@PATH of the
 * function's module, whatever the label of this report. */
static int fn_at_module(const char *glob, const char *name, const struct cs_target_info *ti)
{
	char buf[CS_TARGET_NAME_MAX + 4096 + 2];
	const char *path = ti->mod ? ti->mod->path : NULL, *demangled = NULL;
	char *d = NULL;
	int hit = 0, k;

	if (!path || !strchr(glob, '@'))
		return 0;
	for (k = 0; k < 2 && !hit; k++) {
		const char *n = k ? demangled : name;

		if (k && !(n = d = cs_demangle(name, CS_DEMANGLE_CUT)))
			break;
		snprintf(buf, sizeof(buf), "%s@%s", n, cs_util_basename(path));
		hit = fnmatch(glob, buf, 0) == 0;
		snprintf(buf, sizeof(buf), "%s@%s", n, path);
		hit |= fnmatch(glob, buf, 0) == 0;
	}
	free(d);
	return hit;
}

/* 1 when site s (of target t, merged into ti) is selected by --function
 * (the name as the file has it or demangled) and --module.  fnmatch per
 * site: a few hundred ns, only when filters were given. */
static int selected(const struct cs_report *r, const struct cs_file *f,
		    const struct cs_site_block *s, const struct cs_target_block *t,
		    struct cs_target_info *ti)
{
	const struct cs_module_block *m;
	const char *base;
	int hit = 0;
	size_t i;

	/* Modules first, and every glob: the ones no caller matches, in any
	 * target's sites, are said by cs_options_after. */
	if (r->nmod_globs) {
		m = s->module ? cs_reader_module(f, s->module) : NULL;
		if (!m)
			return 0;
		base = cs_util_basename(m->path);
		for (i = 0; i < r->nmod_globs; i++) {
			if (fnmatch(r->mod_globs[i], m->path, 0) == 0 ||
			    fnmatch(r->mod_globs[i], base, 0) == 0) {
				if (r->mod_seen)
					r->mod_seen[i] = 1;
				hit = 1;
			}
		}
		if (!hit)
			return 0;
	}
	if (r->nfn_globs == 0)
		return 1;
	/* Once per function: the demangled name costs a microsecond. */
	if (!ti->fn_match) {
		ti->fn_match = 1;
		for (i = 0; i < r->nfn_globs && ti->fn_match == 1; i++)
			if (cs_merge_fn_glob(r->fn_globs[i], ti))
				ti->fn_match = 2;
	}
	return ti->fn_match == 2;
}

int cs_merge_fn_glob(const char *glob, const struct cs_target_info *ti)
{
	return cs_demangle_fnmatch(glob, ti->k.name, CS_DEMANGLE_CUT) == 0 ||
	       fn_at_module(glob, ti->k.name, ti);
}

/* Adds the notes of f to r: each text once per file. */
static int add_notes(struct cs_report *r, const struct cs_file *f)
{
	struct cs_note_info *ni;
	size_t i, j;

	for (i = 0; i < f->nnotes; i++) {
		const char *text = f->notes[i]->text;

		for (j = 0; j < i && strcmp(f->notes[j]->text, text); j++)
			;
		if (j < i)
			continue; /* said twice in this file (a forked child's) */
		HASH_FIND_STR(r->notes, text, ni);
		if (!ni) {
			ni = calloc(1, sizeof(*ni));
			if (!ni)
				return -ENOMEM;
			snprintf(ni->text, sizeof(ni->text), "%s", text);
			ni->order = r->nnotes++;
			HASH_ADD_STR(r->notes, text, ni);
		}
		ni->nfiles++;
	}
	return 0;
}

static int cmp_note(const void *a, const void *b)
{
	const struct cs_note_info *x = *(const struct cs_note_info *const *)a;
	const struct cs_note_info *y = *(const struct cs_note_info *const *)b;

	return x->order < y->order ? -1 : x->order > y->order;
}

struct cs_note_info **cs_merge_notes(const struct cs_report *r, size_t *n)
{
	struct cs_note_info **v, *ni;
	size_t k = 0;

	*n = 0;
	if (!r->nnotes || !(v = malloc(r->nnotes * sizeof(*v))))
		return NULL;
	for (ni = r->notes; ni; ni = ni->hh.next)
		v[k++] = ni;
	qsort(v, k, sizeof(*v), cmp_note);
	*n = k;
	return v;
}

static int add_file_info(struct cs_report *r, const struct cs_file *f)
{
	struct cs_file_info *fi, *nf;
	size_t i;

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
	fi->targets_left = (f->hdr->lost_why & CS_LOST_TARGETS) != 0;
	fi->lost_why = !f->hdr->lost_calls		     ? 0
		       : f->hdr->lost_why & CS_LOST_ALL ? f->hdr->lost_why & CS_LOST_ALL
							: CS_LOST_UNSAID;
	fi->tsc_hz = f->hdr->tsc_hz;
	fi->session = f->hdr->session;
	/* Thread blocks of earlier writers are shorter: no such field. */
	for (i = 0; i < f->nthreads; i++)
		if (f->threads[i]->hdr.size >= sizeof(struct cs_thread_block))
			fi->setup_ticks += f->threads[i]->setup_ticks;
	r->nfiles++;
	if (add_notes(r, f))
		return -ENOMEM;
	r->lost_calls += f->hdr->lost_calls;
	r->lost_why |= fi->lost_why;
	r->setup_ticks += fi->setup_ticks;
	return 0;
}

static int stat_empty(const struct cs_stat *s)
{
	unsigned b;

	/* Most often min's bucket says it at once (and the scan would read
	 * up to 9 KB for nothing). */
	if (s->min <= s->max && s->hist[cs_hist_index(s->min)])
		return 0;
	for (b = 0; b < CS_HIST_BUCKETS; b++)
		if (s->hist[b])
			return 0;
	return 1;
}

/* The shim's calibration target: the wrapper around an empty function.
 * Not a row: its values are the cost of the measurement itself. */
/* Adds calibration site s of f to the per-event aggregates *calib (of
 * *n, grown to the report's events). */
static int add_calibration(struct cs_report *r, const struct cs_file *f,
			   const struct cs_site_block *s, const size_t *evmap,
			   struct cs_agg ***calib, size_t *n)
{
	struct cs_agg **nc;
	unsigned e;
	size_t g;

	if (*n < r->nevents) {
		nc = realloc(*calib, r->nevents * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		memset(nc + *n, 0, (r->nevents - *n) * sizeof(*nc));
		*calib = nc;
		*n = r->nevents;
	}
	for (e = 0; e < f->hdr->nevents; e++) {
		if (!cs_reader_event_usable(f, s, e) || stat_empty(&s->stat[e]))
			continue;
		g = evmap[e];
		if (!(*calib)[g]) {
			(*calib)[g] = cs_stats_new();
			if (!(*calib)[g])
				return -ENOMEM;
		}
		cs_stats_add((*calib)[g], &s->stat[e]);
		if ((*calib)[g]->nomem)
			return -ENOMEM;
	}
	return 0;
}

/* What the measurement itself costs, per event, in one file (the
 * calibration of its process, shim/calibrate.c): what -s takes off. */
struct overhead {
	uint64_t call[CS_MAX_EVENTS]; /* every call: its own bracket */
	/* Each nested call, to the call around it: in the inclusive view
	 * [0] its bracket and the wrapper's work outside it; in the
	 * exclusive view [1] that work only (its bracket went out with its
	 * value). */
	uint64_t nested[2][CS_MAX_EVENTS];
};

/* The median per event of the calibration sites of f whose target's how
 * has the bits want under mask, into out (0 for an event without them),
 * and whether there were such sites for the event, into found.  Returns 0
 * or -ENOMEM. */
static int calib_median(const struct cs_file *f, struct cs_agg *a, uint32_t mask, uint32_t want,
			uint64_t *out, unsigned char *found)
{
	unsigned e;
	size_t i;

	for (e = 0; e < f->hdr->nevents; e++) {
		cs_stats_fini(a);
		found[e] = 0;
		for (i = 0; i < f->nsites; i++) {
			const struct cs_site_block *s = f->sites[i];

			if ((cs_reader_target(f, s->target)->how & mask) == want &&
			    cs_reader_event_usable(f, s, e)) {
				cs_stats_add(a, &s->stat[e]);
				found[e] = 1;
			}
		}
		out[e] = cs_stats_percentile(a, 0.5);
		if (a->nomem)
			return -ENOMEM;
	}
	return 0;
}

/* Adds set to the row's distinct event sets.  Returns 0 or -ENOMEM. */
static int add_evset(struct cs_row *row, uint64_t set)
{
	uint64_t *n;
	size_t i;

	if (!set)
		return 0;
	for (i = 0; i < row->nevsets; i++)
		if (row->evsets[i] == set)
			return 0;
	n = realloc(row->evsets, (row->nevsets + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	n[row->nevsets++] = set;
	row->evsets = n;
	return 0;
}

/* The overheads of f: every call's, the calibration median; a nested
 * call's, the nested calibration's median less that (files of writers
 * before it: one bracket, as they were taken).  Returns 0 or -ENOMEM. */
static int file_overhead(const struct cs_file *f, struct overhead *ov)
{
	const uint32_t both = CS_HOOK_CALIBRATION | CS_HOOK_CALIBRATION_NESTED;
	struct cs_agg *a = cs_stats_new();
	uint64_t whole[CS_MAX_EVENTS];
	unsigned char found[CS_MAX_EVENTS], nested[CS_MAX_EVENTS];
	unsigned e;
	int ret;

	if (!a)
		return -ENOMEM;
	ret = calib_median(f, a, both, CS_HOOK_CALIBRATION, ov->call, found);
	if (!ret)
		ret = calib_median(f, a, both, both, whole, nested);
	cs_stats_free(a);
	if (ret)
		return ret;
	/* Per event: one whose nested calibration is not usable (its calls
	 * dropped) keeps one bracket per nested call, not none. */
	for (e = 0; e < f->hdr->nevents; e++) {
		uint64_t in = whole[e] > ov->call[e] ? whole[e] - ov->call[e] : 0;
		int have = nested[e] && found[e];

		ov->nested[0][e] = have ? in : ov->call[e];
		ov->nested[1][e] = have ? (in > ov->call[e] ? in - ov->call[e] : 0) : ov->call[e];
	}
	return 0;
}

static int add_other(const struct cs_report *r, struct cs_row *row, const struct cs_file *f,
		     const struct cs_site_block *s, const struct cs_nested_block *nb,
		     const size_t *evmap, const struct overhead *ov);

static int add_sites(struct cs_report *r, const struct cs_file *f, struct cs_target_info **ti,
		     const size_t *evmap, const struct overhead *ov);

int cs_merge_add(struct cs_report *r, const struct cs_file *f)
{
	const struct cs_file_header *h = f->hdr;
	struct cs_target_info **ti;
	struct overhead ov;
	size_t evmap[CS_MAX_EVENTS];
	unsigned e;
	long g;
	int ret;

	if (add_file_info(r, f))
		return -ENOMEM;
	for (e = 0; e < h->nevents; e++) {
		g = map_event(r, h, e);
		if (g < 0)
			return -ENOMEM;
		evmap[e] = (size_t)g;
	}
	memset(&ov, 0, sizeof(ov));
	if (r->subtract_overhead && file_overhead(f, &ov))
		return -ENOMEM;
	ti = calloc(f->ntargets + 1, sizeof(*ti));
	if (!ti || add_targets(r, f, ti)) {
		free(ti);
		return -ENOMEM;
	}
	ret = r->targets_only ? 0 : add_sites(r, f, ti, evmap, &ov);
	free(ti);
	return ret;
}

/* Adds the sites of f to r's rows; ti as add_targets made it, evmap the
 * report's index of each event of f, ov its overheads.  Returns 0 or
 * -ENOMEM. */
static int add_sites(struct cs_report *r, const struct cs_file *f, struct cs_target_info **ti,
		     const size_t *evmap, const struct overhead *ov)
{
	static struct cs_stat xstat; /* 9 KiB: not on the stack */
	const struct cs_file_header *h = f->hdr;
	struct cs_target_info *target;
	struct cs_row_key k;
	struct cs_row *row;
	struct cs_agg *agg;
	uint64_t n, evset;
	size_t i;
	unsigned e;

	for (i = 0; i < f->nsites; i++) {
		const struct cs_site_block *s = f->sites[i];
		const struct cs_target_block *t = cs_reader_target(f, s->target);
		const struct cs_module_block *m;
		const struct cs_nested_block *nb = cs_reader_nested(f, s);
		const struct cs_stat *st;

		/* Sites are 9 KB per event apart: the CPU cannot guess where
		 * the next ones' sums and used buckets are. */
		if (i + 2 < f->nsites)
			for (e = 0; e < h->nevents; e++)
				__builtin_prefetch(&f->sites[i + 2]->stat[e]);
		if (i + 1 < f->nsites)
			for (e = 0; e < h->nevents; e++) {
				st = &f->sites[i + 1]->stat[e];
				__builtin_prefetch(&st->hist[cs_hist_index(st->min)]);
			}

		if (t->how & CS_HOOK_CALIBRATION) {
			/* The overhead line is every call's: the nested
			 * calibration only says what nesting adds. */
			if ((t->how & CS_HOOK_CALIBRATION_NESTED)
				    ? add_calibration(r, f, s, evmap, &r->calib_nested,
						      &r->ncalib_nested)
				    : add_calibration(r, f, s, evmap, &r->calib, &r->ncalib))
				return -ENOMEM;
			continue;
		}
		target = ti[target_index(f, s->target)];
		target->calls += s->calls;
		if ((r->nfn_globs || r->nmod_globs) && !selected(r, f, s, t, target))
			continue;
		memset(&k, 0, sizeof(k)); /* padding is part of the hash key */
		memcpy(k.name, t->name, sizeof(k.name));
		k.tmodule = target->k.module;
		k.toff = target->k.offset;
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
		row->target = target;
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
		/* Before the row's own values grow: the other view starts
		 * as a copy of them. */
		if ((nb || row->other) && add_other(r, row, f, s, nb, evmap, ov))
			return -ENOMEM;
		evset = 0;
		for (e = 0; e < h->nevents; e++) {
			if (!cs_reader_event_usable(f, s, e) || stat_empty(&s->stat[e]))
				continue;
			if (evmap[e] < 64)
				evset |= 1ull << evmap[e];
			agg = row_agg(r, row, evmap[e]);
			if (!agg)
				return -ENOMEM;
			st = &s->stat[e];
			if (r->self && nb)
				st = cs_merge_split(st, &nb->stat[e], &nb->stat[h->nevents + e],
						    cs_merge_at_first(f, nb), &xstat);
			n = cs_stats_add_calls(agg, st, s->calls);
			if (agg->nomem)
				return -ENOMEM;
			if (agg->overflow)
				return -EOVERFLOW;
			agg->shift += (cs_u128)n * ov->call[e];
			if (r->cold && add_cold(row, evmap[e], st, ov->call[e]))
				return -ENOMEM;
			/* What the nested calls' wrappers cost this call. */
			if (nb)
				agg->shift += (cs_u128)nb->children * ov->nested[r->self][e];
		}
		if (add_evset(row, evset))
			return -ENOMEM;
	}
	return 0;
}

int cs_merge_keep(struct cs_report *r, struct cs_file *f)
{
	struct cs_kept_file *nk;
	unsigned e;
	long g;

	nk = realloc(r->kept, (r->nkept + 1) * sizeof(*nk));
	if (!nk)
		return -ENOMEM;
	r->kept = nk;
	for (e = 0; e < f->hdr->nevents; e++) {
		g = map_event(r, f->hdr, e);
		if (g < 0)
			return -ENOMEM;
		nk[r->nkept].evmap[e] = (size_t)g;
	}
	nk[r->nkept++].f = f;
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
	if (x->k.tmodule != y->k.tmodule) {
		c = strcmp(module_path(sort_report, x->k.tmodule),
			   module_path(sort_report, y->k.tmodule));
		if (c)
			return c;
	}
	if (x->k.toff != y->k.toff)
		return x->k.toff < y->k.toff ? -1 : 1;
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

/* Targets by name, module path, offset (one module per report index:
 * the paths say it all). */
static int cmp_targets(const void *a, const void *b)
{
	const struct cs_target_info *x = *(const struct cs_target_info *const *)a;
	const struct cs_target_info *y = *(const struct cs_target_info *const *)b;
	int c;

	c = strcmp(x->k.name, y->k.name);
	if (c)
		return c;
	c = strcmp(x->mod ? x->mod->path : "", y->mod ? y->mod->path : "");
	if (c)
		return c;
	if (x->k.offset != y->k.offset)
		return x->k.offset < y->k.offset ? -1 : 1;
	return 0;
}

int cs_merge_compare(const struct cs_report *r, const struct cs_row *x, const struct cs_row *y)
{
	const struct cs_report *saved = sort_report;
	int c;

	sort_report = r;
	c = cmp_rows(&x, &y);
	sort_report = saved;
	return c;
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

int cs_merge_nested_overhead(const struct cs_report *r, size_t ev, uint64_t *out)
{
	const struct cs_agg *c = cs_merge_calibration(r, ev);
	uint64_t whole, one;

	if (!c || ev >= r->ncalib_nested || !r->calib_nested[ev] || r->calib_nested[ev]->n == 0)
		return 0;
	whole = cs_stats_percentile(r->calib_nested[ev], 0.5);
	one = cs_stats_percentile(c, 0.5);
	*out = whole > one ? whole - one : 0;
	return 1;
}

const struct cs_agg *cs_merge_cold(const struct cs_row *row, size_t ev)
{
	if (ev >= row->ncold || !row->cold[ev] || row->cold[ev]->n == 0)
		return NULL;
	return row->cold[ev];
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

static char *function_label(const struct cs_row *row, char *buf, size_t len, int modules)
{
	const struct cs_target_info *t = row->target;
	char at[CS_TARGET_NAME_MAX + 64];
	size_t n;

	if (t && (*t->same_name > 1 || (modules && *t->name_modules > 1))) {
		/* Two functions share the name (two static ones in two
		 * files, an interposer's and libc's): where each one is
		 * tells them apart. */
		snprintf(at, sizeof(at), "%s", row->k.name);
		n = strlen(at);
		where(t, at + n, sizeof(at) - n, modules);
		if (row->k.key == CS_KEY_NONE)
			snprintf(buf, len, "%s", at);
		else
			snprintf(buf, len, "%s[arg%u:%llu]", at, row->k.argn,
				 (unsigned long long)row->k.key);
		return buf;
	}
	if (row->k.key == CS_KEY_NONE) {
		/* Not snprintf: this runs for every row of every report. */
		n = strnlen(row->k.name, sizeof(row->k.name));
		if (n >= len)
			n = len ? len - 1 : 0;
		if (len) {
			memcpy(buf, row->k.name, n);
			buf[n] = '\0';
		}
	} else
		snprintf(buf, len, "%s[arg%u:%llu]", row->k.name, row->k.argn,
			 (unsigned long long)row->k.key);
	return buf;
}

char *cs_merge_function(const struct cs_row *row, char *buf, size_t len)
{
	return function_label(row, buf, len, 1);
}

char *cs_merge_function_in_module(const struct cs_row *row, char *buf, size_t len)
{
	return function_label(row, buf, len, 0);
}

int cs_merge_mixed_events(const struct cs_row *row, uint64_t mask)
{
	size_t i;

	for (i = 0; i < row->nevsets; i++)
		if ((row->evsets[i] & mask) && (row->evsets[i] & mask) != mask)
			return 1;
	return 0;
}

void cs_merge_free(struct cs_report *r)
{
	struct cs_row *row, *tmp;
	struct cs_module_info *m, *mt;
	struct cs_target_info *t, *tt;
	struct cs_refusal_seen *rs, *rst;
	struct cs_name_count *nc, *nct;
	struct cs_note_info *ni, *nit;
	size_t i;

	if (!r)
		return;
	/* The table goes at once: deleting 100,000 rows one by one costs. */
	row = r->rows;
	HASH_CLEAR(hh, r->rows);
	for (; row; row = tmp) {
		tmp = row->hh.next;
		for (i = 0; i < row->naggs; i++)
			cs_stats_fini(row->aggs[i]); /* in r->chunks */
		free(row->aggs);
		for (i = 0; i < row->nother; i++)
			cs_stats_free(row->other[i]);
		free(row->other);
		for (i = 0; i < row->ncold; i++)
			cs_stats_free(row->cold[i]);
		free(row->cold);
		free(row->evsets);
		free(row);
	}
	HASH_ITER(hh, r->targets, t, tt)
	{
		HASH_DEL(r->targets, t);
		HASH_ITER(hh, t->refusals_seen, rs, rst)
		{
			HASH_DEL(t->refusals_seen, rs);
			free(rs);
		}
		free(t->refusals);
		free(t);
	}
	HASH_ITER(hh, r->names, nc, nct)
	{
		HASH_DEL(r->names, nc);
		free(nc);
	}
	HASH_ITER(hh, r->notes, ni, nit)
	{
		HASH_DEL(r->notes, ni);
		free(ni);
	}
	HASH_ITER(hh, r->module_hash, m, mt)
	{
		HASH_DEL(r->module_hash, m);
		free(m->path);
		free(m);
	}
	free(r->modules);
	free(r->mod_seen);
	for (i = 0; i < r->ncalib; i++)
		cs_stats_free(r->calib[i]);
	free(r->calib);
	for (i = 0; i < r->ncalib_nested; i++)
		cs_stats_free(r->calib_nested[i]);
	free(r->calib_nested);
	for (i = 0; i < r->nfiles; i++)
		free(r->files[i].path);
	free(r->files);
	free(r->events);
	for (i = 0; i < r->nkept; i++)
		cs_reader_free(r->kept[i].f);
	free(r->kept);
	while (r->chunks) {
		struct cs_agg_chunk *c = r->chunks;

		r->chunks = c->next;
		free(c);
	}
	free(r);
}

/* ---- nested targets: inclusive and exclusive (self) values ---- */

/*
 * A site's stat holds the inclusive value of every call.  Its nested
 * block holds, for the calls during which other wrapped calls returned,
 * their inclusive values (stat[0, n)) and their exclusive ones
 * (stat[n, 2n)).  The other calls had nothing nested: their exclusive
 * value is their inclusive one.  So the exclusive distribution is
 *
 *	site - nested inclusive + nested exclusive
 *
 * bucket by bucket, and likewise for sums and sums of squares (unsigned
 * wrap-around cancels: the result is a true sum, so it fits).
 *
 * min and max do not subtract.  Of the calls without nesting (site minus
 * nested inclusive, D below) the extremes are known exactly when the
 * site's extreme cannot be a nested call: the nested calls' own min is
 * above it, or its bucket holds no nested call.  Otherwise the bounds of
 * D's lowest and highest non-empty buckets are used, clamped to the
 * site's exact range.  The nested calls' exclusive min and max are exact.
 */

static int hist_empty(const uint64_t *h)
{
	unsigned b;

	for (b = 0; b < CS_HIST_BUCKETS; b++)
		if (h[b])
			return 0;
	return 1;
}

/* min and max of the site's calls that had nothing nested, whose
 * histogram is d (not empty). */
static void plain_range(const struct cs_stat *site, const struct cs_stat *incl, int incl_empty,
			const uint64_t *d, uint64_t *min, uint64_t *max)
{
	unsigned lo = 0, hi = CS_HIST_BUCKETS - 1;

	while (!d[lo])
		lo++;
	while (!d[hi])
		hi--;
	if (incl_empty || incl->min > site->min || !incl->hist[cs_hist_index(site->min)])
		*min = site->min;
	else
		*min = cs_hist_lower(lo) > site->min ? cs_hist_lower(lo) : site->min;
	if (incl_empty || incl->max < site->max || !incl->hist[cs_hist_index(site->max)])
		*max = site->max;
	else if (hi == CS_HIST_BUCKETS - 1)
		*max = site->max; /* open-ended: nothing tighter is known */
	else
		*max = cs_hist_lower(hi) + cs_hist_width(hi) - 1 < site->max
			       ? cs_hist_lower(hi) + cs_hist_width(hi) - 1
			       : site->max;
}

int cs_merge_at_first(const struct cs_file *f, const struct cs_nested_block *nb)
{
	if (!(f->hdr->features & CS_FEATURE_NESTED_FIRST))
		return -1;
	return (nb->flags & CS_NESTED_AT_FIRST) != 0;
}

struct cs_stat *cs_merge_split(const struct cs_stat *site, const struct cs_stat *incl,
			       const struct cs_stat *excl, int at_first, struct cs_stat *out)
{
	static uint64_t d[CS_HIST_BUCKETS];
	cs_u128 sq;
	uint64_t min, max;
	unsigned b;
	int incl_empty = hist_empty(incl->hist), excl_empty = hist_empty(excl->hist);
	int d_empty = 1;

	for (b = 0; b < CS_HIST_BUCKETS; b++) {
		d[b] = site->hist[b] - incl->hist[b];
		out->hist[b] = d[b] + excl->hist[b];
		if (d[b])
			d_empty = 0;
	}
	out->sum = site->sum - incl->sum + excl->sum;
	sq = ((cs_u128)site->sumsq_hi << 64 | site->sumsq_lo) -
	     ((cs_u128)incl->sumsq_hi << 64 | incl->sumsq_lo) +
	     ((cs_u128)excl->sumsq_hi << 64 | excl->sumsq_lo);
	out->sumsq_lo = (uint64_t)sq;
	out->sumsq_hi = (uint64_t)(sq >> 64);
	if (d_empty) {
		out->min = excl->min;
		out->max = excl->max;
	} else {
		plain_range(site, incl, incl_empty, d, &min, &max);
		out->min = !excl_empty && excl->min < min ? excl->min : min;
		out->max = !excl_empty && excl->max > max ? excl->max : max;
	}
	/* The nested block is made at the first call with something
	 * nested.  Whether that was the site's first call the writer says;
	 * files of earlier writers are guessed at: when its first inclusive
	 * value is the site's first, that call was the site's first, or a
	 * later one with the same value (a review helper: page faults 7, then
	 * 2 + 5 nested, gave the cold call a self value of 2, not 7). */
	if (at_first < 0)
		at_first = !incl_empty && incl->first == site->first;
	out->first = at_first && !incl_empty ? excl->first : site->first;
	return out;
}

/* Makes row->other a copy of row->aggs.  Returns 0 or -ENOMEM (what was
 * made is freed with the row). */
static int copy_aggs(struct cs_row *row)
{
	size_t i;

	row->other = calloc(row->naggs ? row->naggs : 1, sizeof(*row->other));
	if (!row->other)
		return -ENOMEM;
	row->nother = row->naggs;
	for (i = 0; i < row->naggs; i++) {
		if (!row->aggs[i])
			continue;
		row->other[i] = cs_stats_new();
		if (!row->other[i] || cs_stats_copy(row->other[i], row->aggs[i]))
			return -ENOMEM;
	}
	return 0;
}

static struct cs_agg *other_agg(struct cs_row *row, size_t ev)
{
	struct cs_agg **na;

	if (ev >= row->nother) {
		na = realloc(row->other, (ev + 1) * sizeof(*na));
		if (!na)
			return NULL;
		memset(na + row->nother, 0, (ev + 1 - row->nother) * sizeof(*na));
		row->other = na;
		row->nother = ev + 1;
	}
	if (!row->other[ev]) {
		row->other[ev] = cs_stats_new();
		if (!row->other[ev])
			return NULL;
	}
	return row->other[ev];
}

/* Adds the view of site s (of file f) that row->aggs does not hold to
 * row->other, making row->other first (a copy of row->aggs) when the row
 * had no nested site so far.  nb is the site's nested block or NULL.
 * Returns 0 or -ENOMEM. */
static int add_other(const struct cs_report *r, struct cs_row *row, const struct cs_file *f,
		     const struct cs_site_block *s, const struct cs_nested_block *nb,
		     const size_t *evmap, const struct overhead *ov)
{
	static struct cs_stat x; /* 9 KiB: not on the stack */
	const struct cs_stat *st;
	struct cs_agg *a;
	unsigned e, n = f->hdr->nevents;
	uint64_t cnt;

	if (!row->other && copy_aggs(row))
		return -ENOMEM;
	for (e = 0; e < n; e++) {
		if (!cs_reader_event_usable(f, s, e) || stat_empty(&s->stat[e]))
			continue;
		a = other_agg(row, evmap[e]);
		if (!a)
			return -ENOMEM;
		st = &s->stat[e];
		if (!r->self && nb)
			st = cs_merge_split(st, &nb->stat[e], &nb->stat[n + e],
					    cs_merge_at_first(f, nb), &x);
		cnt = cs_stats_add(a, st);
		if (a->nomem)
			return -ENOMEM;
		if (a->overflow)
			return -EOVERFLOW;
		a->shift += (cs_u128)cnt * ov->call[e];
		if (nb)
			a->shift += (cs_u128)nb->children * ov->nested[!r->self][e];
	}
	return 0;
}

const struct cs_agg *cs_merge_view(const struct cs_report *r, const struct cs_row *row, size_t ev,
				   int exclusive)
{
	if (!exclusive == !r->self || !row->other)
		return cs_merge_agg(row, ev);
	if (ev >= row->nother || !row->other[ev] || row->other[ev]->n == 0)
		return NULL;
	return row->other[ev];
}
