/* SPDX-License-Identifier: MIT */
/* The call sites that have rows of their own, for the whole process.
 *
 * CACHESHIM_MAX_SITES bounds call sites, as the documentation says, not
 * site blocks: each thread has its own block per call site, and counting
 * blocks sent a call site's calls in a thread made later to the overflow
 * row while its first threads' calls kept their row, which then looked
 * exact and held half of them (a review helper: 4 threads, one call site,
 * CACHESHIM_MAX_SITES=3).  A call site once given a row keeps it in every
 * thread.  The shim's calibration site is not one of the program's.
 *
 * A set of (call site, tag), open addressing, under a spin lock: only the
 * slow path (signals blocked, guard up) asks, once per thread and call
 * site.  Its pages are mapped when made, by MADV_POPULATE_WRITE, as every
 * page the shim writes: the slow path may run inside an enclosing call's
 * bracket (a nested call's new call site), which must not count our page
 * faults.  It starts at 1,024 slots and doubles at 3/4 full. */
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "shim/internal.h"
#include "shim/rawsys.h"

struct row_slot {
	uint64_t callsite;
	uint64_t tag; /* cs_site_tag; 0: empty (a target id is never 0) */
};

#define ROWS_MIN_SLOTS 1024ull

static struct row_slot *slots;
static uint64_t mask, used;
static int lock;

static void take(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
}

