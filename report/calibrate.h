/* SPDX-License-Identifier: MIT */
/* The calibrate subcommand (report/cmd_calibrate.c), for main.c's dispatch table. */
#ifndef CACHESHIM_REPORT_CALIBRATE_H
#define CACHESHIM_REPORT_CALIBRATE_H

#include <stdint.h>

#include "calib/cscalib.h"

/* What an event counts, as far as calibrate knows, from its name. */
enum cs_calib_class {
	CS_CALIB_OTHER, /* no expectation known (cache, TLB ... events) */
	CS_CALIB_TSC, /* time: checked as ratios */
	CS_CALIB_FAULTS, /* page faults */
	CS_CALIB_INSTR, /* retired instructions */
	CS_CALIB_BRANCHES, /* retired branches */
	CS_CALIB_MISPRED, /* mispredicted branches */
	CS_CALIB_LMISSES, /* a preset formula L1D-misses, L2-misses, L3-misses */
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

/* cacheshim calibrate: runs libcscalib's kernels under the shim and prints
 * per kernel and event the expected and measured values and a verdict.
 * Returns an exit status (CS_EXIT_*). */
int cs_cmd_calibrate(int argc, char **argv);

#endif /* CACHESHIM_REPORT_CALIBRATE_H */
