/* SPDX-License-Identifier: MIT */
/* Loads plugins one after the other, each unloaded before the next.
 *
 * Usage: prog_dl N MODE PLUGIN...  MODE is the dlopen mode: now-local
 * (RTLD_NOW | RTLD_LOCAL), now-global or lazy-local (RTLD_LAZY |
 * RTLD_LOCAL).  Load i (from 0) dlopens PLUGIN i, calls its
 * plug_run(N * (i + 1)) and dlcloses it, so that the next plugin may be
 * mapped where this one was.  Whether a load reused the previous load's
 * address goes to stderr (it may differ between runs); stdout has the
 * sums only.  Between loads the program calls rt_leaf itself: its own
 * patched GOT slot must keep working while modules come and go. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/robust/robust.h"

int main(int argc, char **argv)
{
	long (*run)(long);
	void *h, *prev = NULL;
	long n, k, s;
	int i, mode;

	if (argc < 4) {
		fprintf(stderr, "usage: %s N now-local|now-global|lazy-local PLUGIN...\n", argv[0]);
		return 2;
	}
	n = atol(argv[1]);
	if (!strcmp(argv[2], "now-local")) {
		mode = RTLD_NOW | RTLD_LOCAL;
	} else if (!strcmp(argv[2], "now-global")) {
		mode = RTLD_NOW | RTLD_GLOBAL;
	} else if (!strcmp(argv[2], "lazy-local")) {
		mode = RTLD_LAZY | RTLD_LOCAL;
	} else {
		fprintf(stderr, "%s: unknown mode %s\n", argv[0], argv[2]);
		return 2;
	}
	for (i = 3; i < argc; i++) {
		k = n * (i - 2);
		h = dlopen(argv[i], mode);
		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			return 1;
		}
		run = (long (*)(long))dlsym(h, "plug_run");
		if (!run) {
			fprintf(stderr, "dlsym: %s\n", dlerror());
			return 1;
		}
		fprintf(stderr, "load %d at %p%s\n", i - 3, (void *)run,
			(void *)run == prev ? " (same address as the previous load)" : "");
		prev = (void *)run;
		s = run(k);
		printf("load %d: plug_run(%ld) = %ld, rt_leaf(%d) = %ld\n", i - 3, k, s, i,
		       rt_leaf(i));
		if (dlclose(h)) {
			fprintf(stderr, "dlclose: %s\n", dlerror());
			return 1;
		}
	}
	return 0;
}
