/* SPDX-License-Identifier: MIT */
/* libcscalib.so: calibration kernels with a known cost per call, and the driver that calls them through the PLT. */
#ifndef CACHESHIM_CALIB_CSCALIB_H
#define CACHESHIM_CALIB_CSCALIB_H

#include <stdint.h>

/* The kernels.  Each is an exported function of libcscalib.so, called by
 * cs_calib_drive through the library's own PLT so that the shim's GOT
 * patching brackets it like any target.  They return a value derived
 * from their work so that the compiler cannot drop it. */
uint64_t cs_calib_null(void);
/* 2n instructions (dec, jnz) and n taken-or-not conditional branches in
 * the loop, plus a handful around it. */
uint64_t cs_calib_loop(uint64_t n);
/* One conditional branch per byte of data[0, n) on its low bit, in a loop
 * unrolled by 4 (n + n/4 conditional branches for n a multiple of 4);
 * mode (the key of the target: 0 constant data, 1 random data) is not
 * read. */
uint64_t cs_calib_branch(const uint8_t *data, uint64_t n, uint64_t mode);
/* k dependent loads along a pointer chain (one line per 4 KiB page,
 * random order, random line in the page); resident: the driver walked it
 * just before; cold: the driver flushed every line of it just before. */
uint64_t cs_calib_resident(void *chain, uint64_t k);
uint64_t cs_calib_cold(void *chain, uint64_t k);
/* CS_CALIB_LEVEL_LOADS dependent loads along a random chain of lines that
 * covers footprint bytes (the key of the target); returns where it
 * stopped, the start of the next call. */
uint64_t cs_calib_level(void *chain, uint64_t footprint);
/* k dependent loads, one per 4 KiB page, over k pages: k beyond the
 * reach of the data TLBs gives about k DTLB misses. */
uint64_t cs_calib_dtlb(void *chain, uint64_t k);
/* Writes one byte to each of k fresh anonymous pages at p: exactly k page
 * faults. */
uint64_t cs_calib_fault(char *p, uint64_t k);

#define CS_CALIB_LEVEL_LOADS 4096u
#define CS_CALIB_MAX_LEVELS 6u

/* What cs_calib_drive runs. */
struct cs_calib_params {
	unsigned calls; /* per kernel (and per level footprint) */
	uint64_t loop_n; /* loop(N) */
	uint64_t branch_n; /* bytes of branch data */
	uint64_t lines; /* K of resident(K) and cold(K) */
	uint64_t dtlb_pages; /* K of dtlb(K) */
	uint64_t fault_pages; /* K of fault(K) */
	unsigned nlevels;
	uint64_t level_bytes[CS_CALIB_MAX_LEVELS]; /* footprints, powers of 2 */
};

/* Runs every kernel p->calls times, preparing each call outside it
 * (fresh random branch data, clflush of the cold lines, fresh pages).
 * Returns 0, or a negative errno when memory could not be had (a message
 * went to stderr). */
int cs_calib_drive(const struct cs_calib_params *p);

/* Makes a cyclic chain of pointers through the n blocks of stride bytes
 * at buf, in random order, one pointer per block: at the block's start,
 * or (random_offset) at a random 64-byte line inside it.  Returns the
 * first element, or NULL when out of memory. */
void *cs_calib_chain(char *buf, uint64_t n, uint64_t stride, int random_offset, uint64_t *seed);
/* Returns the next of the xorshift64* numbers of *seed. */
uint64_t cs_calib_random(uint64_t *seed);

#endif /* CACHESHIM_CALIB_CSCALIB_H */
