/* SPDX-License-Identifier: MIT */
/* Recipe for AMD family 10h (K10: Barcelona, Shanghai, Istanbul; Phenom,
 * Opteron 8300/2400): the per-level counts of AMD's own measurement
 * guide, which perf's generic cache events do not reproduce on this
 * family. */
#include "common/presets.h"

#define BKDG "AMD BKDG for Family 10h Processors (#31116), 3.14 Performance Counter Events"
#define BPM                                                                                  \
	"AMD, Basic Performance Measurements for AMD Athlon 64, AMD Opteron and AMD Phenom " \
	"Processors, 4.3 Memory Accesses"

static const char *const pmus[] = {
	"amd64_fam10h_barcelona",
	"amd64_fam10h_shanghai",
	"amd64_fam10h_istanbul",
	NULL,
};

static const struct cs_preset_event events[] = {
	{"DC_ACCESS", "DATA_CACHE_ACCESSES", CS_PRESET_L1,
	 "L1 data cache accesses (loads and stores)", BKDG ", EventSelect 040h"},
	{"DC_REFILL_L2", "DATA_CACHE_REFILLS:L2_SHARED:L2_EXCLUSIVE:L2_OWNED:L2_MODIFIED",
	 CS_PRESET_L1 | CS_PRESET_L2,
	 "L1D refills from L2: L1D misses that hit L2 (unit mask 1Eh: every line state)",
	 BKDG ", EventSelect 042h; " BPM},
	{"DC_REFILL_SYS", "DATA_CACHE_REFILLS_FROM_SYSTEM:SHARED:EXCLUSIVE:OWNED:MODIFIED",
	 CS_PRESET_L1 | CS_PRESET_L2,
	 "L1D refills from the northbridge: L1D misses that also missed L2 (unit mask 1Eh)",
	 BKDG ", EventSelect 043h; " BPM},
	{"IC_FETCH", "INSTRUCTION_CACHE_FETCHES", CS_PRESET_L1, "L1 instruction cache fetches",
	 BKDG ", EventSelect 080h"},
	{"IC_REFILL_L2", "INSTRUCTION_CACHE_REFILLS_FROM_L2", CS_PRESET_L1 | CS_PRESET_L2,
	 "L1I refills from L2: L1I misses that hit L2", BKDG ", EventSelect 082h; " BPM},
	{"IC_REFILL_SYS", "INSTRUCTION_CACHE_REFILLS_FROM_SYSTEM", CS_PRESET_L1 | CS_PRESET_L2,
	 "L1I refills from the northbridge: L1I misses that also missed L2",
	 BKDG ", EventSelect 083h; " BPM},
	{"L2_REQ_TLB", "REQUESTS_TO_L2:TLB_WALK", CS_PRESET_L2,
	 "L2 requests made by page-table walks (TLB fills)",
	 BKDG ", EventSelect 07Dh unit mask 04h; " BPM},
	{"L2_MISS_TLB", "L2_CACHE_MISS:TLB_WALK", CS_PRESET_L2,
	 "L2 misses of page-table walks (TLB fills)",
	 BKDG ", EventSelect 07Eh unit mask 04h; " BPM},
	{"L3_REQ", "READ_REQUEST_TO_L3_CACHE:ANY_READ:ALL_CORES", CS_PRESET_L3,
	 "L3 read requests (northbridge event: every core of the node, see the notes)",
	 BKDG ", EventSelect 4E0h unit mask F7h; " BPM},
	{"L3_MISS", "L3_CACHE_MISSES:ANY_READ:ALL_CORES", CS_PRESET_L3,
	 "L3 read misses (northbridge event: every core of the node, see the notes)",
	 BKDG ", EventSelect 4E1h unit mask F7h; " BPM},
	{"DTLB_L2_HIT", "L1_DTLB_MISS_AND_L2_DTLB_HIT:ALL", CS_PRESET_TLB,
	 "L1 DTLB misses that hit the L2 DTLB", BKDG ", EventSelect 045h"},
	{"DTLB_L2_MISS", "L1_DTLB_AND_L2_DTLB_MISS:ALL", CS_PRESET_TLB,
	 "L1 and L2 DTLB misses: data page-table walks", BKDG ", EventSelect 046h"},
	{"ITLB_L2_HIT", "L1_ITLB_MISS_AND_L2_ITLB_HIT", CS_PRESET_TLB,
	 "L1 ITLB misses that hit the L2 ITLB", BKDG ", EventSelect 084h"},
	{"ITLB_L2_MISS", "L1_ITLB_MISS_AND_L2_ITLB_MISS:ALL", CS_PRESET_TLB,
	 "L1 and L2 ITLB misses: instruction page-table walks", BKDG ", EventSelect 085h"},
	{"INSTR", "RETIRED_INSTRUCTIONS", CS_PRESET_IPC, "retired instructions",
	 BKDG ", EventSelect 0C0h"},
	{"CYCLES", "CPU_CLK_UNHALTED", CS_PRESET_IPC, "core clock cycles not halted",
	 BKDG ", EventSelect 076h"},
};

