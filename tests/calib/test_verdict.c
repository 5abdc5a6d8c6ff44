/* SPDX-License-Identifier: MIT */
/* Units: calibrate's event classes, expected values and verdicts (the SCALED, NOISY and
 * NOT COUNTING paths need a PMU to show up in a real run: they are proven here). */
#include <CUnit/Basic.h>
#include <stdio.h>
#include <string.h>

#include "common/format.h"
#include "report/calibrate.h"

static void test_classify(void)
{
	static const struct {
		int line;
		const char *name;
		enum cs_calib_class c;
	} cases[] = {
		{__LINE__, "tsc", CS_CALIB_TSC},
		{__LINE__, "TSC", CS_CALIB_TSC},
		{__LINE__, "perf::PAGE-FAULTS", CS_CALIB_FAULTS},
		{__LINE__, "perf::MINOR-FAULTS", CS_CALIB_FAULTS},
		{__LINE__, "INST_RETIRED:ANY_P", CS_CALIB_INSTR},
		{__LINE__, "perf::INSTRUCTIONS", CS_CALIB_INSTR},
		{__LINE__, "RETIRED_INSTRUCTIONS", CS_CALIB_INSTR},
		{__LINE__, "BR_INST_RETIRED:ALL_BRANCHES", CS_CALIB_BRANCHES},
		{__LINE__, "perf::BRANCHES", CS_CALIB_BRANCHES},
		{__LINE__, "BR_MISP_RETIRED:ALL_BRANCHES", CS_CALIB_MISPRED},
		{__LINE__, "perf::BRANCH-MISSES", CS_CALIB_MISPRED},
		{__LINE__, "amd64_fam17h::RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED",
		 CS_CALIB_MISPRED},
		{__LINE__, "MEM_LOAD_RETIRED:L1_MISS", CS_CALIB_L1MISSES},
		{__LINE__, "skl::MEM_LOAD_RETIRED:L2_MISS", CS_CALIB_L2MISSES},
		{__LINE__, "MEM_LOAD_RETIRED:L3_MISS", CS_CALIB_L3MISSES},
		{__LINE__, "MEM_LOAD_UOPS_RETIRED:L3_MISS", CS_CALIB_L3MISSES},
		{__LINE__, "L3_CACHE_MISSES:ANY_READ:ALL_CORES", CS_CALIB_L3MISSES},
		{__LINE__, "MEM_LOAD_RETIRED:L1_HIT", CS_CALIB_OTHER},
		{__LINE__, "L1D-misses", CS_CALIB_L1MISSES},
		{__LINE__, "L2-misses", CS_CALIB_L2MISSES},
		{__LINE__, "L3-misses", CS_CALIB_L3MISSES},
		{__LINE__, "L3-hit-ratio", CS_CALIB_OTHER},
		{__LINE__, "L2-miss-ratio", CS_CALIB_OTHER},
		{__LINE__, "DTLB-misses", CS_CALIB_DTLB},
		{__LINE__, "DTLB-walks", CS_CALIB_DTLB},
		{__LINE__, "DTLB_LOAD_MISSES:WALK_COMPLETED", CS_CALIB_DTLB},
		{__LINE__, "L1_DTLB_AND_L2_DTLB_MISS:ALL", CS_CALIB_DTLB},
		{__LINE__, "amd64_fam17h::L1_DTLB_MISS:0xf0", CS_CALIB_DTLB},
		{__LINE__, "perf::DTLB-LOAD-MISSES", CS_CALIB_DTLB},
		{__LINE__, "ITLB-walks", CS_CALIB_OTHER},
		{__LINE__, "DTLB_STORE_MISSES:WALK_COMPLETED", CS_CALIB_OTHER},
		{__LINE__, "perf::TASK-CLOCK", CS_CALIB_OTHER},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cs_calib_classify(cases[i].name) != cases[i].c)
			fprintf(stderr, "line %d: %s\n", cases[i].line, cases[i].name);
		CU_ASSERT_EQUAL(cs_calib_classify(cases[i].name), cases[i].c);
	}
}

