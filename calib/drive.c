/* SPDX-License-Identifier: MIT */
/* cs_calib_drive: prepares each kernel call outside it and calls the kernel through the PLT. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "calib/cscalib.h"

#define PAGE 4096u
#define LINE 64u

static void *map(uint64_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	return p;
}

/* Evicts the chain's lines from every cache level: clflush, ordered
 * before the call by mfence. */
static void flush_chain(void *chain, uint64_t k)
{
	void **p = chain;
	uint64_t i;

	for (i = 0; i < k; i++) {
		void **next = *p;

		__asm__ volatile("clflush (%0)" : : "r"(p) : "memory");
		p = next;
	}
	__asm__ volatile("mfence" : : : "memory");
}

static void warm_chain(void *chain, uint64_t k)
{
	volatile uint64_t sink;
	void **p = chain;

	while (k--)
		p = *p;
	sink = (uint64_t)(uintptr_t)p;
	(void)sink;
}

int cs_calib_drive(const struct cs_calib_params *p)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull, i, bytes, n;
	unsigned c, l;
	uint8_t *data;
	char *buf, *lbuf, *tbuf, *fbuf;
	void *chain, *lchain, *tchain;

	for (c = 0; c < p->calls; c++)
		cs_calib_null();
	for (c = 0; c < p->calls; c++)
		cs_calib_loop(p->loop_n);

	data = malloc(p->branch_n ? p->branch_n : 1);
	if (!data)
		return -ENOMEM;
	/* Constant and random calls alternate, each with fresh data, so
	 * that the predictor can neither learn the random pattern nor carry
	 * one phase into the other. */
	for (c = 0; c < p->calls; c++) {
		/* All ones: the branch is never taken, the cheapest steady case. */
		memset(data, 0xff, p->branch_n);
		cs_calib_branch(data, p->branch_n, 0);
		for (i = 0; i < p->branch_n; i++)
			data[i] = (uint8_t)(cs_calib_random(&seed) >> 32);
		cs_calib_branch(data, p->branch_n, 1);
	}
	free(data);

	bytes = p->lines * PAGE;
	buf = map(bytes);
	if (!buf)
		return -ENOMEM;
	chain = cs_calib_chain(buf, p->lines, PAGE, 1, &seed);
	if (!chain) {
		munmap(buf, bytes);
		return -ENOMEM;
	}
	for (c = 0; c < p->calls; c++) {
		warm_chain(chain, p->lines);
		warm_chain(chain, p->lines);
		cs_calib_resident(chain, p->lines);
		warm_chain(chain, p->lines);
		flush_chain(chain, p->lines);
		cs_calib_cold(chain, p->lines);
	}
	munmap(buf, bytes);

	for (l = 0; l < p->nlevels; l++) {
		n = p->level_bytes[l] / LINE;
		lbuf = map(p->level_bytes[l]);
		if (!lbuf)
			return -ENOMEM;
		lchain = cs_calib_chain(lbuf, n, LINE, 0, &seed);
		if (!lchain) {
			munmap(lbuf, p->level_bytes[l]);
			return -ENOMEM;
		}
		warm_chain(lchain, n);
		/* Each call goes on where the last one stopped: restarting
		 * at the head would keep reading the same few lines, which
		 * then stay cached whatever the footprint. */
		for (c = 0; c < p->calls; c++)
			lchain = (void *)(uintptr_t)cs_calib_level(lchain, p->level_bytes[l]);
		munmap(lbuf, p->level_bytes[l]);
	}

	bytes = p->dtlb_pages * PAGE;
	tbuf = map(bytes);
	if (!tbuf)
		return -ENOMEM;
	tchain = cs_calib_chain(tbuf, p->dtlb_pages, PAGE, 1, &seed);
	if (!tchain) {
		munmap(tbuf, bytes);
		return -ENOMEM;
	}
	for (c = 0; c < p->calls; c++) {
		warm_chain(tchain, p->dtlb_pages);
		cs_calib_dtlb(tchain, p->dtlb_pages);
	}
	munmap(tbuf, bytes);

	bytes = p->fault_pages * PAGE;
	for (c = 0; c < p->calls; c++) {
		fbuf = map(bytes ? bytes : PAGE);
		if (!fbuf)
			return -ENOMEM;
		/* One fault per page: a transparent huge page would serve
		 * 512 of them with one. */
		madvise(fbuf, bytes ? bytes : PAGE, MADV_NOHUGEPAGE);
		cs_calib_fault(fbuf, p->fault_pages);
		munmap(fbuf, bytes ? bytes : PAGE);
	}
	return 0;
}
