/* SPDX-License-Identifier: MIT */
/*
 * A thread's stack bounds, learnt where asking is safe.  The shim needs
 * them at a thread's first wrapped call (the stack-argument copy must not
 * run past the top; the wrapper's frames may take a quarter of the stack),
 * and asked there, pthread_getattr_np (which mallocs) deadlocked when that
 * first call was made inside malloc with an arena's lock held
 * (CACHESHIM_TARGETS=_int_malloc and a Python thread).  So:
 *   - pthread_create is wrapped: the new thread asks first thing, before
 *     the program's start routine runs, holding no lock;
 *   - the main thread asks in the constructor (cs_thread_stack_main);
 *   - threads made otherwise (C11 thrd_create, clone) get bounds that
 *     need no call (thread.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "shim/internal.h"

__thread uint64_t cs_tls_stack_lo, cs_tls_stack_hi, cs_tls_stack_floor;
__thread int cs_tls_thread_done;
int cs_threads_starting;

/* This thread's stack into the TLS variables above (unchanged when glibc
 * cannot say). */
static void learn_stack(void)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;

	if (pthread_getattr_np(pthread_self(), &attr))
		return;
	if (!pthread_attr_getstack(&attr, &addr, &size)) {
		cs_tls_stack_lo = (uint64_t)(uintptr_t)addr;
		cs_tls_stack_hi = cs_tls_stack_lo + size;
	}
	pthread_attr_destroy(&attr);
}

/* Below the stack mapping, as far as the kernel's stack guard gap (256
 * pages by default), neither brk nor an mmap without MAP_FIXED places
 * anything; the mapping only grows down. */
#define CS_STACK_GUARD_GAP (1u << 20)

/* The main thread asks glibc only when the cheap way cannot tell
 * (mainstack.c).  Without a stack limit glibc's answer reaches down to
 * the mapping below the stack at this moment: the kernel then lays the
 * address space out bottom-up, and that is the heap's end (or the last
 * mmap's), which brk and later mappings grow past, into that range.  A
 * coroutine's stack taken from there was taken for the main thread's,
 * and the argument window copied past its top up to 256 bytes, beyond
 * the heap's end (SIGSEGV; review helper 70, a stack from sbrk under
 * `ulimit -s unlimited`).  So the range that counts as this stack
 * starts a guard gap below the stack mapping, whose start lies below
 * this frame; calls deeper than that have their window probed, as on
 * any other stack.  The wrapper's depth is still bounded by glibc's
 * whole range (cs_tls_stack_floor). */
void cs_thread_stack_main(void)
{
	uint64_t lo, hi, here = (uint64_t)(uintptr_t)__builtin_frame_address(0) & ~4095ull;
	struct rlimit rl;

	if (cs_main_stack(&lo, &hi)) {
		cs_tls_stack_lo = lo;
		cs_tls_stack_hi = hi;
		return;
	}
	learn_stack();
	if (!cs_tls_stack_hi || getrlimit(RLIMIT_STACK, &rl) || rl.rlim_cur != RLIM_INFINITY ||
	    here <= cs_tls_stack_lo + CS_STACK_GUARD_GAP || here >= cs_tls_stack_hi)
		return;
	cs_tls_stack_floor = cs_tls_stack_lo;
	cs_tls_stack_lo = here - CS_STACK_GUARD_GAP;
}

struct start {
	void *(*fn)(void *);
	void *arg;
};

static void mark_done(void *unused)
{
	(void)unused;
	cs_tls_thread_done = 1;
}

static void *start(void *p)
{
	struct start s = *(struct start *)p;
	void *ret;

	/* glibc restored the thread's signal mask before calling us. */
	__atomic_fetch_sub(&cs_threads_starting, 1, __ATOMIC_RELEASE);
	/* The shim's own calls: targets among them (malloc...) pass through
	 * unmeasured.  Signals stay open (not cs_guard_take_quiet): a
	 * program's malloc may wait for a thread that waits for this one's
	 * signal handler (a garbage collector stopping the world).  errno is
	 * the new thread's, 0, for the program. */
	cs_guard_take();
	free(p);
	learn_stack();
	errno = 0;
	cs_guard_drop();
	/* Whether it returns or calls pthread_exit, the thread is exiting
	 * after this: key destructors only (thread.c). */
	pthread_cleanup_push(mark_done, NULL);
	ret = s.fn(s.arg);
	pthread_cleanup_pop(1);
	return ret;
}

CS_EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			     void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
	struct start *s;
	int saved, ret;

	if (!real)
		real = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
				void *))dlsym(RTLD_NEXT, "pthread_create");
	if (!real)
		return EAGAIN;
	/* Not profiling (no target): nothing to learn. */
	if (!__atomic_load_n(&cs_g.enabled, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&cs_g.sandboxed, __ATOMIC_RELAXED))
		return real(thread, attr, fn, arg);
	cs_guard_take(); /* errno is read through a function that may be a target */
	saved = errno;
	s = malloc(sizeof(*s));
	errno = saved;
	cs_guard_drop();
	if (!s)
		return real(thread, attr, fn, arg); /* bounds that need no call */
	s->fn = fn;
	s->arg = arg;
	/* The creator and the new thread, until each has its mask back. */
	__atomic_fetch_add(&cs_threads_starting, 2, __ATOMIC_RELEASE);
	ret = real(thread, attr, start, s);
	__atomic_fetch_sub(&cs_threads_starting, ret ? 2 : 1, __ATOMIC_RELEASE);
	if (ret) {
		cs_guard_take();
		saved = errno;
		free(s);
		errno = saved;
		cs_guard_drop();
	}
	return ret;
}
