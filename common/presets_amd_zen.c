/* SPDX-License-Identifier: MIT */
/* Recipes for AMD Zen (families 17h and 19h): one family per generation,
 * because libpfm4 names some events differently in each.  The L3 of Zen
 * is counted by a per-CCX PMU that cannot count one thread, so the L3
 * presets use the core's own view: where its demand data-cache fills came
 * from. */
#include "common/presets.h"

#define PPR17 "AMD PPR for Family 17h Model 01h (Zen)"
#define PPR17_31 "AMD PPR for Family 17h Model 31h (Zen 2)"
#define PPR19 "AMD PPR for Family 19h Model 01h (Zen 3)"
#define PPR19_11 "AMD PPR for Family 19h Model 11h (Zen 4)"
#define PERF_JSON "Linux tools/perf/pmu-events/arch/x86/amdzen4"

/* Rows shared by the generations, laid out by hand. */
/* clang-format off */

/* The rows that every generation spells the same way; ppr is the
 * generation's manual. */
#define ZEN_COMMON_EVENTS(ppr)								\
	{"DC_ACCESS", "LS_DISPATCH:LD_DISPATCH:STORE_DISPATCH:LD_ST_DISPATCH",		\
	 CS_PRESET_L1,									\
	 "load and store ops dispatched: L1D accesses, counted at dispatch "		\
	 "(speculative)",								\
	 ppr ", PMCx029 LsDispatch unit mask 07h; "					\
	 PERF_JSON "/recommended.json all_data_cache_accesses"},			\
											\
	{"L2_DC_HIT", "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:0xf0",		\
	 CS_PRESET_L1 | CS_PRESET_L2,							\
	 "data-cache requests to L2 that hit (unit mask F0h: LsRdBlkCS, "		\
	 "LsRdBlkLHitX, LsRdBlkLHitS, LsRdBlkX); L2 prefetches not included",		\
	 ppr ", PMCx064 L2CacheReqStat; " PERF_JSON "/cache.json l2_cache_req_stat.dc_hit_in_l2"},	\
											\
	{"L2_DC_MISS", "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:LS_RD_BLK_C",	\
	 CS_PRESET_L1 | CS_PRESET_L2,							\
	 "data-cache requests to L2 that missed",					\
	 ppr ", PMCx064 L2CacheReqStat unit mask 08h; "					\
	 PERF_JSON "/cache.json l2_cache_req_stat.ls_rd_blk_c"},						\
											\
	{"L2_IC_HIT", "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:0x06",		\
	 CS_PRESET_L1 | CS_PRESET_L2,							\
	 "instruction-cache requests to L2 that hit (unit mask 06h: IcFillHitS, "	\
	 "IcFillHitX)",									\
	 ppr ", PMCx064 L2CacheReqStat; " PERF_JSON "/cache.json l2_cache_req_stat.ic_hit_in_l2"},	\
											\
	{"L2_IC_MISS", "CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:IC_FILL_MISS",	\
	 CS_PRESET_L1 | CS_PRESET_L2,							\
	 "instruction-cache requests to L2 that missed",				\
	 ppr ", PMCx064 L2CacheReqStat unit mask 01h; "					\
	 PERF_JSON "/cache.json l2_cache_req_stat.ic_fill_miss"},						\
											\
	{"DTLB_MISS", "L1_DTLB_MISS:0xff", CS_PRESET_TLB,				\
	 "L1 DTLB misses (reloads from the L2 DTLB or from a page-table walk)",		\
	 ppr ", PMCx045 LsL1DTlbMiss unit mask FFh"},					\
											\
	{"DTLB_L2_MISS", "L1_DTLB_MISS:0xf0", CS_PRESET_TLB,				\
	 "L1 and L2 DTLB misses: data page-table walks",				\
	 ppr ", PMCx045 LsL1DTlbMiss unit mask F0h"},					\
											\
	{"ITLB_L2_HIT", "L1_ITLB_MISS_L2_ITLB_HIT", CS_PRESET_TLB,			\
	 "L1 ITLB misses that hit the L2 ITLB",						\
	 ppr ", PMCx084 BpL1TlbMissL2TlbHit"},						\
											\
	{"INSTR", "RETIRED_INSTRUCTIONS", CS_PRESET_IPC, "retired instructions",	\
	 ppr ", PMCx0C0 ExRetInstr"},							\
											\
	{"CYCLES", "CYCLES_NOT_IN_HALT", CS_PRESET_IPC, "core cycles not halted",	\
	 ppr ", PMCx076 LsNotHaltedCyc"}

