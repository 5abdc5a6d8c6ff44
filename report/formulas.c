/* SPDX-License-Identifier: MIT */
/* The formulas of the preset recipes (common/presets.h), computed per
 * report row from the recorded events.  Only per-site aggregates are in
 * the file, not per-call values, so a formula is computed from its
 * inputs' means: exact for the mean of a sum, the ratio of the means for
 * a ratio.  A distribution is shown only where it is exact: a formula of
 * one event, or a sum whose other inputs were 0 in every call. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report/internal.h"

/* The family whose events the report holds most of; the first of equals
 * (the Intel families share their names and formulas).  NULL when no
 * recorded event is a recipe event. */
static const struct cs_preset_family *best_family(const struct cs_report *r)
{
	const struct cs_preset_family *const *f, *best = NULL;
	unsigned n, bestn = 0;
	uint32_t seen;
	size_t k;
	int i;

	for (f = cs_preset_families; *f; f++) {
		seen = 0;
		for (k = 0; k < r->nevents; k++) {
			i = cs_preset_event_find(*f, r->events[k].name);
			if (i >= 0 && i < 32)
				seen |= 1u << i;
		}
		n = (unsigned)__builtin_popcount(seen);
		if (n > bestn) {
			best = *f;
			bestn = n;
		}
	}
	return best;
}

/* The report event recorded for event i of family f (its first
 * occurrence), or -1. */
static long report_event(const struct cs_report *r, const struct cs_preset_family *f, int i)
{
	size_t k;

	for (k = 0; k < r->nevents; k++)
		if (r->events[k].occurrence == 0 && cs_preset_event_find(f, r->events[k].name) == i)
			return (long)k;
	return -1;
}

int cs_formulas_find(const struct cs_report *r, struct cs_formula **out, size_t *n)
{
	const struct cs_preset_family *fam = best_family(r);
	struct cs_formula *v, *d;
	unsigned j, i, vars[CS_CALC_MAX_VARS];
	long ev;
	int a;

	*out = NULL;
	*n = 0;
	if (!fam)
		return 0;
	v = calloc(fam->nformulas, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (j = 0; j < fam->nformulas; j++) {
		d = &v[*n];
		memset(d, 0, sizeof(*d));
		d->family = fam;
		d->f = &fam->formulas[j];
		/* The tables are checked by the unit tests: a formula that
		 * does not parse is skipped, never fatal. */
		if (cs_calc_parse(d->f->expr, &d->calc, NULL) != 0)
			continue;
		for (i = 0; i < d->calc.nvars; i++) {
			a = cs_preset_alias_find(fam, d->calc.var[i],
						 (unsigned)strlen(d->calc.var[i]));
			ev = a < 0 ? -1 : report_event(r, fam, a);
			if (ev < 0)
				break; /* an input not recorded: the formula does not apply */
			d->ev[i] = (size_t)ev;
			d->input[i] = &fam->events[a];
			if (cs_merge_not_counted(r, (size_t)ev))
				d->not_counted = 1;
		}
		if (i < d->calc.nvars)
			continue;
		d->sum = cs_calc_is_sum(&d->calc, vars);
		(*n)++;
	}
	if (*n == 0) {
		free(v);
		v = NULL;
	}
	*out = v;
	return 0;
}

void cs_formulas_eval(const struct cs_report *r, const struct cs_formula *d,
		      const struct cs_row *row, struct cs_formula_value *v)
{
	struct cs_calc_value vals[CS_CALC_MAX_VARS];
	const struct cs_agg *agg[CS_CALC_MAX_VARS];
	struct cs_summary s[CS_CALC_MAX_VARS];
	struct cs_calc_value res;
	unsigned i, nonzero = 0, which = 0;
	int same_n = 1;

	memset(v, 0, sizeof(*v));
	v->status = CS_CALC_NOT_COUNTED;
	for (i = 0; i < d->calc.nvars; i++) {
		agg[i] = cs_merge_not_counted(r, d->ev[i]) ? NULL : cs_merge_agg(row, d->ev[i]);
		/* No values: the event was not counted at this row (failed in
		 * its thread, or every call was dropped). */
		if (!agg[i] || cs_stats_summarize(agg[i], &s[i]) != 0)
			return;
		vals[i].status = CS_CALC_OK;
		vals[i].v = s[i].mean;
		if (i == 0 || s[i].n < v->calls)
			v->calls = s[i].n;
		if (i && s[i].n != s[0].n)
			same_n = 0;
		if (agg[i]->max > 0) {
			nonzero++;
			which = i;
		}
	}
	res = cs_calc_eval(&d->calc, vals);
	v->status = res.status;
	v->value = res.v;
	if (res.status != CS_CALC_OK || !d->sum || d->f->kind != CS_FORMULA_COUNT)
		return;
	/* A sum over the same calls: its total is the inputs' totals added
	 * up, exactly. */
	if (same_n) {
		v->have_total = 1;
		for (i = 0; i < d->calc.nvars; i++)
			v->total += s[i].total;
	}
	/* Its per-call distribution is that of its one input that was not
	 * always 0; with two varying inputs it is unknown (their joint
	 * distribution is not recorded). */
	if (same_n && nonzero <= 1) {
		v->have_dist = 1;
		v->dist = s[which];
	}
}

char *cs_formulas_where(const struct cs_formula *d, char *buf, size_t len)
{
	size_t used = 0;
	unsigned i;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < d->calc.nvars && used < len; i++) {
		int w = snprintf(buf + used, len - used, "%s%s = %s", i ? ", " : "", d->calc.var[i],
				 d->input[i]->event);

		if (w < 0)
			break;
		used += (size_t)w;
	}
	return buf;
}

