/* SPDX-License-Identifier: MIT */
/* Frame information of the entry stubs and thunks, registered with libgcc
 * (__register_frame) so that its unwinder walks through a thunk: the
 * relocated first instructions of a patched function, where a fault (a
 * load through a NULL argument, a push past the end of the stack) stops
 * the program's C++ exception (-fnon-call-exceptions) or its crash
 * handler's backtrace() otherwise (shim/entry.c makes the .eh_frame).
 *
 * Registered only once libgcc_s.so.1 is in the process: a C++ program has
 * it from the start (libstdc++ needs it); a C program gets it from glibc
 * at its first backtrace() or thread cancellation.  Loading it for every
 * program cost ~0.2 ms of start-up (dlopen of a library nobody may use),
 * so until then the .eh_frame blobs wait here, and the exported
 * backtrace() below loads it and registers them before glibc's own walks
 * the stack (glibc would load it right then anyway).  A dlopen of the
 * program's may bring it too (a C++ plugin): registered after each. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

#include "shim/internal.h"

static void (*register_frame)(void *);
/* libgcc's _Unwind_Find_FDE: asked once after registering, so that libgcc
 * sorts the new objects' entries then (it mallocs for that), not at the
 * next unwind, which may be a crash handler's backtrace() that interrupted
 * malloc: without the shim that unwind mallocs nothing (glibc's
 * _dl_find_object), with it the handler hung on the arena's lock. */
struct fde_bases {
	void *tbase, *dbase, *func;
};
static const void *(*find_fde)(void *, struct fde_bases *);
static void **pending; /* blobs made before libgcc_s was there */
static size_t npending, cap;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int (*real_backtrace)(void **, int);
/* A module named libgcc_s.so* has been seen loaded (by the module map):
 * before, cs_unwind_flush does not ask the loader.  Asked after every
 * dlopen of a C program with patched entries, its RTLD_NOLOAD dlopen,
 * finding no such module loaded, searched the library path and opened
 * the file (four system calls, ~10 us a dlopen). */
static int libgcc_seen;

void cs_unwind_saw(const char *path)
{
	const char *base = strrchr(path, '/');

	if (!strncmp(base ? base + 1 : path, "libgcc_s.so", 11))
		__atomic_store_n(&libgcc_seen, 1, __ATOMIC_RELEASE);
}

void cs_unwind_init(void)
{
	real_backtrace = (int (*)(void **, int))dlsym(RTLD_NEXT, "backtrace");
}

/* Whether __register_frame can be had; libgcc_s.so.1 loaded for it only
 * if load.  The guard is up: the shim's dlopen wrapper makes no patching
 * pass for it (this may run in a signal handler).  Never called with the
 * lock held: dlopen takes the loader's lock, which a thread running a
 * library's constructor holds while its dlopen's patching pass waits for
 * ours (cs_unwind_add): a thread's first backtrace() during a nested
 * dlopen in a constructor hung both threads. */
static int ready(int load)
{
	void (*f)(void *) = NULL;
	void *h;

	if (__atomic_load_n(&register_frame, __ATOMIC_ACQUIRE))
		return 1;
	cs_guard_take();
	h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL | (load ? 0 : RTLD_NOLOAD));
	if (h) {
		f = (void (*)(void *))dlsym(h, "__register_frame");
		__atomic_store_n(&find_fde,
				 (const void *(*)(void *, struct fde_bases *))dlsym(
					 h, "_Unwind_Find_FDE"),
				 __ATOMIC_RELAXED);
	}
	if (f)
		__atomic_store_n(&register_frame, f, __ATOMIC_RELEASE);
	cs_guard_drop();
	return f != NULL;
}

/* Registers the waiting blobs; the lock held, register_frame known.
 * Each leaves the list once registered: a child forked meanwhile by
 * another thread (cs_unwind_after_fork) registers only the rest. */
