/* SPDX-License-Identifier: MIT */
/* The formulas shared by the Intel recipes (Skylake and later), which all
 * name their events with the same aliases; included by presets_intel_*.c
 * only. */
#ifndef CACHESHIM_COMMON_PRESETS_INTEL_H
#define CACHESHIM_COMMON_PRESETS_INTEL_H

#include "common/presets.h"

#define CS_INTEL_PCM "Intel PCM, src/cpucounters.h"

/* clang-format off */
#define CS_INTEL_FORMULAS(perfmon)							\
	{"L1D-misses", "L1_MISS", CS_FORMULA_COUNT,					\
	 "retired loads that missed L1D (stores and prefetches are not counted)",	\
	 perfmon " MEM_LOAD_RETIRED.L1_MISS"},						\
											\
	{"L1D-miss-ratio", "L1_MISS / LOADS", CS_FORMULA_RATIO,				\
	 "retired loads that missed L1D per retired load",				\
	 perfmon " MEM_LOAD_RETIRED.L1_MISS, MEM_INST_RETIRED.ALL_LOADS"},		\
											\
	{"L2-hits", "L2_HIT", CS_FORMULA_COUNT, "retired loads that hit L2",		\
	 CS_INTEL_PCM " getL2CacheHits"},						\
											\
	{"L2-misses", "L2_MISS", CS_FORMULA_COUNT, "retired loads that missed L2",	\
	 CS_INTEL_PCM " getL2CacheMisses"},						\
											\
	{"L2-hit-ratio", "L2_HIT / (L2_HIT + L2_MISS)", CS_FORMULA_RATIO,		\
	 "L2 hits per retired load that reached L2", CS_INTEL_PCM " getL2CacheHitRatio"}, \
											\
	{"L3-hits", "L3_HIT", CS_FORMULA_COUNT, "retired loads that hit L3",		\
	 CS_INTEL_PCM " getL3CacheHits"},			\
											\
	{"L3-misses", "L3_MISS", CS_FORMULA_COUNT, "retired loads that missed L3",	\
	 CS_INTEL_PCM " getL3CacheMisses"},						\
											\
	{"L3-hit-ratio", "L3_HIT / (L3_HIT + L3_MISS)", CS_FORMULA_RATIO,		\
	 "L3 hits per retired load that reached L3", CS_INTEL_PCM " getL3CacheHitRatio"}, \
											\
	{"L1D-MPKI", "1000 * L1_MISS / INSTR", CS_FORMULA_RATIO,			\
	 "L1D load misses per 1000 retired instructions", perfmon},			\
											\
	{"L2-MPKI", "1000 * L2_MISS / INSTR", CS_FORMULA_RATIO,				\
	 "L2 load misses per 1000 retired instructions", CS_INTEL_PCM " getL2CacheMisses / getInstructionsRetired"},	\
											\
	{"L3-MPKI", "1000 * L3_MISS / INSTR", CS_FORMULA_RATIO,				\
	 "L3 load misses per 1000 retired instructions", CS_INTEL_PCM " getL3CacheMisses / getInstructionsRetired"},	\
											\
	{"DTLB-walks", "DTLB_LOAD_WALK + DTLB_STORE_WALK", CS_FORMULA_COUNT,		\
	 "completed data page-table walks (loads and stores)",				\
	 perfmon " DTLB_LOAD_MISSES.WALK_COMPLETED, DTLB_STORE_MISSES.WALK_COMPLETED"},	\
											\
	{"ITLB-walks", "ITLB_WALK", CS_FORMULA_COUNT,					\
	 "completed instruction page-table walks",					\
	 perfmon " ITLB_MISSES.WALK_COMPLETED"},					\
											\
	{"IPC", "INSTR / CYCLES", CS_FORMULA_RATIO,					\
	 "retired instructions per unhalted core cycle", CS_INTEL_PCM " getInstructionsRetired / getCycles"}
/* clang-format on */

#define CS_INTEL_NOTES                                                                        \
	"The cache presets count retired loads by where their data came from "                \
	"(MEM_LOAD_RETIRED): stores, prefetches and instruction fetches are not in them.  "   \
	"Instructions and cycles can use fixed counters; every other event needs one of the " \
	"general-purpose counters (4 per thread with Hyper-Threading on Skylake, 8 on later " \
	"cores), and the kernel puts MEM_INST_RETIRED and MEM_LOAD_RETIRED (on Ice Lake and " \
	"later the page-walk events too) on the first 4 only: @cache takes two runs."

/* The kernel's Intel event constraints (Linux arch/x86/events/intel/core.c,
 * intel_*_event_constraints) limit these event selects to counters 0-3. */
#define CS_INTEL_LOW_COUNTERS 4

#endif /* CACHESHIM_COMMON_PRESETS_INTEL_H */
