/* SPDX-License-Identifier: MIT */
/* Writes a large report file for `make bench`: many call sites, 4 events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/report/fixture.h"

/*
 * mkbench FILE [SITES [CALLS]]
 *
 * SITES call sites (default 100000), one thread, 64 targets, spread over
 * 16 modules (nonexistent paths, so symbolization falls back to
 * module+offset at once and the time measured is the report's own), each
 * with CALLS measured calls (default 16) of 4 events with plausible
 * values: tsc spread over three decades, page faults 0..3, minor faults
 * equal to them, context switches mostly 0.  The values come from a fixed
 * pseudo-random sequence: every run writes the same file.
 */

static const struct fx_event events[] = {
	{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
	{"perf::PAGE-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
	{"perf::MINOR-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
	{"perf::CONTEXT-SWITCHES", CS_EVENT_PERF, CS_EVENT_COUNTED},
};

#define NTARGETS 64
#define NMODULES 16

static uint64_t state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 0x2545f4914f6cdd1dull;
}

/* fx_call with its values added directly: fx_value counts the histogram
 * to find the first value, which for 6 million values takes long. */
static void add_call(struct fx *f, size_t site, const uint64_t *v, int first)
{
	struct cs_site_block *s = fx_at(f, site);
	unsigned __int128 acc;
	unsigned i;

	s->calls++;
	s->entered++;
	for (i = 0; i < 4; i++) {
		struct cs_stat *st = &s->stat[i];

		if (first) {
			st->min = st->max = st->first = v[i];
		} else {
			if (v[i] < st->min)
				st->min = v[i];
			if (v[i] > st->max)
				st->max = v[i];
		}
		st->sum += v[i];
		acc = ((unsigned __int128)st->sumsq_hi << 64 | st->sumsq_lo) +
		      (unsigned __int128)v[i] * v[i];
		st->sumsq_lo = (uint64_t)acc;
		st->sumsq_hi = (uint64_t)(acc >> 64);
		st->hist[cs_hist_index(v[i])]++;
	}
}

int main(int argc, char **argv)
{
	uint32_t mod[NMODULES], tgt[NTARGETS];
	unsigned long sites = 100000, calls = 16, i, c;
	char name[64];
	uint64_t v[4];
	struct fx *f;
	size_t s;
	int ret;

	if (argc < 2 || argc > 4) {
		fputs("usage: mkbench FILE [SITES [CALLS]]\n", stderr);
		return 2;
	}
	if (argc > 2)
		sites = strtoul(argv[2], NULL, 10);
	if (argc > 3)
		calls = strtoul(argv[3], NULL, 10);
	f = fx_new("/usr/bin/bench", 4242, 4, events);
	if (!f)
		return 1;
	for (i = 0; i < NMODULES; i++) {
		snprintf(name, sizeof(name), "/nonexistent/libbench%lu.so", i);
		mod[i] = fx_module(f, name, NULL, 0, 0x7f0000000000ull + (i << 24));
	}
	for (i = 0; i < NTARGETS; i++) {
		snprintf(name, sizeof(name), "bench_fn_%02lu", i);
		tgt[i] = fx_target(f, name, mod[i % NMODULES], 0, CS_HOOK_GOT);
	}
	fx_thread(f, 4242, 0xf);
	for (i = 0; i < sites; i++) {
		/* Distinct (module, offset) per site: no two sites merge. */
		s = fx_site(f, tgt[rnd() % NTARGETS], 4242, mod[i % NMODULES],
			    0x1000 + 16 * (i / NMODULES), CS_KEY_NONE);
		for (c = 0; c < calls; c++) {
			v[0] = 100 + (rnd() % 1000) * (1 + rnd() % 100);
			v[1] = rnd() % 4;
			v[2] = v[1];
			v[3] = rnd() % 16 == 0;
			add_call(f, s, v, c == 0);
		}
	}
	ret = fx_write(f, argv[1], 1, 0);
	fx_free(f);
	return ret ? 1 : 0;
}
