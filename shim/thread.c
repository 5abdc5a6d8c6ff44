/* SPDX-License-Identifier: MIT */
/* Per-thread state: made at a thread's first wrapped call (the slow path,
 * with the full register state saved by the trampoline), torn down when the
 * thread exits.  The thread's site blocks stay in the report file. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim/internal.h"
#include "shim/rawsys.h"

#define CS_SITE_TABLE_MIN 1024u
#define CS_SITE_TABLE_MAX (1u << 22) /* slots: 128 MB of thread memory */

static pthread_key_t thread_key;
/* Threads that could not be set up, or are exiting: they pass through. */
static struct cs_thread disabled_thread = {.ready = 0, .group_fd = -1};

/* Zeroed thread memory, its first `populate` bytes mapped in now: the hot
 * path's first touch of a page would otherwise be a page fault inside a
 * measured call (counted as the program's).  Populating is not counted
 * as page-fault events; it runs in slow paths, which may themselves be
 * inside an enclosing call's bracket (a nested call's new call site). */
static void *map_zeroed_populated(size_t bytes, size_t populate)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (populate)
		cs_syscall6(SYS_madvise, (long)p, (long)(populate < bytes ? populate : bytes),
			    MADV_POPULATE_WRITE, 0, 0, 0); /* errno untouched */
	return p;
}

static void *map_zeroed(size_t bytes)
{
	return map_zeroed_populated(bytes, bytes);
}

/* A thread's stack when nothing said it (made by thrd_create or clone):
 * glibc puts the thread's descriptor (pthread_self) at the top of its
 * stack block, so reads up to it stay inside; the size is a guess, small
 * so that the wrapper's frames stay within a quarter of any real stack. */
#define CS_GUESSED_STACK (256u << 10)

/* A thread's series pointers, lost numbers and merge waits, by target
 * index. */
#define SERIES_MAP_BYTES                                                                     \
	(CS_MAX_TARGETS * (sizeof(struct cs_series_block *) + sizeof(uint64_t) + sizeof(uint32_t)))

/* Not pthread_getattr_np here: it mallocs, and this may run inside malloc
 * (threadstart.c). */
static void stack_bounds(struct cs_thread *t)
{
	uint64_t size;

	t->stack_lo = cs_tls_stack_lo;
	t->stack_hi = cs_tls_stack_hi;
	if (!t->stack_hi) {
		t->stack_hi = (uint64_t)(uintptr_t)pthread_self();
		t->stack_lo = t->stack_hi > CS_GUESSED_STACK ? t->stack_hi - CS_GUESSED_STACK : 0;
	}
	size = t->stack_hi - (cs_tls_stack_floor ? cs_tls_stack_floor : t->stack_lo);
	/* The wrapper's frames may take a quarter of the stack at most: a
	 * program recursing through patched entries must not run out of
	 * stack because of us (deeper calls run unmeasured). */
	t->max_depth = size / 4 / (CS_FRAME_SIZE + cs_window + 112);
}

static struct cs_site_table *table_new(uint64_t slots)
{
	struct cs_site_table *tab = map_zeroed(sizeof(*tab) + slots * sizeof(struct cs_site_slot));

	if (tab)
		tab->mask = slots - 1;
	return tab;
}

static void table_free_all(struct cs_site_table *tab)
{
	while (tab) {
		struct cs_site_table *older = tab->older;

		munmap(tab, sizeof(*tab) + (tab->mask + 1) * sizeof(struct cs_site_slot));
		tab = older;
	}
}

/* The events counted in thread t (its thread block's events_open). */
static uint32_t events_open(const struct cs_thread *t)
{
	uint32_t open = 0;

	if (cs_g.tsc_index >= 0)
		open |= 1u << cs_g.tsc_index;
	for (unsigned i = 0; i < t->nperf; i++)
		open |= 1u << t->perf_event[i];
	return open;
}

/* A new thread's state, or NULL with *why CS_LOST_MEMORY or
 * CS_LOST_THREAD (its counters did not open). */
static struct cs_thread *thread_create(uint64_t *why)
{
	struct cs_thread *t = map_zeroed(sizeof(*t));
	struct cs_thread_block *b;

	*why = CS_LOST_MEMORY;
	if (!t)
		return NULL;
	t->tid = (uint32_t)gettid();
	t->sites = table_new(CS_SITE_TABLE_MIN);
	if (!t->sites || cs_events_open_thread(t) < 0) {
		if (t->sites)
			*why = CS_LOST_THREAD;
		table_free_all(t->sites);
		munmap(t, sizeof(*t));
		return NULL;
	}
	stack_bounds(t);
	if (cs_g.settings.series) {
		t->series = map_zeroed(SERIES_MAP_BYTES);
		if (t->series) {
			t->series_lost = (uint64_t *)(t->series + CS_MAX_TARGETS);
			t->merge_waits = (uint32_t *)(t->series_lost + CS_MAX_TARGETS);
		}
	}
	t->nest_stride = sizeof(struct cs_nest) + cs_g.nevents * sizeof(uint64_t);
	/* The first 1,024 levels; deeper nesting faults its pages in as it
	 * goes (a megabyte per thread would be a lot to map up front). */
	t->nest = map_zeroed_populated(CS_NEST_DEPTH * t->nest_stride, 1024 * t->nest_stride);
	t->epoch = __atomic_load_n(&cs_g.epoch, __ATOMIC_ACQUIRE);
	b = cs_output_reserve(sizeof(*b));
	if (b) {
		b->tid = t->tid;
		b->events_open = events_open(t);
		cs_output_publish(b, CS_BLOCK_THREAD);
		t->block = b;
	}
	pthread_setspecific(thread_key, t);
	t->ready = 1;
	return t;
}

/* Site blocks of call sites in unloaded modules (a plugin's own calls of
 * targets), by the module's file, the call site's offset in it and the
 * target and key: a plugin loaded again finds its call sites' blocks
 * here.  Without it each load made a new 9 KB block per call site
 * (10,000 loads: 137 MB of report and of memory).  Open addressing,
 * grown at three quarters; only the thread's slow paths use it. */
