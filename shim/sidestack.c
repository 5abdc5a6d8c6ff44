/* SPDX-License-Identifier: MIT */
/*
 * Side stacks for the slow path.  A thread's first wrapped call sets the
 * thread up (XSAVE area, perf_event_open, libpfm, /proc reads: several
 * KiB of stack), and so does its first call from each new call site.  On
 * the program's stack that overflowed threads made with small stacks
 * (16 KiB, PTHREAD_STACK_MIN) that ran fine without the shim.  So the
 * trampoline's SLOW_CALL moves to one of these stacks when one is free
 * (and it is not on one already: a signal handler's call during a slow
 * path), and back before freeing it; with none free it waits, yielding,
 * for one to be freed (16 threads setting up at once on PTHREAD_STACK_MIN
 * stacks overflowed them when the ninth stayed where it was), and only
 * after a long while (CS_SIDE_WAITS) runs where it is.
 * Signals are blocked meanwhile (the trampoline does it, before moving),
 * so that the program's handlers never run on a side stack.
 * They are mapped once, untouched pages cost no memory, and a guard page
 * turns an overflow into a fault rather than a write into the next one.
 */
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "shim/internal.h"
#include "shim/rawsys.h"
#include "shim/sidestack.h"

/* Read by the trampoline: 0 when the stacks could not be mapped. */
uint64_t cs_side_base;
/* 1 while a slow path runs on stack i (taken by xchg, freed by a store). */
uint32_t cs_side_busy[CS_SIDE_STACKS];
/* Signals blocked while on a side stack: all but those a fault raises
 * (blocked, those kill the process instead of reaching its handler). */
const uint64_t cs_side_sigblock =
	~(1ull << (SIGSEGV - 1) | 1ull << (SIGBUS - 1) | 1ull << (SIGILL - 1) |
	  1ull << (SIGFPE - 1) | 1ull << (SIGTRAP - 1) | 1ull << (SIGSYS - 1));
/* The mask before, restored by the trampoline once off the side stack. */
__thread uint64_t cs_tls_side_mask;

void cs_side_init(void)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *m;
	int i;

	m = mmap(NULL, CS_SIDE_TOTAL, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (m == MAP_FAILED)
		return; /* slow paths run on the program's stacks */
	for (i = 0; i < CS_SIDE_STACKS; i++)
		mprotect(m + (size_t)i * CS_SIDE_SIZE, (size_t)page, PROT_NONE);
	__atomic_store_n(&cs_side_base, (uint64_t)(uintptr_t)m, __ATOMIC_RELEASE);
}

/* A forked child has only the thread that forked, which was not in a slow
 * path: stacks other threads held are free. */
void cs_side_after_fork(void)
{
	memset(cs_side_busy, 0, sizeof(cs_side_busy));
}

/* After a fork the pages of the side stacks that slow paths wrote before
 * it are shared copy on write with the other process, and the first slow
 * path to write one again faulted: inside the enclosing call's bracket
 * when it was a nested call's (a new call site, a nested block), one page
 * fault too many in that call (tests/preload/test_self_cold.sh, once the
 * start-up's nested calibration went deeper on them).  Written again now,
 * uncounted (MADV_POPULATE_WRITE), those pages only: mincore says which
 * were ever written, the rest cost nothing and stay unmapped. */
void cs_side_populate(void)
{
	static unsigned char present[CS_SIDE_TOTAL / 4096];
	uint64_t base = __atomic_load_n(&cs_side_base, __ATOMIC_ACQUIRE);
	size_t i, run;

	if (!base || cs_syscall6(SYS_mincore, (long)base, CS_SIDE_TOTAL, (long)present, 0, 0, 0))
		return;
	for (i = 0; i < sizeof(present); i += run) {
		for (run = 0; i + run < sizeof(present) && (present[i + run] & 1); run++)
			;
		if (run)
			cs_syscall6(SYS_madvise, (long)(base + i * 4096), (long)(run * 4096),
				    MADV_POPULATE_WRITE, 0, 0, 0);
		else
			run = 1;
	}
}
