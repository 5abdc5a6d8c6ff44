/* SPDX-License-Identifier: MIT */
/* Loads a report file and validates every byte the report will look at. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include <unistd.h>

#include "report/internal.h"

/*
 * A file whose writer is still running (or died) is read(2) into a
 * private buffer: a private copy cannot change while we look at it.  A
 * complete file is mapped instead: it no longer changes but for counting
 * fields of threads that outlived exit, and reading a 4 GB report by
 * read(2) into fresh memory takes seconds where mapping it from the page
 * cache takes a fraction of one.  The writer never trims a file below
 * header.used, so the pages mapped stay; a file cut by something else
 * while mapped raises SIGBUS, which ends the command with a message.
 * Setting up and tearing down the page tables of a large mapping is
 * most of the cost of reading it (0.3 s for 4 GB here): a helper thread
 * prefaults the second half while the block walk faults in the first,
 * and another unmaps the file while the report is printed.
 *
 * A bad header makes the file unusable: it is rejected.  Damage past the
 * header (a bad block size, a block too small for its type, a dangling
 * id) is what a crash, a full disk or a partial copy leaves behind, so
 * the reader keeps every block that is whole, drops the rest, and records
 * what it found in cs_file.damage for the command to report (and fail on).
 * After validation every offset and id kept is known to be in bounds, so
 * the rest of report/ needs no checks of its own.
 */

typedef unsigned long long ull;

static int fail(char *err, size_t errlen, const char *name, int ret, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static int fail(char *err, size_t errlen, const char *name, int ret, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || errlen == 0)
		return ret;
	n = snprintf(err, errlen, "%s: ", name);
	if (n < 0 || (size_t)n >= errlen)
		return ret;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return ret;
}