struct cs_retired_site {
	uint64_t file, offset;
	uint32_t tag, site; /* site 0: a free slot */
};

struct cs_retired_sites {
	uint64_t mask, n;
	struct cs_retired_site slot[];
};

static uint64_t retired_hash(uint64_t file, uint64_t offset, uint32_t tag)
{
	return (file ^ (offset * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)tag << 29)) *
	       0xff51afd7ed558ccdull >> 20;
}

static size_t retired_bytes(uint64_t slots)
{
	return sizeof(struct cs_retired_sites) + slots * sizeof(struct cs_retired_site);
}

static struct cs_retired_site *retired_slot(struct cs_retired_sites *r, uint64_t file,
					    uint64_t offset, uint32_t tag)
{
	uint64_t h;

	for (h = retired_hash(file, offset, tag);; h++) {
		struct cs_retired_site *s = &r->slot[h & r->mask];

		if (!s->site || (s->file == file && s->offset == offset && s->tag == tag))
			return s;
	}
}

/* Keeps site block `site` of (file, offset, tag).  Best effort: without
 * memory the block is just not found again. */
static void retired_put(struct cs_thread *t, uint64_t file, uint64_t offset, uint32_t tag,
			uint32_t site)
{
	struct cs_retired_sites *r = t->retired;
	struct cs_retired_site *s;

	if (!r || (r->n + 1) * 4 > (r->mask + 1) * 3) {
		uint64_t slots = r ? (r->mask + 1) * 2 : 256, i;
		struct cs_retired_sites *nr = map_zeroed(retired_bytes(slots));

		if (!nr)
			return;
		nr->mask = slots - 1;
		for (i = 0; r && i <= r->mask; i++) {
			if (r->slot[i].site) {
				*retired_slot(nr, r->slot[i].file, r->slot[i].offset, r->slot[i].tag) =
					r->slot[i];
				nr->n++;
			}
		}
		if (r)
			munmap(r, retired_bytes(r->mask + 1));
		t->retired = r = nr;
	}
	s = retired_slot(r, file, offset, tag);
	if (!s->site)
		r->n++;
	s->file = file;
	s->offset = offset;
	s->tag = tag;
	s->site = site;
}

/* The block of the call site at callsite, if its module's file had it
 * when an earlier load of it was unloaded.  0 if none. */
static uint32_t retired_find(struct cs_thread *t, uint64_t callsite, uint32_t tag)
{
	struct cs_retired_site *s;
	uint64_t base, file;
	uint32_t module;

	if (!t->retired || !callsite)
		return 0;
	module = cs_modules_lookup(callsite, &base);
	file = cs_modules_file(module);
	if (!file)
		return 0;
	s = retired_slot(t->retired, file, callsite - base, tag);
	return s->site;
}

static void thread_free(struct cs_thread *t)
{
	if (t->series)
		munmap(t->series, SERIES_MAP_BYTES);
	if (t->nest)
		munmap(t->nest, CS_NEST_DEPTH * t->nest_stride);
	cs_events_close_thread(t);
	table_free_all(t->sites);
	if (t->retired)
		munmap(t->retired, retired_bytes(t->retired->mask + 1));
	munmap(t, sizeof(*t));
}

/* Hands the site blocks of exiting thread t, which writes them no more,
 * to later threads (siterows.c): each under its own (call site, target,
 * key), once.  A call of t still entered now never returns (pthread_exit
 * inside it, a siglongjmp out of it: its frames are gone), so its block
 * passes on too, that call counted as entered, not returned; kept back,
 * a thread per task that leaves inside a wrapped call filled the file
 * again (review helper 78: 1,985 of 2,400 calls not recorded). */
static int file_sealed(void);

static void leave_sites(struct cs_thread *t)
{
	const struct cs_site_table *tab = t->sites;
	uint32_t open = events_open(t);
	int current = t->epoch == __atomic_load_n(&cs_g.epoch, __ATOMIC_ACQUIRE);
	uint64_t i;

	if (!tab || file_sealed())
		return;
	for (i = 0; i <= tab->mask; i++) {
		const struct cs_site_slot *s = &tab->slot[i];
		const struct cs_site_block *b;

		if (s->site <= CS_SITE_NOT_MADE)
			continue;
		b = cs_site_at(s->site);
		if (b->callsite != s->callsite || (b->callsite && !current))
			continue;
		cs_site_rows_leave(s->callsite, s->tag, s->site, open, t->epoch);
	}
}

/* pthread key destructor: the thread is exiting.  The program's own key
 * destructors may still call targets, in this round or later ones (ours
 * was made in the constructor, so it runs first in each round): the key
 * is set again, which makes glibc run another round, and the thread is
 * only taken down in the last one.  Torn down in the first, the calls of
 * a program's key destructors were all lost. */
static void thread_destroy(void *p)
{
	struct cs_thread *t = p;
	uint64_t mask;

	if (++t->exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS &&
	    pthread_setspecific(thread_key, t) == 0)
		return;
	if (__atomic_load_n(&cs_g.sandboxed, __ATOMIC_ACQUIRE)) {
		/* No munmap or close under the program's seccomp filter: the
		 * thread's memory and counters stay (shim/sandbox.c). */
		cs_tls_thread = &disabled_thread;
		return;
	}
	/* Signals blocked: the munmaps take a while, and a handler's call
	 * inside would pass the guard uncounted (~7% of the handler calls
	 * on short-lived threads signalled without pause). */
	cs_guard_take_quiet(&mask);
	cs_tls_thread = &disabled_thread;
	leave_sites(t);
	cs_output_arena_release(&((struct cs_thread *)p)->arena);
	thread_free(p);
	cs_guard_drop_quiet(&mask);
}

/* Inserts into tab, which has room.  The slot's site is stored last: a
 * probe interrupted by this insert sees an empty or a complete slot. */
