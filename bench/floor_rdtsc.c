/* SPDX-License-Identifier: MIT */
/* The rdtsc floor of `make bench`: the least an LD_PRELOAD wrapper must do to time each call. */
#include <dlfcn.h>
#include <stdint.h>

#include "bench/tsc.h"

/*
 * Defines bench_inc, so the program's PLT slot binds here, and calls the
 * real one found with dlsym(RTLD_NEXT).  The same fenced reads as
 * cacheshim's `tsc` (rdtsc; lfence at entry, lfence; rdtsc at exit): an
 * unfenced pair lets the call's instructions drift outside the bracket,
 * so it would be a floor for a measurement nobody should make.  Sum and
 * count stay in thread-local memory: the least bookkeeping a profiler
 * can do, and enough that the compiler cannot drop the reads.
 */

static long (*real)(long);
static __thread uint64_t sum, calls;

__attribute__((constructor)) static void init(void)
{
	real = (long (*)(long))dlsym(RTLD_NEXT, "bench_inc");
}

__attribute__((visibility("default"))) long bench_inc(long x)
{
	uint64_t t0 = tsc_begin();
	long r = real(x);

	sum += tsc_end() - t0;
	calls++;
	return r;
}
