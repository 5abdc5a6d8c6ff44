/* SPDX-License-Identifier: MIT */
/* The JSON report: one document, described by docs/report.schema.json. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

/*
 * Rows are grouped by function (name, argument, size class): each
 * function carries its merged statistics and histogram per event, and its
 * call sites (one "*" entry with --by function).  Integers are printed
 * exactly, whatever their size: a reader in JavaScript sees doubles, which
 * is fine for charts.  Strings are escaped so that the document can sit
 * inside an HTML <script> element: '<', '>' and '&' become \u escapes, and
 * bytes that are not UTF-8 become \u00XX (their Latin-1 reading).
 */

static void jstr(FILE *out, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n;

	fputc('"', out);
	while (*p) {
		if (*p == '"' || *p == '\\') {
			fputc('\\', out);
			fputc(*p++, out);
		} else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&' || *p == 0x7f) {
			fprintf(out, "\\u%04x", *p++);
		} else if ((n = cs_util_utf8_len((const char *)p)) > 0) {
			fwrite(p, 1, (size_t)n, out);
			p += n;
		} else {
			fprintf(out, "\\u%04x", *p++);
		}
	}
	fputc('"', out);
}

static void jkey(FILE *out, const char *k)
{
	jstr(out, k);
	fputc(':', out);
}

/* ,"key":"name demangled" when name demangles (cs_demangle with cut) and
 * demangling is on: the raw name stays in its own member, for scripts. */
static void jdemangled(FILE *out, const char *k, const char *name, size_t cut, int raw_names)
{
	char *d = raw_names ? NULL : cs_demangle(name, cut);

	if (!d)
		return;
	fputc(',', out);
	jkey(out, k);
	jstr(out, d);
	free(d);
}

static void ju64(FILE *out, const char *k, uint64_t v)
{
	jkey(out, k);
	fprintf(out, "%llu", (unsigned long long)v);
}

static void ju128(FILE *out, const char *k, cs_u128 v)
{
	char b[48];

	jkey(out, k);
	fputs(cs_util_u128(v, b, sizeof(b)), out);
}

/* "key":["file_full",...]: the reasons set in why (CS_LOST_*). */
static void jlost(FILE *out, const char *key, uint64_t why)
{
	char buf[256], *p, *comma;

	jkey(out, key);
	fputc('[', out);
	cs_util_lost_why(why, 1, buf, sizeof(buf));
	for (p = buf; *p; p = comma + 1) {
		comma = strchr(p, ',');
		if (comma)
			*comma = '\0';
		fprintf(out, "%s\"%s\"", p == buf ? "" : ",", p);
		if (!comma)
			break;
	}
	fputc(']', out);
}

static void jdec(FILE *out, const char *k, long double v)
{
	char b[64];

	jkey(out, k);
	cs_util_decimal(v, b, sizeof(b));
	fputs(b[0] ? b : "null", out);
}

static void jstats(FILE *out, const struct cs_agg *a)
{
	struct cs_summary s;

	cs_stats_summarize(a, &s);
	fputc('{', out);
	ju64(out, "calls", s.n);
	fputc(',', out);
	ju128(out, "total", s.total);
	fputc(',', out);
	jdec(out, "mean", s.mean);
	fputc(',', out);
	jdec(out, "stddev", s.stddev);
	fputc(',', out);
	ju64(out, "min", s.min);
	fputc(',', out);
	ju64(out, "p50", s.p50);
	fputc(',', out);
	ju64(out, "p90", s.p90);
	fputc(',', out);
	ju64(out, "p99", s.p99);
	fputc(',', out);
	ju64(out, "max", s.max);
	fputc('}', out);
}

/* The non-empty buckets of a as [lo, hi, count], values as measured. */
static void jhist(FILE *out, const struct cs_agg *a)
{
	unsigned b;
	uint64_t lo, hi;
	int first = 1;

	jkey(out, "histogram");
	fputc('[', out);
	for (b = 0; b < CS_HIST_BUCKETS; b++) {
		if (!cs_stats_bucket(a, b))
			continue;
		lo = cs_hist_lower(b);
		hi = b == CS_HIST_BUCKETS - 1 && a->max > lo ? a->max : lo + cs_hist_width(b) - 1;
		fprintf(out, "%s[%llu,%llu,%llu]", first ? "" : ",", (unsigned long long)lo,
			(unsigned long long)hi, (unsigned long long)cs_stats_bucket(a, b));
		first = 0;
	}
	fputc(']', out);
}

/* Sums of the views of rows[0, n) for event ev: view[0] inclusive,
 * view[1] exclusive.  *nested is set when some row has a nested site. */
