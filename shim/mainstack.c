/* SPDX-License-Identifier: MIT */
/*
 * The main thread's stack bounds, found cheaply (threadstart.c asks glibc
 * when this cannot tell).  On its own so that the unit test can compare it
 * with glibc's answer: it uses nothing of the shim's state.
 */
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "shim/internal.h"
#include "shim/rawsys.h"

/* The main thread's stack without pthread_getattr_np, which reads and
 * parses /proc/self/maps (~150 us of a 9 ms `ruby -e 0`, whose maps has
 * ~130 lines), and the same answer: glibc's top is the page boundary above
 * __libc_stack_end, and its size RLIMIT_STACK's less what lies above that
 * top in the stack mapping (argv, the environment, auxv and strings).  The
 * mapping's end is found without the maps: the kernel puts the program's
 * file name (AT_EXECFN) at its very end.  Checked rather than trusted
 * (another loader may put the name elsewhere: ld.so run as a program
 * points it at argv[0]): the name ends exactly 8 bytes below a page
 * boundary, above __libc_stack_end, every page from there to it is
 * mapped, the 8 bytes are zero and the name is not argv[0], and the limit
 * is finite and larger than that; else glibc is asked.  glibc also
 * cuts the size at the end of the mapping below the stack.  The kernel
 * keeps mappings below start - limit for the limit at exec only: one
 * raised since (a library's constructor runs before a preloaded one's),
 * with ASLR off (gdb, setarch -R: the mmap area then starts 128 MB below
 * the stack), or tens of terabytes (the executable) put some in reach.
 * The nearest are modules (ld.so and the vdso top the mmap area) and the
 * heap: when one is in reach glibc is asked. */
extern void *__libc_stack_end;

#define CS_MAIN_ARGS_PAGES 64u /* argv and environment, at most, checked */

/* dl_iterate_phdr callback: 1 (stop) for a module with a segment in
 * [range[0], range[1]). */
static int module_in(struct dl_phdr_info *info, size_t size, void *arg)
{
	const uint64_t *range = arg;
	unsigned i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && start < range[1] && start + ph->p_memsz > range[0])
			return 1;
	}
	return 0;
}

int cs_main_stack(uint64_t *lo, uint64_t *hi)
{
	const char *fn = (const char *)getauxval(AT_EXECFN);
	uint64_t start = (uint64_t)(uintptr_t)__libc_stack_end, top, from, range[2];
	/* mincore answers ENOMEM if a page of the range is not mapped */
	unsigned char vec[CS_MAIN_ARGS_PAGES];
	struct rlimit rl;

	if (!fn || !start || (uint64_t)(uintptr_t)fn <= start)
		return 0;
	/* The kernel copies the name, NUL included, to end 8 bytes below the
	 * end of the mapping; anything else (ld.so run as a program points
	 * AT_EXECFN at argv[0]) is not the top. */
	top = (uint64_t)(uintptr_t)fn + strlen(fn) + 1 + 8;
	if (top & 4095)
		return 0;
	from = start & ~4095ull;
	if (top - from > CS_MAIN_ARGS_PAGES * 4096ull ||
	    cs_syscall6(SYS_mincore, (long)from, (long)(top - from), (long)vec, 0, 0, 0) != 0)
		return 0;
	/* Nor is a name that merely ends there: ld.so's argv[0] does for one
	 * length in 4096 of the strings above it (the program's arguments and
	 * environment), and the stack was taken that much larger than glibc's
	 * (test_mainstack's exact environment).  The kernel's copy is never
	 * argv[0] (program_invocation_name, which glibc set from it) and is
	 * followed by the mapping's last word, zero; what follows argv[0] is
	 * the next string. */
	if (fn == program_invocation_name || *(const uint64_t *)(uintptr_t)(top - 8) != 0)
		return 0;
	if (getrlimit(RLIMIT_STACK, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur >= top - 4096 || rl.rlim_cur <= top - from)
		return 0;
	range[1] = from + 4096;
	range[0] = range[1] - ((rl.rlim_cur - (top - range[1])) & ~4095ull);
	/* brk(0) answers the heap's end */
	if ((uint64_t)cs_syscall6(SYS_brk, 0, 0, 0, 0, 0, 0) > range[0] ||
	    dl_iterate_phdr(module_in, range))
		return 0;
	*lo = range[0];
	*hi = range[1];
	return 1;
}
