/* SPDX-License-Identifier: MIT */
/* Units: the preset recipes (every row's raw encoding per PMU model against
 * the vendor's event code and unit mask, libpfm4 forced to that model),
 * the consistency of the tables, formula evaluation with "not counted",
 * and the counter-budget split. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h>

#include "common/calc.h"
#include "common/format.h"
#include "common/presets.h"

/* ---- encodings ---- */

/* One recipe row on one model: the perf config the vendor's manual gives
 * (event select in bits 0-7 and, for AMD, 32-35; unit mask in 8-15). */
struct enc_case {
	int line;
	const char *pmu;
	const char *event;
	uint64_t config;
};

/* clang-format off */
#define FAM10H(pmu, dtlb_hit_all)							\
	{__LINE__, pmu, "DATA_CACHE_ACCESSES", 0x40},					\
	{__LINE__, pmu, "DATA_CACHE_REFILLS:L2_SHARED:L2_EXCLUSIVE:L2_OWNED:L2_MODIFIED",	\
	 0x1e42},									\
	{__LINE__, pmu, "DATA_CACHE_REFILLS_FROM_SYSTEM:SHARED:EXCLUSIVE:OWNED:MODIFIED",	\
	 0x1e43},									\
	{__LINE__, pmu, "INSTRUCTION_CACHE_FETCHES", 0x80},				\
	{__LINE__, pmu, "INSTRUCTION_CACHE_REFILLS_FROM_L2", 0x82},			\
	{__LINE__, pmu, "INSTRUCTION_CACHE_REFILLS_FROM_SYSTEM", 0x83},			\
	{__LINE__, pmu, "REQUESTS_TO_L2:TLB_WALK", 0x047d},				\
	{__LINE__, pmu, "L2_CACHE_MISS:TLB_WALK", 0x047e},				\
	{__LINE__, pmu, "READ_REQUEST_TO_L3_CACHE:ANY_READ:ALL_CORES", 0x40000f7e0},	\
	{__LINE__, pmu, "L3_CACHE_MISSES:ANY_READ:ALL_CORES", 0x40000f7e1},		\
	{__LINE__, pmu, "L1_DTLB_MISS_AND_L2_DTLB_HIT:ALL", dtlb_hit_all},		\
	{__LINE__, pmu, "L1_DTLB_AND_L2_DTLB_MISS:ALL", 0x0746},			\
	{__LINE__, pmu, "L1_ITLB_MISS_AND_L2_ITLB_HIT", 0x84},				\
	{__LINE__, pmu, "L1_ITLB_MISS_AND_L2_ITLB_MISS:ALL", 0x0385},			\
	{__LINE__, pmu, "RETIRED_INSTRUCTIONS", 0xc0},					\
	{__LINE__, pmu, "CPU_CLK_UNHALTED", 0x76}

#define ZEN(pmu)									\
	{__LINE__, pmu, "LS_DISPATCH:LD_DISPATCH:STORE_DISPATCH:LD_ST_DISPATCH", 0x0729},	\
	{__LINE__, pmu, "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:0xf0", 0xf064},	\
	{__LINE__, pmu, "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C", 0x0864},	\
	{__LINE__, pmu, "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:0x06", 0x0664},	\
	{__LINE__, pmu, "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:IC_FILL_MISS", 0x0164},	\
	{__LINE__, pmu, "L1_DTLB_MISS:0xff", 0xff45},					\
	{__LINE__, pmu, "L1_DTLB_MISS:0xf0", 0xf045},					\
	{__LINE__, pmu, "L1_ITLB_MISS_L2_ITLB_HIT", 0x84},				\
	{__LINE__, pmu, "RETIRED_INSTRUCTIONS", 0xc0},					\
	{__LINE__, pmu, "CYCLES_NOT_IN_HALT", 0x76}

#define INTEL(pmu, cycles, dtlb_ld, dtlb_st, itlb)					\
	{__LINE__, pmu, "MEM_INST_RETIRED:ALL_LOADS", 0x81d0},				\
	{__LINE__, pmu, "MEM_LOAD_RETIRED:L1_MISS", 0x08d1},				\
	{__LINE__, pmu, "MEM_LOAD_RETIRED:L2_HIT", 0x02d1},				\
	{__LINE__, pmu, "MEM_LOAD_RETIRED:L2_MISS", 0x10d1},				\
	{__LINE__, pmu, "MEM_LOAD_RETIRED:L3_HIT", 0x04d1},				\
	{__LINE__, pmu, "MEM_LOAD_RETIRED:L3_MISS", 0x20d1},				\
	{__LINE__, pmu, "DTLB_LOAD_MISSES:WALK_COMPLETED", 0x0e00 | (dtlb_ld)},		\
	{__LINE__, pmu, "DTLB_STORE_MISSES:WALK_COMPLETED", 0x0e00 | (dtlb_st)},	\
	{__LINE__, pmu, "ITLB_MISSES:WALK_COMPLETED", 0x0e00 | (itlb)},			\
	{__LINE__, pmu, "INST_RETIRED:ANY_P", 0x00c0},					\
	{__LINE__, pmu, cycles, 0x003c}
/* clang-format on */

