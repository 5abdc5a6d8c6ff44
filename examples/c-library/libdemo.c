/* SPDX-License-Identifier: MIT */
/* libdemo.so: the library whose functions the example wraps. */
#include <sys/mman.h>
#include <unistd.h>

#include "demo.h"

long demo_sum(const long *a, size_t n)
{
	long s = 0;
	size_t i;

	for (i = 0; i < n; i++)
		s += a[i];
	return s;
}

int demo_touch(size_t pages)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), i;
	volatile char *p = mmap(NULL, pages * pg, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	/* Where transparent huge pages are always on, a 2 MiB-aligned part
	 * of a large mapping would take one fault for 512 pages. */
	madvise((void *)p, pages * pg, MADV_NOHUGEPAGE);
	for (i = 0; i < pages; i++)
		p[i * pg] = 1;
	munmap((void *)p, pages * pg);
	return 0;
}