/* ---- output ---- */

/* A ratio for a human: 3 significant digits below 1 (0.988, 0.00013). */
static char *human_value(const struct cs_formula *d, long double v, char *buf, size_t len)
{
	if (d->f->kind == CS_FORMULA_RATIO && v > -1 && v < 1 && v != 0) {
		snprintf(buf, len, "%.3Lg", v);
		return buf;
	}
	return cs_util_human(v, buf, len);
}

/* Key and --nested columns of a CSV line, as output_csv.c writes them for
 * the events: a formula has no inclusive or exclusive view. */
static void csv_tail(FILE *out, const struct cs_row *row, const struct cs_output_opts *o)
{
	char buf[64];

	fprintf(out, ",%s%s", cs_util_key_class(row->k.key, buf, sizeof(buf)),
		o && o->nested ? ",," : "");
	/* The columns of --binomial, --cold, --derive (output_csv.c). */
	if (o)
		cs_csv_extras_blank(out, o);
	fputc('\n', out);
}

static void csv_u128(FILE *out, cs_u128 v)
{
	char b[48];

	fprintf(out, ",%s", cs_util_u128(v, b, sizeof(b)));
}

void cs_formulas_csv(FILE *out, const struct cs_report *r, const struct cs_formula *d, size_t nd,
		     const struct cs_row *row, const char *fn, const char *cs, const char *mod,
		     const struct cs_output_opts *o)
{
	struct cs_formula_value v;
	char buf[64];
	size_t j;

	for (j = 0; j < nd; j++) {
		cs_formulas_eval(r, &d[j], row, &v);
		cs_csv_field(out, fn);
		fputc(',', out);
		cs_csv_field(out, cs);
		fputc(',', out);
		cs_csv_field(out, mod);
		fputc(',', out);
		cs_csv_field(out, d[j].f->name);
		if (v.status == CS_CALC_NOT_COUNTED) {
			/* Never a number computed from nothing. */
			fputs(",,,,,,,,,,,,not counted", out);
		} else if (v.status == CS_CALC_UNDEFINED) {
			csv_u128(out, v.calls);
			fputs(",,,,,,,,", out); /* total..max */
			csv_u128(out, row->entered);
			csv_u128(out, row->dropped);
			fputs(",undefined", out);
		} else {
			csv_u128(out, v.calls);
			fprintf(out, ",%s",
				v.have_total ? cs_util_u128(v.total, buf, sizeof(buf)) : "");
			fprintf(out, ",%.9Lg", v.value);
			if (v.have_dist) {
				fprintf(out, ",%s",
					cs_util_decimal(v.dist.stddev, buf, sizeof(buf)));
				csv_u128(out, v.dist.min);
				csv_u128(out, v.dist.p50);
				csv_u128(out, v.dist.p90);
				csv_u128(out, v.dist.p99);
				csv_u128(out, v.dist.max);
			} else {
				fputs(",,,,,,", out);
			}
			csv_u128(out, row->entered);
			csv_u128(out, row->dropped);
			fputs(",derived", out);
		}
		csv_tail(out, row, o);
	}
}

