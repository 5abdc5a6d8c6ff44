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
	/* The preset formulas' names (common/presets_*.c). */
	if (!strcmp(up, "L1D-MISSES") || !strcmp(up, "L2-MISSES") || !strcmp(up, "L3-MISSES"))
		return CS_CALIB_LMISSES;
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

int cs_calib_expected(enum cs_calib_class c, const char *kernel, uint64_t key,
		      const struct cs_calib_params *p, double *exp)
{
	int is_fault = strcmp(kernel, "cs_calib_fault") == 0;

	switch (c) {
	case CS_CALIB_FAULTS:
		*exp = is_fault ? (double)p->fault_pages : 0;
		return 1;
	case CS_CALIB_INSTR:
		if (strcmp(kernel, "cs_calib_loop") != 0)
			return 0;
		*exp = 2.0 * (double)p->loop_n;
		return 1;
	case CS_CALIB_BRANCHES:
		if (strcmp(kernel, "cs_calib_loop") == 0)
			*exp = (double)p->loop_n;
		else if (strcmp(kernel, "cs_calib_branch") == 0)
			/* the tests, and the loop's own (unrolled by 4) */
			*exp = (double)p->branch_n + (double)(p->branch_n / 4) +
			       (double)(p->branch_n % 4);
		else
			return 0;
		return 1;
	case CS_CALIB_LMISSES:
		/* cold(K): every line flushed, a miss at every level;
		 * resident(K): all hits. */
		if (strcmp(kernel, "cs_calib_cold") == 0)
			*exp = (double)p->lines;
		else if (strcmp(kernel, "cs_calib_resident") == 0)
			*exp = 0;
		else
			return 0;
		return 1;
	case CS_CALIB_MISPRED:
		if (strcmp(kernel, "cs_calib_branch") == 0)
			*exp = key ? (double)p->branch_n / 2 : 0;
		else if (strcmp(kernel, "cs_calib_loop") == 0 ||
			 strcmp(kernel, "cs_calib_null") == 0)
			*exp = 0;
		else
			return 0;
		return 1;
	default:
		return 0;
	}
}

const char *cs_calib_verdict(double exp, double med, double p10, double p90, double *factor)
{
	double slack = exp * 0.1 > 2 ? exp * 0.1 : 2;

	*factor = 0;
	if (exp == 0)
		return med <= slack ? "OK" : "NOISY";
	if (med <= 0 && p90 <= 0)
		return "NOT COUNTING";
	if (med > 0 && (p90 - p10) > med / 2)
		return "NOISY";
	if (med >= exp - slack && med <= exp + slack)
		return "OK";
	*factor = med / exp;
	return "SCALED";
}
