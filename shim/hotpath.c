/* SPDX-License-Identifier: MIT */
/* The per-call hot path: what runs at entry and exit of every wrapped call.
 *
 * Cost budget (see docs/performance.md, measured by `make bench`): the
 * counter reads themselves are the floor, one PERF_FORMAT_GROUP read()
 * each side (~1.5 us on the development VMs) or the fenced rdtsc pair
 * (~33 ns).  Everything else must stay a small fraction of that: one TLS
 * load, an epoch compare, one open-addressing probe of the thread's site
 * table (usually a hit on the first slot), a push and a pop on the nesting
 * stack, a few integer updates per event for the site and one for its
 * series window.  No malloc, no locks, no atomics, no libc calls, no
 * syscalls but the counter read (issued inline, so errno is never
 * touched; or rdpmc, see shim/rdpmc.h) and, rarely, the probe of a
 * coroutine stack's next page (readable_window), and no memset or memcpy the
 * compiler would make of a loop (built without them: they may be targets;
 * tests/robust/test_libc_targets.sh checks the object's imports).  No re-entry guard either: every
 * update is a single unlocked read-modify-write instruction, so a signal
 * handler that calls a target in the middle of this code is measured and
 * counted too.  Built with -mgeneral-regs-only: the trampoline does not
 * save vector or x87 registers around these calls.
 *
 * The `tsc` timestamps are not taken here but by the trampoline, right
 * around its call of the target, so that nothing of this file is inside
 * a call's own bracket (only inside an enclosing call's).
 *
 * Measured (callgrind, `tsc` alone, one call site; session 19): ~154
 * instructions in cs_hot_enter (its inlined hash included) and ~167 in the
 * exit, besides the trampoline's ~148 (64 of them the stack-argument copy,
 * 5 its 64-byte alignment and the frame-pointer slot).  Work between fences runs as chains of
 * dependent loads (target, thread, table, slot, site; the value into its
 * histogram bucket), so latency costs more than count: the trampoline
 * and site lookup with no statistics are already ~1.31x the rdtsc floor;
 * statistics, histogram, series window and nesting add ~14 ns (the
 * histogram bucket ~3-4 of them).  Per call site a call touches three
 * cache lines: its table slot, the site block's second line (counts and
 * the first event's statistics, common/format.h) and the histogram
 * bucket; with thousands of call sites these miss L2 and set the cost.
 * The counts line and the bucket line are prefetched at entry (the
 * bucket guessed from the thread's last call), so only the slot is waited
 * for before the call: 10,000 call sites 79.5 -> 72.8 ns per call with the
 * bucket guessed from the site's minimum (a load of the counts line before
 * the fence), -> ~68 with the thread's guess and a table at most 3/4 full
 * (pinned A/B, session 8); one call site the same.
 *
 * Anything that is not a hit (first call of a thread, a new call site, a
 * nested or series block to make, series windows to merge) returns a
 * SLOW code and is done by thread.c with the full register state saved.
 */
#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <sys/syscall.h>

#include "shim/internal.h"
#include "shim/rawsys.h"
#include "shim/rdpmc.h"

__thread struct cs_thread *cs_tls_thread;
__thread unsigned cs_tls_guard; /* nonzero while shim code runs */
__thread uintptr_t cs_tls_guard_frame;

/* read(2) without libc (shim/rawsys.h): errno and targets like `read` stay out. */
static inline long sys_read(int fd, void *buf, unsigned long n)
{
	return cs_syscall6(SYS_read, fd, (long)buf, (long)n, 0, 0, 0);
}

/* Always inlined into the two hooks: a call per helper was a third of the
 * hooks' instructions (callgrind). */
#define HOT static inline __attribute__((always_inline))

HOT void group_read(struct cs_thread *t, struct cs_group_read *out)
{
	uint64_t not_running = 0, nr;
	unsigned i;

	/* rdpmc where every member's page allows it; the group is scheduled
	 * as a whole, so the leader's off-PMU time stands for all. */
	if (t->rdpmc) {
		for (i = 0; i < t->nperf; i++) {
			if (cs_rdpmc_read(t->pages[i], cs_rdpmc_insn, &out->values[i], &nr) < 0)
				goto syscall;
			if (i == 0)
				not_running = nr;
		}
		out->nr = t->nperf;
		out->time_enabled = not_running;
		out->time_running = 0;
		return;
	}
syscall:
	/* Under a seccomp filter refusing read (shim/sandbox.c): the call
	 * is dropped at its exit. */
	if (__builtin_expect(cs_g.sandbox_refused & CS_SB_READ, 0)) {
		out->nr = 0;
		return;
	}
	if (sys_read(t->group_fd, out, t->read_size) != (long)t->read_size)
		out->nr = 0; /* marks the reading unusable */
}

