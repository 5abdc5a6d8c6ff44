/* SPDX-License-Identifier: MIT */
/* Writes a report file of the calibration kernels as a machine with a PMU would: known hardware
 * counts, so that test_from.sh can check every verdict of `cacheshim calibrate --from`. */
#include <stdio.h>
#include <string.h>

#include "tests/report/fixture.h"

/* Events: what they count per call of each kernel (+ the bracket's own). */
static const struct fx_event events[] = {
	{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
	{"perf::PAGE-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
	{"INST_RETIRED:ANY_P", CS_EVENT_PERF, CS_EVENT_COUNTED},
	{"BR_MISP_RETIRED:ALL_BRANCHES", CS_EVENT_PERF, CS_EVENT_COUNTED},
	{"perf::MINOR-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED}, /* stays 0: NOT COUNTING */
	{"perf::BRANCHES", CS_EVENT_PERF, CS_EVENT_FAILED}, /* UNSUPPORTED */
	/* Skylake's @cache rows: the report computes L1D-misses, L2-misses,
	 * L3-misses from them (common/presets_intel_skl.c). */
	{"MEM_LOAD_RETIRED:L1_MISS", CS_EVENT_PERF, CS_EVENT_COUNTED},
	{"MEM_LOAD_RETIRED:L2_MISS", CS_EVENT_PERF, CS_EVENT_COUNTED},
	{"MEM_LOAD_RETIRED:L3_MISS", CS_EVENT_PERF, CS_EVENT_COUNTED},
	/* Data TLB walks: about one per page at dtlb(K) (OK); perf's
	 * generic DTLB event stays 0 there (NOT COUNTING). */
	{"DTLB_LOAD_MISSES:WALK_COMPLETED", CS_EVENT_PERF, CS_EVENT_COUNTED},
	{"perf::DTLB-LOAD-MISSES", CS_EVENT_PERF, CS_EVENT_COUNTED},
};
#define NEV 11u

/* Misses per call at cold(64) of L1, L2, L3; main sets them. */
static uint64_t cold_miss[3];
/* The hardware counts of the kernel being written (L1, L2, L3 misses,
 * DTLB walks, generic DTLB misses), 0 but at cold, level and dtlb. */
static uint64_t hw[5];

/* One kernel's site: calls identical calls, key CS_KEY_NONE or a key. */
static void kernel(struct fx *f, const char *name, uint32_t mod, uint32_t argn, uint64_t key,
		   uint64_t tsc, uint64_t faults, uint64_t instr, uint64_t misp, int spread)
{
	uint32_t t = fx_target(f, name, mod, argn, CS_HOOK_GOT);
	size_t s = fx_site(f, t, 7, mod, 0x100 + t, key);
	unsigned i;

	for (i = 0; i < 100; i++) {
		/* spread: page faults all over where 0 are expected (NOISY) */
		int cold = strcmp(name, "cs_calib_cold") == 0;
		uint64_t v[NEV] = {tsc + i % 7,
				   spread ? i % 50 : faults,
				   instr,
				   misp,
				   0,
				   0,
				   cold ? cold_miss[0] : hw[0],
				   cold ? cold_miss[1] : hw[1],
				   cold ? cold_miss[2] : hw[2],
				   hw[3],
				   hw[4]};

		fx_call(f, s, v);
	}
}

int main(int argc, char **argv)
{
	struct fx *f;
	uint32_t m;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: mkcalib FILE [ordered]\n");
		return 2;
	}
	/* cold(64): 64 misses at L1 and L3; at L2 twice as many (a counter
	 * that counts prefetches too: SCALED x2, and L1D >= L2 fails), or 64
	 * with "ordered". */
	cold_miss[0] = 64;
	cold_miss[1] = argc == 3 ? 64 : 128;
	cold_miss[2] = 62;
	f = fx_new("/usr/bin/cacheshim", 7, NEV, events);
	if (!f)
		return 1;
	m = fx_module(f, "/nonexistent/libcscalib.so", NULL, 0, 0x7f0000000000);
	fx_thread(f, 7, 0x7df); /* all but perf::BRANCHES (bit 5) opened */
	/* Bracket: 100 ticks, 10 instructions. */
	kernel(f, "cs_calib_null", m, 0, CS_KEY_NONE, 100, 0, 10, 0, 0);
	/* loop(10000): 2N instructions exactly: OK. */
	kernel(f, "cs_calib_loop", m, 0, CS_KEY_NONE, 14000, 0, 20010, 1, 0);
	/* branch(4096): constant 0 mispredictions (OK); random 4096, twice
	 * N/2: SCALED x2. */
	kernel(f, "cs_calib_branch", m, 3, 0, 3000, 0, 30000, 0, 0);
	kernel(f, "cs_calib_branch", m, 3, 1, 33000, 0, 30000, 4096, 0);
	kernel(f, "cs_calib_resident", m, 0, CS_KEY_NONE, 600, 0, 200, 0, 0);
	kernel(f, "cs_calib_cold", m, 0, CS_KEY_NONE, 24000, 0, 200, 0, 0);
	/* fault(64): 64 page faults (OK); MINOR-FAULTS stays 0. */
	kernel(f, "cs_calib_fault", m, 0, CS_KEY_NONE, 250000, 64, 5000, 0, 0);
	/* level(F), F the 4 footprints (L1/2, between L1 and L2, between L2
	 * and L3, 8x L3): one miss per load at the levels F is past, none at
	 * the others.  256K: 3500 of 4096 L1 misses (pseudo-LRU keeps some:
	 * OK), 80 at L2 (conflicts: OK); 4M and 64M: L2 counts twice (the
	 * prefetches, as at cold: SCALED x2) but with "ordered"; 4M: 150 at
	 * L3 (OK). */
	{
		static const struct {
			uint64_t bytes, miss[3];
		} lv[] = {{16384, {0, 0, 0}},
			  {262144, {3500, 80, 0}},
			  {4194304, {4096, 4096, 150}},
			  {67108864, {4100, 4090, 4000}}};
		unsigned l;

		for (l = 0; l < 4; l++) {
			hw[0] = lv[l].miss[0];
			hw[1] = lv[l].miss[1] * (argc == 3 || l < 2 ? 1 : 2);
			hw[2] = lv[l].miss[2];
			kernel(f, "cs_calib_level", m, 2, lv[l].bytes, 20000 * (l + 1), 0, 16400,
			       0, 0);
		}
		memset(hw, 0, sizeof(hw));
	}
	/* dtlb(4096): page faults that should be 0 but are all over: NOISY;
	 * 4000 walks (OK), the generic event 0 (NOT COUNTING). */
	hw[3] = 4000;
	kernel(f, "cs_calib_dtlb", m, 0, CS_KEY_NONE, 400000, 0, 9000, 0, 1);
	memset(hw, 0, sizeof(hw));
	if (fx_write(f, argv[1], 1, 0) != 0) {
		perror(argv[1]);
		return 1;
	}
	fx_free(f);
	return 0;
}
