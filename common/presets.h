/* SPDX-License-Identifier: MIT */
/* Event presets (@cache, @l1, @l2, @l3, @tlb, @ipc) and the formulas over
 * them: one recipe table per PMU family (common/presets_*.c), each row
 * citing its source.  The shim expands a preset into the raw libpfm4
 * events of the detected PMU; the report recognizes the recorded event
 * names and computes the family's formulas from them.
 *
 * Pure data and small pure functions: no allocation, no stdio, no exit,
 * usable inside the shim's constructor.
 */
#ifndef CACHESHIM_COMMON_PRESETS_H
#define CACHESHIM_COMMON_PRESETS_H

#include <stddef.h>
#include <stdint.h>

/* Preset bits (cs_preset_event.presets). */
#define CS_PRESET_L1 0x01u /* L1 data and instruction caches */
#define CS_PRESET_L2 0x02u
#define CS_PRESET_L3 0x04u
#define CS_PRESET_TLB 0x08u /* TLB misses and page walks */
#define CS_PRESET_IPC 0x10u /* instructions and cycles */
#define CS_PRESET_CACHE (CS_PRESET_L1 | CS_PRESET_L2 | CS_PRESET_L3)
#define CS_PRESET_ALL 0x1fu
/* Room for cs_preset_names' list, its NUL included. */
#define CS_PRESET_NAMES_MAX 64

/* A recipe row: one raw event.  event is a libpfm4 event string without a
 * PMU prefix, shorter than CS_EVENT_NAME_MAX (it is the name recorded in
 * the report file); umask combinations that would not fit are written as
 * one hexadecimal umask (EVENT:0x5c), which libpfm4 accepts. */
struct cs_preset_event {
	const char *alias; /* the name formulas use: [A-Z][A-Z0-9_]* */
	const char *event; /* libpfm4 string */
	unsigned presets; /* CS_PRESET_* bits it belongs to */
	const char *what; /* what one count means */
	const char *source; /* manual and section, or table and event code */
};

/* cs_preset_formula.kind */
enum cs_formula_kind {
	CS_FORMULA_COUNT = 1, /* a number of events per call (mean, total) */
	CS_FORMULA_RATIO = 2, /* a ratio of means: no total */
};

/* A recipe formula: a named metric over the family's aliases
 * (common/calc.h syntax).  It belongs to every preset that holds all of
 * its inputs. */
struct cs_preset_formula {
	const char *name; /* L1D-misses; also the event column of the report */
	const char *expr; /* DC_REFILL_L2 + DC_REFILL_SYS */
	unsigned kind; /* enum cs_formula_kind */
	const char *what;
	const char *source;
};

/* A PMU family: the libpfm4 PMUs that share one recipe. */
struct cs_preset_family {
	const char *name; /* amd_fam10h */
	const char *title; /* AMD family 10h (K10) */
	const char *const *pmus; /* libpfm4 PMU names, NULL-terminated */
	const struct cs_preset_event *events;
	unsigned nevents; /* <= 32 */
	const struct cs_preset_formula *formulas;
	unsigned nformulas;
	const char *notes; /* caveats for `cacheshim list`, or NULL */
	/* General-purpose counters one thread can use at once; 0: libpfm4's
	 * num_cntrs, which for some models is a table value for a core
	 * without SMT (16 for icl and spr). */
	unsigned counters;
	/* Event selects (config bits 0-7) that the kernel schedules on the
	 * first low_counters general-purpose counters only (its
	 * EVENT_CONSTRAINTs), as inclusive {first, last} pairs ending with
	 * {0, 0}; NULL: no such limit. */
	const uint8_t (*low_codes)[2];
	unsigned low_counters;
};

/* Every family, in the order the report tries them; NULL-terminated. */
extern const struct cs_preset_family *const cs_preset_families[];

/* Returns the CS_PRESET_* bits of a CACHESHIM_EVENTS token such as
 * "@cache" (case-insensitive; "@all" is every preset), 0 if it names no
 * preset. */