void cs_hot_read(struct cs_thread *t, struct cs_group_read *out)
{
	if (t->group_fd >= 0)
		group_read(t, out);
}

/* Size class of an argument: 0, 1, 2-3, 4-7, ... keyed by its lower bound. */
HOT uint64_t size_class(uint64_t v)
{
	return v ? 1ull << (63 - __builtin_clzll(v)) : 0;
}

HOT uint64_t key_of(const struct cs_frame *f, unsigned argn)
{
	if (!argn)
		return CS_KEY_NONE;
	if (argn <= 6)
		return size_class((&f->rdi)[argn - 1]);
	/* Stack arguments: the 7th argument is the first qword. */
	return size_class(((const uint64_t *)f->stack_args)[argn - 7]);
}

uint64_t cs_hot_key(const struct cs_frame *f, unsigned argn)
{
	return key_of(f, argn);
}

/* The slot's site value of (target, callsite, key) in t's table: 0 if it
 * has none, CS_SITE_NOT_MADE, else a site block's cs_site_at index. */
HOT uint32_t find_site(const struct cs_thread *t, uint32_t target, uint64_t callsite, uint64_t key)
{
	/* One load of the table: a handler may replace it meanwhile, and the
	 * old one stays mapped. */
	const struct cs_site_table *tab = __atomic_load_n(&t->sites, __ATOMIC_ACQUIRE);
	uint32_t tag = cs_site_tag(target, key), site;
	uint64_t h = cs_site_hash(tag, callsite);
	const struct cs_site_slot *s;

	for (;; h++) {
		s = &tab->slot[h & tab->mask];
		site = __atomic_load_n(&s->site, __ATOMIC_ACQUIRE);
		if (!site || (s->callsite == callsite && s->tag == tag))
			return site;
	}
}

/* Single-instruction read-modify-writes: a signal arriving on this thread
 * sees each field either before or after, never half-updated, so a
 * handler's call may update the same site without any lock or atomic. */
HOT void add64(uint64_t *p, uint64_t v)
{
	__asm__ volatile("addq %1, %0" : "+m"(*p) : "r"(v) : "cc");
}

HOT void inc64(uint64_t *p)
{
	__asm__ volatile("incq %0" : "+m"(*p) : : "cc");
}

HOT void dec64(uint64_t *p)
{
	__asm__ volatile("decq %0" : "+m"(*p) : : "cc", "memory");
}

HOT void inc32(uint32_t *p)
{
	__asm__ volatile("incl %0" : "+m"(*p) : : "cc");
}

/* 128-bit add: the carry between the two halves lives in rflags, which a
 * signal handler's return restores. */
HOT void add128(uint64_t *lo, uint64_t *hi, unsigned __int128 v)
{
	__asm__ volatile("addq %2, %0\n\tadcq %3, %1"
			 : "+m"(*lo), "+m"(*hi)
			 : "r"((uint64_t)v), "r"((uint64_t)(v >> 64))
			 : "cc");
}

/* *p = v if v < *p (less) or v > *p (!less), by unlocked cmpxchg. */
HOT void store_if(uint64_t *p, uint64_t v, int less)
{
	uint64_t old = *p;

	while (less ? v < old : v > old) {
		uint64_t seen;

		__asm__ volatile("cmpxchgq %2, %1"
				 : "=a"(seen), "+m"(*p)
				 : "r"(v), "0"(old)
				 : "cc");
		if (seen == old)
			break;
		old = seen;
	}
}

/* Exchange-and-add in one instruction: a signal handler's call on this
 * thread gets the next number, never the same one. */
HOT uint64_t xadd64(uint64_t *p, uint64_t v)
{
	__asm__ volatile("xaddq %0, %1" : "+r"(v), "+m"(*p) : : "cc");
	return v;
}

