/* SPDX-License-Identifier: MIT */
/*
 * Preloaded into `cacheshim report` by test_tamper.sh: another process
 * writing into a report file while it is read.  The first read-only
 * private mapping of a whole file (the reader's) is followed by a write
 * into the file of the 4 bytes in $CS_TAMPER ("OFFSET:VALUE"), which the
 * mapping then shows (MAP_PRIVATE pages not yet copied follow the file).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*real)(void *, size_t, int, int, int, off_t);
	static int done;
	const char *spec = getenv("CS_TAMPER");
	unsigned long long where;
	uint32_t value;
	char path[64];
	void *m;
	int wfd;

	if (!real)
		real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
	m = real(addr, len, prot, flags, fd, off);
	if (m == MAP_FAILED || done || !spec || fd < 0 || off != 0 || prot != PROT_READ ||
	    !(flags & MAP_PRIVATE) || sscanf(spec, "%llu:%u", &where, &value) != 2)
		return m;
	done = 1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	wfd = open(path, O_WRONLY);
	if (wfd < 0 || pwrite(wfd, &value, sizeof(value), (off_t)where) != sizeof(value)) {
		perror("tamper");
		abort();
	}
	close(wfd);
	return m;
}
