/* SPDX-License-Identifier: MIT */
/* The program of corpus.c built as a shared library (-DCORPUS_LIB): its
 * static functions are then in libcorpus.so, linked (default) or, with
 * -DCORPUS_DLOPEN, loaded by dlopen after the shim's start-up, from the
 * program's directory (by full path: under the shim's dlopen wrapper
 * glibc would look at the shim's DT_RUNPATH, not the program's, a limit
 * docs/design.md states). */
#include <stdio.h>
#ifdef CORPUS_DLOPEN
#include <dlfcn.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#endif

int corpus_run(int argc, char **argv);

int main(int argc, char **argv)
{
#ifdef CORPUS_DLOPEN
	char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	char *slash;
	void *h;
	int (*run)(int, char **);

	if (n <= 0 || !(slash = memrchr(path, '/', (size_t)n))) {
		fprintf(stderr, "cannot find the program's directory\n");
		return 2;
	}
	strcpy(slash + 1, "libcorpus.so");
	h = dlopen(path, RTLD_NOW);
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