static const struct enc_case enc_cases[] = {
	/* AMD family 10h: BKDG #31116 3.14; the issue's 0x1e42 and 0x1e43.
	 * EventSelect 045h has a 1 GB page unit mask bit (2) from revision C
	 * on (Shanghai, Istanbul): "all" is 03h on Barcelona, 07h after. */
	FAM10H("amd64_fam10h_barcelona", 0x0345),
	FAM10H("amd64_fam10h_shanghai", 0x0745),
	FAM10H("amd64_fam10h_istanbul", 0x0745),
	/* Zen: PPR PMCx029, x064, x045, x084, x085, x0C0, x076, x043. */
	ZEN("amd64_fam17h_zen1"),
	{__LINE__, "amd64_fam17h_zen1", "L1_ITLB_MISS_L2_ITLB_MISS:IF1G:IF2M:IF4K", 0x0785},
	ZEN("amd64_fam17h"),
	{__LINE__, "amd64_fam17h", "L1_ITLB_MISS_L2_ITLB_MISS:IF1G:IF2M:IF4K", 0x0785},
	ZEN("amd64_fam17h_zen2"),
	{__LINE__, "amd64_fam17h_zen2", "L1_ITLB_MISS_L2_ITLB_MISS:IF1G:IF2M:IF4K", 0x0785},
	{__LINE__, "amd64_fam17h_zen2", "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_CACHE",
	 0x0243},
	{__LINE__, "amd64_fam17h_zen2", "DATA_CACHE_REFILLS_FROM_SYSTEM:0x58", 0x5843},
	ZEN("amd64_fam19h_zen3"),
	{__LINE__, "amd64_fam19h_zen3", "L1_ITLB_MISS_L2_ITLB_MISS:COALESCED4K:IF1G:IF2M:IF4K",
	 0x0f85},
	{__LINE__, "amd64_fam19h_zen3", "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE", 0x0243},
	{__LINE__, "amd64_fam19h_zen3", "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:0x5c", 0x5c43},
	ZEN("amd64_fam19h_zen4"),
	{__LINE__, "amd64_fam19h_zen4", "L1_ITLB_MISS_L2_ITLB_MISS:COALESCED4K:IF1G:IF2M:IF4K",
	 0x0f85},
	{__LINE__, "amd64_fam19h_zen4", "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:LOCAL_CCX", 0x0243},
	{__LINE__, "amd64_fam19h_zen4", "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:0xdc", 0xdc43},
	/* Intel: event D1h umasks 08h, 02h, 10h, 04h, 20h (the issue's
	 * 0x20d1, 0x4d1, 0x10d1, 0x2d1); page walks at 08h/49h/85h before
	 * Sapphire Rapids, 12h/13h/11h from it on. */
	INTEL("skl", "CPU_CLK_UNHALTED", 0x08, 0x49, 0x85),
	INTEL("skx", "CPU_CLK_UNHALTED", 0x08, 0x49, 0x85),
	INTEL("clx", "CPU_CLK_UNHALTED", 0x08, 0x49, 0x85),
	INTEL("icl", "CPU_CLK_UNHALTED:THREAD_P", 0x08, 0x49, 0x85),
	INTEL("icx", "CPU_CLK_UNHALTED:THREAD_P", 0x08, 0x49, 0x85),
	INTEL("spr", "CPU_CLK_UNHALTED:THREAD_P", 0x12, 0x13, 0x11),
	INTEL("emr", "CPU_CLK_UNHALTED:THREAD_P", 0x12, 0x13, 0x11),
	INTEL("adl_glc", "CPU_CLK_UNHALTED:THREAD_P", 0x12, 0x13, 0x11),
};

#define NCASES (sizeof(enc_cases) / sizeof(enc_cases[0]))

/* What the child that encoded for one PMU reports per case. */
struct enc_result {
	int ret; /* libpfm4 result, or 1: the PMU is unknown to this libpfm4 */
	uint32_t type;
	uint64_t config, config1;
};

/* Encodes every case of pmu with libpfm4 forced to it, in a child (libpfm4
 * reads LIBPFM_FORCE_PMU once, and keeps earlier PMUs present after
 * pfm_terminate).  Returns 0 with res[] filled, or -1. */
