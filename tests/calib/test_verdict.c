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
		{__LINE__, "MEM_LOAD_RETIRED:L3_MISS", CS_CALIB_OTHER},
		{__LINE__, "L1D-misses", CS_CALIB_LMISSES},
		{__LINE__, "L2-misses", CS_CALIB_LMISSES},
		{__LINE__, "L3-misses", CS_CALIB_LMISSES},
		{__LINE__, "L3-hit-ratio", CS_CALIB_OTHER},
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
		.calls = 100, .loop_n = 1000, .branch_n = 4096, .lines = 64, .fault_pages = 64};
	static const struct {
		int line;
		enum cs_calib_class c;
		const char *kernel;
		uint64_t key;
		int known;
		double exp;
	} cases[] = {
		{__LINE__, CS_CALIB_FAULTS, "cs_calib_fault", CS_KEY_NONE, 1, 64},
		{__LINE__, CS_CALIB_FAULTS, "cs_calib_cold", CS_KEY_NONE, 1, 0},
		{__LINE__, CS_CALIB_FAULTS, "cs_calib_null", CS_KEY_NONE, 1, 0},
		{__LINE__, CS_CALIB_INSTR, "cs_calib_loop", CS_KEY_NONE, 1, 2000},
		{__LINE__, CS_CALIB_INSTR, "cs_calib_cold", CS_KEY_NONE, 0, 0},
		{__LINE__, CS_CALIB_BRANCHES, "cs_calib_loop", CS_KEY_NONE, 1, 1000},
		{__LINE__, CS_CALIB_BRANCHES, "cs_calib_branch", 1, 1, 4096 + 1024},
		{__LINE__, CS_CALIB_MISPRED, "cs_calib_branch", 1, 1, 2048},
		{__LINE__, CS_CALIB_MISPRED, "cs_calib_branch", 0, 1, 0},
		{__LINE__, CS_CALIB_MISPRED, "cs_calib_loop", CS_KEY_NONE, 1, 0},
		{__LINE__, CS_CALIB_MISPRED, "cs_calib_level", CS_KEY_NONE, 0, 0},
		{__LINE__, CS_CALIB_TSC, "cs_calib_null", CS_KEY_NONE, 0, 0},
		{__LINE__, CS_CALIB_LMISSES, "cs_calib_cold", CS_KEY_NONE, 1, 64},
		{__LINE__, CS_CALIB_LMISSES, "cs_calib_resident", CS_KEY_NONE, 1, 0},
		{__LINE__, CS_CALIB_LMISSES, "cs_calib_level", 16384, 0, 0},
		{__LINE__, CS_CALIB_OTHER, "cs_calib_cold", CS_KEY_NONE, 0, 0},
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double e = -1;
		int k = cs_calib_expected(cases[i].c, cases[i].kernel, cases[i].key, &p, &e);

		if (k != cases[i].known || (k && e != cases[i].exp))
			fprintf(stderr, "line %d: known %d exp %g\n", cases[i].line, k, e);
		CU_ASSERT_EQUAL(k, cases[i].known);
		if (k)
			CU_ASSERT_EQUAL(e, cases[i].exp);
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
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
