#!/bin/bash
# SPDX-License-Identifier: MIT
# A fork while another thread holds the lock of the waiting frame
# information (shim/unwindreg.c): its first backtrace() loading
# libgcc_s.so.1, or a patching pass registering its blob.  The child has
# no such thread, and the lock stayed taken there: the child's first
# dlopen (cs_unwind_flush after its patching pass) waited for ever (seen
# in 3 of 20 runs of a thread calling backtrace() while the main thread
# forked children that dlopen a plugin).  Made certain here: the
# libgcc_s.so.1 the backtrace() loads is a FIFO (LD_LIBRARY_PATH), whose
# open holds the thread inside dlopen, the lock taken, until the test
# has forked.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

mkdir "$T/lib"
cat >"$T/forkbt.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/robust/robust.h"

static volatile int frames;

static void *bt(void *arg)
{
	void *buf[16];

	(void)arg;
	frames = backtrace(buf, 16);
	return NULL;
}

int main(int argc, char **argv)
{
	char fifo[512];
	pthread_t t;
	pid_t pid;
	int fd, st, w;

	if (argc != 3)
		return 2;
	snprintf(fifo, sizeof(fifo), "%s/libgcc_s.so.1", argv[1]);
	printf("%ld\n", rt_leaf(1)); /* patched at start: its frames wait */
	if (mkfifo(fifo, 0600) || pthread_create(&t, NULL, bt, NULL))
		return 1;
	/* A writer opens once the thread's dlopen has opened it to read. */
	for (w = 0; (fd = open(fifo, O_WRONLY | O_NONBLOCK)) < 0; w++) {
		if (errno != ENXIO || w > 60000)
			return 1;
		usleep(1000);
	}
	unlink(fifo);
	pid = fork();
	if (pid == 0) {
		void *h;

		close(fd);
		h = dlopen(argv[2], RTLD_NOW);
		_exit(h ? 0 : 3);
	}
	close(fd); /* the thread's dlopen reads nothing and goes on */
	for (w = 0; waitpid(pid, &st, WNOHANG) != pid; w++) {
		if (w > 20000) {
			printf("the child hung\n");
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return 1;
		}
		usleep(1000);
	}
	pthread_join(t, NULL);
	/* (Without the shim glibc's backtrace() opened the FIFO and
	 * found no libgcc_s: no frames; so they are not compared.) */
	printf("child %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
C
${CC:-cc} -I"$CS_SRCDIR" -o "$T/forkbt" "$T/forkbt.c" -L"$R/.libs" -lcsrobust \
	-Wl,-rpath,"$R/.libs" -pthread -ldl

export LD_LIBRARY_PATH=$T/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
plain_run plain "$T/forkbt" "$T/lib" "$R/.libs/libcsplug.so"
expect_status plain 0
shim_run fork tsc rt_leaf "$T/forkbt" "$T/lib" "$R/.libs/libcsplug.so"
expect_status fork 0
same_output plain fork
echo "fork: $(tail -1 "$T/fork.out")"
