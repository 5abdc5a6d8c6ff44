/* SPDX-License-Identifier: MIT */
/* Verdicts of cacheshim calibrate: what each kind of event should count at each kernel. */
#include <ctype.h>
#include <string.h>

#include "report/internal.h"
#include "report/calibrate.h"

enum cs_calib_class cs_calib_classify(const char *name)
{
	char up[CS_EVENT_NAME_MAX];
	size_t i;

	for (i = 0; name[i] && i + 1 < sizeof(up); i++)
		up[i] = (char)toupper((unsigned char)name[i]);
	up[i] = '\0';
	if (strcmp(up, "TSC") == 0)
		return CS_CALIB_TSC;
	/* The preset formulas' names (common/presets_*.c), and the raw
	 * preset events whose meaning is known: Intel's retired loads that
	 * missed a level, AMD family 10h's L3 read misses, the data TLB's
	 * misses and walks (Intel, AMD family 10h and Zen, perf's generic). */
	if (!strcmp(up, "L1D-MISSES") || strstr(up, "MEM_LOAD_RETIRED:L1_MISS") ||
	    strstr(up, "MEM_LOAD_UOPS_RETIRED:L1_MISS"))
		return CS_CALIB_L1MISSES;
	if (!strcmp(up, "L2-MISSES") || strstr(up, "MEM_LOAD_RETIRED:L2_MISS") ||
	    strstr(up, "MEM_LOAD_UOPS_RETIRED:L2_MISS"))
		return CS_CALIB_L2MISSES;
	if (!strcmp(up, "L3-MISSES") || strstr(up, "MEM_LOAD_RETIRED:L3_MISS") ||
	    strstr(up, "MEM_LOAD_UOPS_RETIRED:L3_MISS") || strstr(up, "L3_CACHE_MISSES"))
		return CS_CALIB_L3MISSES;
	if (!strcmp(up, "DTLB-MISSES") || !strcmp(up, "DTLB-WALKS") ||
	    strstr(up, "DTLB_LOAD_MISSES:WALK_COMPLETED") ||
	    strstr(up, "L1_DTLB_AND_L2_DTLB_MISS") || strstr(up, "L1_DTLB_MISS:") ||
	    strstr(up, "DTLB-LOAD-MISSES"))
		return CS_CALIB_DTLB;
	if (strstr(up, "FAULTS"))
		return CS_CALIB_FAULTS;
	if (strstr(up, "MISP") || strstr(up, "BRANCH-MISSES") || strstr(up, "MISPREDICT"))
		return CS_CALIB_MISPRED;
	if (strstr(up, "BR_INST_RETIRED") || strstr(up, "BRANCHES") ||
	    strstr(up, "RETIRED_BRANCH_INSTRUCTIONS"))
		return CS_CALIB_BRANCHES;
	if (strstr(up, "INST_RETIRED") || strstr(up, "INSTRUCTIONS"))
		return CS_CALIB_INSTR;
	return CS_CALIB_OTHER;
}

/* The level of footprint key among p's level footprints: the i-th
 * smallest sits past i cache levels, the largest past all of them (a
 * large number); -1 when key is not one of them. */
static int level_index(uint64_t key, const struct cs_calib_params *p)
{
	unsigned i;

	for (i = 0; i < p->nlevels; i++)
		if (p->level_bytes[i] == key)
			return i + 1 == p->nlevels ? 99 : (int)i;
	return -1;
}

