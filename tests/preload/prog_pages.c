/* SPDX-License-Identifier: MIT */
/* Calls cs_touch_pages(K) N times: exactly K page faults per call.
 *
 * Usage: prog_pages K N [--check].  --check also counts each call's faults
 * with getrusage(2) and fails unless every call made exactly K: it checks,
 * without the shim, the premise test_pages.sh relies on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "tests/preload/cstarget.h"

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

/* Touches 64 KiB of stack now, so that no call below faults in a new stack
 * page (the shim's frame and the target's run deeper than main). */
__attribute__((noinline)) static void pretouch_stack(void)
{
	volatile char buf[64 * 1024];
	size_t i;

	for (i = 0; i < sizeof(buf); i += 256)
		buf[i] = 0;
}

int main(int argc, char **argv)
{
	long k, n, i, bad = 0;
	int check;

	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "--check"))) {
		fprintf(stderr, "usage: %s K N [--check]\n", argv[0]);
		return 2;
	}
	k = atol(argv[1]);
	n = atol(argv[2]);
	check = argc == 4;
	pretouch_stack();
	for (i = 0; i < n; i++) {
		long f = check ? minflt() : 0;
		long r = cs_touch_pages(k);

		if (check)
			f = minflt() - f;
		if (r != k) {
			printf("call %ld: cs_touch_pages(%ld) returned %ld\n", i, k, r);
			return 1;
		}
		if (check && f != k) {
			printf("call %ld: %ld page faults, want %ld\n", i, f, k);
			bad++;
		}
	}
	printf("touched %ld pages %ld times\n", k, n);
	return bad ? 1 : 0;
}
