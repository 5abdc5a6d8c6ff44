/* SPDX-License-Identifier: MIT */
/* Programs that close every descriptor they did not open and then open
 * files of their own, which get the lowest free numbers: those the shim's
 * descriptors had.  The shim must never write, grow or truncate a file of
 * the program's through an old number, nor take a low number for itself.
 *
 * prog_fdreuse FILE N: closes fds 3..1023, creates FILE ("precious\n"),
 * calls rt_leaf from 64 call sites N times each (every new call site is a
 * new block in the report), prints the sum and exits with FILE open.
 *
 * prog_fdreuse FILE N --daemon T: as daemon(3) does, chdir("/") and closes
 * fds 0..1023; makes a measured call from a new call site; opens /dev/null
 * as 0, 1 and 2 and FILE, writes "log fd F" and later the sum to FILE; then
 * T threads one after another call the 64 sites N times each (new site
 * and series blocks in each, so the report file must grow).
 *
 * prog_fdreuse FILE N --fsize: lowers RLIMIT_FSIZE to 4096 bytes first (a
 * program limiting the files it writes), then as the first form without
 * closing anything; FILE is not used. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tests/robust/robust.h"

#define S8(k)                     \
	x += rt_leaf(k);          \
	x += rt_leaf(k + 1);      \
	x += rt_leaf(k + 2);      \
	x += rt_leaf(k + 3);      \
	x += rt_leaf(k + 4);      \
	x += rt_leaf(k + 5);      \
	x += rt_leaf(k + 6);      \
	x += rt_leaf(k + 7)

static long n;

static __attribute__((noinline)) long sites(long x)
{
	S8(0);
	S8(8);
	S8(16);
	S8(24);
	S8(32);
	S8(40);
	S8(48);
	S8(56);
	return x;
}

static void *worker(void *arg)
{
	long i, x = 0;

	for (i = 0; i < n; i++)
		x = sites(x) % 1000003;
	*(long *)arg = x;
	return NULL;
}

static int daemon_like(const char *file, int threads)
{
	long x = 0, sum = 0;
	int fd, i;

	if (chdir("/") < 0)
		return 1;
	for (fd = 0; fd < 1024; fd++)
		close(fd);
	x += rt_leaf(1); /* a measured call from a new call site */
	if (open("/dev/null", O_RDWR) != 0 || dup(0) != 1 || dup(0) != 2)
		return 1;
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 1;
	dprintf(fd, "log fd %d\n", fd);
	for (i = 0; i < threads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, &x) || pthread_join(t, NULL))
			return 1;
		sum += x;
	}
	dprintf(fd, "sum %ld\n", sum);
	dprintf(2, "stderr is /dev/null\n");
	return 0;
}

int main(int argc, char **argv)
{
	long i, x = 0;
	int fd, fsize = 0;

	if (argc < 3 || (n = atol(argv[2])) < 0) {
		fputs("usage: prog_fdreuse FILE N [--daemon THREADS | --fsize]\n", stderr);
		return 2;
	}
	if (argc == 5 && !strcmp(argv[3], "--daemon"))
		return daemon_like(argv[1], atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[3], "--fsize")) {
		struct rlimit rl = {4096, 4096};

		if (setrlimit(RLIMIT_FSIZE, &rl) < 0) {
			perror("setrlimit");
			return 1;
		}
		fsize = 1;
	} else if (argc != 3) {
		fputs("usage: prog_fdreuse FILE N [--daemon THREADS | --fsize]\n", stderr);
		return 2;
	}
	if (!fsize) {
		for (fd = 3; fd < 1024; fd++)
			close(fd);
		fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, "precious\n", 9) != 9) {
			perror(argv[1]);
			return 1;
		}
	} else {
		fd = -1;
	}
	for (i = 0; i < n; i++)
		x = sites(x) % 1000003;
	printf("fd %d, sum %ld\n", fd, x);
	return 0;
}
