/* SPDX-License-Identifier: MIT */
/* libbenchlib.so: the tiny function `make bench` calls through the PLT. */
#include "bench/bench.h"

/* As small as a function gets (lea; ret), so that what is measured
 * around it is the tool's cost and nothing else. */
long bench_inc(long x)
{
	return x + 1;
}