static void table_put(struct cs_site_table *tab, const struct cs_site_slot *in)
{
	struct cs_site_slot *s;
	uint64_t h;

	for (h = cs_site_hash(in->tag, in->callsite);; h++) {
		s = &tab->slot[h & tab->mask];
		if (!s->site)
			break;
		if (s->callsite == in->callsite && s->tag == in->tag) {
			/* A call site whose block could not be made before. */
			__atomic_store_n(&s->site, in->site, __ATOMIC_RELEASE);
			return;
		}
	}
	s->callsite = in->callsite;
	s->tag = in->tag;
	__atomic_store_n(&s->site, in->site, __ATOMIC_RELEASE);
	tab->nsites++;
}

/* Unmaps the tables t's table replaced, unless a probe of them may be
 * under way: this slow path then runs in a signal handler that
 * interrupted the hot path's probe, which reads on once it returns.  Kept
 * then, they go at a later replacement or at the thread's exit. */
static void free_older(struct cs_thread *t)
{
	struct cs_site_table *older;

	if (__atomic_load_n(&t->probing, __ATOMIC_RELAXED))
		return;
	older = t->sites->older;
	t->sites->older = NULL;
	table_free_all(older);
}

static int sorted_has(const uint32_t *a, unsigned n, uint32_t v)
{
	unsigned lo = 0, hi = n;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (a[mid] == v)
			return 1;
		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Whether a site table entry stays valid after a dlclose: its call site
 * lies in a module still loaded (whose addresses no other module can have
 * taken), or it is an overflow row (call site 0). */
static int still_valid(const struct cs_site_slot *s, const uint32_t *live, unsigned n)
{
	const struct cs_site_block *b;

	if (s->site <= CS_SITE_NOT_MADE) /* made again if there is room */
		return 0;
	b = cs_site_at(s->site);
	return !b->callsite || (b->module && sorted_has(live, n, b->module));
}

/* The table a thread goes on with after a dlclose: the entries of old
 * that stay valid, the same blocks.  Starting over empty made a new site
 * block (9 KB with one event) for every call site at every dlclose, and
 * a program loading and unloading a plugin in a loop grew its report and
 * its memory without bound. */
static struct cs_site_table *table_carry(struct cs_thread *t, const struct cs_site_table *old)
{
	size_t live_bytes = CS_MAX_MODULES * sizeof(uint32_t);
	uint32_t *live = map_zeroed(live_bytes);
	struct cs_site_table *nt = NULL;
	uint64_t i, keep = 0, slots = CS_SITE_TABLE_MIN;
	unsigned n;

	if (!live)
		return NULL;
	n = cs_modules_live(live, CS_MAX_MODULES);
	for (i = 0; i <= old->mask; i++)
		keep += still_valid(&old->slot[i], live, n);
	while ((keep + 1) * 4 > slots * 3)
		slots *= 2;
	nt = table_new(slots);
	for (i = 0; nt && i <= old->mask; i++) {
		const struct cs_site_slot *s = &old->slot[i];

		if (still_valid(s, live, n)) {
			table_put(nt, s);
		} else if (s->site > CS_SITE_NOT_MADE) {
			const struct cs_site_block *b = cs_site_at(s->site);
			uint64_t file = cs_modules_file_any(b->module);

			if (file)
				retired_put(t, file, b->offset, s->tag, s->site);
		}
	}
	munmap(live, live_bytes);
	return nt;
}

/* Doubles the site table: fills a new one, then swaps the pointer. */
static int grow_table(struct cs_thread *t)
{
	struct cs_site_table *old = t->sites, *nt = table_new((old->mask + 1) * 2);
	uint64_t i;

	if (!nt)
		return -ENOMEM;
	for (i = 0; i <= old->mask; i++) {
		if (old->slot[i].site)
			table_put(nt, &old->slot[i]);
	}
	nt->older = old;
	__atomic_store_n(&t->sites, nt, __ATOMIC_RELEASE);
	free_older(t);
	return 0;
}

static struct cs_site_block *table_get(const struct cs_site_table *tab, uint32_t target,
				       uint64_t callsite, uint64_t key)
{
	uint32_t tag = cs_site_tag(target, key);
	uint64_t h;

	for (h = cs_site_hash(tag, callsite);; h++) {
		const struct cs_site_slot *s = &tab->slot[h & tab->mask];

		if (!s->site)
			return NULL;
		if (s->callsite == callsite && s->tag == tag)
			return s->site == CS_SITE_NOT_MADE ? NULL : cs_site_at(s->site);
	}
}

/* Whether the report file is sealed (at exit, or at exec until it fails). */
static int file_sealed(void)
{
	return (__atomic_load_n(&cs_g.hdr->used, __ATOMIC_ACQUIRE) & CS_USED_SEALED) != 0;
}

/* Makes and publishes a site block; callsite 0 is the overflow row. */
static struct cs_site_block *new_site(struct cs_thread *t, uint32_t target, uint64_t callsite,
				      uint64_t key)
{
	uint32_t size = (uint32_t)cs_site_block_size(cs_g.nevents);
	struct cs_site_block *b = cs_output_carve(&t->arena, size, CS_SITE_ALIGN);
	uint64_t base = 0;

	if (!b) {
		/* Sealed (at exit: a call stdio makes while flushing after our
		 * destructor): no new blocks, the call is counted as lost, and
		 * the file is not full, so nothing is said. */
		if (file_sealed())
			;
		else if (cs_output_no_room())
			CS_LOG_ONCE("no room left on the file system for the report file; calls "
				    "of new call sites are not recorded");
		else
			CS_LOG_ONCE("report file full (CACHESHIM_CAPACITY_MB); calls of new call "
				    "sites are not recorded");
		return NULL;
	}
	b->target = target;
	b->tid = t->tid;
	b->callsite = callsite;
	if (callsite)
		b->module = cs_modules_lookup(callsite, &base);
	b->offset = callsite - base;
	b->nevents = cs_g.nevents;
	b->key = key;
	cs_output_publish(b, CS_BLOCK_SITE);
	return b;
}

/* Puts (target, callsite, key) -> site (a cs_site_at index, or
 * CS_SITE_NOT_MADE) in the thread's table, growing it while it is below
 * the size limit.  Returns 0 or -ENOSPC (not cached: that call site's
 * calls take the slow path each time, still counted). */
static int remember_site(struct cs_thread *t, uint32_t target, uint64_t callsite, uint64_t key,
			 uint32_t site)
{
	struct cs_site_slot in = {
		.callsite = callsite,
		.tag = cs_site_tag(target, key),
		.site = site,
	};
	struct cs_site_table *tab = t->sites;

	/* Up to three quarters full: linear probing stays within a slot's
	 * line nearly always, and with thousands of call sites a smaller
	 * table misses the cache less (10,000 sites: 256 KB, not 512). */
	if ((tab->nsites + 1) * 4 > (tab->mask + 1) * 3) {
		if (tab->mask + 1 >= CS_SITE_TABLE_MAX || grow_table(t) < 0)
			return -ENOSPC;
	}
	table_put(t->sites, &in);
	return 0;
}

static int remember(struct cs_thread *t, uint32_t target, uint64_t callsite, uint64_t key,
		    struct cs_site_block *b)
{
	return remember_site(t, target, callsite, key,
			     (uint32_t)(((char *)b - (char *)cs_g.hdr) / CS_SITE_ALIGN));
}

/* No block could be made for the call site: the file is full, or sealed
 * (at exit, or at exec: unsealed if that fails).  While full, its calls
 * are dropped by the hot path from now on, and only every
 * CS_NOT_MADE_RECHECK-th comes here to try again (hotpath.c: not_made);
 * sealed, each call still comes here, as the seal may be lifted. */
static void remember_not_made(struct cs_thread *t, uint32_t target, uint64_t callsite, uint64_t key)
{
	if (!file_sealed())
		remember_site(t, target, callsite, key, CS_SITE_NOT_MADE);
}

/* Whether target id target is the shim's calibration function. */
static int is_calibration(uint32_t target)
{
	const struct cs_target_block *tb = cs_g.targets[target - 1].block;

	return tb && (tb->how & CS_HOOK_CALIBRATION);
}

/* An exited thread's block of (target, callsite, key), now t's, or NULL. */
static struct cs_site_block *adopt(struct cs_thread *t, uint32_t target, uint64_t callsite,
				   uint64_t key)
{
	uint32_t site = cs_site_rows_adopt(callsite, cs_site_tag(target, key), events_open(t));

	if (!site)
		return NULL;
	remember_site(t, target, callsite, key, site);
	return cs_site_at(site);
}

/* The thread's overflow row of (target, key), taking the calls of
 * callsite from now on. */
static struct cs_site_block *overflow_row(struct cs_thread *t, uint32_t target, uint64_t callsite,
					  uint64_t key)
{
	struct cs_site_block *b = table_get(t->sites, target, 0, key);

	if (!b && !(b = adopt(t, target, 0, key))) {
		b = new_site(t, target, 0, key);
		if (!b) {
			remember_not_made(t, target, callsite, key);
			return NULL;
		}
		if (remember(t, target, 0, key, b) < 0)
			return b;
	}
	remember(t, target, callsite, key, b);
	return b;
}

struct cs_site_block *cs_thread_site(struct cs_thread *t, uint32_t target, uint64_t callsite,
				     uint64_t key)
{
	struct cs_site_block *b = table_get(t->sites, target, callsite, key);
	uint32_t old;

	if (b)
		return b;
	/* A call site of a module loaded again: its block goes on. */
	old = retired_find(t, callsite, cs_site_tag(target, key));
	if (old) {
		b = cs_site_at(old);
		remember(t, target, callsite, key, b);
		return b;
	}
	/* An exited thread's block of the call site goes on here. */
	b = adopt(t, target, callsite, key);
	if (b)
		return b;
	/* Beyond CACHESHIM_MAX_SITES call sites in the process (the shim's
	 * calibration site not counted; a call site with a row has it in
	 * every thread), or when site blocks (one per thread and call site)
	 * fill half the file, new ones share one overflow row per (thread,
	 * target, key): the file stays bounded and no call goes uncounted. */
	if (!is_calibration(target) && !cs_site_rows_claim(target, callsite, key)) {
		if (cs_g.settings.max_sites)
			CS_LOG_ONCE("more than %llu call site%s (CACHESHIM_MAX_SITES); further ones "
				    "are counted in an overflow row per function",
				    (unsigned long long)cs_g.max_sites, cs_g.max_sites == 1 ? "" : "s");
		else /* the limit came from the capacity (review helper 56) */
			CS_LOG_ONCE("more than %llu call sites, as many as half the report file "
				    "holds (CACHESHIM_CAPACITY_MB, CACHESHIM_MAX_SITES); further ones "
				    "are counted in an overflow row per function",
				    (unsigned long long)cs_g.max_sites);
		return overflow_row(t, target, callsite, key);
	}
	if (__atomic_fetch_add(&cs_g.nsites, 1, __ATOMIC_RELAXED) >= cs_g.max_blocks) {
		CS_LOG_ONCE("call sites' blocks fill half the report file (CACHESHIM_CAPACITY_MB); "
			    "further ones are counted in an overflow row per function");
		return overflow_row(t, target, callsite, key);
	}
	b = new_site(t, target, callsite, key);
	if (b) {
		remember(t, target, callsite, key, b);
	} else {
		/* Not one of the blocks that fill the file. */
		__atomic_fetch_sub(&cs_g.nsites, 1, __ATOMIC_RELAXED);
		remember_not_made(t, target, callsite, key);
	}
	return b;
}

static inline uint64_t ticks(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* Adds the ticks since t0 to the thread's set-up total: cs_hot_exit takes
 * them off every measured call they ran inside. */
static void account(struct cs_thread *t, uint64_t t0)
{
	uint64_t d = ticks() - t0;

	/* Moved to a CPU whose TSC is behind: nothing rather than 2^64. */
	if (!t || t == &disabled_thread || (int64_t)d < 0)
		return;
	__asm__ volatile("addq %1, %0" : "+m"(t->stolen) : "r"(d) : "cc");
	if (t->block)
		__atomic_store_n(&t->block->setup_ticks, t->stolen, __ATOMIC_RELAXED);
}

/* The slow paths run with the asynchronous signals blocked
 * (cs_signals_block): a handler waits for the end of the set-up, so its
 * time is never taken for the shim's (and off the enclosing call), it
 * cannot start a slow path inside a slow path (whose ticks would count
 * twice), and it cannot jump out of one half-way. */
uint64_t cs_thread_enter_slow(struct cs_frame *f)
{
	uint64_t mask, t0 = (cs_signals_block(&mask), ticks());
	const struct cs_target_hot *tg = &cs_g.hot[f->target_idx];
	struct cs_thread *t;
	struct cs_site_block *site;
	uint64_t why = CS_LOST_THREAD;
	int saved_errno;

	cs_guard_take();
	/* Set-up calls libc (mmap, perf_event_open, /proc reads): the program
	 * must find errno as it left it. */
	saved_errno = errno;
	t = cs_tls_thread;
	/* No state yet, and another process: a vfork child (or one of
	 * clone(CLONE_VM | CLONE_VFORK)) of a thread that had made no call,
	 * sharing its memory.  Set up here, the state would be made in the
	 * child (its perf descriptors the child's only) and left to the
	 * parent's thread, the child's calls measured into the parent's
	 * file.  Its calls are another process's: through, uncounted. */
	if (!t && cs_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0) != cs_g.pid) {
		errno = saved_errno;
		cs_guard_drop();
		cs_signals_restore(&mask);
		return CS_ENTER_PASS;
	}
	if (!t && cs_tls_thread_done) {
		/* Its first call comes after its start routine returned (in a
		 * key destructor of the program's): set up now, it might get
		 * no destructor round of its own to be taken down in, and
		 * its counters and memory leaked, one set per thread. */
		cs_tls_thread = t = &disabled_thread;
	}
	if (!t) {
		t = thread_create(&why);
		cs_tls_thread = t ? t : &disabled_thread;
		if (!t)
			goto pass;
		why = CS_LOST_THREAD;
	}
	if (!t->ready)
		goto pass;
	if (t->epoch != __atomic_load_n(&cs_g.epoch, __ATOMIC_ACQUIRE)) {
		uint64_t epoch = __atomic_load_n(&cs_g.epoch, __ATOMIC_ACQUIRE);
		struct cs_site_table *nt = table_carry(t, t->sites);

		why = CS_LOST_MEMORY;
		if (!nt)
			goto pass;
		nt->older = t->sites;
		__atomic_store_n(&t->sites, nt, __ATOMIC_RELEASE);
		t->epoch = epoch;
		free_older(t);
	}
	site = cs_thread_site(t, cs_target_id(f->target_idx), cs_hot_callsite(f),
			      cs_hot_key(f, tg->argn));
	why = 0; /* the block's refusal (shim/output.c) */
	if (!site)
		goto pass;
	errno = saved_errno;
	/* Before begin: this call's own set-up is not inside its bracket. */
	account(t, t0);
	cs_hot_begin(t, f, site);
	cs_guard_drop();
	cs_signals_restore(&mask);
	return CS_ENTER_MEASURE;
pass:
	account(t, t0);
	cs_lost_call(why);
	errno = saved_errno;
	cs_guard_drop();
	cs_signals_restore(&mask);
	return CS_ENTER_PASS;
}

static struct cs_nested_block *make_nested(struct cs_thread *t, struct cs_site_block *site)
{
	uint64_t size = cs_nested_block_size(cs_g.nevents);
	struct cs_nested_block *nb;

	/* Nested blocks (twice a site block) may take an eighth of the file.
	 * Unbounded, with the thousands of nesting targets of `ruby` under
	 * rb_* they took half of it, series the rest, and the calls of later
	 * call sites were lost instead of going to their own or overflow rows
	 * (review helper 56: 1.35 M of 2.6 M calls). */
	if (__atomic_add_fetch(&cs_g.nested_bytes, size, __ATOMIC_RELAXED) >
	    cs_g.hdr->capacity / 8) {
		__atomic_sub_fetch(&cs_g.nested_bytes, size, __ATOMIC_RELAXED);
		CS_LOG_ONCE("nested calls' blocks use an eighth of the report file; call sites "
			    "first making nested calls after that have no exclusive (--self) values "
			    "(CACHESHIM_CAPACITY_MB)");
		return NULL;
	}
	nb = cs_output_carve(&t->arena, (uint32_t)size, 8);
	if (!nb) {
		__atomic_sub_fetch(&cs_g.nested_bytes, size, __ATOMIC_RELAXED);
		return NULL;
	}
	nb->site = (uint64_t)((char *)site - (char *)cs_g.hdr);
	nb->nevents = cs_g.nevents;
	/* Made for the call being recorded (cs_thread_exit_slow): the
	 * site's first when it has none yet, which tells the report which
	 * exclusive value is the cold call's. */
	if (!__atomic_load_n(&site->calls, __ATOMIC_RELAXED))
		nb->flags = CS_NESTED_AT_FIRST;
	cs_output_publish(nb, CS_BLOCK_NESTED);
	__atomic_store_n(&site->nested, (uint64_t)((char *)nb - (char *)cs_g.hdr),
			 __ATOMIC_RELEASE);
	return nb;
}

static struct cs_series_block *make_series(struct cs_thread *t, uint32_t idx)
{
	uint64_t size = cs_series_block_size(cs_g.nevents);
	const struct cs_target_block *tb = cs_g.targets[idx].block;
	struct cs_series_block *sb;

	/* The calibration calls: the report shows no series of them, so
	 * their ~300 KB of windows would only cost page faults at start. */
	if (tb && (tb->how & CS_HOOK_CALIBRATION)) {
		t->series[idx] = CS_NO_SERIES;
		return CS_NO_SERIES;
	}
	/* Series may take a quarter of the file, so that they never crowd
	 * out the call sites' own rows. */
	/* Only its first windows are mapped in now, the rest as calls reach
	 * them (populate_windows): a target called a few hundred times uses a
	 * few of its 256 windows. */
	if (__atomic_add_fetch(&cs_g.series_bytes, size, __ATOMIC_RELAXED) >
		    cs_g.hdr->capacity / 4 ||
	    size > UINT32_MAX ||
	    !(sb = cs_output_reserve_skewed(
		      (uint32_t)size,
		      (uint32_t)(sizeof(*sb) + CS_SERIES_READY_FIRST * cs_window_size(cs_g.nevents)),
		      64, sizeof(*sb)))) {
		if (cs_output_no_room())
			CS_LOG_ONCE("no room left on the file system for the report file; "
				    "functions first called after that have no series over time");
		else if (size > cs_g.hdr->capacity / 4) /* not even one (helper 56) */
			CS_LOG_ONCE("a series over time takes %llu KB, more than a quarter of the "
				    "report file: no series (CACHESHIM_CAPACITY_MB)",
				    (unsigned long long)(size >> 10));
		else
			CS_LOG_ONCE("series over time use a quarter of the report file; functions "
				    "first called after that have none (CACHESHIM_CAPACITY_MB)");
		t->series[idx] = CS_NO_SERIES;
		return CS_NO_SERIES;
	}
	sb->target = cs_target_id(idx);
	sb->tid = t->tid;
	sb->nevents = cs_g.nevents;
	sb->window_size = cs_window_size(cs_g.nevents);
	sb->shift = (uint32_t)__builtin_ctz(cs_g.settings.series);
	sb->ready = CS_SERIES_READY_FIRST;
	cs_output_publish(sb, CS_BLOCK_SERIES);
	__atomic_store_n(&t->series[idx], sb, __ATOMIC_RELEASE);
	return sb;
}

/* Four buckets at a time (SSE2; this is the slow path, the trampoline
 * saved the vector state): the merges were most of the shim's own work in
 * a short run. */
typedef uint32_t cs_v4u __attribute__((vector_size(16), aligned(4)));

/* The window-histogram buckets [*lo, *hi) of event e of window w that can
 * hold its calls: those between the buckets of its min and max, when their
 * counts add up to its calls (which a signal handler's call racing the
 * first call of the window could upset); else all of them.  All of them
 * too when whole: a call that a signal handler's siglongjmp left half-way
 * through adding itself to its window may have counted its bucket without
 * its call, anywhere (outside min and max, in a window with no call):
 * a merge that skipped that bucket left it in a zeroed window, and a later
 * window held a bucket count beyond its calls and its sum. */
static void hist_range(const struct cs_window *w, const struct cs_wstat *ws, unsigned *lo,
		       unsigned *hi, int whole)
{
	uint64_t n = 0;
	unsigned b;

	*lo = *hi = 0;
	if (whole) {
		*hi = CS_WHIST_BUCKETS;
		return;
	}
	if (!w->calls)
		return;
	*lo = cs_whist_index(ws->min);
	*hi = cs_whist_index(ws->max) + 1;
	for (b = *lo; b < *hi && *lo < *hi; b++)
		n += ws->hist[b];
	if (*lo >= *hi || n != w->calls) {
		*lo = 0;
		*hi = CS_WHIST_BUCKETS;
	}
}

/* d[b] = a[b] + c[b] for b in [lo, hi), saturating at UINT32_MAX (after
 * ~2^42 calls of one thread); d may be a. */
static void merge_hist(uint32_t *d, const uint32_t *a, const uint32_t *c, unsigned lo, unsigned hi)
{
	unsigned b = lo;

	for (; b + 4 <= hi; b += 4) {
		cs_v4u x, y, sum;

		memcpy(&x, a + b, sizeof(x));
		memcpy(&y, c + b, sizeof(y));
		sum = x + y;
		sum |= (cs_v4u)(sum < x);
		memcpy(d + b, &sum, sizeof(sum));
	}
	for (; b < hi; b++) {
		uint32_t sum = a[b] + c[b];

		d[b] = sum < a[b] ? UINT32_MAX : sum;
	}
}

/* Zeroes a window that was merged into another: its header, each event's
 * sum/min/max and the buckets [lo[e], hi[e]) of each event, outside which
 * its histograms are zero already.  Plain stores rather than memset, which
 * may be a target: this runs without the re-entry guard. */
static void zero_window(struct cs_window *w, unsigned n, const unsigned *lo, const unsigned *hi)
{
	struct cs_wstat *ws = (struct cs_wstat *)(w + 1);
	unsigned e, b;

	w->calls = 0;
	w->first_tsc = 0;
	for (e = 0; e < n; e++) {
		ws[e].sum = ws[e].min = ws[e].max = 0;
		for (b = lo[e]; b < hi[e]; b++)
			ws[e].hist[b] = 0;
	}
}

/* The count windows in use (all of them, or those the file system had
 * room for) used: window i becomes windows 2i and 2i+1 merged, and each
 * window covers twice as many calls.  In place, in one pass: window i is
 * written only after windows 2i, 2i+1 >= i were read, and every window read
 * (but window 0, merged into itself) is zeroed right away, so that a window
 * written later is zero outside what is written into it.  Only the
 * histogram buckets between a window's min and max are touched: a window
 * is ~1.2 KB per event, and touching all of it made the merges most of the
 * cost of a program whose functions are called a few hundred times each. */
static void merge_windows(struct cs_series_block *sb, int whole, unsigned count)
{
	char *base = (char *)(sb + 1);
	uint64_t size = sb->window_size;
	unsigned i, e, n = sb->nevents;
	uint32_t shift = sb->shift;
	unsigned alo[CS_MAX_EVENTS], ahi[CS_MAX_EVENTS], clo[CS_MAX_EVENTS], chi[CS_MAX_EVENTS];

	/* Marked first (x86 keeps stores in order; the compiler is told): a
	 * process ending under this thread leaves a block readers skip. */
	__atomic_store_n(&sb->shift, shift | CS_SERIES_MERGING, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (i = 0; i < count / 2; i++) {
		struct cs_window *dst = (struct cs_window *)(base + i * size);
		struct cs_window *a = (struct cs_window *)(base + 2 * i * size);
		struct cs_window *c = (struct cs_window *)(base + (2 * i + 1) * size);
		struct cs_wstat *wd = (struct cs_wstat *)(dst + 1);
		struct cs_wstat *wa = (struct cs_wstat *)(a + 1);
		struct cs_wstat *wc = (struct cs_wstat *)(c + 1);
		uint64_t calls = a->calls + c->calls;
		uint64_t first_tsc = a->calls ? a->first_tsc : c->first_tsc;

		for (e = 0; e < n; e++) {
			uint64_t sum = wa[e].sum + wc[e].sum, min = wa[e].min, max = wa[e].max;
			unsigned lo, hi;

			hist_range(a, &wa[e], &alo[e], &ahi[e], whole);
			hist_range(c, &wc[e], &clo[e], &chi[e], whole);
			/* The union of the two ranges, either of which may be empty. */
			lo = alo[e] == ahi[e] ? clo[e] : alo[e];
			hi = alo[e] == ahi[e] ? chi[e] : ahi[e];
			if (clo[e] != chi[e] && clo[e] < lo)
				lo = clo[e];
			if (clo[e] != chi[e] && chi[e] > hi)
				hi = chi[e];
			if (c->calls && (!a->calls || wc[e].min < min))
				min = wc[e].min;
			if (c->calls && (!a->calls || wc[e].max > max))
				max = wc[e].max;
			merge_hist(wd[e].hist, wa[e].hist, wc[e].hist, lo, hi);
			wd[e].sum = sum;
			wd[e].min = min;
			wd[e].max = max;
		}
		if (i)
			zero_window(a, n, alo, ahi);
		zero_window(c, n, clo, chi);
		dst->first_tsc = first_tsc;
		dst->calls = calls;
	}
	__atomic_store_n(&sb->shift, shift + 1, __ATOMIC_RELEASE);
}

/* The series' windows up to window w (at least) mapped in, and ready
 * raised past them: the hot path uses no window at or past ready.  Ready
 * stays a power of two (merges pair the windows below it).  Where the
 * file's pages get space only as they are mapped in (a tmpfs:
 * shim/output.c), mapping them in fails without room: then ready stays
 * and -ENOSPC is returned.  Zeros are written over them first when that pays
 * (cs_output_prefault: ~1 µs a page against ~3 for mapping alone), so with
 * series_busy up, as for a merge: a signal handler's call meanwhile skips
 * the series, and none can write into these windows behind the zeros. */
static int populate_windows(struct cs_thread *t, struct cs_series_block *sb, uint64_t w)
{
	uint64_t ready = __atomic_load_n(&sb->ready, __ATOMIC_ACQUIRE), want = ready, gen, old;
	int err;

	while (want < w + 1 && want < CS_SERIES_WINDOWS)
		want *= 2;
	if (want > CS_SERIES_WINDOWS)
		want = CS_SERIES_WINDOWS;
	if (want <= ready)
		return 0;
	/* Windows are being punched out (the exit, in another thread): none
	 * mapped in now. */
	gen = cs_output_punch_gen();
	if (gen & 1)
		return -ENOSPC;
	t->series_busy = 1;
	err = cs_output_prefault((char *)(sb + 1) + ready * sb->window_size,
				 (want - ready) * sb->window_size);
	t->series_busy = 0;
	if (err < 0)
		return -ENOSPC;
	old = ready;
	while (ready < want && !__atomic_compare_exchange_n(&sb->ready, &ready, want, 1,
							    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	/* Punching began meanwhile in another thread (the exit), which may
	 * have read the old ready and punched these windows out again (shim/
	 * output.c, punch_unused): taken back, nothing is stored there. */
	if (cs_output_punch_gen() != gen) {
		__atomic_store_n(&sb->ready, old, __ATOMIC_SEQ_CST);
		return -ENOSPC;
	}
	return 0;
}

/* Calls the series' windows hold: every claimed number's (sb->calls),
 * once each call's adding to its window is done. */
static uint64_t windows_calls(const struct cs_series_block *sb)
{
	uint64_t i, n = 0, ready = sb->ready < CS_SERIES_WINDOWS ? sb->ready : CS_SERIES_WINDOWS;

	for (i = 0; i < ready; i++)
		n += ((const struct cs_window *)((const char *)(sb + 1) + i * sb->window_size))->calls;
	return n;
}

uint64_t cs_thread_exit_slow(struct cs_frame *f)
{
	uint64_t mask, t0 = (cs_signals_block(&mask), ticks());
	struct cs_thread *t = cs_tls_thread;
	struct cs_site_block *site = f->site;
	int outside = 0; /* this call stays out of the series */

	/* No re-entry guard here: nothing below calls libc (reserving is a
	 * compare-and-swap, merging plain loops); a signal handler's calls
	 * wait for the end (signals blocked) and are measured then. */
	if (f->nchildren && !site->nested) {
		/* No room (the file is full, or nested blocks' share of it
		 * is used): keep the call's inclusive values at least; the
		 * hot path records the thread's next nested calls so too,
		 * trying again every CS_NOT_MADE_RECHECK-th (hotpath.c:
		 * nested_skip).  Sealed (exit, exec): each tries. */
		if (make_nested(t, site)) {
			t->nested_not_made = 0;
		} else {
			f->nchildren = 0;
			if (!file_sealed())
				t->nested_not_made = 1;
		}
	}
	if (t->series) {
		struct cs_series_block *sb = t->series[f->target_idx];

		if (!sb)
			make_series(t, (uint32_t)f->target_idx);
		else if (sb != CS_NO_SERIES && (sb->calls >> sb->shift) >= sb->ready) {
			/* The windows mapped in are used: more of them, or,
			 * when all are (or the file system has no room for
			 * more), a merge of those there are. */
			unsigned count = sb->ready < CS_SERIES_WINDOWS ? (unsigned)sb->ready
								       : CS_SERIES_WINDOWS;

			if (count < CS_SERIES_WINDOWS &&
			    populate_windows(t, sb, sb->calls >> sb->shift) == 0) {
				/* Mapped in: no merge, so no wait for one (a
				 * count left over made the hot path skip calls
				 * when the windows next filled: helper 54). */
				t->merge_waits[f->target_idx] = 0;
			} else if (windows_calls(sb) + t->series_lost[f->target_idx] != sb->calls &&
				   t->merge_waits[f->target_idx] < CS_MERGE_WAITS) {
				/* A claimed number whose call has not added
				 * itself to its window yet: this is a signal
				 * handler's call that interrupted it, maybe
				 * inside its adding, and a merge would move
				 * and zero the windows under the address it
				 * holds (a window then counted a call twice:
				 * 129 of 128, test_signals.sh about one run in
				 * ten).  The merge waits for the next call;
				 * this one stays out of the series (skipped).
				 * A bounded while: a handler that jumped out
				 * of such a call leaves its number claimed for
				 * good. */
				t->merge_waits[f->target_idx]++;
				outside = 1;
			} else {
				/* Waited long enough: the missing numbers'
				 * calls are taken for abandoned, so that later
				 * merges do not wait as long again (a review
				 * helper: a program whose handler siglongjmps
				 * out of calls ran at half speed).  Their
				 * numbers stay claimed: giving them back would
				 * number later calls into windows that are
				 * full (one then held more calls than a window
				 * holds, and the reader refused the file).
				 * The reader allows windows that many calls
				 * short (report/reader.c). */
				uint64_t held = windows_calls(sb), calls = sb->calls;

				if (t->merge_waits[f->target_idx])
					t->series_lost[f->target_idx] = calls > held ? calls - held : 0;
				t->merge_waits[f->target_idx] = 0;
				t->series_busy = 1;
				/* Numbers claimed and not counted: their calls
				 * may have left bucket counts anywhere
				 * (hist_range). */
				merge_windows(sb, held != calls, count);
				t->series_busy = 0;
			}
		}
	}
	/* This call's values were taken already (cs_hot_exit): the time
	 * above comes off the calls around it only. */
	account(t, t0);
	t->series_busy += outside; /* record skips the series */
	cs_hot_record(t, f);
	t->series_busy -= outside;
	cs_signals_restore(&mask);
	return 0;
}

int cs_thread_init(void)
{
	return -pthread_key_create(&thread_key, thread_destroy);
}

/* Writes the pages of [p, p + bytes) (p page-aligned) now, uncounted. */
static void populate(const void *p, size_t bytes)
{
	if (p)
		cs_syscall6(SYS_madvise, (long)p, (long)bytes, MADV_POPULATE_WRITE, 0, 0,
			    0); /* errno untouched */
}

/* How far below fork's own frames the stack is written again after a
 * fork: a few wrapped calls' frames nested (~1 KB each) deeper than the
 * program's own. */
#define CS_FORK_STACK (64u << 10)

void cs_thread_populate_stack(void)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	uintptr_t page = here & ~(uintptr_t)4095;
	uint64_t lo = cs_tls_stack_lo, hi = cs_tls_stack_hi;
	unsigned i;

	/* The thread's stack was written before the fork (the shim's start
	 * and calibration go deep): copy on write now, and the first wrapped
	 * call nested deeper than the program's frames faulted inside the
	 * enclosing call's bracket (the trampoline's frame).  Page by page
	 * from here down: the main thread's stack mapping ends somewhere
	 * below, where the first refusal stops it.
	 *
	 * Only on the thread's own stack as glibc gave it (threadstart.c),
	 * never below it: fork called on a coroutine's stack or on the
	 * alternate signal stack has someone else's memory below, maybe a
	 * MAP_SHARED file mapping, whose pages a write fault dirties (the
	 * file's mtime changed and its holes were filled: a review helper,
	 * /tmp/r20/cowfile.c).  An unknown stack is left alone. */
	if (cs_g.sandboxed || !hi || here - lo >= hi - lo)
		return;
	for (i = 1; i <= CS_FORK_STACK / 4096 && page - i * 4096ul >= lo; i++)
		if (cs_syscall6(SYS_madvise, (long)(page - i * 4096ul), 4096, MADV_POPULATE_WRITE,
				0, 0, 0) != 0)
			break;
}

void cs_thread_after_fork_parent(void)
{
	struct cs_thread *t = cs_tls_thread;

	/* The forking thread's state is the child's too now, copy on write:
	 * each page's first write would fault inside whichever call's
	 * bracket it came in (a review helper: the parent's first call
	 * after a fork counted 302-305 page faults for 301, from a new
	 * call site's table entry).  Written here, in fork, by
	 * MADV_POPULATE_WRITE, which page-fault events do not count.  Other
	 * threads' state faults at their first write as before. */
	if (!t || t == &disabled_thread || cs_g.sandboxed)
		return;
	populate(t, sizeof(*t));
	populate(t->sites, sizeof(*t->sites) + (t->sites->mask + 1) * sizeof(struct cs_site_slot));
	populate(t->nest, 1024 * t->nest_stride);
	if (t->series)
		populate(t->series, SERIES_MAP_BYTES);
	cs_thread_populate_stack();
	cs_side_populate();
}

void cs_thread_after_fork(void)
{
	struct cs_thread *t = cs_tls_thread;

	/* The inherited counters count the parent; the site blocks belong to
	 * the parent's file.  Start afresh at the child's next call. */
	if (t && t != &disabled_thread)
		thread_free(t);
	cs_tls_thread = NULL;
	pthread_setspecific(thread_key, NULL);
}