/* The nesting stack: where nested calls add their values for the
 * enclosing call's exclusive (self) values.  It lives in the thread's own
 * memory, never in a trampoline frame: after a longjmp or an exception a
 * frame's memory belongs to someone else.  Entries whose frame lies at or
 * below a new frame's address are dead (that stack was unwound) and are
 * dropped.  An entry is written before depth is raised, so a signal
 * handler's call in between overwrites it at worst (that call then has no
 * nesting data); memory safety never depends on it. */
HOT struct cs_nest *nest_at(const struct cs_thread *t, uint64_t i)
{
	return (struct cs_nest *)((char *)t->nest + i * t->nest_stride);
}

HOT void nest_push(struct cs_thread *t, struct cs_frame *f, unsigned n)
{
	uint64_t d = t->depth;
	struct cs_nest *e;
	unsigned i;

	while (d && nest_at(t, d - 1)->frame <= (uint64_t)(uintptr_t)f)
		d--;
	f->nest = 0;
	if (t->nest && d < CS_NEST_DEPTH) {
		e = nest_at(t, d);
		e->frame = (uint64_t)(uintptr_t)f;
		e->nchildren = 0;
		for (i = 0; i < n; i++)
			e->child[i] = 0;
		f->nest = ++d;
	}
	t->depth = d;
}

/* Takes the call's nested sums into f and gives its values to the
 * enclosing call, if that is still live. */
HOT void nest_pop(struct cs_thread *t, struct cs_frame *f, const uint64_t *v, unsigned n)
{
	uint64_t d = t->depth, self = (uint64_t)(uintptr_t)f;
	struct cs_nest *e;
	unsigned i;

	f->nchildren = 0;
	if (f->nest && f->nest <= d && (e = nest_at(t, f->nest - 1))->frame == self) {
		/* Nothing nested (the common case): no sums to take. */
		if ((f->nchildren = e->nchildren) != 0)
			for (i = 0; i < n; i++)
				f->child[i] = e->child[i];
		d = f->nest - 1;
	} else {
		while (d && nest_at(t, d - 1)->frame <= self)
			d--;
	}
	t->depth = d;
	if (!d || !v)
		return;
	e = nest_at(t, d - 1);
	for (i = 0; i < n; i++)
		add64(&e->child[i], v[i]);
	inc64(&e->nchildren);
}

#define CS_PAGE 4096u

/* How much of the window [args, args + avail) can be read, for a call on
 * a stack whose top is unknown: a coroutine's stack may end right above
 * the call's arguments, with a guard page or nothing after it, and the
 * trampoline's copy would fault there.  Each following page is probed by
 * a futex wait that cannot wait (a zero timeout): the kernel reads the
 * word and says EFAULT where it cannot, EAGAIN or ETIMEDOUT where it can.
 * futex, because no sandbox refuses it (glibc's locks need it): a
 * seccomp filter that killed on process_vm_readv killed the program, and
 * mincore cannot see a PROT_NONE guard.  The copy stops at the first page
 * that cannot be read. */
static __attribute__((noinline, cold)) uint64_t readable_window(uint64_t args, uint64_t avail)
{
	static const struct timespec now = {0, 0};
	uint64_t page = (args | (CS_PAGE - 1)) + 1, end = args + avail;

	for (; page < end; page += CS_PAGE) {
		if (cs_syscall6(SYS_futex, (long)page, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, (long)&now,
				0, 0) == -EFAULT)
			return page - args;
	}
	return avail;
}

/* Writes (without changing) a word on each stack page the trampoline
 * writes below frame f once the counters are read: the copied window of
 * stack arguments and the target's return address (shim/trampoline.S sets
 * rsp to w - ((w - args) & 48), w = (f & -16) - cs_window, which keeps the
 * arguments' address modulo 64).  A first touch of such a page is a page
 * fault, which was counted as the call's own (review helper 56: with a
 * 4 KB window, 809 faults for 800 in 8 threads' first calls).  One
 * read-modify-write instruction each: whatever lies there below this
 * function's frame (a signal handler's frame, say) keeps its value.
 *
 * The target's red zone (CS_RED_ZONE bytes below its return address) too:
 * cs_hot_exit pushes its callee-saved registers there before it reads the
 * counters at the end, and where they crossed into a fresh page that page
 * fault was the call's (3 of 256 calls of rt_leaf at the 256 16-byte
 * positions of a page: tests/robust/test_stack_pages.sh).  The ABI lets
 * the target itself write its red zone at any time, so no page is written
 * here that the call could not write anyway. */