static void damage(struct cs_file *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Records a problem past the header; the first one is kept for the
 * message, the others are counted. */
static void damage(struct cs_file *f, const char *fmt, ...)
{
	va_list ap;

	if (f->ndamage++ == 0) {
		va_start(ap, fmt);
		vsnprintf(f->damage, sizeof(f->damage), fmt, ap);
		va_end(ap);
	}
}

static int nul_within(const char *s, size_t max)
{
	return memchr(s, '\0', max) != NULL;
}

/* Checks the header.  On success *used is header.used unmasked; the
 * caller limits it to the capacity and the file size. */
static int check_header(const struct cs_file_header *h, const char *name, char *err, size_t errlen,
			uint64_t *used)
{
	uint64_t u = h->used & ~CS_USED_SEALED;
	unsigned i;

	if (memcmp(h->magic, CS_MAGIC, sizeof(h->magic)) != 0)
		return fail(err, errlen, name, -EINVAL, "not a cacheshim report (bad magic)");
	if (h->version != CS_FORMAT_VERSION && h->version != 1)
		return fail(err, errlen, name, -EINVAL,
			    "unsupported format version %u (this cacheshim reads versions 1 to %u)",
			    h->version, CS_FORMAT_VERSION);
	if (h->header_size != CS_HEADER_SIZE)
		return fail(err, errlen, name, -EINVAL, "bad header size %u (expected %u)",
			    h->header_size, CS_HEADER_SIZE);
	if (u < CS_HEADER_SIZE)
		return fail(err, errlen, name, -EINVAL,
			    "used size %llu is smaller than the header (%u bytes)", (ull)u,
			    CS_HEADER_SIZE);
	if (h->state != CS_STATE_RUNNING && h->state != CS_STATE_COMPLETE)
		return fail(err, errlen, name, -EINVAL, "unknown state %u", h->state);
	if (h->nevents > CS_MAX_EVENTS)
		return fail(err, errlen, name, -EINVAL, "%u events in the header (at most %u)",
			    h->nevents, CS_MAX_EVENTS);
	if (!nul_within(h->program, sizeof(h->program)))
		return fail(err, errlen, name, -EINVAL, "program name is not NUL-terminated");
	for (i = 0; i < h->nevents; i++) {
		if (!nul_within(h->events[i].name, sizeof(h->events[i].name)))
			return fail(err, errlen, name, -EINVAL,
				    "event %u: name is not NUL-terminated", i);
		if (h->events[i].name[0] == '\0')
			return fail(err, errlen, name, -EINVAL, "event %u: empty name", i);
	}
	*used = u;
	return 0;
}

/* A growable array of block pointers. */
struct vec {
	const void **v;
	size_t n, cap;
};

static int push(struct vec *a, const void *p)
{
	const void **nv;
	size_t cap;

	if (a->n == a->cap) {
		cap = a->cap ? a->cap * 2 : 16;
		nv = realloc(a->v, cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		a->v = nv;
		a->cap = cap;
	}
	a->v[a->n++] = p;
	return 0;
}

/* Sorting by id, then by position in the file: of two blocks with the
 * same id the first written is kept. */
static int cmp_module(const void *a, const void *b)
{
	const struct cs_module_block *x = *(const struct cs_module_block *const *)a;
	const struct cs_module_block *y = *(const struct cs_module_block *const *)b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int cmp_target(const void *a, const void *b)
{
	const struct cs_target_block *x = *(const struct cs_target_block *const *)a;
	const struct cs_target_block *y = *(const struct cs_target_block *const *)b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int cmp_refusal(const void *a, const void *b)
{
	const struct cs_refusal_block *x = *(const struct cs_refusal_block *const *)a;
	const struct cs_refusal_block *y = *(const struct cs_refusal_block *const *)b;

	if (x->target != y->target)
		return x->target < y->target ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int cmp_thread(const void *a, const void *b)
{
	const struct cs_thread_block *x = *(const struct cs_thread_block *const *)a;
	const struct cs_thread_block *y = *(const struct cs_thread_block *const *)b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

const struct cs_module_block *cs_reader_module(const struct cs_file *f, uint32_t id)
{
	size_t lo = 0, hi = f->nmodules, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (f->modules[mid]->id == id)
			return f->modules[mid];
		if (f->modules[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct cs_target_block *cs_reader_target(const struct cs_file *f, uint32_t id)
{
	size_t lo = 0, hi = f->ntargets, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (f->targets[mid]->id == id)
			return f->targets[mid];
		if (f->targets[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

int cs_reader_event_usable(const struct cs_file *f, const struct cs_site_block *s, unsigned ev)
{
	return cs_reader_tid_usable(f, s->tid, ev);
}

int cs_reader_tid_usable(const struct cs_file *f, uint32_t tid, unsigned ev)
{
	size_t lo = 0, hi = f->ntids, mid;

	if (ev >= f->hdr->nevents)
		return 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (f->tids[mid].tid == tid)
			return (f->tids[mid].events_open >> ev) & 1u;
		if (f->tids[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* No thread block (the file was full when the thread started):
	 * trust the file-wide flag. */
	return (f->hdr->events[ev].flags & CS_EVENT_COUNTED) != 0;
}

static int check_nested(struct cs_file *f, uint64_t off, const struct cs_block *b, struct vec *vn)
{
	const struct cs_nested_block *n = (const void *)(f->data + off);
	uint32_t nev = f->hdr->nevents;

	if (b->size < sizeof(*n))
		damage(f, "nested block at offset %llu: too small (%u bytes)", (ull)off, b->size);
	else if (n->nevents != nev)
		damage(f, "nested block at offset %llu: %u events, the header has %u", (ull)off,
		       n->nevents, nev);
	else if (b->size != cs_nested_block_size(nev))
		damage(f, "nested block at offset %llu: %u bytes, %llu expected for %u events",
		       (ull)off, b->size, (ull)cs_nested_block_size(nev), nev);
	else
		return push(vn, n);
	return 0;
}

/* Windows of a series block that can hold calls. */
unsigned cs_reader_windows_used(const struct cs_series_block *sb)
{
	uint64_t w;

	if (sb->shift >= 64)
		return 0;
	w = (sb->calls >> sb->shift) + ((sb->calls & ((1ull << sb->shift) - 1)) != 0);
	return w < CS_SERIES_WINDOWS ? (unsigned)w : CS_SERIES_WINDOWS;
}

const struct cs_window *cs_reader_window(const struct cs_series_block *sb, unsigned i)
{
	return (const void *)((const unsigned char *)(sb + 1) + (size_t)i * sb->window_size);
}

const struct cs_wstat *cs_reader_wstat(const struct cs_series_block *sb, unsigned i, unsigned ev)
{
	return (const struct cs_wstat *)(cs_reader_window(sb, i) + 1) + ev;
}

/* A series block: its sizes, then (complete files only: a live writer
 * may be merging windows) that its windows add up to its calls. */
static int check_series(struct cs_file *f, uint64_t off, const struct cs_block *b, struct vec *vse)
{
	const struct cs_series_block *sb = (const void *)(f->data + off);
	uint32_t nev = f->hdr->nevents;
	uint64_t sum = 0, c, wsize;
	unsigned i, used;

	if (b->size < sizeof(*sb)) {
		damage(f, "series block at offset %llu: too small (%u bytes)", (ull)off, b->size);
		return 0;
	}
	if (sb->nevents != nev) {
		damage(f, "series block at offset %llu: %u events, the header has %u", (ull)off,
		       sb->nevents, nev);
		return 0;
	}
	/* Version 1 windows were not rounded up to 64 bytes. */
	wsize = f->hdr->version == 1 ? cs_window_size_v1(nev) : cs_window_size(nev);
	if (sb->window_size != wsize || b->size != sizeof(*sb) + CS_SERIES_WINDOWS * wsize) {
		damage(f,
		       "series block at offset %llu: %u bytes, windows of %llu bytes (%llu and "
		       "%llu for %u events)",
		       (ull)off, b->size, (ull)sb->window_size,
		       (ull)(sizeof(*sb) + CS_SERIES_WINDOWS * wsize), (ull)wsize, nev);
		return 0;
	}
	if (sb->shift & CS_SERIES_MERGING) {
		/* Not damage: the program ended under a merge. */
		f->nmerging++;
		return 0;
	}
	if (sb->shift >= 64) {
		damage(f, "series block at offset %llu: shift %u (at most 63)", (ull)off,
		       sb->shift);
		return 0;
	}
	if (f->incomplete)
		return push(vse, sb);
	used = cs_reader_windows_used(sb);
	for (i = 0; i < CS_SERIES_WINDOWS; i++) {
		c = cs_reader_window(sb, i)->calls;
		if (c > (1ull << sb->shift) || (i >= used && c)) {
			damage(f,
			       "series block at offset %llu: window %u has %llu calls (%llu "
			       "calls in all, %llu per window)",
			       (ull)off, i, (ull)c, (ull)sb->calls, 1ull << sb->shift);
			return 0;
		}
			sum += c;
	}
	/* Windows holding more than the numbers claimed: the numbers a call
	 * claimed and did not add are checked in windows_fit. */
	if (sum > sb->calls) {
		damage(f, "series block at offset %llu: its windows hold %llu calls, not %llu",
		       (ull)off, (ull)sum, (ull)sb->calls);
		return 0;
	}
	return push(vse, sb);
}

/* A refusal block: exactly its size (the reason is a fixed array, so
 * another size means the block is not what this reader thinks it is),
 * and a reason that ends within it. */
static int check_refusal(struct cs_file *f, uint64_t off, const struct cs_block *b, struct vec *vr)
{
	const struct cs_refusal_block *rb = (const void *)(f->data + off);

	if (b->size != sizeof(*rb))
		damage(f, "refusal block at offset %llu: %u bytes, %zu expected", (ull)off, b->size,
		       sizeof(*rb));
	else if (!nul_within(rb->why, sizeof(rb->why)))
		damage(f, "refusal block at offset %llu: reason is not NUL-terminated", (ull)off);
	else
		return push(vr, rb);
	return 0;
}

static int check_note(struct cs_file *f, uint64_t off, const struct cs_block *b, struct vec *vno)
{
	const struct cs_note_block *nb = (const void *)(f->data + off);

	if (b->size != sizeof(*nb))
		damage(f, "note block at offset %llu: %u bytes, %zu expected", (ull)off, b->size,
		       sizeof(*nb));
	else if (!nul_within(nb->text, sizeof(nb->text)))
		damage(f, "note block at offset %llu: text is not NUL-terminated", (ull)off);
	else
		return push(vno, nb);
	return 0;
}

/* The arrays check_block fills, one per block type kept. */
struct vecs {
	struct vec m, t, s, th, n, se, r, no;
};

/* Version 1 site blocks had calls and entered before dropped and nested;
 * swapped in place into the version 2 order (version 1 files are always
 * read into memory of their own, never mapped). */
static void upgrade_site_v1(unsigned char *p)
{
	unsigned char v1_counts[16];
	const size_t calls = offsetof(struct cs_site_block, dropped),
		     dropped = offsetof(struct cs_site_block, calls);

	memcpy(v1_counts, p + calls, 16);
	memmove(p + calls, p + dropped, 16);
	memcpy(p + dropped, v1_counts, 16);
}

/* Checks one block of a known type whose size is in bounds and appends it
 * to its array; a block that cannot be used is dropped as damage.
 * Returns 0 or -ENOMEM. */
static int check_block(struct cs_file *f, uint64_t off, const struct cs_block *b, struct vecs *vv)
{
	struct vec *vm = &vv->m, *vt = &vv->t, *vs = &vv->s, *vth = &vv->th, *vn = &vv->n,
		   *vse = &vv->se;
	const unsigned char *p = f->data + off;
	const struct cs_module_block *m;
	const struct cs_target_block *t;
	const struct cs_site_block *s;
	uint32_t nev = f->hdr->nevents;

	switch (b->type) {
	case CS_BLOCK_MODULE:
		m = (const void *)p;
		if (b->size < sizeof(*m) + 1)
			damage(f, "module block at offset %llu: too small (%u bytes)", (ull)off,
			       b->size);
		else if (!nul_within(m->path, b->size - sizeof(*m)))
			damage(f, "module block at offset %llu: path is not NUL-terminated",
			       (ull)off);
		else if (m->id == 0)
			damage(f, "module block at offset %llu: id 0", (ull)off);
		else if (m->build_id_len > sizeof(m->build_id))
			damage(f, "module block at offset %llu: build id of %u bytes (at most %zu)",
			       (ull)off, m->build_id_len, sizeof(m->build_id));
		else
			return push(vm, m);
		return 0;
	case CS_BLOCK_TARGET:
		t = (const void *)p;
		if (b->size < sizeof(*t))
			damage(f, "target block at offset %llu: too small (%u bytes)", (ull)off,
			       b->size);
		else if (!nul_within(t->name, sizeof(t->name)))
			damage(f, "target block at offset %llu: name is not NUL-terminated",
			       (ull)off);
		else if (t->id == 0)
			damage(f, "target block at offset %llu: id 0", (ull)off);
		else
			return push(vt, t);
		return 0;
	case CS_BLOCK_SITE:
		if (f->hdr->version == 1 && b->size >= sizeof(*s))
			upgrade_site_v1(f->data + off);
		s = (const void *)p;
		if (b->size < sizeof(*s))
			damage(f, "site block at offset %llu: too small (%u bytes)", (ull)off,
			       b->size);
		else if (s->nevents != nev)
			damage(f, "site block at offset %llu: %u events, the header has %u",
			       (ull)off, s->nevents, nev);
		else if (b->size < cs_site_block_size(nev))
			damage(f, "site block at offset %llu: %u bytes, %llu needed for %u events",
			       (ull)off, b->size, (ull)cs_site_block_size(nev), nev);
		else
			return push(vs, s);
		return 0;
	case CS_BLOCK_THREAD:
		if (b->size < CS_THREAD_BLOCK_MIN_SIZE) {
			damage(f, "thread block at offset %llu: too small (%u bytes)", (ull)off,
			       b->size);
			return 0;
		}
		return push(vth, p);
	case CS_BLOCK_NESTED:
		return check_nested(f, off, b, vn);
	case CS_BLOCK_SERIES:
		return check_series(f, off, b, vse);
	case CS_BLOCK_REFUSAL:
		return check_refusal(f, off, b, &vv->r);
	case CS_BLOCK_NOTE:
		return check_note(f, off, b, &vv->no);
	case CS_BLOCK_PAD:
		return 0;
	default:
		/* 0 = reserved but not published yet; others come from a
		 * newer writer.  Either way the size says where to go on. */
		f->nunknown++;
		return 0;
	}
}

/* Drops the later of blocks with equal ids from the sorted array v. */
static size_t dedup_modules(struct cs_file *f, const struct cs_module_block **v, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (k && v[k - 1]->id == v[i]->id) {
			damage(f, "two modules with id %u: the second is ignored", v[i]->id);
			continue;
		}
		v[k++] = v[i];
	}
	return k;
}

static size_t dedup_targets(struct cs_file *f, const struct cs_target_block **v, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (k && v[k - 1]->id == v[i]->id) {
			damage(f, "two targets with id %u: the second is ignored", v[i]->id);
			continue;
		}
		v[k++] = v[i];
	}
	return k;
}

/* Builds the tid -> events_open map (a tid reused by a later thread ORs
 * in its events). */
static int build_tids(struct cs_file *f)
{
	size_t i, k = 0;

	if (f->nthreads == 0)
		return 0;
	f->tids = malloc(f->nthreads * sizeof(*f->tids));
	if (!f->tids)
		return -ENOMEM;
	qsort(f->threads, f->nthreads, sizeof(*f->threads), cmp_thread);
	for (i = 0; i < f->nthreads; i++) {
		if (k && f->tids[k - 1].tid == f->threads[i]->tid) {
			f->tids[k - 1].events_open |= f->threads[i]->events_open;
			continue;
		}
		f->tids[k].tid = f->threads[i]->tid;
		f->tids[k].events_open = f->threads[i]->events_open;
		k++;
	}
	f->ntids = k;
	return 0;
}

static int cmp_nested(const void *a, const void *b)
{
	const struct cs_nested_block *x = *(const struct cs_nested_block *const *)a;
	const struct cs_nested_block *y = *(const struct cs_nested_block *const *)b;

	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Returns the site block at file offset off among f->sites (kept in file
 * order, so sorted by offset), or NULL. */
static const struct cs_site_block *site_at(const struct cs_file *f, uint64_t off)
{
	size_t lo = 0, hi = f->nsites, mid;
	uint64_t o;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		o = (uint64_t)((const unsigned char *)f->sites[mid] - f->data);
		if (o == off)
			return f->sites[mid];
		if (o < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A statistic's sum of squares as one number. */
static cs_u128 u128_of(const struct cs_stat *st)
{
	return (cs_u128)st->sumsq_hi << 64 | st->sumsq_lo;
}

/* Whether site s has calls that entered and neither returned nor were
 * dropped: one of them may have been cut half-way through its recording
 * (report/statfit.c), the others left by longjmp or a crash. */
/* Calls of site s that entered and did not return (yet): left by a
 * longjmp or an exception, or cut by the end of the program. */
static uint64_t site_in_flight(const struct cs_site_block *s)
{
	return s->entered > s->calls + s->dropped ? s->entered - s->calls - s->dropped : 0;
}

/* Whether the nested calls of n can be among the calls of site s: for
 * every usable event the inclusive histogram fits inside the site's and
 * the exclusive one counts as many calls.  A thread stopped at exit
 * half-way through recording a call (the shim writes the site, then per
 * event the inclusive and the exclusive value, then the call) may have
 * counted one inclusive value more than exclusive ones or calls; a
 * signal handler's siglongjmp out of the recording leaves such a call
 * for good, as many as the site has calls in flight.  Returns 0 or the
 * first event + 1 that fails. */
static unsigned nested_misfit(const struct cs_file *f, const struct cs_site_block *s,
			      const struct cs_nested_block *n)
{
	const struct cs_stat *in, *ex;
	cs_u128 ci, ce;
	uint64_t half = site_in_flight(s);
	unsigned e, b;

	if (half < 1)
		half = 1;
	for (e = 0; e < n->nevents; e++) {
		if (!cs_reader_event_usable(f, s, e))
			continue;
		in = &n->stat[e];
		ex = &n->stat[n->nevents + e];
		ci = ce = 0;
		for (b = 0; b < CS_HIST_BUCKETS; b++) {
			if (in->hist[b] > s->stat[e].hist[b])
				return e + 1;
			ci += in->hist[b];
			ce += ex->hist[b];
		}
		if (ce > ci || ci > ce + half || ci > (cs_u128)n->calls + half)
			return e + 1;
		/* The shim adds a call's value to the site first, then the
		 * inclusive, then the exclusive value (never more than the
		 * inclusive): at any moment, even half-way, the sums nest. */
		if (ex->sum > in->sum || in->sum > s->stat[e].sum || u128_of(ex) > u128_of(in) ||
		    u128_of(in) > u128_of(&s->stat[e]))
			return e + 1;
		if (!f->incomplete && (cs_statfit_stat(in, n->calls, site_in_flight(s)) ||
				       cs_statfit_stat(ex, n->calls, site_in_flight(s))))
			return e + 1;
	}
	return 0;
}

/* Keeps the nested blocks whose site is a valid site block, one per site,
 * and whose values fit inside the site's.  A live writer may be half-way
 * through a call (site updated, nested block not yet, or the other way
 * round): in a running file a misfit drops the block silently. */
static void link_nested(struct cs_file *f)
{
	const struct cs_site_block *s;
	const struct cs_nested_block *n;
	uint64_t noff;
	size_t i, k = 0;
	unsigned e;

	if (f->nnested)
		qsort(f->nested, f->nnested, sizeof(*f->nested), cmp_nested);
	for (i = 0; i < f->nnested; i++) {
		n = f->nested[i];
		noff = (uint64_t)((const unsigned char *)n - f->data);
		s = site_at(f, n->site);
		if (!s) {
			damage(f, "nested block at offset %llu: offset %llu is not a site block",
			       (ull)noff, (ull)n->site);
			continue;
		}
		if (k && f->nested[k - 1]->site == n->site) {
			damage(f,
			       "two nested blocks for the site at offset %llu: the second is "
			       "ignored",
			       (ull)n->site);
			continue;
		}
		if (s->nested && s->nested != noff && !f->incomplete) {
			damage(f,
			       "nested block at offset %llu: its site (offset %llu) names %llu as "
			       "its nested block",
			       (ull)noff, (ull)n->site, (ull)s->nested);
			continue;
		}
		e = f->values_unchecked ? 0 : nested_misfit(f, s, n);
		if (e) {
			if (!f->incomplete)
				damage(f,
				       "nested block at offset %llu: event %u has values that "
				       "are not among its site's (offset %llu)",
				       (ull)noff, e - 1, (ull)n->site);
			continue;
		}
		f->nested[k++] = n;
	}
	f->nnested = k;
	/* A site that names a nested block nobody found. */
	for (i = 0; i < f->nsites && !f->incomplete; i++) {
		s = f->sites[i];
		if (s->nested && !cs_reader_nested(f, s))
			damage(f, "site block at offset %llu: its nested block at %llu is missing",
			       (ull)((const unsigned char *)s - f->data), (ull)s->nested);
	}
}

const struct cs_nested_block *cs_reader_nested(const struct cs_file *f,
					       const struct cs_site_block *s)
{
	uint64_t off = (uint64_t)((const unsigned char *)s - f->data);
	size_t lo = 0, hi = f->nnested, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (f->nested[mid]->site == off)
			return f->nested[mid];
		if (f->nested[mid]->site < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A site's key: none, or the size class (0 or a power of two) of the
 * argument its target is keyed by. */
static int key_fits(const struct cs_file *f, const struct cs_site_block *s)
{
	if (s->key == CS_KEY_NONE)
		return 1;
	return (s->key & (s->key - 1)) == 0 && cs_reader_target(f, s->target)->argn != 0;
}

/* In a complete file, whether each usable event's aggregate of site s
 * can be that of its calls (report/statfit.c); a site that does not is
 * damage. */
static int site_stats_fit(struct cs_file *f, const struct cs_site_block *s, uint64_t soff)
{
	const char *why;
	unsigned e;

	if (f->incomplete || f->values_unchecked)
		return 1;
	for (e = 0; e < f->hdr->nevents; e++) {
		if (!cs_reader_event_usable(f, s, e))
			continue;
		why = cs_statfit_stat(&s->stat[e], s->calls, site_in_flight(s));
		if (why) {
			damage(f, "site block at offset %llu: event %u: %s (%llu calls)",
			       (ull)soff, e, why, (ull)s->calls);
			return 0;
		}
	}
	return 1;
}

/* In a complete file, whether each window's aggregates can be those of
 * its calls, for the events open in its thread; a series block that has
 * one that cannot is damage. */
/* Values counted in window w's histogram of one event. */
static uint64_t whist_count(const struct cs_wstat *w)
{
	uint64_t n = 0;
	unsigned b;

	for (b = 0; b < CS_WHIST_BUCKETS; b++)
		n += w->hist[b];
	return n;
}

static int windows_fit(struct cs_file *f, const struct cs_series_block *sb)
{
	unsigned i, e, used = cs_reader_windows_used(sb);
	uint64_t recorded = 0, missing, may_miss = 0, over, n, c;
	const char *why;
	size_t k;

	if (f->incomplete || f->values_unchecked)
		return 1;
	/* Calls numbered but not counted in their window: one cut by the
	 * end of the program, or calls a signal handler's siglongjmp left
	 * while they were being recorded (the shim keeps their numbers
	 * claimed, shim/thread.c).  Each of those is a call in flight at one
	 * of the thread's sites of the target, which bounds them; any window
	 * may hold one of them half-recorded. */
	for (i = 0; i < used; i++)
		recorded += cs_reader_window(sb, i)->calls;
	missing = sb->calls - recorded; /* check_series: recorded <= calls */
	if (missing > 1) {
		for (k = 0; k < f->nsites; k++)
			if (f->sites[k]->tid == sb->tid && f->sites[k]->target == sb->target)
				may_miss += site_in_flight(f->sites[k]);
		if (missing > may_miss) {
			damage(f,
			       "series block at offset %llu: its windows hold %llu calls, not "
			       "%llu (%llu calls in flight)",
			       (ull)((const unsigned char *)sb - f->data), (ull)recorded,
			       (ull)sb->calls, (ull)may_miss);
			return 0;
		}
	}
	/* Each such call is in one window's histogram at most: the values
	 * its windows count beyond their calls are as many at most (or one,
	 * as for a site). */
	for (e = 0; e < sb->nevents; e++) {
		if (!cs_reader_tid_usable(f, sb->tid, e))
			continue;
		for (i = 0, over = 0; i < used; i++) {
			n = whist_count(cs_reader_wstat(sb, i, e));
			c = cs_reader_window(sb, i)->calls;
			over += n > c ? n - c : 0;
		}
		if (over > (missing > 1 ? missing : 1)) {
			damage(f,
			       "series block at offset %llu: event %u: its windows' histograms "
			       "count %llu values beyond their calls (%llu calls numbered and "
			       "not counted)",
			       (ull)((const unsigned char *)sb - f->data), e, (ull)over,
			       (ull)missing);
			return 0;
		}
	}
	for (i = 0; i < used; i++) {
		for (e = 0; e < sb->nevents; e++) {
			if (!cs_reader_tid_usable(f, sb->tid, e))
				continue;
			why = cs_statfit_wstat(cs_reader_wstat(sb, i, e),
					       cs_reader_window(sb, i)->calls, missing);
			if (why) {
				damage(f, "series block at offset %llu: window %u, event %u: %s",
				       (ull)((const unsigned char *)sb - f->data), i, e, why);
				return 0;
			}
		}
	}
	return 1;
}

/* Walks the blocks of f->data, then resolves ids.  Returns 0 or -ENOMEM;
 * anything else wrong is recorded as damage. */
static int walk(struct cs_file *f)
{
	struct vecs vv = {0};
	uint64_t off = CS_HEADER_SIZE;
	struct cs_block b;
	size_t i, k;
	int ret = 0;

	while (off < f->used) {
		if (f->used - off < sizeof(b)) {
			if (!f->live_short)
				damage(f, "block at offset %llu: truncated block header", (ull)off);
			break;
		}
		memcpy(&b, f->data + off, sizeof(b));
		if (b.size == 0)
			break; /* reservation cut short by a crash: the end */
		if (b.size < sizeof(b) || b.size % 8 != 0) {
			damage(f,
			       "block at offset %llu: bad size %u (must be a multiple of 8, at "
			       "least 8)",
			       (ull)off, b.size);
			break;
		}
		if (b.size > f->used - off) {
			/* A running file's last reservation, growing or
			 * without room (limit_used): the end. */
			if (f->live_short)
				break;
			damage(f,
			       "block at offset %llu: size %u runs past the end of the blocks "
			       "(%llu)",
			       (ull)off, b.size, (ull)f->used);
			break;
		}
		ret = check_block(f, off, &b, &vv);
		if (ret)
			break;
		off += b.size;
	}
	f->end = off;
	f->modules = (const struct cs_module_block **)vv.m.v;
	f->nmodules = vv.m.n;
	f->targets = (const struct cs_target_block **)vv.t.v;
	f->ntargets = vv.t.n;
	f->sites = (const struct cs_site_block **)vv.s.v;
	f->nsites = vv.s.n;
	f->threads = (const struct cs_thread_block **)vv.th.v;
	f->nthreads = vv.th.n;
	f->nested = (const struct cs_nested_block **)vv.n.v;
	f->nnested = vv.n.n;
	f->series = (const struct cs_series_block **)vv.se.v;
	f->nseries = vv.se.n;
	f->refusals = (const struct cs_refusal_block **)vv.r.v;
	f->nrefusals = vv.r.n;
	f->notes = (const struct cs_note_block **)vv.no.v;
	f->nnotes = vv.no.n;
	if (ret)
		return ret;

	if (f->nmodules) {
		qsort(f->modules, f->nmodules, sizeof(*f->modules), cmp_module);
		f->nmodules = dedup_modules(f, f->modules, f->nmodules);
	}
	if (f->ntargets) {
		qsort(f->targets, f->ntargets, sizeof(*f->targets), cmp_target);
		f->ntargets = dedup_targets(f, f->targets, f->ntargets);
	}
	if (build_tids(f))
		return -ENOMEM;
	for (i = 0; i < f->ntargets; i++) {
		const struct cs_target_block *t = f->targets[i];
		char name[4 * CS_TARGET_NAME_MAX];

		/* Only a note: report/ does not use the defining module.  The
		 * name is the program's bytes: its control characters are
		 * escaped before they reach the terminal. */
		if (t->module && !cs_reader_module(f, t->module))
			damage(f, "target %u (%s) refers to module %u, which does not exist", t->id,
			       cs_util_escape_ctl(t->name, name, sizeof(name)), t->module);
	}
	for (i = 0, k = 0; i < f->nsites; i++) {
		const struct cs_site_block *s = f->sites[i];
		uint64_t soff = (uint64_t)((const unsigned char *)s - f->data);

		if (!cs_reader_target(f, s->target)) {
			damage(f,
			       "site block at offset %llu refers to target %u, which does not "
			       "exist",
			       (ull)soff, s->target);
			continue;
		}
		if (s->module && !cs_reader_module(f, s->module)) {
			damage(f,
			       "site block at offset %llu refers to module %u, which does not "
			       "exist",
			       (ull)soff, s->module);
			continue;
		}
		if (!key_fits(f, s)) {
			damage(f,
			       "site block at offset %llu: key %llu is not a size class of "
			       "target %u's argument",
			       (ull)soff, (ull)s->key, s->target);
			continue;
		}
		if (!site_stats_fit(f, s, soff))
			continue;
		f->sites[k++] = s;
	}
	f->nsites = k;
	link_nested(f);
	for (i = 0, k = 0; i < f->nseries; i++) {
		const struct cs_series_block *sb = f->series[i];

		if (!cs_reader_target(f, sb->target)) {
			damage(f,
			       "series block at offset %llu refers to target %u, which does not "
			       "exist",
			       (ull)((const unsigned char *)sb - f->data), sb->target);
			continue;
		}
		if (!windows_fit(f, sb))
			continue;
		f->series[k++] = sb;
	}
	f->nseries = k;
	if (f->nrefusals)
		qsort(f->refusals, f->nrefusals, sizeof(*f->refusals), cmp_refusal);
	for (i = 0, k = 0; i < f->nrefusals; i++) {
		const struct cs_refusal_block *rb = f->refusals[i];

		if (!cs_reader_target(f, rb->target)) {
			damage(f,
			       "refusal block at offset %llu refers to target %u, which does not "
			       "exist",
			       (ull)((const unsigned char *)rb - f->data), rb->target);
			continue;
		}
		f->refusals[k++] = rb;
	}
	f->nrefusals = k;
	return 0;
}

/* A new cs_file of used bytes at mapped (a mapping of the file), or in a
 * buffer of its own when mapped is NULL. */
static struct cs_file *file_new(const char *name, uint64_t used, void *mapped, char *err,
				size_t errlen, int *ret)
{
	struct cs_file *f = calloc(1, sizeof(*f));

	if (f) {
		f->path = strdup(name);
		/* malloc's alignment (16) suits every block: they all start
		 * at multiples of 8 from the start of the file. */
		if (mapped) {
			f->data = mapped;
			f->mapped = used;
		} else {
			f->data = malloc(used);
		}
	}
	if (!f || !f->path || !f->data) {
		if (!f && mapped)
			munmap(mapped, used);
		cs_reader_free(f);
		*ret = fail(err, errlen, name, -ENOMEM, "out of memory (%llu bytes used)",
			    (ull)used);
		return NULL;
	}
	f->size = used;
	f->used = used;
	f->hdr = (const struct cs_file_header *)f->data;
	return f;
}

/* The end of the blocks: header.used, but never past what was reserved
 * or what the file holds.  Returns it; records damage when it cuts, but
 * for a running file's end (*live_short). */
static uint64_t limit_used(const struct cs_file_header *h, uint64_t used, uint64_t fsize, char *msg,
			   size_t msglen, int *live_short)
{
	msg[0] = '\0';
	*live_short = 0;
	if (used > h->capacity) {
		snprintf(msg, msglen, "used size %llu exceeds the capacity %llu", (ull)used,
			 (ull)h->capacity);
		used = h->capacity < CS_HEADER_SIZE ? CS_HEADER_SIZE : h->capacity;
	}
	if (used <= fsize)
		return used;
	if (!msg[0] && h->state == CS_STATE_RUNNING)
		/* A running writer moves header.used on before it grows the
		 * file, and a growth that found the file system full left it
		 * there for good (a live report on a full disk said the file
		 * was damaged): what lies past the end is that reservation,
		 * not damage (walk). */
		*live_short = 1;
	else if (!msg[0])
		snprintf(msg, msglen,
			 "truncated: the header says %llu bytes are used, the file has %llu",
			 (ull)used, (ull)fsize);
	return fsize;
}

static int targets_only;

void cs_reader_targets_only(int on)
{
	targets_only = on;
}

static int finish(struct cs_file *f, const char *cut, struct cs_file **out, char *err,
		  size_t errlen)
{
	int ret;

	if (cut[0])
		damage(f, "%s", cut);
	f->incomplete = f->hdr->state == CS_STATE_RUNNING;
	f->values_unchecked = targets_only;
	ret = walk(f);
	if (ret) {
		fail(err, errlen, f->path, ret, "out of memory");
		cs_reader_free(f);
		return ret;
	}
	*out = f;
	return 0;
}

/* Checks what can be checked before the header is known to be whole:
 * whether these are the first bytes of a report file at all. */
static int check_start(const void *buf, size_t len, const char *name, char *err, size_t errlen)
{
	if (len < sizeof(((struct cs_file_header *)0)->magic) || memcmp(buf, CS_MAGIC, 8) != 0)
		return fail(err, errlen, name, -EINVAL, "not a cacheshim report (bad magic)");
	if (len < CS_HEADER_SIZE)
		return fail(err, errlen, name, -EINVAL, "truncated header (%zu bytes, %u expected)",
			    len, CS_HEADER_SIZE);
	return 0;
}

int cs_reader_parse(const void *buf, size_t len, const char *name, struct cs_file **out, char *err,
		    size_t errlen)
{
	struct cs_file_header h;
	struct cs_file *f;
	char cut[256];
	uint64_t used;
	int ret, live_short;

	*out = NULL;
	ret = check_start(buf, len, name, err, errlen);
	if (ret)
		return ret;
	memcpy(&h, buf, sizeof(h));
	ret = check_header(&h, name, err, errlen, &used);
	if (ret)
		return ret;
	used = limit_used(&h, used, len, cut, sizeof(cut), &live_short);
	f = file_new(name, used, NULL, err, errlen, &ret);
	if (!f)
		return ret;
	f->live_short = live_short;
	memcpy(f->data, buf, used);
	return finish(f, cut, out, err, errlen);
}

/* Reads exactly len bytes at off, retrying short reads.  Returns 0, the
 * negative errno, or -ENODATA at the end of the file. */
static int read_full(int fd, void *buf, size_t len, off_t off)
{
	unsigned char *p = buf;
	ssize_t n;

	while (len) {
		n = pread(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENODATA;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* Reads bytes [from, to) of the file open at fd into buf (at the same
 * offsets), skipping its holes (SEEK_DATA), which buf holds as zeros
 * already.  Returns what read_full returns. */
static int read_data(int fd, unsigned char *buf, uint64_t from, uint64_t to)
{
	struct stat st;
	off_t d, h;
	int ret;

	while (from < to) {
		d = lseek(fd, (off_t)from, SEEK_DATA);
		if (d < 0 && errno == ENXIO) /* a hole up to the end of the file */
			return fstat(fd, &st) == 0 && (uint64_t)st.st_size < to ? -ENODATA : 0;
		if (d < 0) /* no SEEK_DATA here: read it all */
			return read_full(fd, buf + from, to - from, (off_t)from);
		if ((uint64_t)d >= to)
			return 0;
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0 || (uint64_t)h > to)
			h = (off_t)to;
		ret = read_full(fd, buf + d, (size_t)(h - d), d);
		if (ret)
			return ret;
		from = (uint64_t)h;
	}
	return 0;
}

/* Opens path for reading.  Returns the fd, or a negative errno; *notreg
 * is set when path exists but is not a regular file. */
static int open_regular(const char *path, struct stat *st, int *notreg)
{
	int fd, e;

	*notreg = 0;
	/* O_NONBLOCK: a FIFO given by mistake must not hang us before the
	 * S_ISREG check rejects it. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) != 0) {
		e = -errno;
		close(fd);
		return e;
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		*notreg = 1;
		return -EINVAL;
	}
	return fd;
}

static void on_sigbus(int sig)
{
	static const char msg[] = "cacheshim: a report file shrank while it was being read\n";
	ssize_t n = write(2, msg, sizeof(msg) - 1);

	(void)n;
	(void)sig;
	_exit(CS_EXIT_FAIL);
}

#define HELP_MIN (64u << 20) /* smaller mappings are not worth a thread */

struct populate {
	unsigned char *p;
	size_t len;
};

static void *populate(void *arg)
{
	struct populate *w = arg;

	/* Errors do not matter: the pages are faulted in on use anyway. */
	madvise(w->p, w->len, MADV_POPULATE_READ);
	free(w);
	return NULL;
}

/* Starts prefaulting the second half of the mapping of f.  Sets
 * f->helper when a thread was started. */
static void start_populate(struct cs_file *f)
{
	struct populate *w;
	size_t half, page = (size_t)sysconf(_SC_PAGESIZE);

	if (f->mapped < HELP_MIN)
		return;
	w = malloc(sizeof(*w));
	if (!w)
		return;
	half = f->mapped / 2 / page * page;
	w->p = f->data + half;
	w->len = f->mapped - half;
	if (pthread_create(&f->helper, NULL, populate, w) == 0)
		f->has_helper = 1;
	else
		free(w);
}

static void *unmap(void *arg)
{
	struct populate *w = arg;

	munmap(w->p, w->len);
	free(w);
	return NULL;
}

/* Unmaps f's data, in a detached thread for a large mapping. */
static void unmap_data(struct cs_file *f)
{
	struct populate *w = NULL;
	pthread_attr_t attr;
	pthread_t t;

	if (f->has_helper)
		pthread_join(f->helper, NULL);
	if (f->mapped >= HELP_MIN)
		w = malloc(sizeof(*w));
	if (w) {
		w->p = f->data;
		w->len = f->mapped;
		if (pthread_attr_init(&attr) == 0) {
			pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
			if (pthread_create(&t, &attr, unmap, w) == 0) {
				pthread_attr_destroy(&attr);
				return;
			}
			pthread_attr_destroy(&attr);
		}
		free(w);
	}
	munmap(f->data, f->mapped);
}

/* Whether the file open at fd has holes on a tmpfs.  A read fault on a
 * tmpfs hole allocates a page like a write: the shim leaves the series
 * windows no call reached as holes, and a report file on a full tmpfs
 * raised SIGBUS in the mapping.  read(2) of a hole allocates nothing. */
static int tmpfs_holes(int fd, uint64_t used)
{
	struct statfs fs;
	off_t hole;

	if (fstatfs(fd, &fs) != 0 || fs.f_type != TMPFS_MAGIC)
		return 0;
	hole = lseek(fd, 0, SEEK_HOLE);
	return hole < 0 || (uint64_t)hole < used;
}

/* Maps the first used bytes of the file open at fd.  Returns the new
 * cs_file, or NULL with *ret = -EAGAIN when it cannot be mapped (then
 * read it) or another negative errno (err says what). */
static struct cs_file *map_file(int fd, const char *path, uint64_t used, char *err, size_t errlen,
				int *ret)
{
	static int handler;
	struct sigaction sa;
	struct cs_file *f;
	void *m;

	if (!handler) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_sigbus;
		sigemptyset(&sa.sa_mask);
		if (sigaction(SIGBUS, &sa, NULL) != 0) {
			*ret = -EAGAIN;
			return NULL;
		}
		handler = 1;
	}
	m = mmap(NULL, used, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		*ret = -EAGAIN;
		return NULL;
	}
	f = file_new(path, used, m, err, errlen, ret);
	if (f)
		start_populate(f);
	return f;
}

int cs_reader_load(const char *path, struct cs_file **out, char *err, size_t errlen)
{
	/* The header page, aligned for struct access. */
	union {
		struct cs_file_header h;
		unsigned char b[CS_HEADER_SIZE];
	} u;
	struct cs_file *f;
	struct stat st;
	uint64_t used;
	size_t first;
	char cut[256];
	void *buf;
	int fd, ret, notreg, live_short;

	*out = NULL;
	fd = open_regular(path, &st, &notreg);
	if (notreg)
		return fail(err, errlen, path, -EINVAL, "not a regular file");
	if (fd < 0)
		return fail(err, errlen, path, fd, "cannot open: %s", strerror(-fd));
	first = st.st_size < (off_t)CS_HEADER_SIZE ? (size_t)st.st_size : CS_HEADER_SIZE;
	memset(&u, 0, sizeof(u));
	ret = read_full(fd, u.b, first, 0);
	if (ret == 0)
		ret = check_start(u.b, first, path, err, errlen);
	else if (ret == -ENODATA)
		ret = fail(err, errlen, path, -EINVAL, "truncated: the file shrank while reading");
	else
		ret = fail(err, errlen, path, ret, "cannot read: %s", strerror(-ret));
	if (ret == 0)
		ret = check_header(&u.h, path, err, errlen, &used);
	if (ret) {
		close(fd);
		return ret;
	}
	used = limit_used(&u.h, used, (uint64_t)st.st_size, cut, sizeof(cut), &live_short);
	if (u.h.state == CS_STATE_COMPLETE && u.h.version == CS_FORMAT_VERSION &&
	    !tmpfs_holes(fd, used)) {
		f = map_file(fd, path, used, err, errlen, &ret);
		if (f) {
			f->live_short = live_short;
			f->hdr_checked = u.h;
			f->hdr = &f->hdr_checked;
		}
		if (f || ret != -EAGAIN) {
			close(fd);
			return f ? finish(f, cut, out, err, errlen) : ret;
		}
	}
	/* Anonymous memory: the holes of a sparse file (a crafted one may say
	 * it uses gigabytes on a few kilobytes of disk) stay unread pages. */
	buf = mmap(NULL, used, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	f = file_new(path, used, buf == MAP_FAILED ? NULL : buf, err, errlen, &ret);
	if (!f) {
		close(fd);
		return ret;
	}
	f->live_short = live_short;
	memcpy(f->data, u.b, CS_HEADER_SIZE);
	ret = read_data(fd, f->data, CS_HEADER_SIZE, used);
	close(fd);
	if (ret) {
		cs_reader_free(f);
		if (ret == -ENODATA)
			return fail(err, errlen, path, -EINVAL,
				    "truncated: the file shrank while reading");
		return fail(err, errlen, path, ret, "cannot read: %s", strerror(-ret));
	}
	return finish(f, cut, out, err, errlen);
}

int cs_reader_peek(const char *path, struct cs_file_header *hdr)
{
	struct stat st;
	int fd, ret, notreg;

	fd = open_regular(path, &st, &notreg);
	if (fd < 0)
		return fd;
	if (st.st_size < (off_t)sizeof(*hdr)) {
		close(fd);
		return -EINVAL;
	}
	ret = read_full(fd, hdr, sizeof(*hdr), 0);
	close(fd);
	if (ret)
		return ret == -ENODATA ? -EINVAL : ret;
	if (memcmp(hdr->magic, CS_MAGIC, sizeof(hdr->magic)) != 0)
		return -EINVAL;
	return 0;
}

int cs_reader_same_writer(const struct cs_file_header *a, const struct cs_file_header *b)
{
	/* The program too: an exec in the same clock tick (a coarse
	 * CLOCK_REALTIME) keeps pid and parent, and processes of two pid
	 * namespaces writing into one directory may share both. */
	return a->start_ns && a->start_ns == b->start_ns && a->pid == b->pid &&
	       a->ppid == b->ppid && a->session == b->session &&
	       !strncmp(a->program, b->program, sizeof(a->program));
}

/* Whether the file of header a got further than the file of header b,
 * one of the same writer: used only grows, and the seal comes last. */
static int further(const struct cs_file_header *a, const struct cs_file_header *b)
{
	uint64_t ua = a->used & ~CS_USED_SEALED, ub = b->used & ~CS_USED_SEALED;

	if (ua != ub)
		return ua > ub;
	return a->state == CS_STATE_COMPLETE && b->state != CS_STATE_COMPLETE;
}

struct writer_ref {
	const struct cs_file_header *h;
	size_t i;
};

/* The calls the file at path had entered (its sites' and those it lost),
 * which only grow while its writer runs, also between two blocks; 0 when
 * it cannot be read. */
static uint64_t entered(const char *path)
{
	struct cs_file *f;
	char err[256];
	uint64_t n;
	size_t i;

	if (cs_reader_load(path, &f, err, sizeof(err)) != 0)
		return 0;
	n = f->hdr->lost_calls;
	for (i = 0; i < f->nsites; i++)
		n += f->sites[i]->entered;
	cs_reader_free(f);
	return n;
}

/* Of the files v[g, e) of one writer, those that got as far as v[best] by
 * their headers, none finished (a running file and a snapshot of it, or a
 * killed writer's: a long run reserves no block for seconds while its
 * calls go on in those it has): the index of the one that had entered the
 * most calls, the first of those alike.  best when it is alone. */
static size_t most_entered(const struct writer_ref *v, size_t g, size_t e, size_t best,
			   const char *const *paths)
{
	uint64_t most, n;
	size_t j, pick = best, alike = 0;

	for (j = g; j < e; j++)
		alike += !further(v[best].h, v[j].h);
	if (alike < 2)
		return best;
	/* best counts first: among those alike it is the first named. */
	most = entered(paths[v[best].i]);
	for (j = g; j < e; j++) {
		if (j == best || further(v[best].h, v[j].h))
			continue;
		n = entered(paths[v[j].i]);
		if (n > most || (n == most && j < pick)) {
			most = n;
			pick = j;
		}
	}
	return pick;
}

/* By writer (cs_reader_same_writer's fields), then by index. */
static int cmp_writer(const void *a, const void *b)
{
	const struct writer_ref *x = a, *y = b;
	int c;

	if (x->h->start_ns != y->h->start_ns)
		return x->h->start_ns < y->h->start_ns ? -1 : 1;
	if (x->h->pid != y->h->pid)
		return x->h->pid < y->h->pid ? -1 : 1;
	if (x->h->ppid != y->h->ppid)
		return x->h->ppid < y->h->ppid ? -1 : 1;
	if (x->h->session != y->h->session)
		return x->h->session < y->h->session ? -1 : 1;
	c = strncmp(x->h->program, y->h->program, sizeof(x->h->program));
	if (c)
		return c;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Of the finished files tied with v[best] in the group [g, end), the one
 * the file system holds whole (a partial copy of a finished file, cp cut
 * short, is shorter than its header's used bytes: named first, it was
 * read as damaged and the whole file skipped); best when none is. */
static size_t first_whole(const struct writer_ref *v, size_t g, size_t end, size_t best,
			  const char *const *paths)
{
	uint64_t used = v[best].h->used & ~CS_USED_SEALED;
	struct stat st;
	size_t i;

	for (i = g; i < end; i++) {
		/* In name order; the first of the ties is best itself. */
		if (i != best && (further(v[best].h, v[i].h) || further(v[i].h, v[best].h)))
			continue;
		if (stat(paths[v[i].i], &st) == 0 && (uint64_t)st.st_size >= used)
			return i;
	}
	return best;
}

int cs_reader_copies(const struct cs_file_header *const *hdr, const char *const *paths, size_t n,
		     size_t *keep)
{
	struct writer_ref *v;
	size_t i, k = 0, g, best;

	for (i = 0; i < n; i++)
		keep[i] = i;
	/* Sorted, not each against each: a run of a build has thousands
	 * of files. */
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (hdr[i] && hdr[i]->start_ns)
			v[k++] = (struct writer_ref){hdr[i], i};
	qsort(v, k, sizeof(*v), cmp_writer);
	for (g = 0; g < k; g = i) {
		best = g;
		for (i = g + 1; i < k && cs_reader_same_writer(v[g].h, v[i].h); i++)
			if (further(v[i].h, v[best].h))
				best = i;
		if (paths && v[best].h->state != CS_STATE_COMPLETE)
			best = most_entered(v, g, i, best, paths);
		else if (paths)
			best = first_whole(v, g, i, best, paths);
		while (g < i)
			keep[v[g++].i] = v[best].i;
	}
	free(v);
	return 0;
}

void cs_reader_free(struct cs_file *f)
{
	if (!f)
		return;
	free(f->modules);
	free(f->targets);
	free(f->sites);
	free(f->threads);
	free(f->tids);
	free(f->nested);
	free(f->series);
	free(f->refusals);
	free(f->notes);
	if (f->mapped)
		unmap_data(f);
	else
		free(f->data);
	free(f->path);
	free(f);
}
