/* SPDX-License-Identifier: MIT */
/* Two threads load plugins at the same time, so that the shim hooks two
 * new modules at once (one thread's entry patching beside the other's GOT
 * patching).
 *
 * Usage: prog_dlrace N PLUGIN...  Thread t (0 or 1) dlopens (RTLD_NOW |
 * RTLD_LOCAL) the plugins of its half of the list (the even or the odd
 * ones) one after the other and calls each one's plug_run(N) right after
 * loading it; both threads start together.  The plugins stay loaded.
 * stdout has one line per plugin with plug_run's result, in list order,
 * then rt_leaf(N) called by the program itself (which links libcsrobust,
 * where the plugins' rt_leaf comes from). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/robust/robust.h"

#define MAX_PLUGINS 64

static char **plugins;
static int nplugins;
static long n, result[MAX_PLUGINS];
static pthread_barrier_t start;

static void *loader(void *arg)
{
	int i;

	pthread_barrier_wait(&start);
	for (i = (int)(long)arg; i < nplugins; i += 2) {
		void *h = dlopen(plugins[i], RTLD_NOW | RTLD_LOCAL);
		long (*run)(long);

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			exit(1);
		}
		run = (long (*)(long))dlsym(h, "plug_run");
		if (!run) {
			fprintf(stderr, "dlsym: %s\n", dlerror());
			exit(1);
		}
		result[i] = run(n);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[2];
	long t;
	int i;

	if (argc < 3 || argc - 2 > MAX_PLUGINS) {
		fprintf(stderr, "usage: %s N PLUGIN... (at most %d)\n", argv[0], MAX_PLUGINS);
		return 2;
	}
	n = atol(argv[1]);
	plugins = argv + 2;
	nplugins = argc - 2;
	pthread_barrier_init(&start, NULL, 2);
	for (t = 0; t < 2; t++)
		if (pthread_create(&th[t], NULL, loader, (void *)t)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	for (t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	for (i = 0; i < nplugins; i++)
		printf("plugin %d: plug_run(%ld) = %ld\n", i, n, result[i]);
	printf("rt_leaf(%ld) = %ld\n", n, rt_leaf(n));
	return 0;
}
