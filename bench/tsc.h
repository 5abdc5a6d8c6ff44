/* SPDX-License-Identifier: MIT */
/* The fenced rdtsc pair of the benchmark's floors: the same reads as cacheshim's `tsc`. */
#ifndef CACHESHIM_BENCH_TSC_H
#define CACHESHIM_BENCH_TSC_H

#include <stdint.h>

/* rdtsc then lfence: what follows does not start before the reading. */
static inline uint64_t tsc_begin(void)
{
	uint32_t lo, hi;

	__asm__ volatile("rdtsc; lfence" : "=a"(lo), "=d"(hi)::"memory");
	return ((uint64_t)hi << 32) | lo;
}

/* lfence then rdtsc: what came before has finished. */
static inline uint64_t tsc_end(void)
{
	uint32_t lo, hi;

	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi)::"memory");
	return ((uint64_t)hi << 32) | lo;
}

#endif
