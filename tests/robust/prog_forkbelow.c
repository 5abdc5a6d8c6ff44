/* SPDX-License-Identifier: MIT */
/* fork on a stack that is not the thread's own, with someone else's
 * memory right below it.
 *
 * Usage: prog_forkbelow FILE.  FILE is made a sparse file of 64 KiB and
 * mapped MAP_SHARED, read-write; a 16 KiB coroutine stack is mapped right
 * above it, and the coroutine calls rt_leaf, forks, waits for the child
 * and calls rt_leaf again.  The program never writes the file mapping, so
 * the file must still have no block allocated; prints its block count.
 *
 * The shim's fork handlers wrote 64 KiB below the forking frame again
 * (MADV_POPULATE_WRITE, against copy-on-write faults inside measured
 * calls): that filled the file's holes and changed its mtime. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include "tests/robust/robust.h"

#define FILE_BYTES (64 << 10)
#define STACK_BYTES (16 << 10)

static ucontext_t main_ctx, co_ctx;
static int forked;

static void co(void)
{
	pid_t p;

	rt_leaf(1);
	p = fork();
	if (p == 0)
		_exit(0);
	if (p > 0 && waitpid(p, NULL, 0) == p)
		forked = 1;
	rt_leaf(2);
}

int main(int argc, char **argv)
{
	struct stat st;
	char *area, *stack;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: prog_forkbelow FILE\n");
		return 2;
	}
	rt_leaf(0);
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, FILE_BYTES) != 0)
		return 1;
	area = mmap(NULL, FILE_BYTES + STACK_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (area == MAP_FAILED ||
	    mmap(area, FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
		    MAP_FAILED)
		return 1;
	stack = mmap(area + FILE_BYTES, STACK_BYTES, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	if (stack == MAP_FAILED || getcontext(&co_ctx) != 0)
		return 1;
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = STACK_BYTES;
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, co, 0);
	if (swapcontext(&main_ctx, &co_ctx) != 0)
		return 1;
	munmap(area, FILE_BYTES + STACK_BYTES);
	if (fstat(fd, &st) != 0)
		return 1;
	printf("forked %d, blocks of the file %lld\n", forked, (long long)st.st_blocks);
	return 0;
}
