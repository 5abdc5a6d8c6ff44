/* SPDX-License-Identifier: MIT */
/* The dlopen rows of `make bench`: what loading libraries one by one costs
 * with and without the shim, whose patching passes run after every dlopen.
 *
 * usage: dlopens DIR N -o FILE: dlopens DIR/libdl0.so .. libdl{N-1}.so
 * (made by bench/run.sh), each RTLD_NOW | RTLD_LOCAL, and writes the
 * microseconds per dlopen (the whole loop timed, so that every pass's cost
 * counts, the first module's and the 200th's), then N twice (the driver
 * line's format of bench.c). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	char path[4096];
	double t0, us;
	long i, n;
	FILE *f;

	if (argc != 5 || strcmp(argv[3], "-o") || (n = atol(argv[2])) < 1) {
		fputs("usage: dlopens DIR N -o FILE\n", stderr);
		return 2;
	}
	t0 = now_us();
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/libdl%ld.so", argv[1], i);
		if (!dlopen(path, RTLD_NOW | RTLD_LOCAL)) {
			fprintf(stderr, "dlopens: %s\n", dlerror());
			return 1;
		}
	}
	us = (now_us() - t0) / n;
	f = fopen(argv[4], "w");
	if (!f) {
		perror(argv[4]);
		return 1;
	}
	fprintf(f, "%.2f %ld %ld\n", us, n, n);
	return fclose(f) ? 1 : 0;
}
