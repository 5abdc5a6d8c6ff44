/* SPDX-License-Identifier: MIT */
/* Calls memset and memcpy through libc, N times each (built with
 * -fno-builtin, so that every call is a real call).  Targets whose glob
 * reaches libc's own string functions: the shim's per-call path must not
 * call them itself.
 *
 * Usage: prog_memset N.  stdout: a checksum of the buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	static char a[4096], b[4096];
	long i, n, sum = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s N\n", argv[0]);
		return 2;
	}
	n = atol(argv[1]);
	for (i = 0; i < n; i++) {
		memset(a, (int)(i & 0xff), (size_t)(100 + i % 50));
		memcpy(b, a, (size_t)(64 + i % 30));
		sum += a[7] + b[9];
	}
	printf("checksum %ld\n", sum);
	return 0;
}
