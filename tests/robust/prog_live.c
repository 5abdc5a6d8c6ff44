/* SPDX-License-Identifier: MIT */
/* Entry patching while another thread runs: a second thread keeps calling
 * rt_leaf (patched at start) while the main thread dlopens a plugin, so
 * the shim must patch the plugin's entries with the int3-first sequence.
 *
 * Usage: prog_live N PLUGIN [block [PLUGIN2]]  -- with "block", the second
 * thread blocks SIGTRAP first (an int3 there would kill the process, so the
 * shim must defer those patches); with PLUGIN2, once that thread has ended
 * the program dlopens PLUGIN2 (the shim's next chance to write the deferred
 * patches) and calls PLUGIN's plug_run(N) once more.  Prints plug_run(N) and how many calls the
 * second thread made is not printed (it varies); exits 0. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/robust/robust.h"

static volatile int stop, started;
static volatile sig_atomic_t traps;

static void on_trap(int sig)
{
	(void)sig;
	traps++;
}

static void *spin(void *arg)
{
	long s = 0;

	if (arg) {
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGTRAP);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	started = 1;
	while (!stop)
		s += rt_leaf(s & 7);
	return (void *)s;
}

int main(int argc, char **argv)
{
	long (*run)(long);
	pthread_t th;
	void *h;
	long n;

	if (argc < 3) {
		fprintf(stderr, "usage: %s N PLUGIN [block]\n", argv[0]);
		return 2;
	}
	n = atol(argv[1]);
	/* The program's own SIGTRAP handler must keep working after the shim
	 * patched entries live (it installs a handler of its own then). */
	signal(SIGTRAP, on_trap);
	if (pthread_create(&th, NULL, spin, argc > 3 && !strcmp(argv[3], "block") ? "" : NULL))
		return 1;
	while (!started)
		;
	h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	run = (long (*)(long))dlsym(h, "plug_run");
	if (!run)
		return 1;
	printf("plug_run(%ld) = %ld\n", n, run(n));
	raise(SIGTRAP);
	printf("own SIGTRAP handler ran %d time(s)\n", (int)traps);
	stop = 1;
	pthread_join(th, NULL);
	if (argc > 4) {
		if (!dlopen(argv[4], RTLD_NOW | RTLD_LOCAL)) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		printf("again: plug_run(%ld) = %ld\n", n, run(n));
	}
	return 0;
}
