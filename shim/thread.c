/* SPDX-License-Identifier: MIT */
/* Per-thread state: made at a thread's first wrapped call (the slow path,
 * with the full register state saved by the trampoline), torn down when the
 * thread exits.  The thread's site blocks stay in the report file. */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim/internal.h"

#define CS_SITE_TABLE_MIN 1024u

static pthread_key_t thread_key;
/* Threads that could not be set up, or are exiting: they pass through. */
static struct cs_thread disabled_thread = {.ready = 0, .group_fd = -1};

static void *map_zeroed(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void stack_bounds(struct cs_thread *t)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	t->stack_lo = t->stack_hi = 0;
	if (pthread_getattr_np(pthread_self(), &attr))
		return;
	if (!pthread_attr_getstack(&attr, &addr, &size)) {
		t->stack_lo = (uint64_t)(uintptr_t)addr;
		t->stack_hi = t->stack_lo + size;
	}
	pthread_attr_destroy(&attr);
}

static struct cs_thread *thread_create(void)
{
	struct cs_thread *t = map_zeroed(sizeof(*t));
	struct cs_thread_block *b;

	if (!t)
		return NULL;
	t->tid = (uint32_t)gettid();
	t->mask = CS_SITE_TABLE_MIN - 1;
	t->table = map_zeroed(CS_SITE_TABLE_MIN * sizeof(*t->table));
	if (!t->table || cs_events_open_thread(t) < 0) {
		if (t->table)
			munmap(t->table, CS_SITE_TABLE_MIN * sizeof(*t->table));
		munmap(t, sizeof(*t));
		return NULL;
	}
	stack_bounds(t);
	b = cs_output_reserve(sizeof(*b));
	if (b) {
		b->tid = t->tid;
		for (unsigned i = 0; i < cs_g.nevents; i++) {
			if (cs_g.enc[i].kind == CS_EVENT_TSC)
				b->events_open |= 1u << i;
		}
		for (unsigned i = 0; i < t->nperf; i++)
			b->events_open |= 1u << t->perf_event[i];
		cs_output_publish(b, CS_BLOCK_THREAD);
	}
	pthread_setspecific(thread_key, t);
	t->ready = 1;
	return t;
}

/* pthread key destructor: the thread is exiting. */
static void thread_destroy(void *p)
{
	struct cs_thread *t = p;

	cs_tls_guard++;
	cs_tls_thread = &disabled_thread;
	cs_events_close_thread(t);
	munmap(t->table, (t->mask + 1) * sizeof(*t->table));
	munmap(t, sizeof(*t));
	cs_tls_guard--;
}

/* Doubles the site table when it is half full. */
static int grow_table(struct cs_thread *t)
{
	uint64_t n = (t->mask + 1) * 2, i;
	struct cs_site_slot *nt = map_zeroed(n * sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (i = 0; i <= t->mask; i++) {
		struct cs_site_slot *s = &t->table[i];
		uint64_t h;

		if (!s->site)
			continue;
		for (h = cs_site_hash(s->target, s->callsite, s->key);; h++) {
			if (!nt[h & (n - 1)].site) {
				nt[h & (n - 1)] = *s;
				break;
			}
		}
	}
	munmap(t->table, (t->mask + 1) * sizeof(*t->table));
	t->table = nt;
	t->mask = n - 1;
	return 0;
}

struct cs_site_block *cs_thread_site(struct cs_thread *t, uint32_t target, uint64_t callsite,
				     uint64_t key)
{
	struct cs_site_block *b;
	struct cs_site_slot *s;
	uint64_t h, base = 0;

	for (h = cs_site_hash(target, callsite, key);; h++) {
		s = &t->table[h & t->mask];
		if (!s->site)
			break;
		if (s->callsite == callsite && s->target == target && s->key == key)
			return s->site;
	}
	if ((t->nsites + 1) * 2 > t->mask + 1) {
		if (grow_table(t) < 0)
			return NULL;
		return cs_thread_site(t, target, callsite, key);
	}
	b = cs_output_reserve((uint32_t)cs_site_block_size(cs_g.nevents));
	if (!b) {
		CS_LOG_ONCE("report file full (CACHESHIM_CAPACITY_MB); new call sites "
			    "are not recorded");
		return NULL;
	}
	b->target = target;
	b->tid = t->tid;
	b->callsite = callsite;
	b->module = cs_modules_lookup(callsite, &base);
	b->offset = callsite - base;
	b->nevents = cs_g.nevents;
	b->key = key;
	cs_output_publish(b, CS_BLOCK_SITE);
	s->callsite = callsite;
	s->target = target;
	s->key = key;
	s->site = b;
	t->nsites++;
	return b;
}

uint64_t cs_thread_enter_slow(struct cs_frame *f)
{
	const struct cs_target *tg = &cs_g.targets[f->target_idx];
	struct cs_thread *t;
	struct cs_site_block *site;

	cs_tls_guard = 1;
	t = cs_tls_thread;
	if (!t) {
		t = thread_create();
		cs_tls_thread = t ? t : &disabled_thread;
		if (!t)
			goto pass;
	}
	if (!t->ready)
		goto pass;
	site = cs_thread_site(t, tg->id, f->ret_addr, cs_hot_key(f, tg->argn));
	if (!site)
		goto pass;
	cs_hot_begin(t, f, site);
	cs_tls_guard = 0;
	return CS_ENTER_MEASURE;
pass:
	if (cs_g.hdr)
		__atomic_fetch_add(&cs_g.hdr->lost_calls, 1, __ATOMIC_RELAXED);
	cs_tls_guard = 0;
	return CS_ENTER_PASS;
}

int cs_thread_init(void)
{
	return -pthread_key_create(&thread_key, thread_destroy);
}

void cs_thread_after_fork(void)
{
	struct cs_thread *t = cs_tls_thread;

	/* The inherited counters count the parent; the site blocks belong to
	 * the parent's file.  Start afresh at the child's next call. */
	if (t && t != &disabled_thread) {
		cs_events_close_thread(t);
		munmap(t->table, (t->mask + 1) * sizeof(*t->table));
		munmap(t, sizeof(*t));
	}
	cs_tls_thread = NULL;
	pthread_setspecific(thread_key, NULL);
}
