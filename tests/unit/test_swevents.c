/* SPDX-License-Identifier: MIT */
/* The software events the shim encodes without libpfm4 (common/swevents.c,
 * shim/events.c): each one exactly as libpfm4 encodes it, and nothing else
 * taken. */
#include <CUnit/Basic.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <string.h>

#include "common/swevents.h"

/* libpfm4's encoding of name at the shim's default (user space only). */
static int pfm_encode(const char *name, struct perf_event_attr *a)
{
	pfm_perf_encode_arg_t arg;

	memset(a, 0, sizeof(*a));
	memset(&arg, 0, sizeof(arg));
	arg.attr = a;
	arg.size = sizeof(arg);
	return pfm_get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
}

static void same_as_libpfm(const char *name)
{
	struct perf_event_attr a;
	uint64_t config = ~0ull;

	CU_ASSERT_EQUAL_FATAL(cs_sw_event_config(name, &config), 1);
	CU_ASSERT_EQUAL_FATAL(pfm_encode(name, &a), PFM_SUCCESS);
	if (a.type != PERF_TYPE_SOFTWARE || config != a.config)
		printf("\n  %s: config %llu, libpfm4 type %u config %llu ", name,
		       (unsigned long long)config, a.type, (unsigned long long)a.config);
	/* What shim/events.c fills in besides the config.  exclude_hv is
	 * not compared: libpfm4 gives perf:: events the privilege levels of
	 * the core PMU it detects (Intel's have no hypervisor level, so 0
	 * there, 1 on AMD), and for a software event the kernel ignores it. */
	CU_ASSERT_EQUAL(a.type, PERF_TYPE_SOFTWARE);
	CU_ASSERT_EQUAL(config, a.config);
	CU_ASSERT_EQUAL(a.config1, 0);
	CU_ASSERT_EQUAL(a.config2, 0);
	CU_ASSERT_EQUAL(a.exclude_kernel, 1);
	CU_ASSERT_EQUAL(a.exclude_user, 0);
}

static void test_each_event(void)
{
	char lower[64];
	const char *name;
	unsigned i, k;

	for (i = 0; (name = cs_sw_event_at(i)); i++) {
		same_as_libpfm(name);
		/* libpfm4 takes names in any case: so does the table. */
		for (k = 0; name[k] && k + 1 < sizeof(lower); k++)
			lower[k] =
				(char)(name[k] >= 'A' && name[k] <= 'Z' ? name[k] + 32 : name[k]);
		lower[k] = 0;
		same_as_libpfm(lower);
	}
	CU_ASSERT_TRUE(i >= 10);
}

/* Modifiers, other PMUs, names without "perf::", hardware events and
 * lookalikes are libpfm4's to encode (or refuse). */
static void test_others(void)
{
	static const char *const others[] = {
		"perf::PAGE-FAULTS:u",
		"perf::PAGE-FAULTS:k",
		"PAGE-FAULTS",
		"perf::CYCLES",
		"perf::INSTRUCTIONS",
		"perf::PAGE_FAULTS",
		"perf::PAGE-FAULTSX",
		"perf:PAGE-FAULTS",
		"perf::",
		"",
		"tsc",
		"perf_raw::r1",
	};
	uint64_t config;
	unsigned i;

	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		if (cs_sw_event_config(others[i], &config))
			printf("\n  '%s' taken ", others[i]);
		CU_ASSERT_EQUAL(cs_sw_event_config(others[i], &config), 0);
	}
}

int main(void)
{
	CU_pSuite suite;
	unsigned failed;

	if (pfm_initialize() != PFM_SUCCESS) {
		fprintf(stderr, "libpfm4 does not initialize\n");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	suite = CU_add_suite("swevents", NULL, NULL);
	CU_add_test(suite, "each event as libpfm4 encodes it", test_each_event);
	CU_add_test(suite, "everything else left to libpfm4", test_others);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
