/* SPDX-License-Identifier: MIT */
/* Presets: the list of recipe families and the lookups over them
 * (common/presets.h).  The recipes themselves are in presets_*.c. */
#include <string.h>
#include <strings.h>

#include "common/presets.h"

extern const struct cs_preset_family cs_preset_amd_fam10h;
extern const struct cs_preset_family cs_preset_amd_zen1;
extern const struct cs_preset_family cs_preset_amd_zen2;
extern const struct cs_preset_family cs_preset_amd_zen3;
extern const struct cs_preset_family cs_preset_amd_zen4;
extern const struct cs_preset_family cs_preset_intel_skl;
extern const struct cs_preset_family cs_preset_intel_icl;
extern const struct cs_preset_family cs_preset_intel_spr;
extern const struct cs_preset_family cs_preset_intel_adl;

/* The report tries them in this order: among families that match the
 * recorded events equally well, the first wins (the Intel ones share
 * their event names and formulas). */
const struct cs_preset_family *const cs_preset_families[] = {
	&cs_preset_amd_fam10h, &cs_preset_amd_zen1,
	&cs_preset_amd_zen2,   &cs_preset_amd_zen3,
	&cs_preset_amd_zen4,   &cs_preset_intel_skl,
	&cs_preset_intel_icl,  &cs_preset_intel_spr,
	&cs_preset_intel_adl,  NULL,
};

static const struct {
	const char *name;
	unsigned bits;
} preset_names[] = {
	{"cache", CS_PRESET_CACHE}, {"l1", CS_PRESET_L1},   {"l2", CS_PRESET_L2},
	{"l3", CS_PRESET_L3},	    {"tlb", CS_PRESET_TLB}, {"ipc", CS_PRESET_IPC},
	{"all", CS_PRESET_ALL},
};

unsigned cs_preset_bits(const char *token)
{
	size_t i;

	if (!token || token[0] != '@')
		return 0;
	for (i = 0; i < sizeof(preset_names) / sizeof(preset_names[0]); i++)
		if (strcasecmp(token + 1, preset_names[i].name) == 0)
			return preset_names[i].bits;
	return 0;
}

char *cs_preset_names(char *buf, size_t len)
{
	size_t i, n = 0, k;
	const char *name;

	for (i = 0; len && i < sizeof(preset_names) / sizeof(preset_names[0]); i++) {
		/* ", @" before each name but the first: no stdio here (the
		 * shim's constructor uses it). */
		for (k = i ? 0 : 2; k < 3 && n + 1 < len; k++)
			buf[n++] = ", @"[k];
		for (name = preset_names[i].name; *name && n + 1 < len; name++)
			buf[n++] = *name;
	}
	if (len)
		buf[n] = '\0';
	return buf;
}

static int has_pmu(const struct cs_preset_family *f, const char *pmu, size_t len)
{
	const char *const *p;

	for (p = f->pmus; *p; p++)
		if (strlen(*p) == len && strncasecmp(*p, pmu, len) == 0)
			return 1;
	return 0;
}

const struct cs_preset_family *cs_preset_family_of(const char *pmu)
{
	const struct cs_preset_family *const *f;

	for (f = cs_preset_families; *f; f++)
		if (has_pmu(*f, pmu, strlen(pmu)))
			return *f;
	return NULL;
}

int cs_preset_event_find(const struct cs_preset_family *f, const char *name)
{
	const char *sep = strstr(name, "::");
	unsigned i;

	if (sep) {
		if (!has_pmu(f, name, (size_t)(sep - name)))
			return -1;
		name = sep + 2;
	}
	for (i = 0; i < f->nevents; i++)
		if (strcasecmp(f->events[i].event, name) == 0)
			return (int)i;
	return -1;
}

int cs_preset_alias_find(const struct cs_preset_family *f, const char *alias, unsigned len)
{
	unsigned i;

	for (i = 0; i < f->nevents; i++)
		if (strlen(f->events[i].alias) == len &&
		    memcmp(f->events[i].alias, alias, len) == 0)
			return (int)i;
	return -1;
}

static int name_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static int name_char(char c)
{
	return name_start(c) || (c >= '0' && c <= '9') || c == '.' || c == ':';
}

/* The names of an expression are those of common/calc.h; numbers (1e3
 * included) are skipped so that their digits and exponents are not taken
 * for names. */
uint32_t cs_preset_formula_inputs(const struct cs_preset_family *f,
				  const struct cs_preset_formula *fo)
{
	const char *s = fo->expr, *b;
	uint32_t mask = 0;
	int i;

	while (*s) {
		if ((*s >= '0' && *s <= '9') || (*s == '.' && s[1] >= '0' && s[1] <= '9')) {
			while ((*s >= '0' && *s <= '9') || *s == '.')
				s++;
			if (*s == 'e' || *s == 'E') {
				s++;
				if (*s == '+' || *s == '-')
					s++;
				while (*s >= '0' && *s <= '9')
					s++;
			}
		} else if (*s == '{' || name_start(*s)) {
			if (*s == '{') {
				b = ++s;
				while (*s && *s != '}')
					s++;
			} else {
				b = s;
				while (name_char(*s))
					s++;
			}
			i = cs_preset_alias_find(f, b, (unsigned)(s - b));
			if (i < 0 || i >= 32)
				return 0;
			mask |= 1u << i;
			if (*s == '}')
				s++;
		} else {
			s++;
		}
	}
	return mask;
}

uint32_t cs_preset_events(const struct cs_preset_family *f, unsigned bits)
{
	uint32_t mask = 0;
	unsigned i;

	for (i = 0; i < f->nevents && i < 32; i++)
		if (f->events[i].presets & bits)
			mask |= 1u << i;
	return mask;
}