#define CS_RED_ZONE 128u

HOT void touch_below(const struct cs_frame *f)
{
	uint64_t top = (uint64_t)(uintptr_t)f, w = (top & ~15ull) - cs_window,
		 p = w - ((w - f->stack_args) & 48) - 8 - CS_RED_ZONE;

	for (; p < top; p = (p | (CS_PAGE - 1)) + 1)
		__asm__ volatile("orb $0, %0" : "+m"(*(volatile uint8_t *)(uintptr_t)p) : : "cc");
}

/* Reads a byte of each page of the window [args, args + bytes) the
 * trampoline copies after the counters are read: a page of it never
 * written (a caller's buffer the target is to fill) was a read fault in
 * the call (16 of 256 calls in tests/robust/test_stack_pages.sh; review
 * helper 58).  Read, not written: such a page is mapped to the zero page,
 * and the target's own first write there stays its fault, as it is
 * without the wrapper; written here, it would be hidden (and this is the
 * caller's live memory, which other threads may be writing). */
HOT void touch_window(uint64_t args, uint64_t bytes)
{
	uint64_t p;

	for (p = args; p < args + bytes; p = (p | (CS_PAGE - 1)) + 1)
		(void)*(volatile const uint8_t *)(uintptr_t)p;
}

HOT void begin(struct cs_thread *t, struct cs_frame *f, struct cs_site_block *site, unsigned n)
{
	uint64_t args = f->stack_args, avail = cs_window;

	f->site = site;
	f->generation = cs_g.generation;
	f->stolen0 = t->stolen;
	inc64(&site->entered);
	/* The exit updates the site's counts line and one histogram bucket:
	 * fetching both now lets their misses overlap the call instead of
	 * being waited for after it.  The bucket is guessed from the thread's
	 * last call (a guess the site's own line would give better costs a
	 * load the fence at the call then waits for).  A wrong guess costs a
	 * wasted line fetch, never a value. */
	__builtin_prefetch(&site->calls, 1, 3);
	__builtin_prefetch(&site->stat[0].hist[t->last_bucket], 1, 3);
	/* Never copy past the top of the thread's own stack (a fault).  One
	 * unsigned compare tests stack_lo <= args < stack_hi.  On other stacks
	 * (coroutines, the signal stack) the top is unknown: a window reaching
	 * into the next page is checked (rarely: 1 call in 16 by position). */
	if (args - t->stack_lo < t->stack_hi - t->stack_lo) {
		if (t->stack_hi - args < avail)
			avail = t->stack_hi - args;
	} else if ((args & (CS_PAGE - 1)) + avail > CS_PAGE) {
		avail = readable_window(args, avail);
	}
	f->copy_qwords = avail / 8;
	nest_push(t, f, n);
	/* The trampoline takes the timestamp after this, right before the
	 * call (and the one at the exit right after it), after its copy. */
	if (t->group_fd >= 0) {
		touch_below(f);
		touch_window(args, avail);
		group_read(t, &f->start);
	}
}

void cs_hot_begin(struct cs_thread *t, struct cs_frame *f, struct cs_site_block *site)
{
	begin(t, f, site, cs_g.nevents);
}

/* Wrapped functions tail-jumping to each other in a row: each call-through
 * keeps a frame, so beyond this many the calls run inside the outer call's
 * measurement instead (counted as dropped) and the stack stays bounded. */
#define CS_TAIL_MAX 16u

HOT uint64_t callsite_of(const struct cs_frame *f)
{
	unsigned n = 0;
	uint64_t rbp;

	/* A wrapped function tail-jumped to this one: its return address is
	 * the trampoline's.  The wrapped function restored rbp (callee-saved)
	 * before jumping, so the trampoline frame it ran in is the one our
	 * saved rbp points to; report the call site of that outer call.  That
	 * one may have been entered by a tail jump too (a deleting destructor
	 * jumping to operator delete(void *, size_t), which jumps to operator
	 * delete(void *)): follow the chain to the call that started it. */
	while (__builtin_expect(f->ret_addr == (uint64_t)(uintptr_t)cs_trampoline_return, 0) &&
	       n++ < CS_TAIL_MAX) {
		rbp = *(const uint64_t *)((uintptr_t)f + CS_FRAME_SIZE);
		f = (const struct cs_frame *)(uintptr_t)(rbp - CS_FRAME_SIZE);
	}
	return f->ret_addr;
}

