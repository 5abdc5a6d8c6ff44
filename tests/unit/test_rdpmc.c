/* SPDX-License-Identifier: MIT */
/* Units: the rdpmc read logic of shim/rdpmc.h on synthetic perf mmap pages
 * (no PMU on the development machines, so this is where it is proven). */
#include <CUnit/Basic.h>
#include <string.h>

#include "shim/rdpmc.h"

static struct perf_event_mmap_page page;
static uint64_t fake_pmc; /* what the fake rdpmc returns */
static uint32_t last_counter; /* the counter it was asked for */
static int bumps; /* how many times it simulates a concurrent update */

static uint64_t fake_rdpmc(uint32_t counter)
{
	last_counter = counter;
	if (bumps > 0) {
		/* The kernel rescheduled the event while we read: new offset,
		 * new sequence number; the reader must retry. */
		bumps--;
		page.lock += 2;
		page.offset += 1000000;
	}
	return fake_pmc;
}

static void setup_page(uint32_t index, int64_t offset, uint16_t width)
{
	memset(&page, 0, sizeof(page));
	page.lock = 4;
	page.index = index;
	page.offset = offset;
	page.pmc_width = width;
	page.cap_user_rdpmc = 1;
	page.time_enabled = 5000;
	page.time_running = 4200;
	bumps = 0;
}

struct rdpmc_case {
	int line;
	uint32_t index;
	int64_t offset;
	uint16_t width;
	int cap;
	uint64_t pmc;
	int ret;
	uint64_t count;
};

static const struct rdpmc_case cases[] = {
	{__LINE__, 1, 0, 48, 1, 12345, 0, 12345},
	{__LINE__, 3, -100, 48, 1, 12345, 0, 12245},
	/* 48-bit counter reading all ones is -1: sign extension. */
	{__LINE__, 2, 1000, 48, 1, 0xffffffffffffull, 0, 999},
	/* Bits above the width are ignored. */
	{__LINE__, 2, 0, 48, 1, 0xabcd000000000010ull, 0, 16},
	/* Top bit set within the width: negative. */
	{__LINE__, 1, 1ll << 50, 48, 1, 0x800000000000ull, 0, (1ull << 50) - (1ull << 47)},
	{__LINE__, 1, 7, 64, 1, 5, 0, 12},
	{__LINE__, 1, 7, 40, 1, 0xffffffffffull, 0, 6},
	/* Not readable from user space: fall back to read(). */
	{__LINE__, 0, 7, 48, 1, 5, -1, 0},
	{__LINE__, 1, 7, 48, 0, 5, -1, 0},
	{__LINE__, 1, 7, 0, 1, 5, -1, 0},
	{__LINE__, 1, 7, 65, 1, 5, -1, 0},
};

static void test_cases(void)
{
	unsigned i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rdpmc_case *c = &cases[i];
		uint64_t count = 0, not_running = 0;
		int ret;

		setup_page(c->index, c->offset, c->width);
		page.cap_user_rdpmc = (unsigned)c->cap;
		fake_pmc = c->pmc;
		ret = cs_rdpmc_read(&page, fake_rdpmc, &count, &not_running);
		if (ret != c->ret || (ret == 0 && count != c->count))
			fprintf(stderr, "case at line %d: ret %d count %llu\n", c->line, ret,
				(unsigned long long)count);
		CU_ASSERT_EQUAL(ret, c->ret);
		if (ret == 0) {
			CU_ASSERT_EQUAL(count, c->count);
			CU_ASSERT_EQUAL(not_running, 800);
			CU_ASSERT_EQUAL(last_counter, c->index - 1);
		}
	}
}

static void test_seqlock_retry(void)
{
	uint64_t count = 0, not_running = 0;

	setup_page(4, 100, 48);
	fake_pmc = 50;
	bumps = 2;
	CU_ASSERT_EQUAL(cs_rdpmc_read(&page, fake_rdpmc, &count, &not_running), 0);
	/* Two concurrent updates: the value comes from the third, stable pass. */
	CU_ASSERT_EQUAL(count, 100 + 2 * 1000000 + 50);
	CU_ASSERT_EQUAL(bumps, 0);
	CU_ASSERT_EQUAL(page.lock, 8);
}

static void test_not_running_grows(void)
{
	uint64_t c1 = 0, c2 = 0, nr1 = 0, nr2 = 0;

	/* Between two reads the event was off the PMU for 300 time units:
	 * the hot path compares not_running and drops such a call. */
	setup_page(1, 0, 48);
	fake_pmc = 10;
	CU_ASSERT_EQUAL(cs_rdpmc_read(&page, fake_rdpmc, &c1, &nr1), 0);
	page.time_enabled += 1000;
	page.time_running += 700;
	page.offset += 90;
	CU_ASSERT_EQUAL(cs_rdpmc_read(&page, fake_rdpmc, &c2, &nr2), 0);
	CU_ASSERT_EQUAL(c2 - c1, 90);
	CU_ASSERT_EQUAL(nr2 - nr1, 300);
	/* Running the whole time: enabled and running advance alike. */
	page.time_enabled += 500;
	page.time_running += 500;
	CU_ASSERT_EQUAL(cs_rdpmc_read(&page, fake_rdpmc, &c1, &nr1), 0);
	CU_ASSERT_EQUAL(nr1, nr2);
}

static void test_counter_wrap(void)
{
	uint64_t c1 = 0, c2 = 0, nr = 0;

	/* The kernel starts a counter at minus its period: a 48-bit counter
	 * reads 0xffffffffff00 (-256) and, 512 events later, wraps to 0x100
	 * before the overflow interrupt has added the period to offset.  The
	 * difference of the two reads is 512, not 2^48 less. */
	setup_page(2, 1000000, 48);
	fake_pmc = 0xffffffffff00ull;
	CU_ASSERT_EQUAL(cs_rdpmc_read(&page, fake_rdpmc, &c1, &nr), 0);
	fake_pmc = 0x100;
	CU_ASSERT_EQUAL(cs_rdpmc_read(&page, fake_rdpmc, &c2, &nr), 0);
	CU_ASSERT_EQUAL(c1, 1000000 - 256);
	CU_ASSERT_EQUAL(c2 - c1, 512);
	/* The interrupt folds the counter into offset and restarts it at
	 * minus the period: 300 events later the count has gone on. */
	page.offset = (int64_t)c2 + (1ll << 20);
	page.lock += 2;
	fake_pmc = (1ull << 48) - (1ull << 20) + 300;
	CU_ASSERT_EQUAL(cs_rdpmc_read(&page, fake_rdpmc, &c1, &nr), 0);
	CU_ASSERT_EQUAL(c1 - c2, 300);
}

int main(void)
{
	CU_pSuite suite;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite("rdpmc", NULL, NULL);
	CU_add_test(suite, "encodings and fallbacks", test_cases);
	CU_add_test(suite, "seqlock retry", test_seqlock_retry);
	CU_add_test(suite, "multiplexing detection", test_not_running_grows);
	CU_add_test(suite, "counter wrap", test_counter_wrap);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