static void drop(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

/* n zeroed slots, their pages mapped (errno untouched), or NULL. */
static struct row_slot *slots_new(uint64_t n)
{
	long p = cs_syscall6(SYS_mmap, 0, (long)(n * sizeof(struct row_slot)),
			     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p < 0 && p > -4096)
		return NULL;
	cs_syscall6(SYS_madvise, p, (long)(n * sizeof(struct row_slot)), MADV_POPULATE_WRITE, 0,
		    0, 0);
	return (struct row_slot *)p;
}

static void slots_free(struct row_slot *s, uint64_t n)
{
	cs_syscall6(SYS_munmap, (long)s, (long)(n * sizeof(*s)), 0, 0, 0, 0);
}

static struct row_slot *find(struct row_slot *tab, uint64_t m, uint64_t callsite, uint64_t tag)
{
	uint64_t h = cs_site_hash((uint32_t)tag, callsite);

	for (;; h++) {
		struct row_slot *s = &tab[h & m];

		if (!s->tag || (s->callsite == callsite && s->tag == tag))
			return s;
	}
}

/* Room for one more (the set made or doubled).  Returns 0 when there is
 * none (out of memory). */
static int room(void)
{
	uint64_t n = slots ? 2 * (mask + 1) : ROWS_MIN_SLOTS, i, old_n;
	struct row_slot *tab, *old;

	if (slots && (used + 1) * 4 <= (mask + 1) * 3)
		return 1;
	tab = slots_new(n);
	if (!tab)
		return 0;
	for (i = 0; slots && i <= mask; i++)
		if (slots[i].tag)
			*find(tab, n - 1, slots[i].callsite, slots[i].tag) = slots[i];
	old = slots;
	old_n = mask + 1;
	/* The new table first: a child forked by another thread in between
	 * unmaps what slots says (cs_site_rows_after_fork), which must not
	 * be an address the old table's unmapping has given back. */
	slots = tab;
	mask = n - 1;
	if (old)
		slots_free(old, old_n);
	return 1;
}

int cs_site_rows_claim(uint32_t target, uint64_t callsite, uint64_t key)
{
	uint64_t tag = cs_site_tag(target, key);
	struct row_slot *s;
	int row;

	take();
	if (!room()) {
		/* Not remembered: every call site counts as new. */
		row = cs_g.nrows < cs_g.max_sites;
		cs_g.nrows += row;
		drop();
		return row;
	}
	s = find(slots, mask, callsite, tag);
	row = s->tag != 0;
	if (!row && cs_g.nrows < cs_g.max_sites) {
		cs_g.nrows++;
		s->callsite = callsite;
		s->tag = tag;
		used++;
		row = 1;
	}
	drop();
	return row;
}

/* Site blocks of exited threads, for later threads to take over.
 *
 * A site block is written by its thread alone, so a thread's blocks used
 * to be its own for good: a program starting a thread per task made one
 * block per thread and call site (9 KB per event each), overflow rows
 * too, and filled the file however few its call sites were (a review
 * helper: 10,000 short threads calling one function from one call site
 * with 4 events lost 45,850 of their 100,000 calls to a full file).
 * Once a thread is gone its blocks are written no more: a later thread
 * of the same counters that calls the same (target, call site, key)
 * takes one over and goes on counting in it.  Its `tid` stays that of
 * the thread that made it (identity fields never change); readers merge
 * a call site's blocks over threads anyway.
 *
 * Open addressing under the same lock as the rows: several entries may
 * have one key (blocks of several exited threads); a taken entry becomes
 * a tombstone (tag kept, site 0).  Bounded by the blocks in the file. */
struct spare_slot {
	uint64_t callsite;
	uint32_t tag; /* 0: empty */
	uint32_t site; /* cs_site_at index; 0: taken (a tombstone) */
	uint32_t events_open; /* of the thread that made the block */
	uint32_t epoch; /* cs_g.epoch (low bits) when its thread left it */
};

static struct spare_slot *spares;
static uint64_t spare_mask, spare_used; /* used: entries and tombstones */

static struct spare_slot *spares_new(uint64_t n)
{
	long bytes = (long)(n * sizeof(struct spare_slot));
	long p = cs_syscall6(SYS_mmap, 0, bytes, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p < 0 && p > -4096)
		return NULL;
	cs_syscall6(SYS_madvise, p, bytes, MADV_POPULATE_WRITE, 0, 0, 0);
	return (struct spare_slot *)p;
}

/* Room for one more entry: grown (tombstones dropped) at 3/4 full.
 * Never smaller than before: a child forked by another thread between
 * the two stores below unmaps the new table by the old size
 * (cs_site_rows_after_fork), which must not reach past it into the
 * program's memory. */
static int spare_room(void)
{
	uint64_t n = spares ? spare_mask + 1 : ROWS_MIN_SLOTS, live = 0, i;
	struct spare_slot *tab, *old = spares;

	if (spares && (spare_used + 1) * 4 <= (spare_mask + 1) * 3)
		return 1;
	for (i = 0; spares && i <= spare_mask; i++)
		live += spares[i].site != 0;
	while ((live + 1) * 2 > n)
		n *= 2;
	tab = spares_new(n);
	if (!tab)
		return 0;
	for (i = 0; old && i <= spare_mask; i++) {
		uint64_t h;

		if (!old[i].site)
			continue;
		for (h = cs_site_hash(old[i].tag, old[i].callsite); tab[h & (n - 1)].tag; h++)
			;
		tab[h & (n - 1)] = old[i];
	}
	i = spare_mask + 1; /* the old table's slots */
	spares = tab;
	__atomic_store_n(&spare_mask, n - 1, __ATOMIC_RELEASE); /* after spares */
	spare_used = live;
	if (old)
		cs_syscall6(SYS_munmap, (long)old, (long)(i * sizeof(*old)), 0, 0, 0, 0);
	return 1;
}

void cs_site_rows_leave(uint64_t callsite, uint32_t tag, uint32_t site, uint32_t events_open,
			uint64_t epoch)
{
	uint64_t h;

	take();
	if (spare_room()) {
		for (h = cs_site_hash(tag, callsite); spares[h & spare_mask].tag; h++)
			;
		spares[h & spare_mask] = (struct spare_slot){
			.callsite = callsite,
			.tag = tag,
			.site = site,
			.events_open = events_open,
			/* The epoch the thread's call sites were valid in,
			 * not the current one: a dlclose since must make
			 * the block's call site stale (review helper 78). */
			.epoch = (uint32_t)epoch,
		};
		spare_used++;
	}
	drop();
}

uint32_t cs_site_rows_adopt(uint64_t callsite, uint32_t tag, uint32_t events_open)
{
	uint32_t epoch = (uint32_t)__atomic_load_n(&cs_g.epoch, __ATOMIC_ACQUIRE), site = 0;
	uint64_t h;

	take();
	for (h = cs_site_hash(tag, callsite); spares && spares[h & spare_mask].tag; h++) {
		struct spare_slot *s = &spares[h & spare_mask];

		/* A module unloaded since may have left its call site's
		 * address to another one: only overflow rows (call site 0)
		 * outlive that. */
		if (s->site && s->callsite == callsite && s->tag == tag &&
		    s->events_open == events_open && (!callsite || s->epoch == epoch)) {
			site = s->site;
			s->site = 0;
			break;
		}
	}
	drop();
	return site;
}

void cs_site_rows_after_fork(void)
{
	/* A child starts a file of its own, with no rows; the parent's
	 * thread that held the lock does not exist here. */
	if (slots)
		slots_free(slots, mask + 1);
	slots = NULL;
	mask = used = 0;
	if (spares)
		cs_syscall6(SYS_munmap, (long)spares, (long)((spare_mask + 1) * sizeof(*spares)), 0,
			    0, 0, 0);
	spares = NULL;
	spare_mask = spare_used = 0;
	lock = 0;
	cs_g.nrows = 0;
}
