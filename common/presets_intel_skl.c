/* SPDX-License-Identifier: MIT */
/* Recipe for Intel Skylake cores (client skl, server skx and clx): retired loads by data
 * source (MEM_LOAD_RETIRED), page walks, instructions and cycles. */
#include "common/presets_intel.h"

#define PERFMON "Intel perfmon SKL/events/skylake_core.json"

static const char *const pmus[] = {"skl", "skx", "clx", NULL};

static const struct cs_preset_event events[] = {
	{"LOADS", "MEM_INST_RETIRED:ALL_LOADS", CS_PRESET_L1, "retired load instructions",
	 PERFMON " MEM_INST_RETIRED.ALL_LOADS (event D0h umask 81h)"},
	{"L1_MISS", "MEM_LOAD_RETIRED:L1_MISS", CS_PRESET_L1, "retired loads that missed L1D",
	 PERFMON " MEM_LOAD_RETIRED.L1_MISS (event D1h umask 08h)"},
	{"L2_HIT", "MEM_LOAD_RETIRED:L2_HIT", CS_PRESET_L2, "retired loads that hit L2",
	 PERFMON " MEM_LOAD_RETIRED.L2_HIT (event D1h umask 02h)"},
	{"L2_MISS", "MEM_LOAD_RETIRED:L2_MISS", CS_PRESET_L2, "retired loads that missed L2",
	 PERFMON " MEM_LOAD_RETIRED.L2_MISS (event D1h umask 10h)"},
	{"L3_HIT", "MEM_LOAD_RETIRED:L3_HIT", CS_PRESET_L3, "retired loads that hit L3",
	 PERFMON " MEM_LOAD_RETIRED.L3_HIT (event D1h umask 04h)"},
	{"L3_MISS", "MEM_LOAD_RETIRED:L3_MISS", CS_PRESET_L3, "retired loads that missed L3",
	 PERFMON " MEM_LOAD_RETIRED.L3_MISS (event D1h umask 20h)"},
	{"DTLB_LOAD_WALK", "DTLB_LOAD_MISSES:WALK_COMPLETED", CS_PRESET_TLB,
	 "completed page-table walks of loads (any page size)",
	 PERFMON " DTLB_LOAD_MISSES.WALK_COMPLETED (event 08h umask 0Eh)"},
	{"DTLB_STORE_WALK", "DTLB_STORE_MISSES:WALK_COMPLETED", CS_PRESET_TLB,
	 "completed page-table walks of stores (any page size)",
	 PERFMON " DTLB_STORE_MISSES.WALK_COMPLETED (event 49h umask 0Eh)"},
	{"ITLB_WALK", "ITLB_MISSES:WALK_COMPLETED", CS_PRESET_TLB,
	 "completed page-table walks of instruction fetches",
	 PERFMON " ITLB_MISSES.WALK_COMPLETED (event 85h umask 0Eh)"},
	{"INSTR", "INST_RETIRED:ANY_P", CS_PRESET_IPC,
	 "retired instructions (the kernel puts event C0h umask 00h on a fixed counter)",
	 PERFMON " INST_RETIRED.ANY_P (event C0h umask 00h)"},
	{"CYCLES", "CPU_CLK_UNHALTED", CS_PRESET_IPC, "core cycles not halted",
	 PERFMON " CPU_CLK_UNHALTED.THREAD_P (event 3Ch umask 00h)"},
};

/* intel_skl_event_constraints: FRONTEND_RETIRED (C6h), MEM_TRANS_RETIRED (CDh),
 * MEM_INST_RETIRED (D0h), MEM_LOAD_RETIRED (D1h), MEM_LOAD_L3_HIT_RETIRED (D2h). */
static const uint8_t low_codes[][2] = {{0xc6, 0xc6}, {0xcd, 0xcd}, {0xd0, 0xd2}, {0, 0}};

static const struct cs_preset_formula formulas[] = {CS_INTEL_FORMULAS(PERFMON)};

const struct cs_preset_family cs_preset_intel_skl = {
	.name = "intel_skl",
	.title = "Intel Skylake, Kaby Lake, Coffee Lake; Skylake-SP, Cascade Lake",
	.pmus = pmus,
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.formulas = formulas,
	.nformulas = sizeof(formulas) / sizeof(formulas[0]),
	.notes = CS_INTEL_NOTES,
	/* 4 per thread with Hyper-Threading on, 8 without (libpfm4's number):
	 * the smaller, so that what fits here fits either way. */
	.counters = 4,
	.low_codes = low_codes,
	.low_counters = CS_INTEL_LOW_COUNTERS,
};
