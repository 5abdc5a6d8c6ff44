/* SPDX-License-Identifier: MIT */
/* Writes the fixtures of the analyst's views: sort, filters, histograms,
 * cold/warm, binomial, derived columns and diffs, with known values. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/report/fixture.h"

/*
 * mkviews DIR writes into DIR:
 *
 * views.rpt   events tsc, perf::PAGE-FAULTS, perf::MINOR-FAULTS, cycles
 *             (could not be opened); values per call site, thread by
 *             thread, first call first:
 *
 *   alpha  app+0x100    tid 1  tsc 100 200 300 400   faults 0 1 1 2  minor 0 1 1 2
 *   alpha  libx.so+0x200 tid 1 tsc 1000 50 50 50     faults 5 0 0 0  minor 5 0 0 0
 *   alpha  libx.so+0x200 tid 2 tsc 900 60 60         faults 4 0 0    minor 4 0 0
 *   beta   liby.so+0x300 tid 1 tsc 10 20             faults 3 3      minor 0 0
 *   gamma  app+0x400    tid 1  tsc 7                 faults 0        minor 0
 *   delta  app+0x500    tid 1  tsc 64 ... 100000 (1,000 calls, see below)
 *                              faults 0 x10, 1 x5, 2 x3, 3 x2 (repeated)
 *
 * binom.rpt   events tsc, perf::PAGE-FAULTS, perf::MINOR-FAULTS: binom at
 *             app+0x10 with faults 0 0 1 1 1 1 1 3 (mean 1, variance 0.75:
 *             p = 0.25, n = 4) and minor faults 2 2 2 2 2 2 2 2 (p = 1,
 *             n = 2), tsc 100 each.
 *
 * diff_a.rpt, diff_b.rpt  two runs of one program (events tsc and
 *             perf::PAGE-FAULTS):
 *
 *   work     A: tsc 100 100 100 100 faults 2 2 2 2   B: tsc 80 80 80 80 faults 2 2 2 2
 *   slower   A: tsc 50 50                            B: tsc 75 75
 *   only_a   A: tsc 5                                B: -
 *   only_b   A: -                                    B: tsc 9
 *
 * diff_c.rpt  run B again, but recording perf::PAGE-FAULTS only (no tsc):
 *             work 4 calls of 2 faults.
 */

static char dir[4096];