static void group_views(const struct cs_report *r, struct cs_row **rows, size_t n, size_t ev,
			struct cs_agg *view, int *nested)
{
	const struct cs_agg *a;
	size_t i;
	/* What went wrong in an earlier group stays, for the caller to see
	 * at the end. */
	int x, nomem = view[0].nomem || view[1].nomem,
	       overflow = view[0].overflow || view[1].overflow;

	cs_stats_fini(&view[0]);
	cs_stats_fini(&view[1]);
	view[0].nomem = nomem;
	view[0].overflow = overflow;
	*nested = 0;
	for (i = 0; i < n; i++) {
		if (rows[i]->other)
			*nested = 1;
		for (x = 0; x < 2; x++) {
			a = cs_merge_view(r, rows[i], ev, x);
			if (a)
				cs_stats_merge(&view[x], a);
		}
	}
}

/* One event of a function (hist: with its histogram) or of a call site. */
static void jevent(FILE *out, const struct cs_report *r, struct cs_row **rows, size_t n, size_t ev,
		   int hist, struct cs_agg *view)
{
	int nested;
	const struct cs_agg *shown;

	fputc('{', out);
	ju64(out, "event", ev);
	fputc(',', out);
	jkey(out, "status");
	if (cs_merge_not_counted(r, ev)) {
		fputs("\"not counted\"}", out);
		return;
	}
	group_views(r, rows, n, ev, view, &nested);
	shown = &view[r->self ? 1 : 0];
	if (shown->n == 0) {
		fputs("\"no data\"}", out);
		return;
	}
	fputs("\"ok\",", out);
	jkey(out, "stats");
	jstats(out, shown);
	if (nested) {
		fputc(',', out);
		jkey(out, "inclusive");
		jstats(out, &view[0]);
		fputc(',', out);
		jkey(out, "exclusive");
		jstats(out, &view[1]);
	}
	if (hist) {
		fputc(',', out);
		jhist(out, shown);
	}
	fputc('}', out);
}

static void jfunction(FILE *out, const struct cs_report *r, struct cs_symbols *syms,
		      struct cs_row **rows, size_t n, struct cs_agg *view, int raw_names)
{
	char fn[CS_FUNCTION_MAX], cs[4096], mod[4096], kc[48];
	cs_u128 calls = 0, entered = 0, dropped = 0;
	size_t i, ev;

	for (i = 0; i < n; i++) {
		calls += rows[i]->calls;
		entered += rows[i]->entered;
		dropped += rows[i]->dropped;
	}
	fputc('{', out);
	jkey(out, "function");
	jstr(out, cs_merge_function(rows[0], fn, sizeof(fn)));
	jdemangled(out, "function_demangled", fn, CS_DEMANGLE_CUT, raw_names);
	fputc(',', out);
	jkey(out, "target");
	jstr(out, rows[0]->k.name);
	fputc(',', out);
	ju64(out, "argn", rows[0]->k.argn);
	fputc(',', out);
	jkey(out, "key");
	if (rows[0]->k.key == CS_KEY_NONE) {
		fputs("null,", out);
		jkey(out, "key_class");
		fputs("null", out);
	} else {
		fprintf(out, "%llu,", (unsigned long long)rows[0]->k.key);
		jkey(out, "key_class");
		jstr(out, cs_util_key_class(rows[0]->k.key, kc, sizeof(kc)));
	}
	fputc(',', out);
	ju128(out, "calls", calls);
	fputc(',', out);
	ju128(out, "entered", entered);
	fputc(',', out);
	ju128(out, "dropped", dropped);
	fputs(",\"events\":[", out);
	for (ev = 0; ev < r->nevents; ev++) {
		if (ev)
			fputc(',', out);
		jevent(out, r, rows, n, ev, 1, view);
	}
	fputs("],\"callsites\":[", out);
	for (i = 0; i < n; i++) {
		cs_output_callsite(r, rows[i], syms, cs, sizeof(cs), mod, sizeof(mod));
		fputs(i ? ",{" : "{", out);
		jkey(out, "callsite");
		jstr(out, cs);
		jdemangled(out, "callsite_demangled", cs, 0, raw_names);
		fputc(',', out);
		jkey(out, "module");
		jstr(out, mod);
		fputc(',', out);
		ju128(out, "calls", rows[i]->calls);
		fputc(',', out);
		ju128(out, "entered", rows[i]->entered);
		fputc(',', out);
		ju128(out, "dropped", rows[i]->dropped);
		fputs(",\"events\":[", out);
		for (ev = 0; ev < r->nevents; ev++) {
			if (ev)
				fputc(',', out);
			jevent(out, r, rows + i, 1, ev, 0, view);
		}
		fputs("]}", out);
	}
	fputs("]}", out);
}

