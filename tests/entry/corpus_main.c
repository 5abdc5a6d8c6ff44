/* SPDX-License-Identifier: MIT */
/* The program of corpus.c built as a shared library (-DCORPUS_LIB): its
 * static functions are then in libcorpus.so, linked (default) or, with
 * -DCORPUS_DLOPEN, loaded by dlopen after the shim's start-up (found by
 * the program's rpath). */
#include <stdio.h>
#ifdef CORPUS_DLOPEN
#include <dlfcn.h>
#endif

int corpus_run(int argc, char **argv);

int main(int argc, char **argv)
{
#ifdef CORPUS_DLOPEN
	void *h = dlopen("libcorpus.so", RTLD_NOW);
	int (*run)(int, char **);

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 2;
	}
	*(void **)&run = dlsym(h, "corpus_run");
	if (!run) {
		fprintf(stderr, "dlsym: %s\n", dlerror());
		return 2;
	}
	return run(argc, argv);
#else
	return corpus_run(argc, argv);
#endif
}