unsigned cs_preset_bits(const char *token);

/* Writes the names cs_preset_bits takes, "@cache, @l1, ..., @all", into
 * buf (for messages: built from the same table, so a preset added there
 * is listed).  Cut to len - 1 characters, NUL-terminated when len > 0.
 * Returns buf. */
char *cs_preset_names(char *buf, size_t len);

/* Returns the family whose pmus include pmu (a libpfm4 PMU name), or NULL. */
const struct cs_preset_family *cs_preset_family_of(const char *pmu);

/* Returns the index in f->events of the event recorded under name, or -1.
 * Matched case-insensitively (libpfm4 is), with or without a "pmu::"
 * prefix; a prefix must name one of f's PMUs. */
int cs_preset_event_find(const struct cs_preset_family *f, const char *name);

/* Returns the index in f->events of the event whose alias is the len
 * bytes at alias, or -1. */
int cs_preset_alias_find(const struct cs_preset_family *f, const char *alias, unsigned len);

/* Returns the mask of f->events (bit i = events[i]) that formula fo reads,
 * or 0 when it names something that is not an alias of f. */
uint32_t cs_preset_formula_inputs(const struct cs_preset_family *f,
				  const struct cs_preset_formula *fo);

/* Returns the mask of f->events in the presets of bits. */
uint32_t cs_preset_events(const struct cs_preset_family *f, unsigned bits);

/* Returns 1 when a perf event of this type and config can use an Intel
 * fixed counter (instructions, core cycles, reference cycles, slots), so
 * it needs none of the general-purpose ones, else 0. */
int cs_preset_fixed_counter(uint32_t perf_type, uint64_t config);

/* The kernel's NMI watchdog (kernel.nmi_watchdog=1) keeps a pinned
 * cycles event on every CPU.  Where the PMU has fixed counters (Intel) it
 * holds the core-cycles one, so a cycles event needs a general-purpose
 * counter; where it has none (AMD) it holds a general-purpose counter.
 * Returns 1 when a perf event of this type and config can use a fixed
 * counter that the watchdog leaves free: cs_preset_fixed_counter, less
 * the cycles events when watchdog is set. */
int cs_preset_fixed_counter_free(uint32_t perf_type, uint64_t config, int watchdog);

/* Returns the general-purpose counters left of limit when watchdog is set
 * on a PMU with num_fixed fixed counters: one fewer without fixed
 * counters, else limit. */
unsigned cs_preset_watchdog_counters(unsigned limit, int num_fixed, int watchdog);

/* Returns the general-purpose counters one thread of f's PMU can use at
 * once: f->counters, else libpfm4's num_cntrs (0 when neither is known).
 * f may be NULL. */
unsigned cs_preset_counters(const struct cs_preset_family *f, int pfm_num_cntrs);

/* Returns f->low_counters when a perf event of this type and config can
 * only count on f's first low_counters general-purpose counters, else 0
 * (also for a NULL f).  Only raw and dynamic-PMU events are looked at:
 * the kernel maps the generic ones itself. */
unsigned cs_preset_low_counter(const struct cs_preset_family *f, uint32_t perf_type,
			       uint64_t config);

/* Splits the n (<= 32) events names[] that each need a general-purpose
 * counter into runs of at most limit events, of which at most low_limit
 * are in low (a mask over names[]: the events that count on the first
 * low_limit counters only), keeping together the inputs of every formula
 * of f (NULL: none) that fits in one run, so that each run can compute
 * them.  An event may be in several runs.  Stores the runs as masks over
 * names[] in runs[] and returns their number, or 0 when limit is 0, low
 * is not empty and low_limit is 0, or more than maxruns runs would be
 * needed. */
unsigned cs_preset_split(const struct cs_preset_family *f, const char *const *names, unsigned n,
			 unsigned limit, uint32_t low, unsigned low_limit, uint32_t *runs,
			 unsigned maxruns);

#endif /* CACHESHIM_COMMON_PRESETS_H */
