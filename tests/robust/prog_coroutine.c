/* SPDX-License-Identifier: MIT */
/*
 * A coroutine (makecontext) on a stack of its own, with nothing readable
 * above its top, makes wrapped calls from its entry function: their
 * arguments lie a few bytes below the stack's end.
 *
 * Usage: prog_coroutine guard|unmapped N.  guard: a PROT_NONE page above
 * the stack; unmapped: no mapping there.  Prints the sum of N rt_leaf
 * calls made in the coroutine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "tests/robust/robust.h"

static ucontext_t main_uc, co_uc;
static long calls, sum;

static void co(void)
{
	long i;

	for (i = 0; i < calls; i++)
		sum += rt_leaf(i);
}

int main(int argc, char **argv)
{
	size_t size = 64 * 1024, page = 4096;
	char *m;

	if (argc != 3 || (strcmp(argv[1], "guard") && strcmp(argv[1], "unmapped")))
		return 2;
	calls = atol(argv[2]);
	m = mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	if (!strcmp(argv[1], "guard") ? mprotect(m + size, page, PROT_NONE)
				      : munmap(m + size, page))
		return 1;
	getcontext(&co_uc);
	co_uc.uc_stack.ss_sp = m;
	co_uc.uc_stack.ss_size = size;
	co_uc.uc_link = &main_uc;
	makecontext(&co_uc, co, 0);
	swapcontext(&main_uc, &co_uc);
	printf("sum %ld\n", sum);
	return 0;
}