uint64_t cs_hot_callsite(const struct cs_frame *f)
{
	return callsite_of(f);
}

/* Measured calls still live around frame f (calls abandoned by a longjmp
 * are dropped from the nesting stack first). */
static inline uint64_t live_depth(struct cs_thread *t, const struct cs_frame *f)
{
	uint64_t d = t->depth;

	if (!t->nest)
		return 0;
	while (d && nest_at(t, d - 1)->frame <= (uint64_t)(uintptr_t)f)
		d--;
	t->depth = d;
	return d;
}

/* An exception is unwinding the trampoline frame f (shim/unwindreg.c's
 * personality routine): that call and every one below it are over, so
 * they leave the nesting stack now.  Left there, they stayed until a new
 * call at or above their frames: a call made after the catch through a
 * deeper chain (a helper the catching function calls) found the
 * abandoned entry on top, took it for its enclosing call and gave it its
 * values, which the catching target's exclusive values then lacked. */
void cs_hot_unwound(const struct cs_frame *f)
{
	struct cs_thread *t = cs_tls_thread;

	if (t && t->ready == 1)
		(void)live_depth(t, f);
}

static unsigned tail_depth(const struct cs_frame *f)
{
	unsigned n = 0;

	while (f->ret_addr == (uint64_t)(uintptr_t)cs_trampoline_return && n < CS_TAIL_MAX) {
		uint64_t rbp = *(const uint64_t *)((uintptr_t)f + CS_FRAME_SIZE);

		f = (const struct cs_frame *)(uintptr_t)(rbp - CS_FRAME_SIZE);
		n++;
	}
	return n;
}

/* True if the guard was left behind: the code that took it was abandoned
 * by a non-local exit, typically a signal handler's siglongjmp out of a
 * wrapper, and measuring on this thread would otherwise stop for good.
 * This call's caller's stack pointer (just below its stack arguments) then
 * lies above that code's frame, which cannot be while it runs: a target it
 * calls is called from below its frame, and a handler interrupting it runs
 * below it too, or on the alternate signal stack (asked of the kernel;
 * this runs only while the guard is up).  The guard is dropped then. */
static __attribute__((noinline)) int guard_left(const struct cs_frame *f)
{
	uintptr_t g = cs_tls_guard_frame, here = (uintptr_t)f->stack_args;
	stack_t ss;

	if (!g || here <= g || (cs_g.sandbox_refused & CS_SB_SIGALTSTACK))
		return 0;
	if (cs_syscall6(SYS_sigaltstack, 0, (long)&ss, 0, 0, 0, 0) != 0 ||
	    (ss.ss_flags & SS_ONSTACK))
		return 0;
	cs_tls_guard = 0;
	cs_tls_guard_frame = 0;
	return 1;
}

/* Whether thread t, not ready, measures this call after all: yes if it
 * called vfork and is back in its own process (vfork suspended it until
 * the child execed or exited); not in the vfork child, whose calls are
 * another process's (unmeasured, as _Fork's child's).  Otherwise a thread
 * whose counters did not open, or that is exiting: the call is lost. */
static __attribute__((noinline, cold)) int ready_now(struct cs_thread *t)
{
	if (t->ready == CS_THREAD_VFORKED) {
		/* Under a seccomp filter refusing getpid (shim/sandbox.c)
		 * whose process this is cannot be asked: not measured, and
		 * counted as not recorded from now on. */
		if (cs_g.sandbox_refused & CS_SB_GETPID) {
			cs_lost_call(CS_LOST_SECCOMP);
			return 0;
		}
		if (cs_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0) != cs_g.pid)
			return 0;
		t->ready = 1;
		return 1;
	}
	cs_lost_call(CS_LOST_THREAD);
	return 0;
}

/* A call that needs the slow path, which makes system calls: under the
 * program's seccomp filter (shim/sandbox.c) it passes through, counted as
 * not recorded. */