static void test_expected(void)
{
	static const struct cs_calib_params p = {
		.calls = 100, .loop_n = 1000, .branch_n = 4096, .lines = 64, .fault_pages = 64,
		.dtlb_pages = 3072, .nlevels = 4,
		/* L1/2; between L1 and L2; between L2 and L3; 8x L3 */
		.level_bytes = {16384, 262144, 4194304, 67108864}};
	static const struct {
		int line;
		enum cs_calib_class c;
		const char *kernel;
		uint64_t key;
		int known;
		double exp, below, above; /* the OK range: exp - below .. exp + above */
	} cases[] = {
		{__LINE__, CS_CALIB_FAULTS, "cs_calib_fault", CS_KEY_NONE, 1, 64, 6.4, 6.4},
		{__LINE__, CS_CALIB_FAULTS, "cs_calib_cold", CS_KEY_NONE, 1, 0, 2, 2},
		{__LINE__, CS_CALIB_FAULTS, "cs_calib_null", CS_KEY_NONE, 1, 0, 2, 2},
		{__LINE__, CS_CALIB_INSTR, "cs_calib_loop", CS_KEY_NONE, 1, 2000, 200, 200},
		{__LINE__, CS_CALIB_INSTR, "cs_calib_cold", CS_KEY_NONE, 0, 0, 2, 2},
		{__LINE__, CS_CALIB_BRANCHES, "cs_calib_loop", CS_KEY_NONE, 1, 1000, 100, 100},
		{__LINE__, CS_CALIB_BRANCHES, "cs_calib_branch", 1, 1, 4096 + 1024, 512, 512},
		{__LINE__, CS_CALIB_MISPRED, "cs_calib_branch", 1, 1, 2048, 204.8, 204.8},
		{__LINE__, CS_CALIB_MISPRED, "cs_calib_branch", 0, 1, 0, 2, 2},
		{__LINE__, CS_CALIB_MISPRED, "cs_calib_loop", CS_KEY_NONE, 1, 0, 2, 2},
		{__LINE__, CS_CALIB_MISPRED, "cs_calib_level", CS_KEY_NONE, 0, 0, 2, 2},
		{__LINE__, CS_CALIB_TSC, "cs_calib_null", CS_KEY_NONE, 0, 0, 2, 2},
		{__LINE__, CS_CALIB_L1MISSES, "cs_calib_cold", CS_KEY_NONE, 1, 64, 6.4, 6.4},
		{__LINE__, CS_CALIB_L1MISSES, "cs_calib_resident", CS_KEY_NONE, 1, 0, 2, 2},
		{__LINE__, CS_CALIB_L3MISSES, "cs_calib_cold", CS_KEY_NONE, 1, 64, 6.4, 6.4},
		{__LINE__, CS_CALIB_L2MISSES, "cs_calib_resident", CS_KEY_NONE, 1, 0, 2, 2},
		/* level(F): one miss per load (50%..110%) at the levels F
		 * is past, none (up to 5% of the loads) at the others. */
		{__LINE__, CS_CALIB_L1MISSES, "cs_calib_level", 16384, 1, 0, 0, 204.8},
		{__LINE__, CS_CALIB_L2MISSES, "cs_calib_level", 16384, 1, 0, 0, 204.8},
		{__LINE__, CS_CALIB_L3MISSES, "cs_calib_level", 16384, 1, 0, 0, 204.8},
		{__LINE__, CS_CALIB_L1MISSES, "cs_calib_level", 262144, 1, 4096, 2048, 409.6},
		{__LINE__, CS_CALIB_L2MISSES, "cs_calib_level", 262144, 1, 0, 0, 204.8},
		{__LINE__, CS_CALIB_L3MISSES, "cs_calib_level", 262144, 1, 0, 0, 204.8},
		{__LINE__, CS_CALIB_L1MISSES, "cs_calib_level", 4194304, 1, 4096, 2048, 409.6},
		{__LINE__, CS_CALIB_L2MISSES, "cs_calib_level", 4194304, 1, 4096, 2048, 409.6},
		{__LINE__, CS_CALIB_L3MISSES, "cs_calib_level", 4194304, 1, 0, 0, 204.8},
		{__LINE__, CS_CALIB_L1MISSES, "cs_calib_level", 67108864, 1, 4096, 2048, 409.6},
		{__LINE__, CS_CALIB_L2MISSES, "cs_calib_level", 67108864, 1, 4096, 2048, 409.6},
		{__LINE__, CS_CALIB_L3MISSES, "cs_calib_level", 67108864, 1, 4096, 2048, 409.6},
		/* not one of the footprints */
		{__LINE__, CS_CALIB_L1MISSES, "cs_calib_level", 65536, 0, 0, 0, 0},
		{__LINE__, CS_CALIB_L2MISSES, "cs_calib_dtlb", CS_KEY_NONE, 0, 0, 0, 0},
		/* dtlb(K): K walks, 50%..110% */
		{__LINE__, CS_CALIB_DTLB, "cs_calib_dtlb", CS_KEY_NONE, 1, 3072, 1536, 307.2},
		{__LINE__, CS_CALIB_DTLB, "cs_calib_cold", CS_KEY_NONE, 0, 0, 0, 0},
		{__LINE__, CS_CALIB_DTLB, "cs_calib_level", 67108864, 0, 0, 0, 0},
		{__LINE__, CS_CALIB_OTHER, "cs_calib_cold", CS_KEY_NONE, 0, 0, 2, 2},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double e = -1;
		struct cs_calib_exp x = {-1, -1, -1};
		int k = cs_calib_expected(cases[i].c, cases[i].kernel, cases[i].key, &p, &e);
		int k2 = cs_calib_expect(cases[i].c, cases[i].kernel, cases[i].key, &p, &x);

		if (k != cases[i].known || (k && e != cases[i].exp))
			fprintf(stderr, "line %d: known %d exp %g\n", cases[i].line, k, e);
		CU_ASSERT_EQUAL(k, cases[i].known);
		CU_ASSERT_EQUAL(k2, cases[i].known);
		if (k) {
			double db = x.below - cases[i].below, da = x.above - cases[i].above;

			if (db * db > 1e-12 || da * da > 1e-12)
				fprintf(stderr, "line %d: tolerance -%g +%g\n", cases[i].line,
					x.below, x.above);
			CU_ASSERT_EQUAL(e, cases[i].exp);
			CU_ASSERT_EQUAL(x.value, cases[i].exp);
			CU_ASSERT_DOUBLE_EQUAL(x.below, cases[i].below, 1e-9);
			CU_ASSERT_DOUBLE_EQUAL(x.above, cases[i].above, 1e-9);
		}
	}
}