static int encode_for(const char *pmu, struct enc_result *res)
{
	int fd[2], status;
	pid_t pid;
	ssize_t n;

	if (pipe(fd) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct enc_result r[NCASES];
		pfm_pmu_info_t pi;
		int known = 0, i;

		memset(r, 0, sizeof(r));
		setenv("LIBPFM_FORCE_PMU", pmu, 1);
		if (pfm_initialize() == PFM_SUCCESS) {
			/* A newer libpfm4 than the headers numbers more PMUs. */
			for (i = PFM_PMU_NONE; i < PFM_PMU_MAX + 512; i++) {
				memset(&pi, 0, sizeof(pi));
				pi.size = sizeof(pi);
				if (pfm_get_pmu_info((pfm_pmu_t)i, &pi) == PFM_SUCCESS &&
				    pi.is_present && !strcmp(pi.name, pmu))
					known = 1;
			}
		}
		for (i = 0; i < (int)NCASES; i++) {
			struct perf_event_attr a;
			pfm_perf_encode_arg_t arg;
			char full[256];

			if (strcmp(enc_cases[i].pmu, pmu))
				continue;
			if (!known) {
				r[i].ret = 1;
				continue;
			}
			memset(&a, 0, sizeof(a));
			memset(&arg, 0, sizeof(arg));
			arg.attr = &a;
			arg.size = sizeof(arg);
			/* As the shim encodes a preset's events. */
			snprintf(full, sizeof(full), "%s::%s", pmu, enc_cases[i].event);
			r[i].ret = pfm_get_os_event_encoding(full, PFM_PLM3, PFM_OS_PERF_EVENT_EXT,
							     &arg);
			r[i].type = a.type;
			r[i].config = a.config;
			r[i].config1 = a.config1;
		}
		n = write(fd[1], r, sizeof(r));
		_exit(n == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(fd[1]);
	n = read(fd[0], res, NCASES * sizeof(*res));
	close(fd[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return -1;
	return n == (ssize_t)(NCASES * sizeof(*res)) ? 0 : -1;
}

/* Models newer than the libpfm4 of Debian 12 (4.13): their rows are
 * checked only where libpfm4 knows them. */
static int newer_than_libpfm(const char *pmu)
{
	return !strcmp(pmu, "emr") || !strcmp(pmu, "adl_glc");
}

static void test_encodings(void)
{
	static struct enc_result all[NCASES], one[NCASES];
	const char *done[64] = {NULL};
	unsigned ndone = 0, i, j, checked = 0, unknown = 0;

	memset(all, 0, sizeof(all));
	for (i = 0; i < NCASES; i++) {
		for (j = 0; j < ndone && strcmp(done[j], enc_cases[i].pmu); j++)
			;
		if (j < ndone)
			continue;
		done[ndone++] = enc_cases[i].pmu;
		CU_ASSERT_FATAL(ndone < 64);
		CU_ASSERT_FATAL(encode_for(enc_cases[i].pmu, one) == 0);
		for (j = 0; j < NCASES; j++)
			if (!strcmp(enc_cases[j].pmu, enc_cases[i].pmu))
				all[j] = one[j];
	}
	for (i = 0; i < NCASES; i++) {
		const struct enc_case *c = &enc_cases[i];

		if (all[i].ret == 1) {
			if (!newer_than_libpfm(c->pmu)) {
				fprintf(stderr, "line %d: libpfm4 does not know %s\n", c->line,
					c->pmu);
				CU_FAIL("a model this libpfm4 should know");
			}
			unknown++;
			continue;
		}
		checked++;
		if (all[i].ret != PFM_SUCCESS || all[i].type != PERF_TYPE_RAW ||
		    all[i].config != c->config || all[i].config1 != 0) {
			fprintf(stderr,
				"line %d: %s::%s: ret %d type %u config 0x%llx, want type 4 "
				"config 0x%llx\n",
				c->line, c->pmu, c->event, all[i].ret, all[i].type,
				(unsigned long long)all[i].config, (unsigned long long)c->config);
			CU_FAIL("encoding differs from the vendor's");
		}
	}
	printf("\n  %u encodings checked, %u of models this libpfm4 does not know\n", checked,
	       unknown);
}

/* Every row of every family, on every PMU of the family, has a case. */
static void test_every_row_has_a_case(void)
{
	const struct cs_preset_family *const *f;
	unsigned i, k, p;

	for (f = cs_preset_families; *f; f++) {
		for (p = 0; (*f)->pmus[p]; p++) {
			for (i = 0; i < (*f)->nevents; i++) {
				for (k = 0; k < NCASES; k++)
					if (!strcmp(enc_cases[k].pmu, (*f)->pmus[p]) &&
					    !strcmp(enc_cases[k].event, (*f)->events[i].event))
						break;
				if (k == NCASES) {
					fprintf(stderr, "%s row %s on %s: no vendor value\n",
						(*f)->name, (*f)->events[i].alias, (*f)->pmus[p]);
					CU_FAIL("recipe row without a vendor value in the test");
				}
			}
		}
	}
	/* And no case for a row that does not exist. */
	for (k = 0; k < NCASES; k++) {
		const struct cs_preset_family *fam = cs_preset_family_of(enc_cases[k].pmu);

		if (!fam || cs_preset_event_find(fam, enc_cases[k].event) < 0) {
			fprintf(stderr, "line %d: %s on %s is in no recipe\n", enc_cases[k].line,
				enc_cases[k].event, enc_cases[k].pmu);
			CU_FAIL("test case for no recipe row");
		}
	}
}

/* ---- the tables themselves ---- */

static int alias_ok(const char *a)
{
	if (!((*a >= 'A' && *a <= 'Z')))
		return 0;
	for (; *a; a++)
		if (!((*a >= 'A' && *a <= 'Z') || (*a >= '0' && *a <= '9') || *a == '_'))
			return 0;
	return 1;
}

static void test_tables(void)
{
	const struct cs_preset_family *const *f, *const *g;
	unsigned i, j, nfam = 0;

	for (f = cs_preset_families; *f; f++, nfam++) {
		const struct cs_preset_family *fam = *f;
		uint32_t covered = 0;

		CU_ASSERT(fam->nevents > 0 && fam->nevents <= 32);
		CU_ASSERT(fam->name && fam->title && fam->pmus && fam->pmus[0]);
		for (i = 0; fam->pmus[i]; i++) {
			/* A PMU belongs to one family only. */
			CU_ASSERT_PTR_EQUAL(cs_preset_family_of(fam->pmus[i]), fam);
		}
		for (i = 0; i < fam->nevents; i++) {
			const struct cs_preset_event *e = &fam->events[i];

			/* The name is recorded in the file as is. */
			CU_ASSERT(strlen(e->event) < CS_EVENT_NAME_MAX);
			CU_ASSERT(!strstr(e->event, "::"));
			CU_ASSERT(alias_ok(e->alias));
			CU_ASSERT(e->presets != 0 && (e->presets & ~CS_PRESET_ALL) == 0);
			CU_ASSERT(e->what && *e->what && e->source && *e->source);
			CU_ASSERT_EQUAL(cs_preset_event_find(fam, e->event), (int)i);
			CU_ASSERT_EQUAL(
				cs_preset_alias_find(fam, e->alias, (unsigned)strlen(e->alias)),
				(int)i);
			covered |= e->presets;
		}
		/* Every preset has events, but @l3 on Zen 1 (documented). */
		CU_ASSERT_EQUAL(covered | (strcmp(fam->name, "amd_zen1") ? 0 : CS_PRESET_L3),
				CS_PRESET_ALL);
		for (i = 0; i < fam->nformulas; i++) {
			const struct cs_preset_formula *fo = &fam->formulas[i];
			uint32_t in = cs_preset_formula_inputs(fam, fo), want = 0;
			struct cs_calc c;
			unsigned v;

			CU_ASSERT(fo->name && *fo->name && fo->what && *fo->what && fo->source);
			CU_ASSERT(fo->kind == CS_FORMULA_COUNT || fo->kind == CS_FORMULA_RATIO);
			if (cs_calc_parse(fo->expr, &c, NULL) != 0) {
				fprintf(stderr, "%s %s: '%s' does not parse\n", fam->name, fo->name,
					fo->expr);
				CU_FAIL("formula does not parse");
				continue;
			}
			for (v = 0; v < c.nvars; v++) {
				int a = cs_preset_alias_find(fam, c.var[v],
							     (unsigned)strlen(c.var[v]));

				if (a < 0) {
					fprintf(stderr, "%s %s: no alias %s\n", fam->name, fo->name,
						c.var[v]);
					CU_FAIL("formula names no alias");
				} else {
					want |= 1u << a;
				}
			}
			CU_ASSERT_EQUAL(in, want);
			for (j = 0; j < i; j++)
				CU_ASSERT(strcmp(fam->formulas[j].name, fo->name) != 0);
			/* The same name means the same kind everywhere. */
			for (g = cs_preset_families; *g; g++)
				for (j = 0; j < (*g)->nformulas; j++)
					if (!strcmp((*g)->formulas[j].name, fo->name))
						CU_ASSERT_EQUAL((*g)->formulas[j].kind, fo->kind);
		}
		for (i = 0; i < fam->nevents; i++)
			for (j = 0; j < i; j++) {
				CU_ASSERT(strcmp(fam->events[i].alias, fam->events[j].alias));
				CU_ASSERT(strcasecmp(fam->events[i].event, fam->events[j].event));
			}
	}
	CU_ASSERT(nfam >= 9);
}

static void test_lookups(void)
{
	const struct cs_preset_family *skl = cs_preset_family_of("skl");
	const struct cs_preset_family *k10 = cs_preset_family_of("amd64_fam10h_barcelona");

	CU_ASSERT_EQUAL(cs_preset_bits("@cache"), CS_PRESET_CACHE);
	CU_ASSERT_EQUAL(cs_preset_bits("@L2"), CS_PRESET_L2);
	CU_ASSERT_EQUAL(cs_preset_bits("@tlb"), CS_PRESET_TLB);
	CU_ASSERT_EQUAL(cs_preset_bits("@ipc"), CS_PRESET_IPC);
	CU_ASSERT_EQUAL(cs_preset_bits("@all"), CS_PRESET_ALL);
	CU_ASSERT_EQUAL(cs_preset_bits("@l4"), 0);
	CU_ASSERT_EQUAL(cs_preset_bits("cache"), 0);
	/* The messages' list: every name cs_preset_bits takes, @all too. */
	{
		char names[CS_PRESET_NAMES_MAX], cut[8];

		CU_ASSERT_STRING_EQUAL(cs_preset_names(names, sizeof(names)),
				       "@cache, @l1, @l2, @l3, @tlb, @ipc, @all");
		CU_ASSERT_STRING_EQUAL(cs_preset_names(cut, sizeof(cut)), "@cache,");
	}
	CU_ASSERT_EQUAL(cs_preset_bits("@"), 0);
	CU_ASSERT_PTR_NULL(cs_preset_family_of("hsw"));
	CU_ASSERT_PTR_NULL(cs_preset_family_of("perf"));
	CU_ASSERT_FATAL(skl && k10);
	CU_ASSERT_STRING_EQUAL(cs_preset_family_of("icx")->name, "intel_icl");
	CU_ASSERT_STRING_EQUAL(cs_preset_family_of("amd64_fam19h_zen4")->name, "amd_zen4");
	/* Names as users write them: any case, an optional PMU prefix of
	 * the family. */
	CU_ASSERT(cs_preset_event_find(skl, "MEM_LOAD_RETIRED:L3_MISS") >= 0);
	CU_ASSERT(cs_preset_event_find(skl, "mem_load_retired:l3_miss") >= 0);
	CU_ASSERT(cs_preset_event_find(skl, "skx::MEM_LOAD_RETIRED:L3_MISS") >= 0);
	CU_ASSERT(cs_preset_event_find(skl, "icl::MEM_LOAD_RETIRED:L3_MISS") < 0);
	CU_ASSERT(cs_preset_event_find(skl, "MEM_LOAD_RETIRED:L3_MISS:u=1") < 0);
	CU_ASSERT(cs_preset_event_find(k10, "perf::PAGE-FAULTS") < 0);
	CU_ASSERT(cs_preset_event_find(k10, "DATA_CACHE_REFILLS:0x1e") < 0);
	/* 1e3 is a number, not a name. */
	{
		struct cs_preset_formula fo = {"x", "1e3 * L3_MISS / (2.5 + INSTR)",
					       CS_FORMULA_RATIO, "w", "s"};
		uint32_t in = cs_preset_formula_inputs(skl, &fo);

		CU_ASSERT_EQUAL(__builtin_popcount(in), 2);
		fo.expr = "L3_MISS / NOPE";
		CU_ASSERT_EQUAL(cs_preset_formula_inputs(skl, &fo), 0);
	}
	/* The issue's example formulas, exactly. */
	{
		int i, n = 0;

		for (i = 0; i < (int)k10->nformulas; i++) {
			if (!strcmp(k10->formulas[i].name, "L1D-misses")) {
				CU_ASSERT_STRING_EQUAL(k10->formulas[i].expr,
						       "DC_REFILL_L2 + DC_REFILL_SYS");
				n++;
			}
			if (!strcmp(k10->formulas[i].name, "L2-misses")) {
				CU_ASSERT_STRING_EQUAL(
					k10->formulas[i].expr,
					"DC_REFILL_SYS + IC_REFILL_SYS + L2_MISS_TLB");
				n++;
			}
		}
		CU_ASSERT_EQUAL(n, 2);
		CU_ASSERT_STRING_EQUAL(
			k10->events[cs_preset_alias_find(k10, "L2_MISS_TLB", 11)].event,
			"L2_CACHE_MISS:TLB_WALK");
	}
}

/* ---- formula evaluation ---- */

#define NC                             \
	{                              \
		CS_CALC_NOT_COUNTED, 0 \
	}
#define V(x)                  \
	{                     \
		CS_CALC_OK, x \
	}

struct calc_case {
	int line;
	const char *expr;
	unsigned nvars;
	struct cs_calc_value vars[4];
	int status;
	long double value;
	int sum; /* cs_calc_is_sum */
};

static const struct calc_case calc_cases[] = {
	{__LINE__, "A + B", 2, {V(3), V(4)}, CS_CALC_OK, 7, 1},
	{__LINE__, "A", 1, {V(2.5)}, CS_CALC_OK, 2.5, 1},
	{__LINE__, "A / (A + B)", 2, {V(3), V(1)}, CS_CALC_OK, 0.75, 0},
	{__LINE__, "1000 * A / B", 2, {V(2), V(500)}, CS_CALC_OK, 4, 0},
	{__LINE__, "A - B * 2", 2, {V(10), V(3)}, CS_CALC_OK, 4, 0},
	{__LINE__, "(A - B) * 2", 2, {V(10), V(3)}, CS_CALC_OK, 14, 0},
	{__LINE__, "-A + 1.5e1", 1, {V(5)}, CS_CALC_OK, 10, 0},
	{__LINE__, "A / B / 2", 2, {V(8), V(2)}, CS_CALC_OK, 2, 0},
	{__LINE__, "{perf::PAGE-FAULTS} + X.Y:z", 2, {V(1), V(2)}, CS_CALC_OK, 3, 1},
	{__LINE__, ".5 * A", 1, {V(4)}, CS_CALC_OK, 2, 0},
	{__LINE__, "A + A", 1, {V(4)}, CS_CALC_OK, 8, 0},
	{__LINE__, "C + B + A", 3, {V(1), V(2), V(3)}, CS_CALC_OK, 6, 1},
	/* Not counted: whatever the arithmetic. */
	{__LINE__, "A + B", 2, {V(3), NC}, CS_CALC_NOT_COUNTED, 0, 1},
	{__LINE__, "0 * B + A", 2, {NC, V(1)}, CS_CALC_NOT_COUNTED, 0, 0},
	{__LINE__, "A / B", 2, {NC, V(0)}, CS_CALC_NOT_COUNTED, 0, 0},
	{__LINE__, "A / (A + B)", 2, {NC, NC}, CS_CALC_NOT_COUNTED, 0, 0},
	/* Undefined: 0/0 and x/0. */
	{__LINE__, "A / (A + B)", 2, {V(0), V(0)}, CS_CALC_UNDEFINED, 0, 0},
	{__LINE__, "1 + A / B", 2, {V(1), V(0)}, CS_CALC_UNDEFINED, 0, 0},
	{__LINE__, "A / B", 2, {V(0), V(4)}, CS_CALC_OK, 0, 0},
};

static void test_calc(void)
{
	unsigned i, vars[CS_CALC_MAX_VARS];

	for (i = 0; i < sizeof(calc_cases) / sizeof(calc_cases[0]); i++) {
		const struct calc_case *k = &calc_cases[i];
		struct cs_calc c;
		struct cs_calc_value r;
		int ok;

		if (cs_calc_parse(k->expr, &c, NULL) != 0 || c.nvars != k->nvars) {
			fprintf(stderr, "line %d: '%s' does not parse as %u names\n", k->line,
				k->expr, k->nvars);
			CU_FAIL("parse");
			continue;
		}
		r = cs_calc_eval(&c, k->vars);
		ok = r.status == k->status &&
		     (r.status != CS_CALC_OK || fabsl(r.v - k->value) < 1e-12L) &&
		     cs_calc_is_sum(&c, vars) == k->sum;
		if (!ok) {
			fprintf(stderr, "line %d: '%s' gives status %d value %Lg sum %d\n", k->line,
				k->expr, r.status, r.v, cs_calc_is_sum(&c, vars));
			CU_FAIL("eval");
		}
	}
}

struct bad_case {
	int line;
	const char *expr;
	int err;
	unsigned pos;
};

static const struct bad_case bad_cases[] = {
	{__LINE__, "", -EINVAL, 0},
	{__LINE__, "A +", -EINVAL, 3},
	{__LINE__, "A B", -EINVAL, 2},
	{__LINE__, "(A + B", -EINVAL, 6},
	{__LINE__, "A)", -EINVAL, 1},
	{__LINE__, "2x", -EINVAL, 1},
	{__LINE__, "{A", -EINVAL, 0},
	{__LINE__, "{}", -EINVAL, 1},
	{__LINE__, "A # B", -EINVAL, 2},
	{__LINE__, "1e", -EINVAL, 2},
	{__LINE__, "((((((((((((((((((((((((((((((((((A))))))))))))))))))))))))))))))))))", -E2BIG,
	 32},
	{__LINE__, "a+b+c+d+e+f+g+h+i+j+k+l+m+n+o+p+q", -E2BIG, 32},
	{__LINE__, "1 + AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
	 -ENAMETOOLONG, 4},
};

static void test_calc_errors(void)
{
	unsigned i, pos;
	struct cs_calc c;
	int ret;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *k = &bad_cases[i];

		pos = 999;
		ret = cs_calc_parse(k->expr, &c, &pos);
		if (ret != k->err || pos != k->pos) {
			fprintf(stderr, "line %d: '%s' gives %d at %u, want %d at %u\n", k->line,
				k->expr, ret, pos, k->err, k->pos);
			CU_FAIL("parse error");
		}
	}
	/* Too many nodes. */
	{
		char big[400] = "1";

		for (i = 0; i < 70; i++)
			strcat(big, "+1");
		CU_ASSERT_EQUAL(cs_calc_parse(big, &c, NULL), -E2BIG);
	}
}

/* ---- counters ---- */

static void test_fixed_counters(void)
{
	CU_ASSERT(cs_preset_fixed_counter(0, 0)); /* perf cycles */
	CU_ASSERT(cs_preset_fixed_counter(0, 1)); /* perf instructions */
	CU_ASSERT(!cs_preset_fixed_counter(0, 3)); /* cache misses */
	CU_ASSERT(cs_preset_fixed_counter(4, 0xc0));
	CU_ASSERT(cs_preset_fixed_counter(4, 0x3c));
	CU_ASSERT(cs_preset_fixed_counter(4, 0x300));
	CU_ASSERT(!cs_preset_fixed_counter(4, 0x20d1));
	CU_ASSERT(!cs_preset_fixed_counter(4, 0x10000c0)); /* with a cmask */
	CU_ASSERT(cs_preset_fixed_counter(8, 0xc0)); /* a hybrid PMU's type */
	CU_ASSERT(!cs_preset_fixed_counter(1, 0)); /* software: no counter at all */

	/* The NMI watchdog's pinned cycles event: on Intel it holds fixed
	 * counter 1, so cycles need a general-purpose counter; on AMD (no
	 * fixed counters) it holds a general-purpose one: 5 on Zen, 3 on
	 * family 10h. */
	CU_ASSERT(cs_preset_fixed_counter_free(4, 0x3c, 0));
	CU_ASSERT(!cs_preset_fixed_counter_free(4, 0x3c, 1));
	CU_ASSERT(!cs_preset_fixed_counter_free(0, 0, 1)); /* perf cycles */
	CU_ASSERT(!cs_preset_fixed_counter_free(9, 0x3c, 1)); /* cpu_core's type */
	CU_ASSERT(cs_preset_fixed_counter_free(4, 0xc0, 1));
	CU_ASSERT(cs_preset_fixed_counter_free(0, 1, 1)); /* perf instructions */
	CU_ASSERT(cs_preset_fixed_counter_free(4, 0x300, 1));
	CU_ASSERT(!cs_preset_fixed_counter_free(4, 0x20d1, 0));
	CU_ASSERT_EQUAL(cs_preset_watchdog_counters(6, 0, 1), 5);
	CU_ASSERT_EQUAL(cs_preset_watchdog_counters(4, 0, 1), 3);
	CU_ASSERT_EQUAL(cs_preset_watchdog_counters(6, 0, 0), 6);
	CU_ASSERT_EQUAL(cs_preset_watchdog_counters(8, 4, 1), 8);
	CU_ASSERT_EQUAL(cs_preset_watchdog_counters(0, 0, 1), 0);
}

/* Counters per thread and the kernel's counter constraints: the Intel
 * load and page-walk events a recipe uses count on counters 0-3 only. */
struct low_case {
	int line;
	const char *pmu;
	uint32_t type;
	uint64_t config;
	unsigned low;
};

static const struct low_case low_cases[] = {
	{__LINE__, "skl", 4, 0x81d0, 4}, /* MEM_INST_RETIRED.ALL_LOADS */
	{__LINE__, "skl", 4, 0x20d1, 4}, /* MEM_LOAD_RETIRED.L3_MISS */
	{__LINE__, "skl", 4, 0x0e08, 0}, /* DTLB_LOAD_MISSES.WALK_COMPLETED: any */
	{__LINE__, "skl", 4, 0x00c0, 0}, /* fixed */
	{__LINE__, "icl", 4, 0x08d1, 4},
	{__LINE__, "icl", 4, 0x0e08, 4},
	{__LINE__, "icl", 4, 0x0e49, 4},
	{__LINE__, "icl", 4, 0x0e85, 4},
	{__LINE__, "icl", 4, 0x412e, 0}, /* LONGEST_LAT_CACHE.MISS */
	{__LINE__, "icl", 4, 0x0155, 4}, /* INST_DECODED.DECODERS */
	{__LINE__, "icl", 4, 0x0156, 4}, /* UOPS_DECODED.DEC0 */
	{__LINE__, "icl", 4, 0x0157, 0},
	{__LINE__, "spr", 4, 0x0e12, 4},
	{__LINE__, "spr", 4, 0x0e13, 4},
	{__LINE__, "spr", 4, 0x0e11, 4},
	{__LINE__, "spr", 4, 0x02d1, 4},
	{__LINE__, "spr", 4, 0x412e, 0},
	{__LINE__, "spr", 4, 0x003c, 0},
	{__LINE__, "spr", 4, 0x013c, 0},
	{__LINE__, "spr", 1, 0x0011, 0}, /* software events take no counter */
	{__LINE__, "spr", 3, 0x0010, 0}, /* generic cache events: the kernel's */
	{__LINE__, "adl_glc", 9, 0x20d1, 4}, /* cpu_core's dynamic type */
	{__LINE__, "amd64_fam19h_zen4", 4, 0xf064, 0},
	{__LINE__, "amd64_fam10h_barcelona", 4, 0x40000f7e0, 0},
};

static void test_low_counters(void)
{
	const struct cs_preset_family *f;
	unsigned i;

	for (i = 0; i < sizeof(low_cases) / sizeof(low_cases[0]); i++) {
		const struct low_case *k = &low_cases[i];

		f = cs_preset_family_of(k->pmu);
		CU_ASSERT_PTR_NOT_NULL_FATAL(f);
		if (cs_preset_low_counter(f, k->type, k->config) != k->low) {
			fprintf(stderr, "line %d: %s type %u config %#llx: want %u\n", k->line,
				k->pmu, k->type, (unsigned long long)k->config, k->low);
			CU_FAIL("low counter");
		}
	}
	CU_ASSERT_EQUAL(cs_preset_low_counter(NULL, 4, 0x20d1), 0);
	/* libpfm4's table numbers are for a core without SMT (icl: 16). */
	CU_ASSERT_EQUAL(cs_preset_counters(cs_preset_family_of("icl"), 16), 8);
	CU_ASSERT_EQUAL(cs_preset_counters(cs_preset_family_of("spr"), 16), 8);
	CU_ASSERT_EQUAL(cs_preset_counters(cs_preset_family_of("skl"), 8), 4);
	CU_ASSERT_EQUAL(cs_preset_counters(cs_preset_family_of("amd64_fam19h_zen3"), 6), 6);
	CU_ASSERT_EQUAL(cs_preset_counters(NULL, 6), 6);
	CU_ASSERT_EQUAL(cs_preset_counters(NULL, 0), 0);
	CU_ASSERT_EQUAL(cs_preset_counters(NULL, -1), 0);
}

static unsigned count_in(uint32_t m)
{
	return (unsigned)__builtin_popcount(m);
}

static void test_split(void)
{
	const struct cs_preset_family *k10 = cs_preset_family_of("amd64_fam10h_barcelona");
	const struct cs_preset_family *skl = cs_preset_family_of("skl");
	const char *l1[6], *cache[10];
	uint32_t runs[8], all = 0;
	unsigned i, n = 0, nruns, r;

	/* @l1 of family 10h on 4 counters: the L1D ratio's three events in
	 * one run, the L1I ratio's in the other. */
	for (i = 0; i < k10->nevents; i++)
		if (k10->events[i].presets & CS_PRESET_L1)
			l1[n++] = k10->events[i].event;
	CU_ASSERT_EQUAL_FATAL(n, 6);
	nruns = cs_preset_split(k10, l1, n, 4, 0, 0, runs, 8);
	CU_ASSERT_EQUAL(nruns, 2);
	for (r = 0; r < nruns; r++) {
		CU_ASSERT(count_in(runs[r]) <= 4);
		all |= runs[r];
	}
	CU_ASSERT_EQUAL(all, 0x3f);
	CU_ASSERT_EQUAL(runs[0], 0x07); /* DC_ACCESS, DC_REFILL_L2, DC_REFILL_SYS */
	CU_ASSERT_EQUAL(runs[1], 0x38); /* the instruction-cache three */

	/* @cache (10 events): every formula that fits 4 counters is in one
	 * run. */
	for (i = 0, n = 0; i < k10->nevents; i++)
		if (k10->events[i].presets & CS_PRESET_CACHE)
			cache[n++] = k10->events[i].event;
	CU_ASSERT_EQUAL_FATAL(n, 10);
	nruns = cs_preset_split(k10, cache, n, 4, 0, 0, runs, 8);
	CU_ASSERT(nruns >= 3 && nruns <= 5);
	for (i = 0, all = 0; i < nruns; i++) {
		CU_ASSERT(count_in(runs[i]) <= 4);
		all |= runs[i];
	}
	CU_ASSERT_EQUAL(all, 0x3ff);
	for (i = 0; i < k10->nformulas; i++) {
		uint32_t in = cs_preset_formula_inputs(k10, &k10->formulas[i]), g = 0;
		unsigned e, k;
		int held = 0;

		for (e = 0; e < 32; e++) {
			if (!(in & (1u << e)))
				continue;
			for (k = 0; k < n && strcmp(cache[k], k10->events[e].event); k++)
				;
			g = k < n ? g | (1u << k) : 0xffffffffu;
		}
		if (g == 0xffffffffu || count_in(g) > 4)
			continue;
		for (r = 0; r < nruns; r++)
			held |= (runs[r] & g) == g;
		CU_ASSERT(held);
	}

	/* @cache of Ice Lake on its 8 counters: the six load events count on
	 * the first 4 only, so two runs, each ratio's inputs together. */
	{
		const struct cs_preset_family *icl = cs_preset_family_of("icl");
		uint32_t low = 0;

		for (i = 0, n = 0; i < icl->nevents; i++)
			if (icl->events[i].presets & CS_PRESET_CACHE)
				cache[n++] = icl->events[i].event;
		CU_ASSERT_EQUAL_FATAL(n, 6);
		low = 0x3f;
		nruns = cs_preset_split(icl, cache, n, 8, low, 4, runs, 8);
		CU_ASSERT_EQUAL(nruns, 2);
		for (r = 0, all = 0; r < nruns; r++) {
			CU_ASSERT(count_in(runs[r]) <= 4);
			all |= runs[r];
		}
		CU_ASSERT_EQUAL(all, 0x3f);
		for (i = 0; i < icl->nformulas; i++) {
			uint32_t in = cs_preset_formula_inputs(icl, &icl->formulas[i]), g = 0;
			unsigned e, k;
			int held = 0;

			for (e = 0; e < 32; e++) {
				if (!(in & (1u << e)))
					continue;
				for (k = 0; k < n && strcmp(cache[k], icl->events[e].event); k++)
					;
				g = k < n ? g | (1u << k) : 0xffffffffu;
			}
			if (g == 0xffffffffu)
				continue;
			for (r = 0; r < nruns; r++)
				held |= (runs[r] & g) == g;
			CU_ASSERT(held);
		}
		/* Unrestricted events fill the other counters; a formula
		 * with more restricted inputs than low counters is split. */
		nruns = cs_preset_split(NULL, cache, 6, 8, 0x07, 2, runs, 8);
		CU_ASSERT_EQUAL(nruns, 2);
		CU_ASSERT_EQUAL(runs[0], 0x3b);
		CU_ASSERT_EQUAL(runs[1], 0x04);
		CU_ASSERT_EQUAL(cs_preset_split(NULL, cache, 6, 8, 0x01, 0, runs, 8), 0);
	}

	/* No family: chunks in order.  Limits. */
	nruns = cs_preset_split(NULL, cache, 10, 4, 0, 0, runs, 8);
	CU_ASSERT_EQUAL(nruns, 3);
	CU_ASSERT_EQUAL(runs[0], 0x00f);
	CU_ASSERT_EQUAL(runs[2], 0x300);
	CU_ASSERT_EQUAL(cs_preset_split(NULL, cache, 10, 4, 0, 0, runs, 2), 0);
	CU_ASSERT_EQUAL(cs_preset_split(skl, cache, 10, 0, 0, 0, runs, 8), 0);
}

int main(void)
{
	CU_pSuite s;
	int failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	s = CU_add_suite("presets", NULL, NULL);
	if (!s || !CU_add_test(s, "raw encodings per model", test_encodings) ||
	    !CU_add_test(s, "every row has a vendor value", test_every_row_has_a_case) ||
	    !CU_add_test(s, "tables are consistent", test_tables) ||
	    !CU_add_test(s, "lookups", test_lookups) ||
	    !CU_add_test(s, "formula evaluation", test_calc) ||
	    !CU_add_test(s, "formula syntax errors", test_calc_errors) ||
	    !CU_add_test(s, "fixed counters", test_fixed_counters) ||
	    !CU_add_test(s, "counters and their constraints", test_low_counters) ||
	    !CU_add_test(s, "counter budget split", test_split)) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = (int)CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
