/* SPDX-License-Identifier: MIT */
/* Calibration: the bracket (trampoline, counter reads, aggregation) costs
 * something per event even around a function that does nothing.  At start
 * the shim calls an empty function through the wrapper like any target and
 * records it as the target "cacheshim:empty" (CS_HOOK_CALIBRATION); the
 * report subtracts that site's median per event from every call. */
#include <stdlib.h>
#include <string.h>

#include "shim/internal.h"

/* The calibration calls' site block and the block of the thread that made
 * them, in this process's file (NULL: none).  A forked child runs the same
 * wrapper and counters and does not calibrate again: it copies both into
 * its own file (cs_calibrate_save, cs_calibrate_restore), or its file has
 * no overhead for `cacheshim report -s` to take off its calls. */
static struct cs_site_block *calib_site;
static struct cs_thread_block *calib_thread;
static struct cs_site_block *saved_site; /* malloc'd copy, across the fork */
static struct cs_thread_block saved_thread;
static int saved_has_thread;

/* noinline + an empty asm: a real call of a function with no body. */
__attribute__((noinline)) static void empty(void)
{
	__asm__ volatile("");
}

/* The site block of target id `id` in the calling thread's table, NULL if
 * it has none. */
static struct cs_site_block *own_site(uint32_t id)
{
	const struct cs_thread *t = cs_tls_thread;
	uint64_t i;

	if (!t || !t->sites)
		return NULL;
	for (i = 0; i <= t->sites->mask; i++) {
		uint32_t site = t->sites->slot[i].site;

		if (site && site != CS_SITE_NOT_MADE && cs_site_at(site)->target == id)
			return cs_site_at(site);
	}
	return NULL;
}

void cs_calibrate(void)
{
	void (*call)(void);
	int idx;
	unsigned i;

	idx = cs_target_add("cacheshim:empty", (uint64_t)(uintptr_t)empty, 0, CS_HOOK_CALIBRATION);
	if (idx < 0)
		return;
	call = (void (*)(void))cs_g.targets[idx].stub;
	for (i = 0; i < CS_CALIBRATION_CALLS; i++)
		call();
	if (cs_g.targets[idx].block)
		calib_site = own_site(cs_g.targets[idx].block->id);
	calib_thread = calib_site && cs_tls_thread ? cs_tls_thread->block : NULL;
}

void cs_calibrate_save(void)
{
	free(saved_site);
	saved_site = NULL;
	saved_has_thread = 0;
	if (calib_site && calib_site->hdr.size == cs_site_block_size(cs_g.nevents)) {
		saved_site = malloc(calib_site->hdr.size);
		if (saved_site)
			memcpy(saved_site, calib_site, calib_site->hdr.size);
	}
	if (saved_site && calib_thread && calib_thread->hdr.size == sizeof(saved_thread)) {
		saved_thread = *calib_thread;
		saved_has_thread = 1;
	}
	calib_site = NULL;
	calib_thread = NULL;
}

void cs_calibrate_restore(void)
{
	uint32_t size = (uint32_t)cs_site_block_size(cs_g.nevents);
	struct cs_thread_block *tb;
	struct cs_site_block *b;

	if (!saved_site)
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
	b = cs_output_reserve_skewed(size, size, CS_SITE_ALIGN, 0);
	if (b) {
		memcpy((char *)b + sizeof(b->hdr), (char *)saved_site + sizeof(b->hdr),
		       size - sizeof(b->hdr));
		b->nested = 0;
		cs_output_publish(b, CS_BLOCK_SITE);
		calib_site = b;
	}
	free(saved_site);
	saved_site = NULL;
}
