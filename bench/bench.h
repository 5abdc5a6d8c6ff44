/* SPDX-License-Identifier: MIT */
/* What the `make bench` driver calls: the tiny library functions and the generated call sites. */
#ifndef CACHESHIM_BENCH_BENCH_H
#define CACHESHIM_BENCH_BENCH_H

/* Call sites in bench_sites and in each bench_targets_* (gen.sh writes them). */
#define BENCH_SITES 10000
#define BENCH_TARGETS 1000

/* libbenchlib.so: the measured function, x + 1. */
long bench_inc(long x);

/* sites.c (generated): x = bench_inc(x) at BENCH_SITES distinct call sites. */
long bench_sites(long x);
/* targets.c (generated): BENCH_TARGETS call sites, all of bench_f0 (one)
 * or of bench_f0 .. bench_f999 (many), the functions of libbench1000.so. */
long bench_targets_one(long x);
long bench_targets_many(long x);

#endif
