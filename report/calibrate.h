/* SPDX-License-Identifier: MIT */
/* The calibrate subcommand (report/cmd_calibrate.c), for main.c's dispatch table. */
#ifndef CACHESHIM_REPORT_CALIBRATE_H
#define CACHESHIM_REPORT_CALIBRATE_H

#include <stdint.h>

#include "calib/cscalib.h"

/* What an event counts, as far as calibrate knows, from its name. */
enum cs_calib_class {
	CS_CALIB_OTHER, /* no expectation known (ratios, hits, ITLB ... events) */
	CS_CALIB_TSC, /* time: checked as ratios */
	CS_CALIB_FAULTS, /* page faults */
	CS_CALIB_INSTR, /* retired instructions */
	CS_CALIB_BRANCHES, /* retired branches */
	CS_CALIB_MISPRED, /* mispredicted branches */
	CS_CALIB_L1MISSES, /* L1D misses: preset formula L1D-misses, MEM_LOAD_RETIRED:L1_MISS */
	CS_CALIB_L2MISSES, /* L2 misses: preset formula L2-misses, MEM_LOAD_RETIRED:L2_MISS */
	CS_CALIB_L3MISSES, /* L3 misses: L3-misses, MEM_LOAD_RETIRED:L3_MISS, L3_CACHE_MISSES */
	CS_CALIB_DTLB, /* DTLB misses or walks: DTLB-misses, DTLB-walks, DTLB_LOAD_MISSES:WALK_COMPLETED */
};

/* An expected value with its tolerance: a median from value - below to
 * value + above (absolute counts) is OK. */
struct cs_calib_exp {
	double value, below, above;
};

/* Returns the class of the event recorded as name (case-insensitive,
 * with or without a pmu:: prefix). */
enum cs_calib_class cs_calib_classify(const char *name);
/* Sets *exp to what an event of class c should count at one call of
 * kernel (a cs_calib_* name) with target key key, net of the null kernel
 * (the bracket), for the parameters p.  Returns 1, or 0 when nothing is
 * known (*exp untouched). */
int cs_calib_expected(enum cs_calib_class c, const char *kernel, uint64_t key,
		      const struct cs_calib_params *p, double *exp);
/* Returns the verdict for the net median med and percentiles p10, p90 of
 * an event expected to count exp per call: "OK" within 10% (2 counts
 * around an expected 0), "NOT COUNTING" when it stayed 0, "NOISY" when
 * p10..p90 spans more than half the median (or an expected 0 is not),
 * else "SCALED" with *factor = med / exp (0 for the others). */
const char *cs_calib_verdict(double exp, double med, double p10, double p90, double *factor);
/* As cs_calib_expected, with the tolerance: 10% (at least 2 counts) either
 * side, except at level(F) (misses below F's level: one per load, OK from
 * 50% to 110%; above it: 0, OK up to 5% of the loads) and at dtlb(K)
 * (K walks, OK from 50% to 110% of K). */
int cs_calib_expect(enum cs_calib_class c, const char *kernel, uint64_t key,
		    const struct cs_calib_params *p, struct cs_calib_exp *e);
/* cs_calib_verdict with e's tolerance instead of 10%. */
const char *cs_calib_judge(const struct cs_calib_exp *e, double med, double p10, double p90,
			   double *factor);

/* cacheshim calibrate: runs libcscalib's kernels under the shim and prints
 * per kernel and event the expected and measured values and a verdict.
 * Returns an exit status (CS_EXIT_*). */
int cs_cmd_calibrate(int argc, char **argv);

#endif /* CACHESHIM_REPORT_CALIBRATE_H */
