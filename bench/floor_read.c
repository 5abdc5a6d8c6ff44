/* SPDX-License-Identifier: MIT */
/* The read() floor of `make bench`: one PERF_FORMAT_GROUP read of a software event group each side of a call. */
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * Defines bench_inc (the program's PLT slot binds here) and calls the real
 * one from dlsym(RTLD_NEXT).  Per thread, at its first call, one group of
 * BENCH_FLOOR_EVENTS (1 or 4) software events opens with the attributes
 * cacheshim uses: user space only, PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED |
 * TOTAL_TIME_RUNNING, close-on-exec, no inherit.  Each call: one read() of
 * the group, the call, one read(), the first member's difference summed.
 * No multiplexing check, no call site, no histogram: a floor.
 */

static const uint64_t configs[4] = {PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_PAGE_FAULTS_MIN,
				    PERF_COUNT_SW_PAGE_FAULTS_MAJ, PERF_COUNT_SW_CONTEXT_SWITCHES};

/* What a group read returns: nr, time_enabled, time_running, values. */
#define GROUP_WORDS (3 + 4)
#define FIRST_VALUE 3

static long (*real)(long);
static unsigned nevents = 1;
static __thread int fd = -2; /* -2: not opened yet */
static __thread uint64_t sum, calls;

__attribute__((constructor)) static void init(void)
{
	const char *n = getenv("BENCH_FLOOR_EVENTS");

	real = (long (*)(long))dlsym(RTLD_NEXT, "bench_inc");
	if (n && atoi(n) >= 1 && atoi(n) <= 4)
		nevents = (unsigned)atoi(n);
}

static int open_group(void)
{
	struct perf_event_attr a;
	int lead = -1;
	unsigned i;

	for (i = 0; i < nevents; i++) {
		int f;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = configs[i];
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
				PERF_FORMAT_TOTAL_TIME_RUNNING;
		f = (int)syscall(SYS_perf_event_open, &a, 0, -1, lead, PERF_FLAG_FD_CLOEXEC);
		if (f < 0)
			return -1;
		if (i == 0)
			lead = f;
	}
	return lead;
}

__attribute__((visibility("default"))) long bench_inc(long x)
{
	uint64_t g0[GROUP_WORDS], g1[GROUP_WORDS];
	long r;

	if (fd == -2) {
		fd = open_group();
		if (fd < 0) {
			/* A floor that silently measured nothing would look cheap. */
			perror("floor_read: perf_event_open");
			_exit(3);
		}
	}
	if (read(fd, g0, sizeof(g0)) < 0)
		g0[FIRST_VALUE] = 0;
	r = real(x);
	if (read(fd, g1, sizeof(g1)) < 0)
		g1[FIRST_VALUE] = 0;
	sum += g1[FIRST_VALUE] - g0[FIRST_VALUE];
	calls++;
	return r;
}
