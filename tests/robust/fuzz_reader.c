/* SPDX-License-Identifier: MIT */
/* Fuzz target for the report reader: any bytes go in, and the reader must
 * either reject them or hand back a file whose every pointer is safe to
 * follow (report/internal.h promises that), without crashing, leaking or
 * reading out of bounds.  What it accepts is then merged and summarized
 * as `cacheshim report` would, so the merge and statistics code sees the
 * odd-but-valid files too.
 *
 * Built two ways (tests/robust/Makefile.inc): by clang as a libFuzzer
 * target with ASan and UBSan, and by the normal build with
 * fuzz_driver.c, which feeds it files one by one. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Touches every byte the reader vouched for, so that ASan sees a bad
 * pointer even when the merge below would not use it.  Returns a value
 * the compiler cannot drop. */
static uint64_t touch(const struct cs_file *f)
{
	uint64_t acc = f->hdr->nevents + f->used + f->end;
	size_t i;
	unsigned e;

	for (i = 0; i < f->nmodules; i++) {
		const struct cs_module_block *m = f->modules[i];

		acc += m->id + strlen(m->path) + m->build_id_len;
		if (m->build_id_len)
			acc += m->build_id[m->build_id_len - 1];
		acc += cs_reader_module(f, m->id) == m;
	}
	for (i = 0; i < f->ntargets; i++) {
		const struct cs_target_block *t = f->targets[i];

		acc += strlen(t->name) + t->addr + t->module;
		acc += cs_reader_target(f, t->id) == t;
	}
	for (i = 0; i < f->nthreads; i++)
		acc += f->threads[i]->tid + f->threads[i]->events_open;
	for (i = 0; i < f->nrefusals; i++) {
		const struct cs_refusal_block *rb = f->refusals[i];

		acc += strlen(rb->why) + rb->offset + cs_reader_target(f, rb->target)->id;
	}
	for (i = 0; i < f->nsites; i++) {
		const struct cs_site_block *s = f->sites[i];

		acc += s->calls + s->entered + s->dropped + s->offset;
		acc += cs_reader_target(f, s->target)->id;
		if (s->module)
			acc += cs_reader_module(f, s->module)->id;
		for (e = 0; e < s->nevents; e++) {
			acc += s->stat[e].sum + s->stat[e].hist[CS_HIST_BUCKETS - 1];
			acc += (uint64_t)cs_reader_event_usable(f, s, e);
		}
	}
	return acc;
}

/* Merges f twice (per call site and per function) and summarizes every
 * row.  Returns a value the compiler cannot drop. */
static uint64_t merge(const struct cs_file *f, enum cs_by by)
{
	struct cs_report *r = cs_merge_new(by);
	struct cs_summary sum;
	struct cs_row **rows;
	uint64_t acc = 0;
	size_t n, i, ev;
	struct cs_target_info **tv;
	char buf[CS_FUNCTION_MAX], reason[512];

	if (!r)
		return 0;
	if (cs_merge_add(r, f) == 0 && cs_merge_add(r, f) == 0) {
		rows = cs_merge_sorted(r, &n);
		for (i = 0; i < n; i++) {
			acc += strlen(cs_merge_function(rows[i], buf, sizeof(buf)));
			for (ev = 0; ev < r->nevents; ev++) {
				const struct cs_agg *a = cs_merge_agg(rows[i], ev);

				acc += (uint64_t)cs_merge_not_counted(r, ev);
				if (a && cs_stats_summarize(a, &sum) == 0)
					acc += sum.p50 + sum.p99 + sum.max + (uint64_t)sum.total;
			}
		}
		free(rows);
		tv = cs_merge_targets(r, &n);
		for (i = 0; i < n; i++) {
			acc += strlen(cs_targets_address(tv[i], buf, sizeof(buf)));
			acc += strlen(cs_targets_reason(tv[i], reason, sizeof(reason)));
			acc += strlen(cs_targets_how(tv[i])) + tv[i]->calls;
		}
		free(tv);
	}
	cs_merge_free(r);
	return acc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static volatile uint64_t sink;
	struct cs_file *f;
	char err[512];

	err[0] = '\0';
	if (cs_reader_parse(data, size, "fuzz", &f, err, sizeof(err)) != 0) {
		sink += strlen(err); /* the message must be a terminated string */
		return 0;
	}
	sink += touch(f);
	sink += merge(f, CS_BY_CALLSITE);
	sink += merge(f, CS_BY_FUNCTION);
	cs_reader_free(f);
	return 0;
}
