/* SPDX-License-Identifier: MIT */
/* A call of rt_leaf (which touches no memory) on fresh stack pages at each
 * of the 256 16-byte positions of a page: call i runs i * 12 KB deeper
 * than call i - 1 (below any page an earlier call wrote) and 16 * i bytes
 * further into its page.  The caller's own frame above the call, which the
 * wrapper reads (its window of stack arguments), is written first; with
 * the argument "unwritten" it is not (a buffer of the caller's that the
 * callee would fill: the wrapper's read of it is a page fault, which must
 * not be the call's).  Runs in a thread of its own with a 16 MB stack,
 * whatever the stack limit.  Prints the sum of the results.
 * tests/robust/test_stack_pages.sh. */
#include <alloca.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/robust/robust.h"

#define CALLS 256

static int unwritten;

static __attribute__((noinline)) long call_at(size_t depth)
{
	volatile char *p = alloca(depth);
	size_t k;

	/* The 8 KB right above the call: the wrapper copies up to 4 KB of
	 * them (CACHESHIM_WINDOW at most), which must not fault either. */
	for (k = 0; !unwritten && k < 8192; k += 64)
		p[k] = 0;
	return rt_leaf((long)depth);
}

static void *run(void *arg)
{
	long s = 0;
	size_t i;

	(void)arg;
	for (i = 0; i < CALLS; i++)
		s += call_at(65536 + i * 12288 + (i * 16) % 4096);
	return (void *)s;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t th;
	void *s;

	if (argc > 2 || (argc == 2 && strcmp(argv[1], "unwritten"))) {
		fprintf(stderr, "usage: %s [unwritten]\n", argv[0]);
		return 2;
	}
	unwritten = argc == 2;
	if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, 16u << 20) ||
	    pthread_create(&th, &attr, run, NULL) || pthread_join(th, &s))
		return 1;
	printf("sum %ld\n", (long)s);
	return 0;
}
