/* SPDX-License-Identifier: MIT */
/* A PAPI peer for `make bench`: an LD_PRELOAD wrapper reading perf::PAGE-FAULTS with a PAPI_read pair. */
#include <dlfcn.h>
#include <papi.h>
#include <stdio.h>
#include <unistd.h>

/*
 * What a PAPI user would write to count per call: one event set of
 * perf::PAGE-FAULTS (PAPI's perf_event component, libpfm4 names, user
 * space only by default), started once, read before and after each call.
 * Single-threaded (PAPI needs PAPI_thread_init and per-thread event sets
 * otherwise); the benchmark only runs it with one thread.  Exits with 3
 * if PAPI cannot count the event here, so the benchmark skips it.
 */

static long (*real)(long);
static int set = PAPI_NULL;
static long long sum, calls;

static void fail(const char *what, int err)
{
	fprintf(stderr, "papi_read: %s: %s\n", what, PAPI_strerror(err));
	_exit(3);
}

__attribute__((constructor)) static void init(void)
{
	int err;

	real = (long (*)(long))dlsym(RTLD_NEXT, "bench_inc");
	err = PAPI_library_init(PAPI_VER_CURRENT);
	if (err != PAPI_VER_CURRENT)
		fail("PAPI_library_init", err < 0 ? err : PAPI_EINVAL);
	if ((err = PAPI_create_eventset(&set)) != PAPI_OK)
		fail("PAPI_create_eventset", err);
	if ((err = PAPI_add_named_event(set, "perf::PAGE-FAULTS")) != PAPI_OK)
		fail("PAPI_add_named_event perf::PAGE-FAULTS", err);
	if ((err = PAPI_start(set)) != PAPI_OK)
		fail("PAPI_start", err);
}

__attribute__((visibility("default"))) long bench_inc(long x)
{
	long long v0 = 0, v1 = 0;
	long r;

	PAPI_read(set, &v0);
	r = real(x);
	PAPI_read(set, &v1);
	sum += v1 - v0;
	calls++;
	return r;
}
