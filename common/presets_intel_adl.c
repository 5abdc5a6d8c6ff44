/* SPDX-License-Identifier: MIT */
/* Recipe for the performance cores of hybrid Intel Alder Lake and Raptor Lake (libpfm4
 * PMU adl_glc, newer than libpfm4 4.13).  The efficiency cores (adl_grt) have
 * other events and no recipe: a thread's counter group counts while it runs on a
 * performance core only, and calls that ran elsewhere are reported as dropped. */
#include "common/presets_intel.h"

#define PERFMON "Intel perfmon ADL/events/alderlake_goldencove_core.json"

static const char *const pmus[] = {"adl_glc", NULL};

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
	 PERFMON " DTLB_LOAD_MISSES.WALK_COMPLETED (event 12h umask 0Eh)"},
	{"DTLB_STORE_WALK", "DTLB_STORE_MISSES:WALK_COMPLETED", CS_PRESET_TLB,
	 "completed page-table walks of stores (any page size)",
	 PERFMON " DTLB_STORE_MISSES.WALK_COMPLETED (event 13h umask 0Eh)"},
	{"ITLB_WALK", "ITLB_MISSES:WALK_COMPLETED", CS_PRESET_TLB,
	 "completed page-table walks of instruction fetches",
	 PERFMON " ITLB_MISSES.WALK_COMPLETED (event 11h umask 0Eh)"},
	{"INSTR", "INST_RETIRED:ANY_P", CS_PRESET_IPC,
	 "retired instructions (the kernel puts event C0h umask 00h on a fixed counter)",
	 PERFMON " INST_RETIRED.ANY_P (event C0h umask 00h)"},
	{"CYCLES", "CPU_CLK_UNHALTED:THREAD_P", CS_PRESET_IPC, "core cycles not halted",
	 PERFMON " CPU_CLK_UNHALTED.THREAD_P (event 3Ch umask 00h)"},
};

/* The performance cores' constraints are Sapphire Rapids' (the kernel
 * uses intel_spr_event_constraints for them): event selects below 90h but
 * 2Eh and 3Ch, and D0h-DFh. */
static const uint8_t low_codes[][2] = {
	{0x01, 0x2d}, {0x2f, 0x3b}, {0x3d, 0x8f}, {0xd0, 0xdf}, {0, 0}};

static const struct cs_preset_formula formulas[] = {CS_INTEL_FORMULAS(PERFMON)};

const struct cs_preset_family cs_preset_intel_adl = {
	.name = "intel_adl",
	.title = "Intel Alder Lake, Raptor Lake performance cores (Golden Cove)",
	.pmus = pmus,
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.formulas = formulas,
	.nformulas = sizeof(formulas) / sizeof(formulas[0]),
	.notes = CS_INTEL_NOTES,
	.counters = 8,
	.low_codes = low_codes,
	.low_counters = CS_INTEL_LOW_COUNTERS,
};