static void test_verdict(void)
{
	static const struct {
		int line;
		double exp, med, p10, p90;
		const char *v;
		double factor; /* 0: none */
	} cases[] = {
		{__LINE__, 64, 64, 64, 64, "OK", 0},
		{__LINE__, 2000, 2150, 2140, 2160, "OK", 0}, /* within 10% */
		{__LINE__, 0, 0, 0, 0, "OK", 0},
		{__LINE__, 0, 2, 1, 3, "OK", 0}, /* 2 counts of slack */
		{__LINE__, 0, 40, 30, 50, "NOISY", 0},
		{__LINE__, 1000, 0, 0, 0, "NOT COUNTING", 0},
		{__LINE__, 1000, 2000, 1950, 2050, "SCALED", 2.0}, /* prefetches */
		{__LINE__, 1000, 16000, 15800, 16100, "SCALED", 16.0},
		{__LINE__, 1000, 500, 480, 520, "SCALED", 0.5},
		{__LINE__, 1000, 1000, 100, 5000, "NOISY", 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double f = -1;
		const char *v = cs_calib_verdict(cases[i].exp, cases[i].med, cases[i].p10,
						 cases[i].p90, &f);

		if (strcmp(v, cases[i].v) != 0 || f != cases[i].factor)
			fprintf(stderr, "line %d: %s x%g\n", cases[i].line, v, f);
		CU_ASSERT_STRING_EQUAL(v, cases[i].v);
		CU_ASSERT_DOUBLE_EQUAL(f, cases[i].factor, 1e-9);
	}
}

/* Verdicts with the wider tolerances of the level and dtlb kernels. */
static void test_judge(void)
{
	static const struct {
		int line;
		struct cs_calib_exp e;
		double med, p10, p90;
		const char *v;
		double factor; /* 0: none */
	} cases[] = {
		/* level(F) past L: one miss per load, 50%..110% */
		{__LINE__, {4096, 2048, 409.6}, 4096, 4090, 4100, "OK", 0},
		{__LINE__, {4096, 2048, 409.6}, 3072, 3000, 3100, "OK", 0}, /* pseudo-LRU */
		{__LINE__, {4096, 2048, 409.6}, 2048, 2040, 2050, "OK", 0},
		{__LINE__, {4096, 2048, 409.6}, 1024, 1000, 1030, "SCALED", 0.25},
		{__LINE__, {4096, 2048, 409.6}, 8192, 8100, 8200, "SCALED", 2.0}, /* prefetches */
		{__LINE__, {4096, 2048, 409.6}, 0, 0, 0, "NOT COUNTING", 0},
		{__LINE__, {4096, 2048, 409.6}, 4096, 100, 8000, "NOISY", 0},
		/* level(F) at or under L: none, up to 5% of the loads */
		{__LINE__, {0, 0, 204.8}, 0, 0, 0, "OK", 0},
		{__LINE__, {0, 0, 204.8}, 200, 150, 250, "OK", 0},
		{__LINE__, {0, 0, 204.8}, 1000, 900, 1100, "NOISY", 0},
		/* dtlb(3072) */
		{__LINE__, {3072, 1536, 307.2}, 3000, 2990, 3010, "OK", 0},
		{__LINE__, {3072, 1536, 307.2}, 6144, 6100, 6200, "SCALED", 2.0},
		{__LINE__, {3072, 1536, 307.2}, 0, 0, 0, "NOT COUNTING", 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double f = -1;
		const char *v = cs_calib_judge(&cases[i].e, cases[i].med, cases[i].p10,
					       cases[i].p90, &f);

		if (strcmp(v, cases[i].v) != 0 || f != cases[i].factor)
			fprintf(stderr, "line %d: %s x%g\n", cases[i].line, v, f);
		CU_ASSERT_STRING_EQUAL(v, cases[i].v);
		CU_ASSERT_DOUBLE_EQUAL(f, cases[i].factor, 1e-9);
	}
}

int main(void)
{
	CU_pSuite suite;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	suite = CU_add_suite("calibrate verdicts", NULL, NULL);
	CU_add_test(suite, "event classes", test_classify);
	CU_add_test(suite, "expected values", test_expected);
	CU_add_test(suite, "verdicts", test_verdict);
	CU_add_test(suite, "verdicts with tolerances", test_judge);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
