/* SPDX-License-Identifier: MIT */
/* Calls cs_touch_pages(K) N times: exactly K page faults per call.
 *
 * Usage: prog_pages K N [--check | --nested].  --check also counts each
 * call's faults with getrusage(2) and fails unless every call made exactly
 * K: it checks, without the shim, the premise test_pages.sh relies on.
 * --nested calls pn_outer(K, i) instead (below). */
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

/* A target of the program's own (caught at its entry, by its symbol):
 * cs_touch_pages(k), then cs_touch_pages(0) from call site `site` of 32,
 * each a call instruction of its own.  Its inclusive page faults are
 * exactly k; the first call from each site makes the shim set that site
 * up inside this call's bracket, which must cost it no page fault. */
#define SITE(n)                          \
	case n:                          \
		r += cs_touch_pages(0) + n; \
		break;
__attribute__((noinline)) long pn_outer(long k, int site)
{
	long r = cs_touch_pages(k);

	switch (site % 32) {
		SITE(0) SITE(1) SITE(2) SITE(3) SITE(4) SITE(5) SITE(6) SITE(7)
		SITE(8) SITE(9) SITE(10) SITE(11) SITE(12) SITE(13) SITE(14) SITE(15)
		SITE(16) SITE(17) SITE(18) SITE(19) SITE(20) SITE(21) SITE(22) SITE(23)
		SITE(24) SITE(25) SITE(26) SITE(27) SITE(28) SITE(29) SITE(30) SITE(31)
	}
	return r - site % 32;
}

int main(int argc, char **argv)
{
	long k, n, i, bad = 0;
	int check, nested;

	if (argc < 3 || argc > 4 ||
	    (argc == 4 && strcmp(argv[3], "--check") && strcmp(argv[3], "--nested"))) {
		fprintf(stderr, "usage: %s K N [--check | --nested]\n", argv[0]);
		return 2;
	}
	k = atol(argv[1]);
	n = atol(argv[2]);
	check = argc == 4 && !strcmp(argv[3], "--check");
	nested = argc == 4 && !strcmp(argv[3], "--nested");
	pretouch_stack();
	for (i = 0; i < n; i++) {
		long f = check ? minflt() : 0;
		long r = nested ? pn_outer(k, (int)i) : cs_touch_pages(k);

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