enum fcol {
	F_FUNCTION,
	F_CALLSITE,
	F_MODULE,
	F_CALLS,
	F_MEAN,
	F_STDDEV,
	F_MIN,
	F_P50,
	F_P90,
	F_P99,
	F_MAX,
	F_TOTAL,
	NFCOLS
};

static const char *const fcol_names[NFCOLS] = {
	"function", "callsite", "module", "calls", "mean", "stddev",
	"min",	    "p50",	"p90",	  "p99",   "max",  "total",
};

#define FCELL 32 /* a number for a human (cs_util_human): at most 22 characters */
/* A name cut to CS_NAME_COLUMNS columns: up to 4 bytes each. */
#define FNAME (4 * CS_NAME_COLUMNS + 1)

struct fline {
	size_t order; /* position in the sorted rows */
	int status;
	long double value;
	char name[F_MODULE + 1][FNAME]; /* function, callsite, module */
	char cell[NFCOLS - F_CALLS][FCELL]; /* the numbers: calls ... total */
};

/* The cell of number column c (F_CALLS ... F_TOTAL) of l. */
static char *num(struct fline *l, unsigned c)
{
	return l->cell[c - F_CALLS];
}

/* The text of column c of l. */
static const char *fcell(const struct fline *l, unsigned c)
{
	return c <= F_MODULE ? l->name[c] : l->cell[c - F_CALLS];
}

