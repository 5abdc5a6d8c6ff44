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

#include "shim/internal.h"

__thread uint64_t cs_tls_stack_lo, cs_tls_stack_hi;
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

/* The main thread asks glibc only when the cheap way cannot tell
 * (mainstack.c). */
void cs_thread_stack_main(void)
{
	uint64_t lo, hi;

	if (cs_main_stack(&lo, &hi)) {
		cs_tls_stack_lo = lo;
		cs_tls_stack_hi = hi;
	} else {
		learn_stack();
	}
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
