/* SPDX-License-Identifier: MIT */
/* A static function called directly (never through a GOT slot): only entry
 * patching can see its calls.  find() touches `pages` fresh pages per call,
 * so its page faults per call are known: exactly pages. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static long __attribute__((noinline)) find(long pages)
{
	char *p = mmap(NULL, (size_t)pages * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long i, s = 0;

	if (p == MAP_FAILED)
		return -1;
	for (i = 0; i < pages; i++)
		s += p[i * 4096] = (char)i;
	munmap(p, (size_t)pages * 4096);
	return s;
}

int main(void)
{
	long s = 0;
	int i;

	for (i = 0; i < 100; i++)
		s += find(1 + i % 4);
	printf("%ld\n", s);
	return 0;
}