static const char *out(const char *name)
{
	static char buf[4200];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

static void call(struct fx *f, size_t site, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t v[4] = {a, b, c, 0};

	fx_call(f, site, v);
}

static int views(void)
{
	static const struct fx_event ev[] = {
		{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
		{"perf::PAGE-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
		{"perf::MINOR-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
		{"cycles", CS_EVENT_PERF, CS_EVENT_FAILED},
	};
	static const uint64_t faults[20] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					    1, 1, 1, 1, 1, 2, 2, 2, 3, 3};
	struct fx *f = fx_new("/usr/bin/app", 900, 4, ev);
	uint32_t app, libx, liby, ta, tb, tg, td;
	uint64_t v;
	size_t s;
	int i, ret;

	app = fx_module(f, "/nonexistent/app", NULL, 0, 0x555555554000);
	libx = fx_module(f, "/nonexistent/libx.so", NULL, 0, 0x7ffff7000000);
	liby = fx_module(f, "/nonexistent/liby.so", NULL, 0, 0x7ffff6000000);
	ta = fx_target(f, "alpha", libx, 0, CS_HOOK_GOT);
	tb = fx_target(f, "beta", liby, 0, CS_HOOK_GOT);
	tg = fx_target(f, "gamma", app, 0, CS_HOOK_GOT);
	td = fx_target(f, "delta", app, 0, CS_HOOK_GOT);
	/* Threads 1 and 2 opened tsc and both fault events, not cycles. */
	fx_thread(f, 1, 0x7);
	fx_thread(f, 2, 0x7);

	s = fx_site(f, ta, 1, app, 0x100, CS_KEY_NONE);
	call(f, s, 100, 0, 0);
	call(f, s, 200, 1, 1);
	call(f, s, 300, 1, 1);
	call(f, s, 400, 2, 2);
	s = fx_site(f, ta, 1, libx, 0x200, CS_KEY_NONE);
	call(f, s, 1000, 5, 5);
	call(f, s, 50, 0, 0);
	call(f, s, 50, 0, 0);
	call(f, s, 50, 0, 0);
	s = fx_site(f, ta, 2, libx, 0x200, CS_KEY_NONE);
	call(f, s, 900, 4, 4);
	call(f, s, 60, 0, 0);
	call(f, s, 60, 0, 0);
	s = fx_site(f, tb, 1, liby, 0x300, CS_KEY_NONE);
	call(f, s, 10, 3, 0);
	call(f, s, 20, 3, 0);
	s = fx_site(f, tg, 1, app, 0x400, CS_KEY_NONE);
	call(f, s, 7, 0, 0);
	/* delta: 1,000 calls, tsc 64, 164, ... spread over 64..100,000
	 * (i * 100 + 64 for i < 1000), faults cycling through faults[]. */
	s = fx_site(f, td, 1, app, 0x500, CS_KEY_NONE);
	for (i = 0; i < 1000; i++) {
		v = 64 + (uint64_t)i * 100;
		call(f, s, v, faults[i % 20], faults[i % 20]);
	}
	ret = fx_write(f, out("views.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

static int binom(void)
{
	static const struct fx_event ev[] = {
		{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
		{"perf::PAGE-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
		{"perf::MINOR-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
	};
	static const uint64_t faults[8] = {0, 0, 1, 1, 1, 1, 1, 3};
	struct fx *f = fx_new("/usr/bin/app", 950, 3, ev);
	uint32_t m = fx_module(f, "/nonexistent/app", NULL, 0, 0x555555554000);
	size_t s = fx_site(f, fx_target(f, "binom", m, 0, CS_HOOK_GOT), 1, m, 0x10, CS_KEY_NONE);
	int i, ret;

	for (i = 0; i < 8; i++)
		call(f, s, 100, faults[i], 2);
	ret = fx_write(f, out("binom.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

static int diffs(void)
{
	static const struct fx_event ev[] = {
		{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
		{"perf::PAGE-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
	};
	struct fx *a = fx_new("/usr/bin/app", 1000, 2, ev);
	struct fx *b = fx_new("/usr/bin/app", 1001, 2, ev);
	struct fx *c;
	uint32_t ma, mb, mc;
	size_t s;
	int i, ret;

	ma = fx_module(a, "/nonexistent/app", NULL, 0, 0x555555554000);
	mb = fx_module(b, "/nonexistent/app", NULL, 0, 0x555555560000);
	s = fx_site(a, fx_target(a, "work", ma, 0, CS_HOOK_GOT), 1, ma, 0x10, CS_KEY_NONE);
	for (i = 0; i < 4; i++)
		call(a, s, 100, 2, 0);
	s = fx_site(b, fx_target(b, "work", mb, 0, CS_HOOK_GOT), 1, mb, 0x10, CS_KEY_NONE);
	for (i = 0; i < 4; i++)
		call(b, s, 80, 2, 0);
	s = fx_site(a, fx_target(a, "slower", ma, 0, CS_HOOK_GOT), 1, ma, 0x20, CS_KEY_NONE);
	call(a, s, 50, 0, 0);
	call(a, s, 50, 0, 0);
	s = fx_site(b, fx_target(b, "slower", mb, 0, CS_HOOK_GOT), 1, mb, 0x20, CS_KEY_NONE);
	call(b, s, 75, 0, 0);
	call(b, s, 75, 0, 0);
	s = fx_site(a, fx_target(a, "only_a", ma, 0, CS_HOOK_GOT), 1, ma, 0x30, CS_KEY_NONE);
	call(a, s, 5, 0, 0);
	s = fx_site(b, fx_target(b, "only_b", mb, 0, CS_HOOK_GOT), 1, mb, 0x40, CS_KEY_NONE);
	call(b, s, 9, 0, 0);
	ret = fx_write(a, out("diff_a.rpt"), 1, 0) | fx_write(b, out("diff_b.rpt"), 1, 0);
	fx_free(a);
	fx_free(b);
	if (ret)
		return ret;
	c = fx_new("/usr/bin/app", 1002, 1, ev + 1);
	mc = fx_module(c, "/nonexistent/app", NULL, 0, 0x555555570000);
	s = fx_site(c, fx_target(c, "work", mc, 0, CS_HOOK_GOT), 1, mc, 0x10, CS_KEY_NONE);
	for (i = 0; i < 4; i++)
		call(c, s, 2, 0, 0);
	ret = fx_write(c, out("diff_c.rpt"), 1, 0);
	fx_free(c);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: mkviews DIR\n", stderr);
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	return views() | binom() | diffs() ? 1 : 0;
}
