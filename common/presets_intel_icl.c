/* SPDX-License-Identifier: MIT */
/* Recipe for Intel Ice Lake cores (Sunny Cove: icl, icx): retired loads by data source,
 * page walks, instructions and cycles. */
#include "common/presets_intel.h"

#define PERFMON "Intel perfmon ICL/events/icelake_core.json"

static const char *const pmus[] = {"icl", "icx", NULL};

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
	{"CYCLES", "CPU_CLK_UNHALTED:THREAD_P", CS_PRESET_IPC, "core cycles not halted",
	 PERFMON " CPU_CLK_UNHALTED.THREAD_P (event 3Ch umask 00h)"},
};

/* intel_icl_event_constraints, less CYCLE_ACTIVITY (A3h), whose unit masks
 * differ: 03h-0Ah (DTLB_LOAD_MISSES 08h), 1Fh-28h, 32h, 48h-56h
 * (DTLB_STORE_MISSES 49h; 55h and 56h since "perf/x86/intel: Fix event
 * constraints for ICL", 2022), 60h-8Bh (ITLB_MISSES 85h), A8h-B0h,
 * B7h-BDh, D0h-E6h (MEM_INST_RETIRED, MEM_LOAD_RETIRED), EFh, F0h-F4h. */
static const uint8_t low_codes[][2] = {{0x03, 0x0a}, {0x1f, 0x28}, {0x32, 0x32}, {0x48, 0x56},
				       {0x60, 0x8b}, {0xa8, 0xb0}, {0xb7, 0xbd}, {0xd0, 0xe6},
				       {0xef, 0xf4}, {0, 0}};

static const struct cs_preset_formula formulas[] = {CS_INTEL_FORMULAS(PERFMON)};

const struct cs_preset_family cs_preset_intel_icl = {
	.name = "intel_icl",
	.title = "Intel Ice Lake (client and Ice Lake-SP)",
	.pmus = pmus,
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.formulas = formulas,
	.nformulas = sizeof(formulas) / sizeof(formulas[0]),
	.notes = CS_INTEL_NOTES,
	.counters = 8, /* libpfm4 says 16 */
	.low_codes = low_codes,
	.low_counters = CS_INTEL_LOW_COUNTERS,
};