static void flush_locked(void)
{
	struct fde_bases bases;
	int any = npending != 0;

	while (npending) {
		register_frame(pending[npending - 1]);
		__atomic_store_n(&npending, npending - 1, __ATOMIC_RELAXED);
	}
	/* An address no object covers: libgcc classifies (sorts) every
	 * object not yet seen on its way, and finds nothing. */
	if (any && find_fde)
		find_fde((void *)1, &bases);
}

void cs_unwind_add(void *blob)
{
	void **grown;

	pthread_mutex_lock(&lock);
	if (npending == cap) {
		grown = realloc(pending, (cap ? 2 * cap : 8) * sizeof(*pending));
		if (!grown) {
			pthread_mutex_unlock(&lock);
			free(blob); /* no frame information: unwinders stop there */
			return;
		}
		pending = grown;
		cap = cap ? 2 * cap : 8;
	}
	pending[npending++] = blob;
	pthread_mutex_unlock(&lock);
	cs_unwind_flush();
}

void cs_unwind_flush(void)
{
	cs_unwind_accessors();
	if (!__atomic_load_n(&npending, __ATOMIC_RELAXED) ||
	    (!__atomic_load_n(&register_frame, __ATOMIC_ACQUIRE) &&
	     !__atomic_load_n(&libgcc_seen, __ATOMIC_ACQUIRE)) ||
	    !ready(0))
		return;
	pthread_mutex_lock(&lock);
	flush_locked();
	pthread_mutex_unlock(&lock);
}

/* A forked child: the thread that held the lock (a first backtrace()
 * loading libgcc_s, a patching pass registering its blob) is not there,
 * and the child's first dlopen (cs_unwind_flush) or patching pass waited
 * for it for ever. */
void cs_unwind_after_fork(void)
{
	pthread_mutex_init(&lock, NULL);
}

/* glibc's backtrace, after the waiting blobs are registered.  A trylock:
 * a crash handler interrupting a patching pass on this thread must not
 * wait for itself (the walk then stops at a thunk, as before). */
CS_EXPORT int backtrace(void **buf, int size)
{
	int saved = errno;

	if (__atomic_load_n(&npending, __ATOMIC_RELAXED) && ready(1) &&
	    pthread_mutex_trylock(&lock) == 0) {
		flush_locked();
		pthread_mutex_unlock(&lock);
	}
	cs_unwind_accessors();
	errno = saved;
	if (!real_backtrace)
		real_backtrace = (int (*)(void **, int))dlsym(RTLD_NEXT, "backtrace");
	return real_backtrace ? real_backtrace(buf, size) : 0;
}

/* The trampoline's personality routine (its CFI names it): an exception,
 * or a forced unwind (thread cancellation), passing a measured call's
 * frame ends that call there, and the nesting stack drops it at once
 * (cs_hot_unwound).  Nothing else: the search phase and every other
 * frame go on as without it.  When a personality routine runs, libgcc's
 * context holds the registers of the frame it is about (the trampoline's
 * rbp, restored by the target's CFI) but the CFA of the frame below (the
 * target's: the trampoline's stack pointer at the call), so the frame is
 * rbp less the frame size, checked against that CFA (the target's frame
 * lies below the trampoline's) and against this routine's own frame.
 * The accessors are those of the libgcc_s already loaded (a C++
 * program's unwinder), used only when that libgcc_s is the unwinder
 * calling: another one (LLVM's libunwind, a static libgcc in the
 * program) passes a context of its own layout, which libgcc_s's
 * accessors would read as theirs.
 *
 * The routine takes no lock: it runs inside the program's unwind, which
 * takes none of the loader's (glibc's _dl_find_object).  Asking the
 * loader there (dlopen, dlsym, dladdr: the loader's lock) hung a thread
 * throwing through a target while it held a mutex that a library's
 * constructor, in another thread's dlopen, waited for (review helper
 * 91).  So the accessors and where that libgcc_s lies are learnt before,
 * outside any unwind (cs_unwind_accessors: at start, after a dlopen),
 * and the routine only compares addresses.  The handle kept keeps
 * libgcc_s, and so that range, for good. */
