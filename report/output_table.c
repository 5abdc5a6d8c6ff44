/* SPDX-License-Identifier: MIT */
/* The human-readable report: a summary, then one aligned table per event. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

#define MAX_NAME_COLUMN 60 /* longer names are cut, marked with "..." */
#define MAX_PIDS_SHOWN 8

void cs_output_callsite(const struct cs_report *r, const struct cs_row *row,
			struct cs_symbols *syms, char *cs, size_t cslen, char *mod, size_t modlen)
{
	const struct cs_module_info *m;

	if (r->by == CS_BY_FUNCTION) {
		snprintf(cs, cslen, "*");
		snprintf(mod, modlen, "*");
		return;
	}
	if (row->k.module == 0 && row->k.offset == 0) {
		/* Call site 0: the shim's overflow row (CACHESHIM_MAX_SITES). */
		snprintf(cs, cslen, "[overflow]");
		snprintf(mod, modlen, "*");
		return;
	}
	if (row->k.module == 0 || row->k.module > r->nmodules) {
		snprintf(cs, cslen, "0x%llx", (unsigned long long)row->k.offset);
		snprintf(mod, modlen, "?");
		return;
	}
	m = r->modules[row->k.module - 1];
	cs_symbols_callsite(syms, m->path, m->build_id, m->build_id_len, row->k.offset, cs, cslen);
	snprintf(mod, modlen, "%s", cs_util_basename(m->path));
}

static void event_list(FILE *out, const struct cs_report *r)
{
	size_t i;

	for (i = 0; i < r->nevents; i++)
		fprintf(out, "%s%s%s", i ? ", " : "", r->events[i].name,
			cs_merge_not_counted(r, i) ? " (not counted)" : "");
	if (r->nevents == 0)
		fputs("none", out);
}

void cs_table_summary(FILE *out, const struct cs_report *r)
{
	size_t i, j, shown = 0;
	char b1[48], b2[48];

	/* Distinct programs, in file order. */
	fputs("program:  ", out);
	for (i = 0; i < r->nfiles; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(r->files[j].program, r->files[i].program) == 0)
				break;
		if (j < i)
			continue;
		fprintf(out, "%s%s", shown++ ? ", " : "",
			r->files[i].program[0] ? r->files[i].program : "?");
	}
	fprintf(out, "\n%s ", r->nfiles == 1 ? "pid:     " : "pids:    ");
	for (i = 0; i < r->nfiles && i < MAX_PIDS_SHOWN; i++)
		fprintf(out, "%s%u", i ? ", " : "", r->files[i].pid);
	if (r->nfiles > MAX_PIDS_SHOWN)
		fprintf(out, " and %zu more", r->nfiles - MAX_PIDS_SHOWN);
	fprintf(out, "\nfiles:    %zu\nevents:   ", r->nfiles);
	event_list(out, r);
	fprintf(out, "\ncalls:    %s measured", cs_util_u128(r->calls, b1, sizeof(b1)));
	if (r->dropped)
		fprintf(out, ", %s dropped (unusable reading)",
			cs_util_u128(r->dropped, b2, sizeof(b2)));
	fputc('\n', out);
	if (r->not_returned)
		fprintf(out, "calls that did not return: %s\n",
			cs_util_u128(r->not_returned, b1, sizeof(b1)));
	if (r->lost_calls)
		fprintf(out, "calls not recorded (file full or re-entry): %s\n",
			cs_util_u128(r->lost_calls, b1, sizeof(b1)));
	/* What wrapping an empty function reads: the floor under every
	 * number below. */
	for (i = 0, shown = 0; i < r->nevents; i++) {
		const struct cs_agg *c = cs_merge_calibration(r, i);

		if (!c || cs_merge_not_counted(r, i))
			continue;
		fprintf(out, "%s%s %s", shown++ ? ", " : "overhead: ", r->events[i].name,
			cs_util_human((long double)cs_stats_percentile(c, 0.5), b1, sizeof(b1)));
	}
	if (shown)
		fprintf(out, " (median per call around an empty function%s)\n",
			r->subtract_overhead ? ", subtracted below" : "");
}

enum col {
	C_FUNCTION,
	C_CALLSITE,
	C_MODULE,
	C_CALLS,
	C_MEAN,
	C_STDDEV,
	C_MIN,
	C_P50,
	C_P90,
	C_P99,
	C_MAX,
	C_TOTAL,
	NCOLS
};

static const char *const col_names[NCOLS] = {
	"function", "callsite", "module", "calls", "mean", "stddev",
	"min",	    "p50",	"p90",	  "p99",   "max",  "total",
};

#define CELL 80

struct line {
	const struct cs_row *row;
	const struct cs_agg *agg;
	cs_u128 total;
	size_t order; /* position in the sorted rows */
	char cell[NCOLS][CELL];
};