static __attribute__((noinline, cold)) uint64_t slow_or_lost(void)
{
	if (!cs_g.sandboxed)
		return CS_ENTER_SLOW;
	cs_lost_call(CS_LOST_SECCOMP);
	return CS_ENTER_PASS;
}

/* A call of a call site whose block could not be made (the report file,
 * or the file system it is on, was full: shim/thread.c): it passes
 * through, counted as not recorded, and only every CS_NOT_MADE_RECHECK-th
 * such call of the thread tries the slow path again.  Trying at every call
 * (two sigprocmask and a failed reservation each) made programs whose new
 * call sites came after the file filled up run many times slower: 8
 * threads on a full 300 KB tmpfs 4.4 s against 0.3 s (review helper 53). */
static __attribute__((noinline, cold)) uint64_t not_made(struct cs_thread *t)
{
	inc32(&t->not_made_calls);
	/* (Under a seccomp filter no try: still why the block was not made.) */
	if (!(t->not_made_calls & (CS_NOT_MADE_RECHECK - 1)) && !cs_g.sandboxed)
		return CS_ENTER_SLOW;
	cs_lost_call(0); /* why the block was not made */
	return CS_ENTER_PASS;
}

/* Whether a nested call of a site without a nested block records without
 * that part here instead of taking the slow path, because the thread's
 * last try to make one found the file full (t->nested_not_made): all but
 * every CS_NOT_MADE_RECHECK-th, as not_made above. */
static __attribute__((noinline, cold)) int nested_skip(struct cs_thread *t)
{
	if (!t->nested_not_made)
		return 0;
	inc32(&t->nested_not_made);
	return (t->nested_not_made & (CS_NOT_MADE_RECHECK - 1)) != 0;
}

/* Whether the call's window needs readable_window's futex probe while a
 * seccomp filter refuses futex (shim/sandbox.c): then it is dropped. */
static __attribute__((noinline, cold)) int window_barred(const struct cs_thread *t,
							 const struct cs_frame *f)
{
	uint64_t args = f->stack_args;

	/* (Called only for a call on a stack other than the thread's.) */
	return (cs_g.sandbox_refused & CS_SB_FUTEX) && (args & (CS_PAGE - 1)) + cs_window > CS_PAGE;
}

uint64_t cs_hot_enter(struct cs_frame *f)
{
	const struct cs_target_hot *tg = &cs_g.hot[f->target_idx];
	struct cs_thread *t = cs_tls_thread;
	struct cs_site_block *site;
	uint32_t idx;

	f->target_addr = tg->call;
	/* The shim's own slow-path code (libc, libpfm4) called a target. */
	if (cs_tls_guard && !guard_left(f))
		return CS_ENTER_PASS;
	if (!t)
		return cs_g.enabled ? slow_or_lost() : CS_ENTER_PASS;
	if (__builtin_expect(t->ready != 1, 0) && !ready_now(t))
		return CS_ENTER_PASS;
	/* After a dlclose the thread's call-site addresses may be stale. */
	if (t->epoch != __atomic_load_n(&cs_g.epoch, __ATOMIC_RELAXED))
		return slow_or_lost();
	/* The counter brackets every read of the table (compiler barriers):
	 * see cs_thread.probing. */
	__asm__ volatile("incq %0" : "+m"(t->probing) : : "cc", "memory");
	idx = find_site(t, cs_target_id(f->target_idx), callsite_of(f), key_of(f, tg->argn));
	dec64(&t->probing);
	if (__builtin_expect(idx <= CS_SITE_NOT_MADE, 0))
		return idx ? not_made(t) : slow_or_lost();
	site = cs_site_at(idx);
	if ((f->ret_addr == (uint64_t)(uintptr_t)cs_trampoline_return &&
	     tail_depth(f) >= CS_TAIL_MAX) ||
	    live_depth(t, f) >= t->max_depth ||
	    (__builtin_expect(f->stack_args - t->stack_lo >= t->stack_hi - t->stack_lo, 0) &&
	     window_barred(t, f))) {
		inc64(&site->entered);
		inc64(&site->dropped);
		return CS_ENTER_PASS;
	}
	/* One event (tsc alone): loops over events unrolled. */
	if (__builtin_expect(cs_g.nevents == 1, 1))
		begin(t, f, site, 1);
	else
		begin(t, f, site, cs_g.nevents);
	return CS_ENTER_MEASURE;
}