int cs_calib_expect(enum cs_calib_class c, const char *kernel, uint64_t key,
		    const struct cs_calib_params *p, struct cs_calib_exp *e)
{
	int is_fault = strcmp(kernel, "cs_calib_fault") == 0;
	double v, loads = (double)CS_CALIB_LEVEL_LOADS;
	int lvl, j;

	switch (c) {
	case CS_CALIB_FAULTS:
		v = is_fault ? (double)p->fault_pages : 0;
		break;
	case CS_CALIB_INSTR:
		if (strcmp(kernel, "cs_calib_loop") != 0)
			return 0;
		v = 2.0 * (double)p->loop_n;
		break;
	case CS_CALIB_BRANCHES:
		if (strcmp(kernel, "cs_calib_loop") == 0)
			v = (double)p->loop_n;
		else if (strcmp(kernel, "cs_calib_branch") == 0)
			/* the tests, and the loop's own (unrolled by 4) */
			v = (double)p->branch_n + (double)(p->branch_n / 4) +
			    (double)(p->branch_n % 4);
		else
			return 0;
		break;
	case CS_CALIB_L1MISSES:
	case CS_CALIB_L2MISSES:
	case CS_CALIB_L3MISSES:
		lvl = c == CS_CALIB_L1MISSES ? 1 : c == CS_CALIB_L2MISSES ? 2 : 3;
		/* cold(K): every line flushed, a miss at every level;
		 * resident(K): all hits. */
		if (strcmp(kernel, "cs_calib_cold") == 0) {
			v = (double)p->lines;
			break;
		}
		if (strcmp(kernel, "cs_calib_resident") == 0) {
			v = 0;
			break;
		}
		if (strcmp(kernel, "cs_calib_level") != 0)
			return 0;
		/* level(F): a cyclic chain larger than a cache misses it
		 * at every load under LRU (pseudo-LRU or random replacement
		 * keep at most the cache's share of the lines, under half:
		 * F is at least twice the level below); one that fits hits,
		 * but for conflicts and the page walks' own loads. */
		j = level_index(key, p);
		if (j < 0)
			return 0;
		if (lvl <= j) {
			e->value = loads;
			e->below = loads * 0.5;
			e->above = loads * 0.1;
		} else {
			e->value = 0;
			e->below = 0;
			e->above = loads * 0.05;
		}
		return 1;
	case CS_CALIB_DTLB:
		/* dtlb(K): K pages, twice the largest TLB, in a fixed
		 * cyclic order: a walk per load under LRU, at least half
		 * of them whatever the replacement. */
		if (strcmp(kernel, "cs_calib_dtlb") != 0)
			return 0;
		e->value = (double)p->dtlb_pages;
		e->below = e->value * 0.5;
		e->above = e->value * 0.1;
		return 1;
	case CS_CALIB_MISPRED:
		if (strcmp(kernel, "cs_calib_branch") == 0)
			v = key ? (double)p->branch_n / 2 : 0;
		else if (strcmp(kernel, "cs_calib_loop") == 0 ||
			 strcmp(kernel, "cs_calib_null") == 0)
			v = 0;
		else
			return 0;
		break;
	default:
		return 0;
	}
	e->value = v;
	e->below = e->above = v * 0.1 > 2 ? v * 0.1 : 2;
	return 1;
}

int cs_calib_expected(enum cs_calib_class c, const char *kernel, uint64_t key,
		      const struct cs_calib_params *p, double *exp)
{
	struct cs_calib_exp e;

	if (!cs_calib_expect(c, kernel, key, p, &e))
		return 0;
	*exp = e.value;
	return 1;
}

const char *cs_calib_judge(const struct cs_calib_exp *e, double med, double p10, double p90,
			   double *factor)
{
	*factor = 0;
	if (e->value == 0)
		return med <= e->above ? "OK" : "NOISY";
	if (med <= 0 && p90 <= 0)
		return "NOT COUNTING";
	if (med > 0 && (p90 - p10) > med / 2)
		return "NOISY";
	if (med >= e->value - e->below && med <= e->value + e->above)
		return "OK";
	*factor = med / e->value;
	return "SCALED";
}

const char *cs_calib_verdict(double exp, double med, double p10, double p90, double *factor)
{
	double slack = exp * 0.1 > 2 ? exp * 0.1 : 2;
	struct cs_calib_exp e = {exp, slack, slack};

	return cs_calib_judge(&e, med, p10, p90, factor);
}