static int same_function(const struct cs_row *a, const struct cs_row *b)
{
	return strcmp(a->k.name, b->k.name) == 0 && a->k.tmodule == b->k.tmodule &&
	       a->k.toff == b->k.toff && a->k.argn == b->k.argn && a->k.key == b->k.key;
}

/* The shim's notes, first seen first, with how many files hold each. */
static void jnotes(FILE *out, const struct cs_report *r)
{
	struct cs_note_info **v;
	size_t i, n;

	v = cs_merge_notes(r, &n);
	for (i = 0; i < n; i++) {
		fputs(i ? ",{" : "{", out);
		jkey(out, "text");
		jstr(out, v[i]->text);
		fputc(',', out);
		ju64(out, "files", v[i]->nfiles);
		fputc('}', out);
	}
	free(v);
}

static void jheader(FILE *out, const struct cs_report *r)
{
	const struct cs_agg *c;
	uint64_t nested;
	size_t i;

	fputs("{\"format\":\"cacheshim-report\",\"version\":1,", out);
	jkey(out, "by");
	jstr(out, r->by == CS_BY_FUNCTION ? "function" : "callsite");
	fputc(',', out);
	jkey(out, "view");
	jstr(out, r->self ? "exclusive" : "inclusive");
	fprintf(out, ",\"overhead_subtracted\":%s,\"files\":[",
		r->subtract_overhead ? "true" : "false");
	for (i = 0; i < r->nfiles; i++) {
		const struct cs_file_info *fi = &r->files[i];

		fputs(i ? ",{" : "{", out);
		jkey(out, "path");
		jstr(out, fi->path);
		fputc(',', out);
		jkey(out, "program");
		jstr(out, fi->program);
		fputc(',', out);
		ju64(out, "pid", fi->pid);
		fprintf(out, ",\"incomplete\":%s,", fi->incomplete ? "true" : "false");
		ju64(out, "lost_calls", fi->lost_calls);
		fputc(',', out);
		jlost(out, "lost_why", fi->lost_why);
		fputc(',', out);
		ju64(out, "tsc_hz", fi->tsc_hz);
		fputc(',', out);
		ju64(out, "session", fi->session);
		fputc(',', out);
		ju128(out, "setup_ticks", fi->setup_ticks);
		fputc('}', out);
	}
	fputs("],\"events\":[", out);
	for (i = 0; i < r->nevents; i++) {
		fputs(i ? ",{" : "{", out);
		jkey(out, "name");
		jstr(out, r->events[i].name);
		fputc(',', out);
		jkey(out, "kind");
		jstr(out, r->events[i].kind == CS_EVENT_TSC    ? "tsc"
			  : r->events[i].kind == CS_EVENT_PERF ? "perf"
							       : "other");
		fprintf(out, ",\"counted\":%s,", cs_merge_not_counted(r, i) ? "false" : "true");
		jkey(out, "overhead");
		c = cs_merge_calibration(r, i);
		if (c && !cs_merge_not_counted(r, i))
			fprintf(out, "%llu", (unsigned long long)cs_stats_percentile(c, 0.5));
		else
			fputs("null", out);
		fputc(',', out);
		jkey(out, "nested_overhead");
		if (!cs_merge_not_counted(r, i) && cs_merge_nested_overhead(r, i, &nested))
			fprintf(out, "%llu", (unsigned long long)nested);
		else
			fputs("null", out);
		fputc('}', out);
	}
	fputs("],\"totals\":{", out);
	ju128(out, "calls", r->calls);
	fputc(',', out);
	ju128(out, "entered", r->entered);
	fputc(',', out);
	ju128(out, "dropped", r->dropped);
	fputc(',', out);
	ju128(out, "not_returned", r->not_returned);
	fputc(',', out);
	ju128(out, "lost_calls", r->lost_calls);
	fputc(',', out);
	jlost(out, "lost_why", r->lost_why);
	fputc(',', out);
	ju128(out, "setup_ticks", r->setup_ticks);
	fputs("},\"notes\":[", out);
	jnotes(out, r);
	fputc(']', out);
}

