/* SPDX-License-Identifier: MIT */
/* A writer of report files with known contents, for the report tests. */
#ifndef CACHESHIM_TESTS_FIXTURE_H
#define CACHESHIM_TESTS_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "common/format.h"

/* A report file being built in memory.  Blocks are referred to by their
 * offset: the buffer moves as it grows. */
struct fx {
	unsigned char *buf;
	size_t len, cap;
	uint32_t next_module, next_target;
	uint64_t used; /* fx_write stores this as header.used when not 0 */
	int align_sites; /* site blocks at multiples of CS_SITE_ALIGN, as the
			  * shim writes them (a padding block before) */
	int v1_windows; /* series windows of format version 1's size */
};

/* An event of fx_new: name, kind (CS_EVENT_*), flags (CS_EVENT_COUNTED...). */
struct fx_event {
	const char *name;
	uint32_t kind;
	uint32_t flags;
};

/* Returns a new file with a complete header, or NULL when out of memory. */
struct fx *fx_new(const char *program, uint32_t pid, unsigned nevents,
		  const struct fx_event *events);
/* Returns the header (valid until the next block is added). */
struct cs_file_header *fx_header(struct fx *f);
/* Returns a pointer to the block at offset off (valid until the next
 * block is added). */
void *fx_at(struct fx *f, size_t off);
/* Adds a block of size bytes (rounded up to 8), zeroed, with the given
 * type.  Returns its offset. */
size_t fx_block(struct fx *f, uint32_t type, uint32_t size);
/* Adds a module block.  Returns its id. */
uint32_t fx_module(struct fx *f, const char *path, const uint8_t *build_id, uint32_t build_id_len,
		   uint64_t base);
/* Adds a target block.  Returns its id. */
uint32_t fx_target(struct fx *f, const char *name, uint32_t module, uint32_t argn, uint32_t how);
/* Adds a target block at run-time address addr with got_slots GOT
 * slots.  Returns its id. */
uint32_t fx_target_at(struct fx *f, const char *name, uint32_t module, uint64_t addr, uint32_t how,
		      uint32_t got_slots);
/* Adds a refusal block for target: why (truncated to fit) at offset.
 * Returns its offset. */
size_t fx_refusal(struct fx *f, uint32_t target, uint64_t offset, const char *why);
/* Appends a note block with text; returns its offset. */
size_t fx_note(struct fx *f, const char *text);
/* Adds a thread block. */
void fx_thread(struct fx *f, uint32_t tid, uint32_t events_open);
/* A thread block of size bytes (CS_THREAD_BLOCK_MIN_SIZE: as earlier
 * writers made it, without setup_ticks). */
void fx_thread_setup(struct fx *f, uint32_t tid, uint32_t events_open, uint64_t setup_ticks,
		     uint32_t size);
/* Adds a site block with header.nevents stats.  Returns its offset. */
size_t fx_site(struct fx *f, uint32_t target, uint32_t tid, uint32_t module, uint64_t offset,
	       uint64_t key);
/* Records one returned call at site: calls and entered + 1, and value
 * values[i] for event i (header.nevents values). */
void fx_call(struct fx *f, size_t site, const uint64_t *values);
/* Adds value v of event ev to the stat of site (no call counted). */
void fx_value(struct fx *f, size_t site, unsigned ev, uint64_t v);
/* Writes the file: used = its length (or f->used when set; sealed when
 * complete), state, and
 * capacity = its length plus extra zero bytes appended.  Returns 0 or -1. */
int fx_write(struct fx *f, const char *path, int complete, size_t extra);
void fx_free(struct fx *f);

/* Adds the nested block of the site at offset site and links the site to
 * it.  Returns its offset. */
size_t fx_nested(struct fx *f, size_t site);
/* Records one call with something nested at site (whose nested block is
 * at offset nested): inclusive values incl[i] go to the site (as
 * fx_call) and to the nested block's inclusive stats, excl[i] to its
 * exclusive ones; children nested calls were made during it. */
void fx_nested_call(struct fx *f, size_t site, size_t nested, const uint64_t *incl,
		    const uint64_t *excl, uint64_t children);
/* Adds a series block of thread tid for target, 2^shift calls per
 * window.  Returns its offset. */
size_t fx_series(struct fx *f, uint32_t target, uint32_t tid, unsigned shift);
/* Records the next call in the series at offset series, values[i] for
 * event i, as the shim does: when all windows are full they merge
 * pairwise and the shift grows by one.  first_tsc of a window is 1000
 * plus the number of the window's first call. */
void fx_series_call(struct fx *f, size_t series, const uint64_t *values);

#endif /* CACHESHIM_TESTS_FIXTURE_H */
