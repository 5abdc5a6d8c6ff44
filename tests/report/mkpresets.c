/* SPDX-License-Identifier: MIT */
/* Writes the report files of the preset-formula tests (test_presets.sh):
 * events named as the recipes name them, with known values, so that
 * every formula value is known. */
#include <stdio.h>
#include <string.h>

#include "tests/report/fixture.h"

static char dir[4000];

static const char *out(const char *name)
{
	static char buf[4200];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

/* skl.rpt: Skylake events, MEM_INST_RETIRED:ALL_LOADS failed to open.
 *   lookup at prog+0x10, thread 10, 4 calls: L2 hit 3 each, L2 miss 1
 *     each, L3 hit 1 0 1 0, L3 miss 0 1 0 1, L1 miss 4 each;
 *   lookup at prog+0x20, thread 11, which opened the L2 and L1 events but
 *     not the L3 ones: 2 calls, L2 hit 2 and 4, L2 miss 0;
 *   lookup at prog+0x30, thread 10: 2 calls that never reached L2.
 * sklctl.rpt: the same with the function named fn, which has control
 * characters (the formulas' tables must not print them raw); skllong.rpt
 * with a name longer than the tables' 60 columns, an escape across column
 * 57 (where it is cut); sklc1.rpt with a C1 control (CSI) and a byte that
 * is not UTF-8 in the name. */
static int skl_named(const char *file, const char *fn)
{
	static const struct fx_event ev[] = {
		{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
		{"MEM_LOAD_RETIRED:L2_HIT", CS_EVENT_PERF, CS_EVENT_COUNTED},
		{"MEM_LOAD_RETIRED:L2_MISS", CS_EVENT_PERF, CS_EVENT_COUNTED},
		{"MEM_LOAD_RETIRED:L3_HIT", CS_EVENT_PERF, CS_EVENT_COUNTED},
		{"MEM_LOAD_RETIRED:L3_MISS", CS_EVENT_PERF, CS_EVENT_COUNTED},
		{"MEM_LOAD_RETIRED:L1_MISS", CS_EVENT_PERF, CS_EVENT_COUNTED},
		{"MEM_INST_RETIRED:ALL_LOADS", CS_EVENT_PERF, CS_EVENT_FAILED},
	};
	static const uint64_t a[4][7] = {
		{100, 3, 1, 1, 0, 4, 0},
		{110, 3, 1, 0, 1, 4, 0},
		{120, 3, 1, 1, 0, 4, 0},
		{130, 3, 1, 0, 1, 4, 0},
	};
	static const uint64_t b[2][7] = {{50, 2, 0, 0, 0, 2, 0}, {60, 4, 0, 0, 0, 4, 0}};
	static const uint64_t c[2][7] = {{5, 0, 0, 0, 0, 0, 0}, {7, 0, 0, 0, 0, 0, 0}};
	struct fx *f = fx_new("/usr/bin/prog", 900, 7, ev);
	uint32_t m, t;
	size_t s;
	int i, ret;

	m = fx_module(f, "/nonexistent/prog", NULL, 0, 0);
	t = fx_target(f, fn, m, 0, CS_HOOK_GOT);
	fx_thread(f, 10, 0x3f); /* every event but the failed one */
	fx_thread(f, 11, 0x27); /* tsc, L2 hit and miss, L1 miss */
	s = fx_site(f, t, 10, m, 0x10, CS_KEY_NONE);
	for (i = 0; i < 4; i++)
		fx_call(f, s, a[i]);
	s = fx_site(f, t, 11, m, 0x20, CS_KEY_NONE);
	for (i = 0; i < 2; i++)
		fx_call(f, s, b[i]);
	s = fx_site(f, t, 10, m, 0x30, CS_KEY_NONE);
	for (i = 0; i < 2; i++)
		fx_call(f, s, c[i]);
	ret = fx_write(f, out(file), 1, 0);
	fx_free(f);
	return ret;
}

#define FAM10H_DC_L2 "DATA_CACHE_REFILLS:L2_SHARED:L2_EXCLUSIVE:L2_OWNED:L2_MODIFIED"
#define FAM10H_DC_SYS "DATA_CACHE_REFILLS_FROM_SYSTEM:SHARED:EXCLUSIVE:OWNED:MODIFIED"

/* fam10h.rpt: L1D refills from L2 and from the system, accesses.
 *   walk at prog+0x10: refills from L2 2 and 4, from the system 0 and 0,
 *     accesses 10 and 10;
 *   walk at prog+0x20: refills from L2 1 and 3, from the system 1 and 1,
 *     accesses 20 and 20. */
static int fam10h(void)
{
	static const struct fx_event ev[] = {
		{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
		{FAM10H_DC_L2, CS_EVENT_PERF, CS_EVENT_COUNTED},
		{FAM10H_DC_SYS, CS_EVENT_PERF, CS_EVENT_COUNTED},
		{"DATA_CACHE_ACCESSES", CS_EVENT_PERF, CS_EVENT_COUNTED},
	};
	static const uint64_t a[2][4] = {{9, 2, 0, 10}, {9, 4, 0, 10}};
	static const uint64_t b[2][4] = {{9, 1, 1, 20}, {9, 3, 1, 20}};
	struct fx *f = fx_new("/usr/bin/prog", 901, 4, ev);
	uint32_t m, t;
	size_t s;
	int ret;

	m = fx_module(f, "/nonexistent/prog", NULL, 0, 0);
	t = fx_target(f, "walk", m, 0, CS_HOOK_GOT);
	s = fx_site(f, t, 901, m, 0x10, CS_KEY_NONE);
	fx_call(f, s, a[0]);
	fx_call(f, s, a[1]);
	s = fx_site(f, t, 901, m, 0x20, CS_KEY_NONE);
	fx_call(f, s, b[0]);
	fx_call(f, s, b[1]);
	ret = fx_write(f, out("fam10h.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* split_a.rpt and split_b.rpt: @l1 of family 10h in two runs of the same
 * program (4 counters): the refills in one, the accesses in the other.
 *   walk at prog+0x10: run a: refills from L2 2 and 4, from the system 1
 *     and 1; run b: accesses 8, 10 and 12. */
static int split(void)
{
	static const struct fx_event eva[] = {
		{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
		{FAM10H_DC_L2, CS_EVENT_PERF, CS_EVENT_COUNTED},
		{FAM10H_DC_SYS, CS_EVENT_PERF, CS_EVENT_COUNTED},
	};
	static const struct fx_event evb[] = {
		{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
		{"DATA_CACHE_ACCESSES", CS_EVENT_PERF, CS_EVENT_COUNTED},
	};
	static const uint64_t a[2][3] = {{9, 2, 1}, {9, 4, 1}};
	static const uint64_t b[3][2] = {{9, 8}, {9, 10}, {9, 12}};
	struct fx *fa = fx_new("/usr/bin/prog", 902, 3, eva);
	struct fx *fb = fx_new("/usr/bin/prog", 903, 2, evb);
	uint32_t m, t;
	size_t s;
	int ret;

	m = fx_module(fa, "/nonexistent/prog", NULL, 0, 0);
	t = fx_target(fa, "walk", m, 0, CS_HOOK_GOT);
	s = fx_site(fa, t, 902, m, 0x10, CS_KEY_NONE);
	fx_call(fa, s, a[0]);
	fx_call(fa, s, a[1]);
	m = fx_module(fb, "/nonexistent/prog", NULL, 0, 0);
	t = fx_target(fb, "walk", m, 0, CS_HOOK_GOT);
	s = fx_site(fb, t, 903, m, 0x10, CS_KEY_NONE);
	fx_call(fb, s, b[0]);
	fx_call(fb, s, b[1]);
	fx_call(fb, s, b[2]);
	ret = fx_write(fa, out("split_a.rpt"), 1, 0) | fx_write(fb, out("split_b.rpt"), 1, 0);
	fx_free(fa);
	fx_free(fb);
	return ret;
}

int main(int argc, char **argv)
{
	char longname[100];
	int i;

	if (argc != 2 || strlen(argv[1]) >= sizeof(dir)) {
		fputs("usage: mkpresets DIR\n", stderr);
		return 2;
	}
	strcpy(dir, argv[1]);
	memset(longname, 'a', 55);
	longname[55] = '\001';
	for (i = 0; i < 20; i++)
		memcpy(longname + 56 + 2 * i, "\xc3\xa9", 3);
	if (skl_named("skl.rpt", "lookup") || skl_named("sklctl.rpt", "lo\nk\x1bup") ||
	    skl_named("skllong.rpt", longname) || skl_named("sklc1.rpt", "lo\302\233k\377up"))
		return 1;
	return fam10h() || split() ? 1 : 0;
}