#define ZEN_COMMON_FORMULAS								\
	{"L1D-misses", "L2_DC_HIT + L2_DC_MISS", CS_FORMULA_COUNT,			\
	 "L1D misses that reached L2 (demand and L1 prefetch requests; L2 "		\
	 "prefetches are not included)",						\
	 PERF_JSON "/recommended.json l2_cache_accesses_from_l1_dc_misses"},		\
											\
	{"L1D-miss-ratio", "(L2_DC_HIT + L2_DC_MISS) / DC_ACCESS", CS_FORMULA_RATIO,	\
	 "L1D misses per load/store op dispatched (ops counted speculatively: an "	\
	 "approximation of the miss ratio per access)",					\
	 PERF_JSON "/recommended.json"},						\
											\
	{"L1I-misses", "L2_IC_HIT + L2_IC_MISS", CS_FORMULA_COUNT,			\
	 "L1I misses that reached L2",							\
	 PERF_JSON "/recommended.json l2_cache_accesses_from_l1_ic_misses"},		\
											\
	{"L2-hits", "L2_DC_HIT + L2_IC_HIT", CS_FORMULA_COUNT,				\
	 "L2 hits of L1D and L1I requests (no prefetches)",				\
	 PERF_JSON "/cache.json l2_cache_req_stat.ic_dc_hit_in_l2"},					\
											\
	{"L2-misses", "L2_DC_MISS + L2_IC_MISS", CS_FORMULA_COUNT,			\
	 "L2 misses of L1D and L1I requests (no prefetches)",				\
	 PERF_JSON "/cache.json l2_cache_req_stat.ic_dc_miss_in_l2"},					\
											\
	{"L2-hit-ratio",								\
	 "(L2_DC_HIT + L2_IC_HIT) / (L2_DC_HIT + L2_IC_HIT + L2_DC_MISS + L2_IC_MISS)",	\
	 CS_FORMULA_RATIO, "L2 hits per L2 request from L1D and L1I",			\
	 PERF_JSON "/recommended.json"},						\
											\
	{"L1D-MPKI", "1000 * (L2_DC_HIT + L2_DC_MISS) / INSTR", CS_FORMULA_RATIO,	\
	 "L1D misses per 1000 retired instructions", PERF_JSON "/recommended.json"},	\
											\
	{"L2-MPKI", "1000 * (L2_DC_MISS + L2_IC_MISS) / INSTR", CS_FORMULA_RATIO,	\
	 "L2 misses per 1000 retired instructions", PERF_JSON "/recommended.json"},	\
											\
	{"DTLB-misses", "DTLB_MISS", CS_FORMULA_COUNT, "L1 DTLB misses",		\
	 PERF_JSON "/recommended.json l1_dtlb_misses"},					\
											\
	{"DTLB-walks", "DTLB_L2_MISS", CS_FORMULA_COUNT,				\
	 "L2 DTLB misses: data page-table walks",					\
	 PERF_JSON "/recommended.json l2_dtlb_misses"},					\
											\
	{"ITLB-misses", "ITLB_L2_HIT + ITLB_L2_MISS", CS_FORMULA_COUNT,			\
	 "L1 ITLB misses", PERF_JSON "/recommended.json l1_itlb_misses"},		\
											\
	{"ITLB-walks", "ITLB_L2_MISS", CS_FORMULA_COUNT,				\
	 "L2 ITLB misses: instruction page-table walks",				\
	 PERF_JSON "/recommended.json l2_itlb_misses"},					\
											\
	{"IPC", "INSTR / CYCLES", CS_FORMULA_RATIO,					\
	 "retired instructions per unhalted cycle", "PMCx0C0 / PMCx076"}

/* Zen 2 and later: where the demand data-cache fills came from. */
#define ZEN_L3_FORMULAS									\
	{"L3-hits", "L3_FILL", CS_FORMULA_COUNT,					\
	 "L1D demand fills served by the L3 (or another L2) of the core's own CCX",	\
	 PERF_JSON "/recommended.json l1_demand_data_cache_fills_from_same_ccx"},	\
											\
	{"L3-misses", "BEYOND_L3", CS_FORMULA_COUNT,					\
	 "L1D demand fills from beyond the CCX's L3: other CCXs, DRAM, MMIO",		\
	 PERF_JSON "/recommended.json l1_demand_data_cache_fills_from_*"},		\
											\
	{"L3-hit-ratio", "L3_FILL / (L3_FILL + BEYOND_L3)", CS_FORMULA_RATIO,		\
	 "share of the L1D demand fills from outside the core's L2 that the L3 of "	\
	 "its CCX served",								\
	 PERF_JSON "/recommended.json"},						\
											\
	{"L3-MPKI", "1000 * BEYOND_L3 / INSTR", CS_FORMULA_RATIO,			\
	 "L1D demand fills from beyond the L3 per 1000 retired instructions",		\
	 PERF_JSON "/recommended.json"}