static _Unwind_Word (*get_gr)(struct _Unwind_Context *, int);
static _Unwind_Word (*get_cfa)(struct _Unwind_Context *);
static uintptr_t libgcc_lo, libgcc_hi; /* where that libgcc_s is loaded */

void cs_unwind_accessors(void)
{
#ifdef DLFO_STRUCT_HAS_EH_DBASE
	_Unwind_Word (*gr)(struct _Unwind_Context *, int);
	_Unwind_Word (*gc)(struct _Unwind_Context *);
	struct dl_find_object fo;
	void *h;

	if (__atomic_load_n(&get_cfa, __ATOMIC_ACQUIRE) ||
	    (!__atomic_load_n(&register_frame, __ATOMIC_ACQUIRE) &&
	     !__atomic_load_n(&libgcc_seen, __ATOMIC_ACQUIRE)))
		return;
	cs_guard_take();
	h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (h) {
		gr = (_Unwind_Word(*)(struct _Unwind_Context *, int))dlsym(h, "_Unwind_GetGR");
		gc = (_Unwind_Word(*)(struct _Unwind_Context *))dlsym(h, "_Unwind_GetCFA");
		if (gr && gc && _dl_find_object((void *)gr, &fo) == 0) {
			__atomic_store_n(&libgcc_lo, (uintptr_t)fo.dlfo_map_start, __ATOMIC_RELAXED);
			__atomic_store_n(&libgcc_hi, (uintptr_t)fo.dlfo_map_end, __ATOMIC_RELAXED);
			__atomic_store_n(&get_gr, gr, __ATOMIC_RELAXED);
			__atomic_store_n(&get_cfa, gc, __ATOMIC_RELEASE);
		}
	}
	cs_guard_drop();
#endif
}

__attribute__((visibility("hidden"))) _Unwind_Reason_Code
cs_trampoline_personality(int version, _Unwind_Action actions, _Unwind_Exception_Class cls,
			  struct _Unwind_Exception *ue, struct _Unwind_Context *ctx)
{
	_Unwind_Word (*gr)(struct _Unwind_Context *, int);
	_Unwind_Word (*gc)(struct _Unwind_Context *);
	uintptr_t from = (uintptr_t)__builtin_return_address(0);
	uint64_t rbp, cfa, f;

	(void)cls;
	(void)ue;
	if (version != 1 || !(actions & _UA_CLEANUP_PHASE) || !ctx)
		return _URC_CONTINUE_UNWIND;
	gc = __atomic_load_n(&get_cfa, __ATOMIC_ACQUIRE);
	gr = __atomic_load_n(&get_gr, __ATOMIC_RELAXED);
	if (!gr || !gc)
		return _URC_CONTINUE_UNWIND;
	/* Called by that libgcc_s's unwinder, or its context is not theirs. */
	if (from < __atomic_load_n(&libgcc_lo, __ATOMIC_RELAXED) ||
	    from >= __atomic_load_n(&libgcc_hi, __ATOMIC_RELAXED))
		return _URC_CONTINUE_UNWIND;
	rbp = (uint64_t)gr(ctx, 6); /* DWARF register 6: rbp */
	cfa = (uint64_t)gc(ctx);
	if (rbp < CS_FRAME_SIZE)
		return _URC_CONTINUE_UNWIND;
	f = rbp - CS_FRAME_SIZE;
	if (cfa >= f || cfa <= (uint64_t)(uintptr_t)__builtin_frame_address(0))
		return _URC_CONTINUE_UNWIND;
	cs_hot_unwound((const struct cs_frame *)(uintptr_t)f);
	return _URC_CONTINUE_UNWIND;
}
