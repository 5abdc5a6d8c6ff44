/* SPDX-License-Identifier: MIT */
/* A daemon-like program that closes every descriptor it did not open
 * itself, then opens a file of its own, which gets the lowest free number:
 * the one the shim's report file had.  The shim must never write, grow or
 * truncate that file through the old number.
 *
 * prog_fdreuse FILE N: closes fds 3..1023, creates FILE ("precious\n"),
 * calls rt_leaf from 64 call sites N times each (every new call site is a
 * new block in the report), prints the sum and exits with FILE open. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/robust/robust.h"

#define S8(k) x += rt_leaf(k); x += rt_leaf(k + 1); x += rt_leaf(k + 2); x += rt_leaf(k + 3); \
	x += rt_leaf(k + 4); x += rt_leaf(k + 5); x += rt_leaf(k + 6); x += rt_leaf(k + 7)

static __attribute__((noinline)) long sites(long x)
{
	S8(0); S8(8); S8(16); S8(24); S8(32); S8(40); S8(48); S8(56);
	return x;
}

int main(int argc, char **argv)
{
	long n, i, x = 0;
	int fd;

	if (argc != 3 || (n = atol(argv[2])) < 0) {
		fputs("usage: prog_fdreuse FILE N\n", stderr);
		return 2;
	}
	for (fd = 3; fd < 1024; fd++)
		close(fd);
	fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "precious\n", 9) != 9) {
		perror(argv[1]);
		return 1;
	}
	for (i = 0; i < n; i++)
		x = sites(x) % 1000003;
	printf("fd %d, sum %ld\n", fd, x);
	return 0;
}