#define ZEN_NOTES									\
	"6 counters.  The L3 of Zen is counted by a per-CCX PMU (amd_l3) that cannot "	\
	"count one thread, so the L3 formulas use the core's demand data-cache fills "	\
	"by source: loads only, L1I and prefetch traffic not included.  The L1D miss "	\
	"ratio divides by dispatched load/store ops (AMD's all_data_cache_accesses), "	\
	"which are speculative."

/* clang-format on */

static const char *const zen1_pmus[] = {"amd64_fam17h_zen1", "amd64_fam17h", NULL};

static const struct cs_preset_event zen1_events[] = {
	ZEN_COMMON_EVENTS(PPR17),
	{"ITLB_L2_MISS", "L1_ITLB_MISS_L2_ITLB_MISS:IF1G:IF2M:IF4K", CS_PRESET_TLB,
	 "L1 and L2 ITLB misses: instruction page-table walks",
	 PPR17 ", PMCx085 BpL1TlbMissL2Miss unit mask 07h"},
};

static const struct cs_preset_formula zen1_formulas[] = {ZEN_COMMON_FORMULAS};

const struct cs_preset_family cs_preset_amd_zen1 = {
	.name = "amd_zen1",
	.title = "AMD family 17h Zen (Naples, Summit Ridge, Raven Ridge)",
	.pmus = zen1_pmus,
	.events = zen1_events,
	.nevents = sizeof(zen1_events) / sizeof(zen1_events[0]),
	.formulas = zen1_formulas,
	.nformulas = sizeof(zen1_formulas) / sizeof(zen1_formulas[0]),
	.notes = ZEN_NOTES "  No @l3 rows: libpfm4's Zen 1 table has no demand-fill-source "
			   "event (PMCx043).",
};

static const char *const zen2_pmus[] = {"amd64_fam17h_zen2", NULL};

static const struct cs_preset_event zen2_events[] = {
	ZEN_COMMON_EVENTS(PPR17_31),
	{"ITLB_L2_MISS", "L1_ITLB_MISS_L2_ITLB_MISS:IF1G:IF2M:IF4K", CS_PRESET_TLB,
	 "L1 and L2 ITLB misses: instruction page-table walks",
	 PPR17_31 ", PMCx085 BpL1TlbMissL2Miss unit mask 07h"},
	{"L3_FILL", "DATA_CACHE_REFILLS_FROM_SYSTEM:LS_MABRESP_LCL_CACHE", CS_PRESET_L3,
	 "L1D demand fills from a cache other than the core's L2 when the line's home node is "
	 "this die's: the L3 or another L2 of the core's CCX, or another CCX's cache",
	 PPR17_31 ", PMCx043 LsRefillsFromSys unit mask 02h (LsMabRespLclCache: \"local CCX "
		  "(not Local L2), or Remote CCX and the address's Home Node is on this "
		  "thread's die\")"},
	{"BEYOND_L3", "DATA_CACHE_REFILLS_FROM_SYSTEM:0x58", CS_PRESET_L3,
	 "L1D demand fills from DRAM or IO, or from another CCX's cache when the line's home "
	 "node is another die (unit mask 58h: LsMabRespLclDram, LsMabRespRmtCache, "
	 "LsMabRespRmtDram)",
	 PPR17_31 ", PMCx043 LsRefillsFromSys"},
};

/* Zen 2's PMCx043 sorts cache fills by the line's home node, not by CCX:
 * a fill from another CCX's cache is a hit when the home node is local. */
#define ZEN2_L3_FORMULAS								\
	{"L3-hits", "L3_FILL", CS_FORMULA_COUNT,					\
	 "L1D demand fills served by a cache other than the core's L2 with the line's "	\
	 "home node local: the L3 (or another L2) of the core's CCX, and also another "	\
	 "CCX's cache, which Zen 2 does not tell apart",					\
	 PPR17_31 ", PMCx043 LsRefillsFromSys unit mask 02h"},				\
											\
	{"L3-misses", "BEYOND_L3", CS_FORMULA_COUNT,					\
	 "L1D demand fills from DRAM or IO, or from another CCX's cache when the line's "	\
	 "home node is remote (another CCX's cache with a local home node is in L3-hits)",	\
	 PPR17_31 ", PMCx043 LsRefillsFromSys unit mask 58h"},				\
											\
	{"L3-hit-ratio", "L3_FILL / (L3_FILL + BEYOND_L3)", CS_FORMULA_RATIO,		\
	 "share of the L1D demand fills from outside the core's L2 that a cache with the "	\
	 "line's home node local served (the CCX's L3, or another CCX's cache)",		\
	 PPR17_31 ", PMCx043 LsRefillsFromSys"},					\
											\
	{"L3-MPKI", "1000 * BEYOND_L3 / INSTR", CS_FORMULA_RATIO,			\
	 "L1D demand fills from DRAM, IO or a remote node's caches per 1000 retired "	\
	 "instructions",								\
	 PPR17_31 ", PMCx043 LsRefillsFromSys"}

