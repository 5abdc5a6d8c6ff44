/* SPDX-License-Identifier: MIT */
/* Calibration: the bracket (trampoline, counter reads, aggregation) costs
 * something per event even around a function that does nothing.  At start
 * the shim calls an empty function through the wrapper like any target and
 * records it as the target "cacheshim:empty" (CS_HOOK_CALIBRATION); the
 * report subtracts that site's median per event from every call.  Then a
 * function that calls the empty one through the wrapper, "cacheshim:nested"
 * (CS_HOOK_CALIBRATION_NESTED too): its median less the empty one's is
 * what each nested wrapped call adds to the call around it, which is more
 * than the nested call's own bracket (its hooks and counter reads run
 * outside that bracket but inside the outer one: two read() system calls
 * of a perf event group, ~4,500 TSC ticks, against a bracket of ~80). */
#include <stdlib.h>
#include <string.h>

#include "shim/internal.h"

/* Calibration calls of the empty function, and of the nested one (each
 * two wrapped calls).  With perf events every wrapped call is two group
 * reads (~1.6 us on the development VMs): 1,000 and 128 calls were ~2 ms
 * of every process's start, so with them the calls are fewer.  The
 * medians do not move with it: per event they sit on a few values (tsc
 * 78 ticks, page faults 0 in 14 of 15 processes at 1,000 calls), and the
 * nested one varies more between processes (4,200-5,700 ticks) than a
 * median of 64 calls does within one. */
#define CS_CALIBRATION_CALLS 1000
#define CS_CALIBRATION_NESTED_CALLS 128
#define CS_CALIBRATION_CALLS_PERF 256
#define CS_CALIBRATION_NESTED_CALLS_PERF 64

/* The calibration calls' site blocks (the empty function's, from its own
 * loop and from inside the nested one; the nested one's) and the block of
 * the thread that made them, in this process's file.  A forked child runs
 * the same wrapper and counters and does not calibrate again: it copies
 * them into its own file (cs_calibrate_save, cs_calibrate_restore), or its
 * file has no overhead for `cacheshim report -s` to take off its calls. */
#define CALIB_SITES 4
static struct cs_site_block *calib_sites[CALIB_SITES];
static unsigned ncalib_sites;
static struct cs_thread_block *calib_thread;
static struct cs_site_block *saved_sites[CALIB_SITES]; /* malloc'd copies, across the fork */
static unsigned nsaved_sites;
static struct cs_thread_block saved_thread;
static int saved_has_thread;

/* noinline + an empty asm: a real call of a function with no body. */
__attribute__((noinline)) static void empty(void)
{
	__asm__ volatile("");
}

/* The empty function's stub: what nested() calls. */
static void (*empty_stub)(void);

/* Calls the empty function through the wrapper; the asm after the call
 * keeps it a call, not a tail jump (which the wrapper handles apart). */
__attribute__((noinline)) static void nested(void)
{
	empty_stub();
	__asm__ volatile("");
}

/* Finds the calling thread's site blocks of calibration targets. */
static void find_sites(void)
{
	const struct cs_thread *t = cs_tls_thread;
	uint64_t i;

	ncalib_sites = 0;
	if (!t || !t->sites)
		return;
	for (i = 0; i <= t->sites->mask && ncalib_sites < CALIB_SITES; i++) {
		uint32_t site = t->sites->slot[i].site;
		struct cs_site_block *b;
		const struct cs_target_block *tb;

		if (!site || site == CS_SITE_NOT_MADE)
			continue;
		b = cs_site_at(site);
		tb = b->target ? cs_g.targets[b->target - 1].block : NULL;
		if (tb && (tb->how & CS_HOOK_CALIBRATION))
			calib_sites[ncalib_sites++] = b;
	}
}

void cs_calibrate(void)
{
	unsigned calls = cs_g.nperf ? CS_CALIBRATION_CALLS_PERF : CS_CALIBRATION_CALLS,
		 nested_calls = cs_g.nperf ? CS_CALIBRATION_NESTED_CALLS_PERF
					   : CS_CALIBRATION_NESTED_CALLS;
	void (*call)(void);
	int idx;
	unsigned i;

	idx = cs_target_add("cacheshim:empty", (uint64_t)(uintptr_t)empty, 0, CS_HOOK_CALIBRATION);
	if (idx < 0)
		return;
	call = (void (*)(void))cs_g.targets[idx].stub;
	for (i = 0; i < calls; i++)
		call();
	empty_stub = call;
	idx = cs_target_add("cacheshim:nested", (uint64_t)(uintptr_t)nested, 0,
			    CS_HOOK_CALIBRATION | CS_HOOK_CALIBRATION_NESTED);
	if (idx >= 0) {
		call = (void (*)(void))cs_g.targets[idx].stub;
		for (i = 0; i < nested_calls; i++)
			call();
	}
	find_sites();
	calib_thread = ncalib_sites && cs_tls_thread ? cs_tls_thread->block : NULL;
}

void cs_calibrate_save(void)
{
	unsigned i;

	for (i = 0; i < nsaved_sites; i++)
		free(saved_sites[i]);
	nsaved_sites = 0;
	saved_has_thread = 0;
	for (i = 0; i < ncalib_sites; i++) {
		const struct cs_site_block *b = calib_sites[i];

		if (b->hdr.size != cs_site_block_size(cs_g.nevents))
			continue;
		saved_sites[nsaved_sites] = malloc(b->hdr.size);
		if (saved_sites[nsaved_sites])
			memcpy(saved_sites[nsaved_sites++], b, b->hdr.size);
	}
	if (nsaved_sites && calib_thread && calib_thread->hdr.size == sizeof(saved_thread)) {
		saved_thread = *calib_thread;
		saved_has_thread = 1;
	}
	ncalib_sites = 0;
	calib_thread = NULL;
}

void cs_calibrate_restore(void)
{
	uint32_t size = (uint32_t)cs_site_block_size(cs_g.nevents);
	struct cs_thread_block *tb;
	struct cs_site_block *b;
	unsigned i;

	if (!nsaved_sites)
		return;
	/* The thread block says which events the calibrating thread had
	 * open; its set-up time is the parent's, counted in its file. */
	if (saved_has_thread && (tb = cs_output_reserve(sizeof(*tb)))) {
		memcpy((char *)tb + sizeof(tb->hdr), (char *)&saved_thread + sizeof(tb->hdr),
		       sizeof(*tb) - sizeof(tb->hdr));
		tb->setup_ticks = 0;
		cs_output_publish(tb, CS_BLOCK_THREAD);
		calib_thread = tb;
	}
	for (i = 0; i < nsaved_sites; i++) {
		b = cs_output_reserve_skewed(size, size, CS_SITE_ALIGN, 0);
		if (b) {
			memcpy((char *)b + sizeof(b->hdr), (char *)saved_sites[i] + sizeof(b->hdr),
			       size - sizeof(b->hdr));
			b->nested = 0;
			cs_output_publish(b, CS_BLOCK_SITE);
			calib_sites[ncalib_sites++] = b;
		}
		free(saved_sites[i]);
	}
	nsaved_sites = 0;
}
