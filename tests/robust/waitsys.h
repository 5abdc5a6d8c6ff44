/* SPDX-License-Identifier: MIT */
/* For tests that force an order between threads: wait until another
 * thread sleeps in a given system call (its loader lock's futex, an open
 * of a FIFO), read from /proc/self/task/TID/syscall. */
#ifndef CS_TESTS_WAITSYS_H
#define CS_TESTS_WAITSYS_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CS_SYS_OPENAT 257
#define CS_SYS_FUTEX 202

/* 1 once thread tid sleeps in system call nr, 0 after 5 s. */
static inline int wait_in_syscall(int tid, int nr)
{
	char path[64], buf[64], want[16];
	int i;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	snprintf(want, sizeof(want), "%d ", nr);
	for (i = 0; i < 5000; i++) {
		FILE *f = fopen(path, "r");
		int n = f ? (int)fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n > 0 ? n : 0] = 0;
		if (!strncmp(buf, want, strlen(want)))
			return 1;
		usleep(1000);
	}
	return 0;
}

#endif