static const struct cs_preset_formula zen2_formulas[] = {ZEN_COMMON_FORMULAS, ZEN2_L3_FORMULAS};

static const struct cs_preset_formula zen_formulas[] = {ZEN_COMMON_FORMULAS, ZEN_L3_FORMULAS};

const struct cs_preset_family cs_preset_amd_zen2 = {
	.name = "amd_zen2",
	.title = "AMD family 17h Zen 2 (Rome, Matisse)",
	.pmus = zen2_pmus,
	.events = zen2_events,
	.nevents = sizeof(zen2_events) / sizeof(zen2_events[0]),
	.formulas = zen2_formulas,
	.nformulas = sizeof(zen2_formulas) / sizeof(zen2_formulas[0]),
	.notes = ZEN_NOTES "  On Zen 2 a fill from another CCX's cache counts as an L3 hit when "
			   "the line's home node is local (PMCx043 does not tell the CCXs "
			   "apart): with threads sharing data across CCXs, L3-hits are not the "
			   "hits of the core's own L3.",
};

static const char *const zen3_pmus[] = {"amd64_fam19h_zen3", NULL};

static const struct cs_preset_event zen3_events[] = {
	ZEN_COMMON_EVENTS(PPR19),
	{"ITLB_L2_MISS", "L1_ITLB_MISS_L2_ITLB_MISS:COALESCED4K:IF1G:IF2M:IF4K", CS_PRESET_TLB,
	 "L1 and L2 ITLB misses: instruction page-table walks",
	 PPR19 ", PMCx085 BpL1TlbMissL2TlbMiss unit mask 0Fh"},
	{"L3_FILL", "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:INT_CACHE", CS_PRESET_L3,
	 "L1D demand fills from the L3 or another L2 of the core's CCX",
	 PPR19 ", PMCx043 LsDmndFillsFromSys unit mask 02h"},
	{"BEYOND_L3", "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:0x5c", CS_PRESET_L3,
	 "L1D demand fills from other CCXs, DRAM or MMIO, near or far (unit mask 5Ch)",
	 PPR19 ", PMCx043 LsDmndFillsFromSys"},
};

const struct cs_preset_family cs_preset_amd_zen3 = {
	.name = "amd_zen3",
	.title = "AMD family 19h Zen 3 (Milan, Vermeer)",
	.pmus = zen3_pmus,
	.events = zen3_events,
	.nevents = sizeof(zen3_events) / sizeof(zen3_events[0]),
	.formulas = zen_formulas,
	.nformulas = sizeof(zen_formulas) / sizeof(zen_formulas[0]),
	.notes = ZEN_NOTES,
};

static const char *const zen4_pmus[] = {"amd64_fam19h_zen4", NULL};

static const struct cs_preset_event zen4_events[] = {
	ZEN_COMMON_EVENTS(PPR19_11),
	{"ITLB_L2_MISS", "L1_ITLB_MISS_L2_ITLB_MISS:COALESCED4K:IF1G:IF2M:IF4K", CS_PRESET_TLB,
	 "L1 and L2 ITLB misses: instruction page-table walks",
	 PPR19_11 ", PMCx085 BpL1TlbMissL2TlbMiss unit mask 0Fh"},
	{"L3_FILL", "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:LOCAL_CCX", CS_PRESET_L3,
	 "L1D demand fills from the L3 or another L2 of the core's CCX",
	 PPR19_11 ", PMCx043 LsDmndFillsFromSys unit mask 02h; " PERF_JSON
		  "/cache.json ls_dmnd_fills_from_sys.local_ccx"},
	{"BEYOND_L3", "DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:0xdc", CS_PRESET_L3,
	 "L1D demand fills from other CCXs, DRAM, MMIO or extension memory, near or far (unit "
	 "mask DCh)",
	 PPR19_11 ", PMCx043 LsDmndFillsFromSys; " PERF_JSON
		  "/cache.json ls_dmnd_fills_from_sys.*"},
};

const struct cs_preset_family cs_preset_amd_zen4 = {
	.name = "amd_zen4",
	.title = "AMD family 19h Zen 4 (Genoa, Raphael)",
	.pmus = zen4_pmus,
	.events = zen4_events,
	.nevents = sizeof(zen4_events) / sizeof(zen4_events[0]),
	.formulas = zen_formulas,
	.nformulas = sizeof(zen_formulas) / sizeof(zen_formulas[0]),
	.notes = ZEN_NOTES,
};
