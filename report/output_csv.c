/* SPDX-License-Identifier: MIT */
/* The CSV report (RFC 4180): the format scripts rely on. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

/* The first 13 columns are a contract: never reorder or rename them.
 * New columns go at the end. */
static const char header[] = "function,callsite,module,event,calls,total,mean,stddev,min,p50,p90,"
			     "p99,max,entered,dropped,status,key";

void cs_csv_field(FILE *out, const char *field)
{
	const char *p;

	if (!strpbrk(field, ",\"\r\n")) {
		fputs(field, out);
		return;
	}
	fputc('"', out);
	for (p = field; *p; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

/* ",v": fprintf was a sixth of a large CSV's time.  128 bits: entered
 * and dropped are sums over files. */
static void num(FILE *out, cs_u128 v)
{
	char tmp[48];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	tmp[--i] = ',';
	fwrite_unlocked(tmp + i, 1, sizeof(tmp) - i, out);
}

/* ",s" */
static void field(FILE *out, const char *s)
{
	putc_unlocked(',', out);
	fputs_unlocked(s, out);
}

/* The columns after status: the size class, and with --nested the
 * inclusive and exclusive means. */
static void row_tail(FILE *out, const struct cs_report *r, const struct cs_row *row, size_t ev,
		     const struct cs_output_opts *o)
{
	const struct cs_agg *a;
	struct cs_summary s;
	char buf[64];
	int x;

	field(out, cs_util_key_class(row->k.key, buf, sizeof(buf)));
	for (x = 0; o->nested && x < 2; x++) {
		a = cs_merge_not_counted(r, ev) ? NULL : cs_merge_view(r, row, ev, x);
		if (a && cs_stats_summarize(a, &s) == 0)
			fprintf(out, ",%s", cs_util_decimal(s.mean, buf, sizeof(buf)));
		else
			fputc(',', out);
	}
}

/* The extra columns of --binomial and --cold, per event. */
static const int bin_cols[] = {CS_COL_BIN_N, CS_COL_BIN_P};
static const int cold_cols[] = {
	CS_COL_COLD_N,	   CS_COL_COLD_MEAN, CS_COL_COLD_MIN,	 CS_COL_COLD_MAX, CS_COL_WARM_N,
	CS_COL_WARM_TOTAL, CS_COL_WARM_MEAN, CS_COL_WARM_STDDEV, CS_COL_WARM_MIN, CS_COL_WARM_P50,
	CS_COL_WARM_P90,   CS_COL_WARM_P99,  CS_COL_WARM_MAX};

#define NCOLD (sizeof(cold_cols) / sizeof(cold_cols[0]))

/* The names of the columns after the first ones: source, then those of
 * --binomial, --cold and --derive. */
static void extras_header(FILE *out, const struct cs_output_opts *o)
{
	size_t i;

	fputs(",source", out);
	for (i = 0; o->binomial && i < 2; i++)
		fprintf(out, ",%s", cs_view_column_name(bin_cols[i], o));
	for (i = 0; o->cold && i < NCOLD; i++)
		fprintf(out, ",%s", cs_view_column_name(cold_cols[i], o));
	for (i = 0; i < o->nderive; i++) {
		fputc(',', out);
		cs_csv_field(out, o->derive[i].name);
	}
	if (o->subtract)
		fputs(",raw_mean,overhead", out);
}

void cs_csv_extras_blank(FILE *out, const struct cs_output_opts *o)
{
	size_t i, n = 1 + (o->binomial ? 2 : 0) + (o->cold ? NCOLD : 0) + o->nderive +
		      (o->subtract ? 2 : 0);

	for (i = 0; i < n; i++)
		fputc(',', out);
}

/* --subtract-overhead: the mean as measured and the overhead taken off
 * per call (empty when nothing was counted or there are no values). */
static void raw_tail(FILE *out, const struct cs_row *row, size_t ev, int counted)
{
	const struct cs_agg *a = counted ? cs_merge_agg(row, ev) : NULL;
	char buf[64];

	if (!a || a->n == 0) {
		fputs(",,", out);
		return;
	}
	fprintf(out, ",%s", cs_util_decimal(cs_stats_raw_mean(a), buf, sizeof(buf)));
	fprintf(out, ",%s", cs_util_decimal(cs_stats_overhead(a), buf, sizeof(buf)));
}

/* The extra columns of row i for event ev. */
static void extras(FILE *out, struct cs_view *v, size_t i, size_t ev,
		   const struct cs_output_opts *o, int counted)
{
	char buf[128];
	size_t k;

	putc_unlocked(',', out);
	cs_csv_field(out, cs_view_text(v, i, CS_COL_SOURCE));
	for (k = 0; o->binomial && k < 2; k++)
		fprintf(out, ",%s",
			counted ? cs_view_format_csv(v, i, ev, bin_cols[k], buf, sizeof(buf)) : "");
	for (k = 0; o->cold && k < NCOLD; k++)
		fprintf(out, ",%s",
			counted ? cs_view_format_csv(v, i, ev, cold_cols[k], buf, sizeof(buf))
				: "");
	for (k = 0; k < o->nderive; k++)
		fprintf(out, ",%s",
			cs_view_format_csv(v, i, ev, CS_COL_DERIVED + (int)k, buf, sizeof(buf)));
	if (o->subtract)
		raw_tail(out, cs_view_row(v, i), ev, counted);
}

/* The columns up to status of event ev of row, whose summary is s (NULL:
 * no values). */
static void row_event(FILE *out, const struct cs_report *r, const struct cs_row *row, size_t ev,
		      const char *fn, const char *cs, const char *mod, const struct cs_summary *s)
{
	char buf[64];

	cs_csv_field(out, fn);
	fputc(',', out);
	cs_csv_field(out, cs);
	fputc(',', out);
	cs_csv_field(out, mod);
	fputc(',', out);
	cs_csv_field(out, r->events[ev].name);
	if (cs_merge_not_counted(r, ev)) {
		/* calls..max, entered, dropped: no number means nothing
		 * was measured, which a 0 would hide. */
		fputs(",,,,,,,,,,,,not counted", out);
		return;
	}
	if (!s) {
		fputs(",0,0,,,,,,,", out); /* mean..max empty */
		num(out, row->entered);
		num(out, row->dropped);
		fputs(",no data", out);
		return;
	}
	num(out, s->n);
	field(out, cs_util_u128(s->total, buf, sizeof(buf)));
	field(out, cs_util_decimal(s->mean, buf, sizeof(buf)));
	field(out, cs_util_decimal(s->stddev, buf, sizeof(buf)));
	num(out, s->min);
	num(out, s->p50);
	num(out, s->p90);
	num(out, s->p99);
	num(out, s->max);
	num(out, row->entered);
	num(out, row->dropped);
	fputs(",ok", out);
}

int cs_csv_print(FILE *out, const struct cs_report *r, struct cs_symbols *syms,
		 const struct cs_output_opts *o)
{
	struct cs_output_opts raw;
	const char *fn, *cs, *mod;
	const struct cs_row *row;
	struct cs_formula *d;
	struct cs_view *v;
	const size_t *evs;
	size_t n, i, k, nd, nev, *order;

	/* Names as the file and the symbol tables have them, whatever
	 * --no-demangle says: scripts match them (docs/report-format.md). */
	raw = *o;
	raw.raw_names = 1;
	o = &raw;
	if (cs_formulas_find(r, &d, &nd))
		return -ENOMEM;
	if (cs_view_new(r, syms, o, &v)) {
		free(d);
		return -ENOMEM;
	}
	evs = cs_view_events(v, &nev);
	if (!o->top || o->top * 4 >= cs_view_nrows(v)) {
		cs_view_all_text(v, r->by == CS_BY_CALLSITE);
		cs_view_fill_all(v);
	}
	/* Rows in the order of cs_merge_sorted unless --sort says (by the
	 * first event shown), cut by --top. */
	order = cs_view_order_opts(v, nev ? evs[0] : 0, -1, &n);
	if (cs_view_nrows(v) && !order) {
		cs_view_free(v);
		free(d);
		return -ENOMEM;
	}
	fputs(header, out);
	fputs(o->nested ? ",incl_mean,self_mean" : "", out);
	extras_header(out, o);
	fputc('\n', out);
	for (i = 0; i < n; i++) {
		row = cs_view_row(v, order[i]);
		fn = cs_view_text(v, order[i], CS_COL_FUNCTION);
		cs = cs_view_text(v, order[i], CS_COL_CALLSITE);
		mod = cs_view_text(v, order[i], CS_COL_MODULE);
		for (k = 0; k < nev; k++) {
			row_event(out, r, row, evs[k], fn, cs, mod,
				  cs_view_summary(v, order[i], evs[k]));
			row_tail(out, r, row, evs[k], o);
			extras(out, v, order[i], evs[k], o, !cs_merge_not_counted(r, evs[k]));
			fputc('\n', out);
		}
		/* The preset formulas beside the events they are made of. */
		cs_formulas_csv(out, r, d, nd, row, fn, cs, mod, o);
	}
	free(order);
	cs_view_free(v);
	free(d);
	return cs_util_flushed(out);
}