static int cmp_lines(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	/* Biggest total first; the sorted row order breaks ties. */
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void cut(char *s, int truncate)
{
	if (truncate && strlen(s) > MAX_NAME_COLUMN)
		memcpy(s + MAX_NAME_COLUMN - 3, "...", 4);
}

static void fill_line(struct line *l, const struct cs_report *r, struct cs_symbols *syms,
		      const struct cs_output_opts *o)
{
	struct cs_summary s;
	unsigned c;

	cs_merge_function(l->row, l->cell[C_FUNCTION], CELL);
	cs_output_callsite(r, l->row, syms, l->cell[C_CALLSITE], CELL, l->cell[C_MODULE], CELL);
	cut(l->cell[C_FUNCTION], o->truncate);
	cut(l->cell[C_CALLSITE], o->truncate);
	cut(l->cell[C_MODULE], o->truncate);
	if (!l->agg) {
		snprintf(l->cell[C_CALLS], CELL, "0");
		for (c = C_MEAN; c < NCOLS; c++)
			snprintf(l->cell[c], CELL, "-");
		return;
	}
	cs_stats_summarize(l->agg, &s);
	cs_util_human((long double)s.n, l->cell[C_CALLS], CELL);
	cs_util_human(s.mean, l->cell[C_MEAN], CELL);
	cs_util_human(s.stddev, l->cell[C_STDDEV], CELL);
	cs_util_human((long double)s.min, l->cell[C_MIN], CELL);
	cs_util_human((long double)s.p50, l->cell[C_P50], CELL);
	cs_util_human((long double)s.p90, l->cell[C_P90], CELL);
	cs_util_human((long double)s.p99, l->cell[C_P99], CELL);
	cs_util_human((long double)s.max, l->cell[C_MAX], CELL);
	cs_util_human((long double)s.total, l->cell[C_TOTAL], CELL);
}

static void event_title(FILE *out, const struct cs_report *r, size_t ev)
{
	const struct cs_event_info *e = &r->events[ev];
	uint64_t hz = 0;
	size_t i;

	fprintf(out, "%s", e->name);
	if (e->kind == CS_EVENT_TSC) {
		for (i = 0; i < r->nfiles && !hz; i++)
			hz = r->files[i].tsc_hz;
		if (hz)
			fprintf(out, " (TSC ticks, %.3f GHz: 1 tick = %.3f ns)", hz / 1e9,
				1e9 / hz);
		else
			fprintf(out, " (TSC ticks)");
	}
	fputc('\n', out);
}

static void print_table(FILE *out, struct line *lines, size_t n, int by_fn)
{
	size_t w[NCOLS], i, len;
	unsigned c;
	int first;

	for (c = 0; c < NCOLS; c++)
		w[c] = strlen(col_names[c]);
	for (i = 0; i < n; i++)
		for (c = 0; c < NCOLS; c++) {
			len = strlen(lines[i].cell[c]);
			if (len > w[c])
				w[c] = len;
		}
	for (i = 0; i <= n; i++) {
		first = 1;
		fputs("  ", out);
		for (c = 0; c < NCOLS; c++) {
			const char *v = i ? lines[i - 1].cell[c] : col_names[c];
			int text = c <= C_MODULE;

			if (by_fn && (c == C_CALLSITE || c == C_MODULE))
				continue;
			/* Text columns left-aligned, numbers right-aligned. */
			if (!first)
				fputs("  ", out);
			if (text)
				fprintf(out, "%-*s", (int)w[c], v);
			else
				fprintf(out, "%*s", (int)w[c], v);
			first = 0;
		}
		fputc('\n', out);
	}
}

int cs_table_print(FILE *out, const struct cs_report *r, struct cs_symbols *syms,
		   const struct cs_output_opts *o)
{
	struct cs_row **rows;
	struct line *lines = NULL;
	size_t nrows, ev, i;

	if (o->summary) {
		cs_table_summary(out, r);
		fputc('\n', out);
	}
	rows = cs_merge_sorted(r, &nrows);
	if (r->nrows && !rows)
		return -ENOMEM;
	if (nrows) {
		lines = calloc(nrows, sizeof(*lines));
		if (!lines) {
			free(rows);
			return -ENOMEM;
		}
	}
	for (ev = 0; ev < r->nevents; ev++) {
		if (ev)
			fputc('\n', out);
		event_title(out, r, ev);
		if (cs_merge_not_counted(r, ev)) {
			fputs("  not counted (the event could not be opened)\n", out);
			continue;
		}
		if (nrows == 0) {
			fputs("  no calls recorded\n", out);
			continue;
		}
		for (i = 0; i < nrows; i++) {
			memset(&lines[i], 0, sizeof(lines[i]));
			lines[i].row = rows[i];
			lines[i].order = i;
			lines[i].agg = cs_merge_agg(rows[i], ev);
			lines[i].total = lines[i].agg ? lines[i].agg->sum : 0;
			fill_line(&lines[i], r, syms, o);
		}
		qsort(lines, nrows, sizeof(*lines), cmp_lines);
		print_table(out, lines, nrows, r->by == CS_BY_FUNCTION);
	}
	if (r->nevents == 0)
		fputs("no events recorded\n", out);
	free(lines);
	free(rows);
	fflush(out);
	return ferror(out) ? -EIO : 0;
}