static int jseries(FILE *out, const struct cs_report *r, int raw_names)
{
	struct cs_series_line *lines;
	size_t n, i, k;
	int ret;

	ret = cs_series_lines(r, &lines, &n);
	if (ret)
		return ret;
	fputs(",\"series\":[", out);
	for (i = 0; i < n; i++) {
		const struct cs_series_line *l = &lines[i];

		fputs(i ? ",{" : "{", out);
		jkey(out, "target");
		jstr(out, l->target);
		jdemangled(out, "target_demangled", l->target, CS_DEMANGLE_CUT, raw_names);
		fputc(',', out);
		ju64(out, "event", l->event);
		fputc(',', out);
		jkey(out, "tid");
		if (l->tid)
			fprintf(out, "%u,\"pid\":%u,", l->tid, l->pid);
		else
			fputs("null,\"pid\":null,", out);
		ju64(out, "shift", l->shift);
		fputc(',', out);
		ju64(out, "skipped", l->skipped);
		fputs(",\"windows\":[", out);
		for (k = 0; k < l->npoints; k++) {
			const struct cs_series_point *p = &l->points[k];

			fputs(k ? ",{" : "{", out);
			ju64(out, "first_call", p->first_call);
			fputc(',', out);
			ju64(out, "last_call", p->last_call);
			fputc(',', out);
			ju64(out, "calls", p->calls);
			fputc(',', out);
			jdec(out, "mean", p->mean);
			fputc(',', out);
			ju64(out, "p50", p->p50);
			fputc(',', out);
			ju64(out, "p99", p->p99);
			fputc(',', out);
			ju64(out, "min", p->min);
			fputc(',', out);
			ju64(out, "max", p->max);
			fputc(',', out);
			ju64(out, "first_tsc", p->first_tsc);
			fputc('}', out);
		}
		fputs("]}", out);
	}
	fputc(']', out);
	cs_series_lines_free(lines, n);
	return 0;
}

/* The targets that --function lists, one object each.  Returns 0 or
 * -ENOMEM. */
static int jtargets(FILE *out, const struct cs_report *r, int raw_names)
{
	struct cs_target_info **v;
	char buf[CS_FUNCTION_MAX];
	size_t n, i, j, k;

	v = cs_merge_targets(r, &n);
	if (r->ntargets && !v)
		return -ENOMEM;
	fputs(",\"targets\":[", out);
	for (i = 0, j = 0; i < n; i++) {
		const struct cs_target_info *t = v[i];

		if (!cs_targets_listed(r, t))
			continue;
		fputs(j++ ? ",{" : "{", out);
		jkey(out, "function");
		jstr(out, t->k.name);
		jdemangled(out, "function_demangled", t->k.name, CS_DEMANGLE_CUT, raw_names);
		fputc(',', out);
		jkey(out, "module");
		if (t->mod)
			jstr(out, t->mod->path);
		else
			fputs("null", out);
		fputc(',', out);
		jkey(out, "address");
		jstr(out, cs_targets_address(t, buf, sizeof(buf)));
		fputc(',', out);
		jkey(out, "how");
		jstr(out, cs_targets_how(t));
		fputc(',', out);
		ju64(out, "got_slots", t->got_slots);
		fputc(',', out);
		ju64(out, "data_words", t->data_words);
		fprintf(out, ",\"hidden\":%s,", t->how & CS_HOOK_HIDDEN ? "true" : "false");
		ju128(out, "calls", t->calls);
		fputs(",\"refusals\":[", out);
		for (k = 0; k < t->nrefusals; k++) {
			fputs(k ? ",{" : "{", out);
			jkey(out, "why");
			jstr(out, t->refusals[k].why);
			fputc(',', out);
			ju64(out, "offset", t->refusals[k].offset);
			fputc('}', out);
		}
		fputs("]}", out);
	}
	fputc(']', out);
	free(v);
	return 0;
}

int cs_json_print(FILE *out, const struct cs_report *r, struct cs_symbols *syms,
		  const struct cs_output_opts *o)
{
	struct cs_row **rows;
	struct cs_agg *view;
	size_t n, i, j;
	int ret;

	view = malloc(2 * sizeof(*view));
	if (!view)
		return -ENOMEM;
	cs_stats_init(&view[0]);
	cs_stats_init(&view[1]);
	rows = cs_merge_sorted(r, &n);
	if (r->nrows && !rows) {
		free(view);
		return -ENOMEM;
	}
	jheader(out, r);
	fputs(",\"functions\":[", out);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && same_function(rows[i], rows[j]); j++)
			;
		if (i)
			fputc(',', out);
		jfunction(out, r, syms, rows + i, j - i, view, o->raw_names);
	}
	fputc(']', out);
	ret = jtargets(out, r, o->raw_names);
	if (!ret)
		ret = jseries(out, r, o->raw_names);
	fputs("}\n", out);
	free(rows);
	if (view[0].nomem || view[1].nomem)
		ret = -ENOMEM;
	else if (view[0].overflow || view[1].overflow)
		ret = -EOVERFLOW;
	cs_stats_fini(&view[0]);
	cs_stats_fini(&view[1]);
	free(view);
	if (ret)
		return ret;
	return cs_util_flushed(out);
}
