/* SPDX-License-Identifier: MIT */
/* System calls without libc, for shim code that runs while the program is
 * live: errno stays as the program left it, and no libc function (which
 * may itself be a wrapped target) is entered. */
#ifndef CACHESHIM_SHIM_RAWSYS_H
#define CACHESHIM_SHIM_RAWSYS_H

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

#endif
