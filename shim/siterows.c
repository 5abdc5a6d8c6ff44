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

void cs_site_rows_after_fork(void)
{
	/* A child starts a file of its own, with no rows; the parent's
	 * thread that held the lock does not exist here. */
	if (slots)
		slots_free(slots, mask + 1);
	slots = NULL;
	mask = used = 0;
	lock = 0;
	cs_g.nrows = 0;
}