HOT void stat_add(struct cs_stat *st, int first, uint64_t v)
{
	add128(&st->sumsq_lo, &st->sumsq_hi, (unsigned __int128)v * v);
	add64(&st->sum, v);
	if (first) {
		/* The first completed call of the site (the cold call). */
		st->first = v;
		st->min = v;
		st->max = v;
	} else {
		store_if(&st->min, v, 1);
		store_if(&st->max, v, 0);
	}
	inc64(&st->hist[cs_hist_index(v)]);
}

HOT void wstat_add(struct cs_wstat *w, int first, uint64_t v)
{
	add64(&w->sum, v);
	if (first) {
		w->min = v;
		w->max = v;
	} else {
		store_if(&w->min, v, 1);
		store_if(&w->max, v, 0);
	}
	inc32(&w->hist[cs_whist_index(v)]);
}

/* Adds the values of call number nth (claimed by record) to its window. */
HOT void series_add(struct cs_series_block *s, uint64_t nth, const uint64_t *v, unsigned n,
		    uint64_t tsc_end)
{
	/* shift is read now: a handler's call may have merged the windows
	 * since nth was claimed, and nth's window moved with it. */
	struct cs_window *win =
		(struct cs_window *)((char *)(s + 1) + (nth >> s->shift) * s->window_size);
	struct cs_wstat *ws = (struct cs_wstat *)(win + 1);
	int first = win->calls == 0;
	unsigned i;

	if (first)
		win->first_tsc = tsc_end;
	for (i = 0; i < n; i++)
		wstat_add(&ws[i], first, v[i]);
	inc64(&win->calls);
}

/* The values of the finished call in f, by event index. */
HOT void call_values(const struct cs_thread *t, const struct cs_frame *f, uint64_t *v, unsigned n)
{
	unsigned i;

	if (t->group_fd < 0 && n == 1 && cs_g.tsc_index == 0) {
		v[0] = f->tsc_end - f->tsc_start; /* tsc alone */
		return;
	}
	for (i = 0; i < n; i++)
		v[i] = 0;
	for (i = 0; i < t->nperf; i++)
		v[t->perf_event[i]] = f->end.values[i] - f->start.values[i];
	if (cs_g.tsc_index >= 0)
		v[cs_g.tsc_index] = f->tsc_end - f->tsc_start;
}

/* Whether this call, finding its series' windows full while a merge waits
 * for a call in flight (shim/thread.c), skips the series here instead of
 * taking the slow path: all but every CS_MERGE_RECHECK-th.  A number that
 * a signal handler's siglongjmp abandoned makes the merge wait its whole
 * CS_MERGE_WAITS calls, each a slow path with two sigprocmask calls and a
 * sum over 256 windows: a program jumping out of a handler every 40 us ran
 * 22x slower with series on (5.6 s against 0.26 s; now 0.32 s). */
static __attribute__((noinline, cold)) int merge_waiting(struct cs_thread *t, uint64_t idx)
{
	uint32_t *w = &t->merge_waits[idx];

	if (!*w || *w >= CS_MERGE_WAITS)
		return 0;
	inc32(w);
	return (*w & (CS_MERGE_RECHECK - 1)) != 0;
}

