/* SPDX-License-Identifier: MIT */
/* Calls cs_touch_pages(k) N times, k rising and falling: a known series;
 * then a wrapped function that calls it: known nested values.
 *
 * Usage: prog_series N [M].  Call i (0-based) touches 1 + (i / 256) % 4
 * pages: 256 calls of 1 page, 256 of 2, of 3, of 4, then again from 1 (a
 * saw-tooth).  Every window of a power-of-two number of calls up to 256
 * therefore has one k: its page-fault mean, p50 and p99 are exactly k.
 * Then M calls of cs_apply(cs_touch_pages, 2, 3), which calls
 * cs_touch_pages(2), (3) and (4) through a function pointer (the shim's
 * wrapper, since the pointer is read from a patched GOT slot): 9 page
 * faults each inclusive, 0 exclusive.
 *
 * prog_series --windows prints CS_SERIES_WINDOWS, for the test to know
 * how the windows merge. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/format.h"
#include "tests/preload/cstarget.h"

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
	long n, m, i, k;

	if (argc == 2 && strcmp(argv[1], "--windows") == 0) {
		printf("%u\n", CS_SERIES_WINDOWS);
		return 0;
	}
	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: %s N [M]\n", argv[0]);
		return 2;
	}
	n = atol(argv[1]);
	m = argc == 3 ? atol(argv[2]) : 0;
	pretouch_stack();
	for (i = 0; i < n; i++) {
		k = 1 + (i / 256) % 4;
		if (cs_touch_pages(k) != k) {
			printf("call %ld: cs_touch_pages(%ld) failed\n", i, k);
			return 1;
		}
	}
	for (i = 0; i < m; i++) {
		if (cs_apply(cs_touch_pages, 2, 3) != 9) {
			printf("cs_apply(cs_touch_pages, 2, 3) failed\n");
			return 1;
		}
	}
	return 0;
}
