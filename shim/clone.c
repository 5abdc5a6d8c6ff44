/* SPDX-License-Identifier: MIT */
/*
 * glibc's clone() making a new process (no CLONE_VM): like _Fork, no fork
 * handler runs in its child, so the child cannot set up a file of its own,
 * and left alone its calls were measured into the parent's file (shared
 * memory), counted as the parent's and torn by two processes' unlocked
 * updates.  The child now runs unmeasured: its start routine is entered
 * through clone_child, which turns measuring off with plain stores first,
 * as _Fork's child does (shim/init.c), with signals blocked until then.
 *
 * A child sharing the memory while the caller waits (CLONE_VM |
 * CLONE_VFORK) is vfork's case: the calling thread is marked as vfork's
 * is (shim/vfork.S).  Left as they are: other children sharing the memory
 * (CLONE_VM: the parent's own shim state is theirs too) or given a TLS of
 * the caller's making
 * (CLONE_SETTLS: the shim's thread-local state there is not ours to
 * write), and the clone system call made without glibc (the shim cannot
 * see it; design.md says so).
 */
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>

#include "shim/internal.h"

struct clone_start {
	int (*fn)(void *);
	void *arg;
	uint64_t mask; /* the caller's signal mask */
};

/* The child's first code, on its new stack.  s lies in the parent's
 * stack frame below, of which the child has its own copy. */
static int clone_child(void *p)
{
	const struct clone_start *s = p;

	cs_g.enabled = 0; /* no new thread or call site sets up */
	cs_g.generation++; /* calls in flight return unmeasured */
	cs_tls_thread = NULL; /* its calls pass through */
	cs_signals_restore(&s->mask);
	return s->fn(s->arg);
}

CS_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	static int (*real)(int (*)(void *), void *, int, void *, ...);
	struct clone_start s;
	pid_t *ptid, *ctid;
	void *tls;
	va_list ap;
	int ret;

	/* Only read by glibc when flags name them; passed on as they came. */
	va_start(ap, arg);
	ptid = va_arg(ap, pid_t *);
	tls = va_arg(ap, void *);
	ctid = va_arg(ap, pid_t *);
	va_end(ap);
	if (!real)
		real = (int (*)(int (*)(void *), void *, int, void *, ...))dlsym(RTLD_NEXT, "clone");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	/* vfork by clone: the child shares this thread's state while the
	 * thread waits, as vfork's does (shim/vfork.S). */
	if (fn && (flags & (CLONE_VM | CLONE_VFORK | CLONE_SETTLS | CLONE_THREAD)) ==
			  (CLONE_VM | CLONE_VFORK))
		cs_vfork_mark();
	if (!fn || (flags & (CLONE_VM | CLONE_SETTLS)))
		return real(fn, stack, flags, arg, ptid, tls, ctid);
	s.fn = fn;
	s.arg = arg;
	/* A handler of the child's, before clone_child's stores, would be
	 * measured into the parent's file. */
	cs_signals_block(&s.mask);
	ret = real(clone_child, stack, flags, &s, ptid, tls, ctid);
	cs_signals_restore(&s.mask); /* a raw system call: errno stays */
	return ret;
}