/* cs_hot_record with the call's values v already computed. */
HOT uint64_t record(struct cs_thread *t, struct cs_frame *f, const uint64_t *v, unsigned n)
{
	struct cs_site_block *site = f->site;
	struct cs_nested_block *nb = NULL;
	struct cs_series_block *sb = NULL;
	uint64_t nth = 0;
	unsigned i;
	int first;

	/* Everything this call needs must exist before anything is written:
	 * the slow path makes it and calls again. */
	if (f->nchildren) {
		/* Under the program's seccomp filter no block can be made
		 * (shim/sandbox.c), nor while the file is full (nested_skip):
		 * the call is recorded without the part that needs one. */
		if (site->nested)
			nb = (struct cs_nested_block *)((char *)cs_g.hdr + site->nested);
		else if (!cs_g.sandboxed && !nested_skip(t))
			return CS_EXIT_SLOW;
	}
	if (t->series) {
		sb = t->series[f->target_idx];
		if (!sb) {
			if (!cs_g.sandboxed)
				return CS_EXIT_SLOW;
		} else if (sb == CS_NO_SERIES) {
			sb = NULL; /* over the series budget */
		} else if (t->series_busy) {
			/* A signal handler's call while the windows merge. */
			inc64(&sb->skipped);
			sb = NULL;
		} else {
			/* Claim this call's number; all windows full: give it back,
			 * merge first. */
			nth = xadd64(&sb->calls, 1);
			/* Windows not mapped in yet, or all used (ready is at
			 * most CS_SERIES_WINDOWS): give the number back; the slow
			 * path maps more in or merges. */
			if ((nth >> sb->shift) >= sb->ready) {
				add64(&sb->calls, (uint64_t)-1);
				if (!cs_g.sandboxed && !merge_waiting(t, f->target_idx))
					return CS_EXIT_SLOW;
				inc64(&sb->skipped);
				sb = NULL;
			}
		}
	}
	first = site->calls == 0;
	for (i = 0; i < n; i++)
		stat_add(&site->stat[i], first, v[i]);
	t->last_bucket = cs_hist_index(v[0]);
	if (nb) {
		int nfirst = nb->calls == 0;

		for (i = 0; i < n; i++) {
			/* Noise can make the nested sum exceed the total. */
			uint64_t self = v[i] > f->child[i] ? v[i] - f->child[i] : 0;

			stat_add(&nb->stat[i], nfirst, v[i]);
			stat_add(&nb->stat[n + i], nfirst, self);
		}
		add64(&nb->children, f->nchildren);
		inc64(&nb->calls);
	}
	if (sb)
		series_add(sb, nth, v, n, f->tsc_end);
	inc64(&site->calls);
	return 0;
}

uint64_t cs_hot_record(struct cs_thread *t, struct cs_frame *f)
{
	uint64_t v[CS_MAX_EVENTS];
	unsigned n = cs_g.nevents;

	call_values(t, f, v, n);
	return record(t, f, v, n);
}

/* cs_hot_exit when tsc is the only event and no perf group is open: one
 * value, every loop over the events unrolled. */
static __attribute__((noinline)) uint64_t exit_tsc(struct cs_thread *t, struct cs_frame *f)
{
	uint64_t v = f->tsc_end - f->tsc_start;

	nest_pop(t, f, &v, 1);
	return record(t, f, &v, 1);
}

static __attribute__((noinline)) uint64_t exit_any(struct cs_thread *t, struct cs_frame *f)
{
	uint64_t v[CS_MAX_EVENTS];
	unsigned n = cs_g.nevents;

	if (t->group_fd >= 0) {
		f->end.nr = 0;
		group_read(t, &f->end);
		/* A perf reading is usable only if both reads succeeded and the
		 * group ran the whole call: its off-PMU time (enabled - running,
		 * from read() or from the mmap page alike) did not grow (no
		 * multiplexing). */
		if (!f->end.nr || !f->start.nr ||
		    f->end.time_enabled - f->end.time_running !=
			    f->start.time_enabled - f->start.time_running) {
			nest_pop(t, f, NULL, n);
			inc64(&f->site->dropped);
			return 0;
		}
	}
	call_values(t, f, v, n);
	nest_pop(t, f, v, n);
	return record(t, f, v, n);
}

uint64_t cs_hot_exit(struct cs_frame *f)
{
	struct cs_thread *t = cs_tls_thread;
	uint64_t stolen;

	/* A forked child returning from a call its parent began (fork itself,
	 * or a target that forked): that call's site, counters and file are
	 * the parent's. */
	if (__builtin_expect(f->generation != cs_g.generation, 0))
		return 0;
	/* The shim's own set-up that ran inside this call (a nested call's
	 * new call site or block, a window merge) is not the call's cost: its
	 * ticks come off the call's `tsc`, here, once, before any value is
	 * taken from the frame. */
	stolen = t->stolen - f->stolen0;
	if (__builtin_expect(stolen != 0, 0)) {
		uint64_t d = f->tsc_end - f->tsc_start;

		f->tsc_start += stolen < d ? stolen : d;
	}
	/* (record never asks for the slow path under the program's seccomp
	 * filter: what it would make is skipped.) */
	if (__builtin_expect(t->group_fd < 0 && cs_g.nevents == 1 && cs_g.tsc_index == 0, 1))
		return exit_tsc(t, f);
	return exit_any(t, f);
}