static int cmp_flines(const void *a, const void *b)
{
	const struct fline *x = a, *y = b;
	int xv = x->status == CS_CALC_OK, yv = y->status == CS_CALC_OK;

	/* Biggest value first, rows without one last, then the row order. */
	if (xv != yv)
		return yv - xv;
	if (xv && x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void fill_fline(struct fline *l, const struct cs_report *r, const struct cs_formula *d,
		       const struct cs_row *row, struct cs_symbols *syms, int raw_names)
{
	char fn[CS_FUNCTION_MAX], cs[4096], mod[4096], *dfn = NULL, *dcs = NULL;
	struct cs_formula_value v;
	unsigned c;

	cs_merge_function(row, fn, sizeof(fn));
	cs_output_callsite(r, row, syms, cs, sizeof(cs), mod, sizeof(mod));
	if (!raw_names) {
		dfn = cs_demangle(fn, CS_DEMANGLE_CUT);
		dcs = cs_demangle(cs, 0);
	}
	/* Names are the program's bytes: no control character reaches the
	 * terminal (the CSV quotes them).  Cut as the event tables cut them,
	 * in the escaping: cutting its output split escapes and characters. */
	cs_util_escape_cut_keep(dfn ? dfn : fn, cs_util_label_suffix(dfn ? dfn : fn, 0, 1),
				CS_NAME_COLUMNS, l->name[F_FUNCTION], FNAME);
	cs_util_escape_cut_keep(dcs ? dcs : cs, cs_util_label_suffix(dcs ? dcs : cs, 1, 0),
				CS_NAME_COLUMNS, l->name[F_CALLSITE], FNAME);
	free(dfn);
	free(dcs);
	cs_util_escape_cut(mod, CS_NAME_COLUMNS, l->name[F_MODULE], FNAME);
	cs_formulas_eval(r, d, row, &v);
	l->status = v.status;
	l->value = v.value;
	for (c = F_CALLS; c < NFCOLS; c++)
		snprintf(num(l, c), FCELL, "-");
	if (v.status == CS_CALC_NOT_COUNTED) {
		snprintf(num(l, F_MEAN), FCELL, "not counted");
		return;
	}
	cs_util_human((long double)v.calls, num(l, F_CALLS), FCELL);
	if (v.status == CS_CALC_UNDEFINED) {
		snprintf(num(l, F_MEAN), FCELL, "undefined");
		return;
	}
	human_value(d, v.value, num(l, F_MEAN), FCELL);
	if (v.have_total)
		cs_util_human((long double)v.total, num(l, F_TOTAL), FCELL);
	if (v.have_dist) {
		cs_util_human(v.dist.stddev, num(l, F_STDDEV), FCELL);
		cs_util_human((long double)v.dist.min, num(l, F_MIN), FCELL);
		cs_util_human((long double)v.dist.p50, num(l, F_P50), FCELL);
		cs_util_human((long double)v.dist.p90, num(l, F_P90), FCELL);
		cs_util_human((long double)v.dist.p99, num(l, F_P99), FCELL);
		cs_util_human((long double)v.dist.max, num(l, F_MAX), FCELL);
	}
}

static void print_flines(FILE *out, const struct fline *l, size_t n, int by_fn)
{
	size_t w[NFCOLS], i, len;
	unsigned c;

	for (c = 0; c < NFCOLS; c++)
		w[c] = strlen(fcol_names[c]);
	/* Widths in display columns: a UTF-8 name is fewer than its bytes. */
	for (i = 0; i < n; i++)
		for (c = 0; c < NFCOLS; c++) {
			len = cs_util_width(fcell(&l[i], c), strlen(fcell(&l[i], c)));
			if (len > w[c])
				w[c] = len;
		}
	for (i = 0; i <= n; i++) {
		fputs("  ", out);
		for (c = 0; c < NFCOLS; c++) {
			const char *v = i ? fcell(&l[i - 1], c) : fcol_names[c];

			if (by_fn && (c == F_CALLSITE || c == F_MODULE))
				continue;
			/* Text columns left-aligned, numbers right-aligned. */
			fprintf(out, c <= F_MODULE ? "%s%-*s" : "%s%*s", c ? "  " : "",
				cs_util_field(v, w[c]), v);
		}
		fputc('\n', out);
	}
}

int cs_formulas_table(FILE *out, const struct cs_report *r, struct cs_symbols *syms, int raw_names)
{
	struct cs_formula *d;
	struct cs_row **rows;
	struct fline *lines;
	char where[1024];
	size_t nd, n, j, i;

	if (cs_formulas_find(r, &d, &nd))
		return -ENOMEM;
	if (nd == 0)
		return 0;
	rows = cs_merge_sorted(r, &n);
	lines = calloc(n ? n : 1, sizeof(*lines));
	if ((r->nrows && !rows) || !lines) {
		free(rows);
		free(lines);
		free(d);
		return -ENOMEM;
	}
	fprintf(out,
		"\nderived from the %s recipe (events recognized by name; `cacheshim list "
		"@all --pmu %s` shows it):\n",
		d[0].family->name, d[0].family->pmus[0]);
	for (j = 0; j < nd; j++) {
		fprintf(out, "\n%s = %s (%s)\n", d[j].f->name, d[j].f->expr,
			d[j].f->kind == CS_FORMULA_RATIO ? "ratio of the means per call"
			: d[j].sum			 ? "sum per call; distribution where exact"
							 : "per call, from the means");
		fprintf(out, "  where %s\n", cs_formulas_where(&d[j], where, sizeof(where)));
		if (d[j].not_counted) {
			fputs("  not counted (an input could not be opened)\n", out);
			continue;
		}
		if (n == 0) {
			fputs("  no calls recorded\n", out);
			continue;
		}
		for (i = 0; i < n; i++) {
			memset(&lines[i], 0, sizeof(lines[i]));
			lines[i].order = i;
			fill_fline(&lines[i], r, &d[j], rows[i], syms, raw_names);
		}
		qsort(lines, n, sizeof(*lines), cmp_flines);
		print_flines(out, lines, n, r->by == CS_BY_FUNCTION);
	}
	free(lines);
	free(rows);
	free(d);
	return cs_util_flushed(out);
}
