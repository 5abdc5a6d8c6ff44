/* SPDX-License-Identifier: MIT */
/*
 * A program that grows its heap by sbrk (as some allocators and language
 * runtimes do) after calls of a static function of its own (the shim
 * patches its entry, with stubs in a code arena near this executable) and
 * of rt_leaf.  Without address-space randomization (gdb, setarch -R) the
 * break starts right after the executable: an arena placed there stops
 * sbrk.
 *
 * Usage: prog_brk CALLS.  Prints how many 1 MB sbrk steps (of 64)
 * succeeded and the sum of the calls.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/robust/robust.h"

static long __attribute__((noinline, noclone)) local_leaf(long x)
{
	__asm__ volatile("" ::: "memory");
	return x + 3;
}

/* Through a pointer: not inlined, and the entry patch is what catches it. */
static long (*volatile leaf)(long) = local_leaf;

int main(int argc, char **argv)
{
	long i, n = argc > 1 ? atol(argv[1]) : 100, s = 0;
	int ok = 0;

	for (i = 0; i < n; i++)
		s += leaf(i) + rt_leaf(i);
	for (; ok < 64; ok++)
		if (sbrk(1 << 20) == (void *)-1) {
			printf("sbrk failed at step %d: %s\n", ok, strerror(errno));
			break;
		}
	printf("sbrk steps: %d\n", ok);
	for (i = 0; i < n; i++)
		s += leaf(i) + rt_leaf(i);
	printf("sum %ld\n", s);
	return 0;
}