/* perf_event_attr types (linux/perf_event.h), spelled out so that this
 * file needs no kernel header. */
#define TYPE_HARDWARE 0u
#define TYPE_RAW 4u
#define TYPE_MAX 6u /* dynamic PMU types (hybrid cpu_core, cpu_atom) are above */

int cs_preset_fixed_counter(uint32_t perf_type, uint64_t config)
{
	if (perf_type == TYPE_HARDWARE)
		return config == 0 /* cycles */ || config == 1 /* instructions */ ||
		       config == 9 /* ref-cycles */;
	if (perf_type != TYPE_RAW && perf_type < TYPE_MAX)
		return 0;
	/* The kernel's FIXED_EVENT_CONSTRAINTs: INST_RETIRED.ANY 0x00c0
	 * (and 0x01c0 on Ice Lake and later), CPU_CLK_UNHALTED.THREAD
	 * 0x003c, .REF_TSC 0x0300, TOPDOWN.SLOTS 0x0400.  Any cmask, inv,
	 * edge or other bit makes it a general-purpose event. */
	return config == 0x00c0 || config == 0x01c0 || config == 0x003c || config == 0x0300 ||
	       config == 0x0400;
}

int cs_preset_fixed_counter_free(uint32_t perf_type, uint64_t config, int watchdog)
{
	if (!cs_preset_fixed_counter(perf_type, config))
		return 0;
	if (!watchdog)
		return 1;
	/* The watchdog's event: perf's cycles, which the kernel maps to
	 * CPU_CLK_UNHALTED.THREAD (0x003c) on fixed counter 1. */
	return perf_type == TYPE_HARDWARE ? config != 0 : config != 0x003c;
}

unsigned cs_preset_watchdog_counters(unsigned limit, int num_fixed, int watchdog)
{
	return watchdog && num_fixed <= 0 && limit > 0 ? limit - 1 : limit;
}

unsigned cs_preset_counters(const struct cs_preset_family *f, int pfm_num_cntrs)
{
	if (f && f->counters)
		return f->counters;
	return pfm_num_cntrs > 0 ? (unsigned)pfm_num_cntrs : 0;
}

unsigned cs_preset_low_counter(const struct cs_preset_family *f, uint32_t perf_type,
			       uint64_t config)
{
	const uint8_t(*r)[2];
	unsigned code = (unsigned)(config & 0xff);

	if (!f || !f->low_codes || (perf_type != TYPE_RAW && perf_type < TYPE_MAX))
		return 0;
	if (cs_preset_fixed_counter(perf_type, config))
		return 0;
	for (r = f->low_codes; (*r)[0] || (*r)[1]; r++)
		if (code >= (*r)[0] && code <= (*r)[1])
			return f->low_counters;
	return 0;
}

static unsigned popcount(uint32_t m)
{
	return (unsigned)__builtin_popcount(m);
}

/* The counter limits of one split. */
struct budget {
	unsigned limit; /* events per run */
	uint32_t low; /* the events restricted to the first low_limit counters */
	unsigned low_limit;
};

static int fits(uint32_t run, const struct budget *b)
{
	return popcount(run) <= b->limit && popcount(run & b->low) <= b->low_limit;
}

/* Adds group g (which fits a run by itself) to the runs: nothing when a
 * run holds it already, else into the first run with room, else as a new
 * run.  Returns 0 or -1 when maxruns would be exceeded. */
static int place(uint32_t g, const struct budget *b, uint32_t *runs, unsigned *nruns,
		 unsigned maxruns)
{
	unsigned r;

	for (r = 0; r < *nruns; r++)
		if ((runs[r] & g) == g)
			return 0;
	for (r = 0; r < *nruns; r++) {
		if (fits(runs[r] | g, b)) {
			runs[r] |= g;
			return 0;
		}
	}
	if (*nruns >= maxruns)
		return -1;
	runs[(*nruns)++] = g;
	return 0;
}

unsigned cs_preset_split(const struct cs_preset_family *f, const char *const *names, unsigned n,
			 unsigned limit, uint32_t low, unsigned low_limit, uint32_t *runs,
			 unsigned maxruns)
{
	const struct budget b = {limit, low, low_limit};
	int pos[32]; /* family event -> index in names, -1 if absent */
	unsigned nruns = 0, i, j, size;
	uint32_t all = 0;

	if (limit == 0 || n > 32 || (low && low_limit == 0))
		return 0;
	for (i = 0; i < 32; i++)
		pos[i] = -1;
	for (i = 0; f && i < n; i++) {
		int e = cs_preset_event_find(f, names[i]);

		if (e >= 0 && e < 32 && pos[e] < 0)
			pos[e] = (int)i;
	}
	/* Whole formulas first, the biggest first: they are the hardest to
	 * place. */
	for (size = limit; f && size > 0; size--) {
		for (j = 0; j < f->nformulas; j++) {
			uint32_t in = cs_preset_formula_inputs(f, &f->formulas[j]), g = 0;
			int ok = in != 0;

			for (i = 0; i < 32 && ok; i++) {
				if (!(in & (1u << i)))
					continue;
				if (pos[i] < 0)
					ok = 0; /* an input not requested */
				else
					g |= 1u << pos[i];
			}
			if (!ok || popcount(g) != size || !fits(g, &b))
				continue;
			if (place(g, &b, runs, &nruns, maxruns) < 0)
				return 0;
		}
	}
	for (i = 0; i < n; i++)
		all |= 1u << i;
	for (i = 0; i < nruns; i++)
		all &= ~runs[i];
	for (i = 0; i < n; i++)
		if ((all & (1u << i)) && place(1u << i, &b, runs, &nruns, maxruns) < 0)
			return 0;
	return nruns;
}
