/* SPDX-License-Identifier: MIT */
/* The rdpmc fast path: reading a counter from user space through its perf
 * mmap page, under the page's seqlock (the protocol documented in
 * linux/perf_event.h).  A header of its own so that the unit tests run the
 * exact same logic against synthetic pages with a fake rdpmc: there is no
 * PMU on the development machines.  Integer-only (hot path). */
#ifndef CACHESHIM_SHIM_RDPMC_H
#define CACHESHIM_SHIM_RDPMC_H

#include <linux/perf_event.h>
#include <stdint.h>

typedef uint64_t (*cs_rdpmc_fn)(uint32_t counter);

static inline uint64_t cs_rdpmc_insn(uint32_t counter)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return ((uint64_t)hi << 32) | lo;
}

/* Reads the count of the event behind page pc with rdpmc_fn.  Returns 0
 * and sets *count and *not_running (time_enabled - time_running, which
 * only grows while the event is off the PMU: comparing it at entry and
 * exit tells whether the counter ran the whole call), or -1 when the
 * counter cannot be read from user space right now (no cap_user_rdpmc, or
 * index 0: not scheduled) and the caller must fall back to read(). */
static inline int cs_rdpmc_read(volatile const struct perf_event_mmap_page *pc,
				cs_rdpmc_fn rdpmc_fn, uint64_t *count, uint64_t *not_running)
{
	uint32_t seq, idx, width;
	uint64_t enabled, running;
	int64_t v;

	do {
		seq = pc->lock;
		__asm__ volatile("" ::: "memory");
		enabled = pc->time_enabled;
		running = pc->time_running;
		idx = pc->index;
		v = pc->offset;
		if (!pc->cap_user_rdpmc || !idx)
			return -1;
		width = pc->pmc_width;
		if (width == 0 || width > 64)
			return -1;
		{
			/* The hardware counter is width bits wide: sign-extend. */
			int64_t pmc = (int64_t)(rdpmc_fn(idx - 1) << (64 - width));

			v += pmc >> (64 - width);
		}
		__asm__ volatile("" ::: "memory");
	} while (pc->lock != seq);
	*count = (uint64_t)v;
	*not_running = enabled - running;
	return 0;
}

#endif /* CACHESHIM_SHIM_RDPMC_H */