static const struct cs_preset_formula formulas[] = {
	{"L1D-misses", "DC_REFILL_L2 + DC_REFILL_SYS", CS_FORMULA_COUNT,
	 "L1 data cache misses: refills from L2 plus refills from the system", BPM},
	{"L1D-miss-ratio", "(DC_REFILL_L2 + DC_REFILL_SYS) / DC_ACCESS", CS_FORMULA_RATIO,
	 "L1D misses per L1D access", BPM},
	{"L1I-misses", "IC_REFILL_L2 + IC_REFILL_SYS", CS_FORMULA_COUNT,
	 "L1 instruction cache misses", BPM},
	{"L1I-miss-ratio", "(IC_REFILL_L2 + IC_REFILL_SYS) / IC_FETCH", CS_FORMULA_RATIO,
	 "L1I misses per instruction fetch", BPM},
	{"L2-requests", "DC_REFILL_L2 + DC_REFILL_SYS + IC_REFILL_L2 + IC_REFILL_SYS + L2_REQ_TLB",
	 CS_FORMULA_COUNT, "L2 requests: L1D misses, L1I misses and page-table walk requests", BPM},
	{"L2-misses", "DC_REFILL_SYS + IC_REFILL_SYS + L2_MISS_TLB", CS_FORMULA_COUNT,
	 "L2 misses: L1D and L1I refills from the system and page-table walk misses (the "
	 "walk term is event 07Eh, not the request event 07Dh)",
	 BPM},
	{"L2-miss-ratio",
	 "(DC_REFILL_SYS + IC_REFILL_SYS + L2_MISS_TLB) / "
	 "(DC_REFILL_L2 + DC_REFILL_SYS + IC_REFILL_L2 + IC_REFILL_SYS + L2_REQ_TLB)",
	 CS_FORMULA_RATIO, "L2 misses per L2 request", BPM},
	{"L3-requests", "L3_REQ", CS_FORMULA_COUNT, "L3 read requests (all cores of the node)",
	 BPM},
	{"L3-misses", "L3_MISS", CS_FORMULA_COUNT, "L3 read misses (all cores of the node)", BPM},
	{"L3-miss-ratio", "L3_MISS / L3_REQ", CS_FORMULA_RATIO, "L3 misses per L3 read request",
	 BPM},
	{"L1D-miss-rate", "(DC_REFILL_L2 + DC_REFILL_SYS) / INSTR", CS_FORMULA_RATIO,
	 "L1D misses per retired instruction", BPM},
	{"L1I-miss-rate", "(IC_REFILL_L2 + IC_REFILL_SYS) / INSTR", CS_FORMULA_RATIO,
	 "L1I misses per retired instruction", BPM},
	{"L2-request-rate",
	 "(DC_REFILL_L2 + DC_REFILL_SYS + IC_REFILL_L2 + IC_REFILL_SYS + L2_REQ_TLB) / INSTR",
	 CS_FORMULA_RATIO, "L2 requests per retired instruction", BPM},
	{"L2-miss-rate", "(DC_REFILL_SYS + IC_REFILL_SYS + L2_MISS_TLB) / INSTR", CS_FORMULA_RATIO,
	 "L2 misses per retired instruction", BPM},
	{"DTLB-misses", "DTLB_L2_HIT + DTLB_L2_MISS", CS_FORMULA_COUNT, "L1 DTLB misses",
	 BKDG ", EventSelect 045h and 046h"},
	{"DTLB-walks", "DTLB_L2_MISS", CS_FORMULA_COUNT, "L2 DTLB misses: data page-table walks",
	 BKDG ", EventSelect 046h"},
	{"ITLB-misses", "ITLB_L2_HIT + ITLB_L2_MISS", CS_FORMULA_COUNT, "L1 ITLB misses",
	 BKDG ", EventSelect 084h and 085h"},
	{"ITLB-walks", "ITLB_L2_MISS", CS_FORMULA_COUNT,
	 "L2 ITLB misses: instruction page-table walks", BKDG ", EventSelect 085h"},
	{"IPC", "INSTR / CYCLES", CS_FORMULA_RATIO, "retired instructions per unhalted cycle",
	 BKDG ", EventSelect 0C0h and 076h"},
};

const struct cs_preset_family cs_preset_amd_fam10h = {
	.name = "amd_fam10h",
	.title = "AMD family 10h (K10: Barcelona, Shanghai, Istanbul)",
	.pmus = pmus,
	.events = events,
	.nevents = sizeof(events) / sizeof(events[0]),
	.formulas = formulas,
	.nformulas = sizeof(formulas) / sizeof(formulas[0]),
	.notes = "4 counters: @cache (10 events) needs several runs, merged by `cacheshim "
		 "report`.  The L3 events are northbridge events counted for the cores that "
		 "unit mask F0h selects (all cores of the node): per-call L3 values include what "
		 "other cores did meanwhile.",
};
