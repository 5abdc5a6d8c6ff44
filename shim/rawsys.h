/* SPDX-License-Identifier: MIT */
/* System calls without libc, for shim code that runs while the program is
 * live: errno stays as the program left it, and no libc function (which
 * may itself be a wrapped target) is entered. */
#ifndef CACHESHIM_SHIM_RAWSYS_H
#define CACHESHIM_SHIM_RAWSYS_H

#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels answer -EINVAL */
#endif

/* Linux system call nr with up to six arguments: the result, or -errno. */
static inline __attribute__((always_inline)) long cs_syscall6(long nr, long a1, long a2, long a3,
							      long a4, long a5, long a6)
{
	long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}

/* Blocks the asynchronous signals (the raw rt_sigprocmask: no libc, errno
 * untouched) and leaves the old mask in *old, or ~0 when refused.  Signals
 * a fault raises (SIGSEGV, SIGBUS...) stay unblocked: blocked, the kernel
 * would kill the program for them. */
static inline void cs_signals_block(uint64_t *old)
{
	uint64_t all = ~0ull;

	all &= ~(1ull << (SIGSEGV - 1) | 1ull << (SIGBUS - 1) | 1ull << (SIGILL - 1) |
		 1ull << (SIGFPE - 1) | 1ull << (SIGTRAP - 1) | 1ull << (SIGSYS - 1));
	if (cs_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, (long)old, 8, 0, 0) != 0)
		*old = ~0ull; /* marks "nothing to restore" */
}

/* The mask as cs_signals_block found it: a signal that came meanwhile is
 * handled now. */
static inline void cs_signals_restore(const uint64_t *old)
{
	if (*old != ~0ull)
		cs_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)old, 0, 8, 0, 0);
}

#endif
