/* SPDX-License-Identifier: MIT */
/* --diff A B: two runs compared per function (or call site) and event. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

/*
 * Rows are matched by what they are called: the function (with its
 * argument class) and the path of the module it is in, and with --by
 * callsite the module path and offset of the call site, so a call site
 * matches only in the same build (after a rebuild, compare --by function,
 * the default of --diff).  Events are
 * matched by name.  The change is B - A, in the event's unit and in
 * percent of A.
 */

enum { S_CALLS, S_MEAN, S_P50, S_P90, S_P99, NSTATS };
enum { V_A, V_B, V_DIFF, V_PCT, NVALS };

static const char *const stat_names[NSTATS] = {"calls", "mean", "p50", "p90", "p99"};
static const char *const val_names[NVALS] = {"a", "b", "diff", "pct"};

#define NCOLS (NSTATS * NVALS)

struct drow {
	/* function, NUL, module path, NUL, offset, NUL, the function's own
	 * module path: the match */
	char *key;
	size_t klen;
	const char *tmod; /* the function's module path ("" unknown) */
	char fn[CS_FUNCTION_MAX];
	char *cs, *mod; /* labels */
	char *shown_fn, *shown_cs; /* fn, cs demangled for the table; NULL: as they are */
	const struct cs_row *a, *b;
	size_t order;
	UT_hash_handle hh;
};

struct devent {
	const char *name;
	long a, b; /* index in each report, -1 when absent */
};

/* One (row, event): values[c] for column c, kinds[c] enum cs_cell. */
struct dline {
	struct drow *row;
	long double v[NCOLS];
	int kind[NCOLS];
	const char *status;
};

/* The function's module path: two functions of one name in two modules
 * (an interposer's malloc and libc's) are two rows in each run. */
static const char *target_module(const struct cs_row *row)
{
	return row->target && row->target->mod ? row->target->mod->path : "";
}

/* The file name of the function's module: the match of two runs (a
 * library installed under another directory is still the same one). */
static const char *target_module_name(const struct cs_row *row)
{
	const char *p = target_module(row), *base = strrchr(p, '/');

	return base ? base + 1 : p;
}

/* The key of row: its function's name (not the label that says its module:
 * a run holding an interposer's malloc labels libc's malloc@libc.so.6, a
 * run without it malloc), the call site with --by callsite, and the file
 * name of the function's module; full adds the module's whole path (two
 * modules of one file name in one run). */
static char *row_key(const struct cs_report *r, const struct cs_row *row, char *fn, size_t *len,
		     int full)
{
	const char *mod = "";
	char *key;
	int n;

	cs_merge_function_in_module(row, fn, CS_FUNCTION_MAX);
	if (r->by == CS_BY_CALLSITE && row->k.module && row->k.module <= r->nmodules)
		mod = r->modules[row->k.module - 1]->path;
	n = asprintf(&key, "%s%c%s%c%llx%c%s%c%s", fn, 0, mod, 0, (unsigned long long)row->k.offset,
		     0, target_module_name(row), 0, full ? target_module(row) : "");
	if (n < 0)
		return NULL;
	*len = (size_t)n;
	return key;
}

/* Adds the rows of r as side (0: a, 1: b). */
static int add_rows(struct drow **h, const struct cs_report *r, int side, struct cs_symbols *syms,
		    int demangle)
{
	char fn[CS_FUNCTION_MAX], cs[4096], mod[4096];
	struct cs_row **rows;
	struct drow *d;
	size_t n, i, len;
	char *key;

	rows = cs_merge_sorted(r, &n);
	if (r->nrows && !rows)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		key = row_key(r, rows[i], fn, &len, 0);
		if (!key)
			goto nomem;
		HASH_FIND(hh, *h, key, len, d);
		if (d && (side ? d->b : d->a)) {
			/* Another row of this run has that key: this one is
			 * told apart by its module's path. */
			free(key);
			key = row_key(r, rows[i], fn, &len, 1);
			if (!key)
				goto nomem;
			HASH_FIND(hh, *h, key, len, d);
		}
		if (d) {
			free(key);
		} else {
			d = calloc(1, sizeof(*d));
			if (!d) {
				free(key);
				goto nomem;
			}
			d->key = key;
			d->klen = len;
			d->tmod = target_module(rows[i]);
			memcpy(d->fn, fn, sizeof(d->fn));
			cs_output_callsite(r, rows[i], syms, cs, sizeof(cs), mod, sizeof(mod));
			d->cs = strdup(cs);
			d->mod = strdup(mod);
			if (demangle) {
				d->shown_fn = cs_demangle(fn, CS_DEMANGLE_CUT);
				d->shown_cs = cs_demangle(cs, 0);
			}
			HASH_ADD_KEYPTR(hh, *h, d->key, len, d);
			if (!d->cs || !d->mod)
				goto nomem;
		}
		if (side)
			d->b = rows[i];
		else
			d->a = rows[i];
	}
	free(rows);
	return 0;
nomem:
	free(rows);
	return -ENOMEM;
}

static long find_event(const struct cs_report *r, const char *name)
{
	size_t e;

	for (e = 0; e < r->nevents; e++)
		if (r->events[e].occurrence == 0 && cs_event_same(r->events[e].name, name))
			return (long)e;
	return -1;
}

static int shown(const struct cs_options *opt, const char *name)
{
	size_t i;

	if (!opt->nevents)
		return 1;
	for (i = 0; i < opt->nevents; i++)
		if (cs_event_same(opt->events[i], name))
			return 1;
	return 0;
}

/* The events of a, then those only b has. */
static struct devent *events(const struct cs_report *a, const struct cs_report *b,
			     const struct cs_options *opt, size_t *n)
{
	struct devent *v = calloc(a->nevents + b->nevents + 1, sizeof(*v));
	size_t e, k = 0;

	*n = 0;
	if (!v)
		return NULL;
	for (e = 0; e < a->nevents; e++) {
		if (a->events[e].occurrence || !shown(opt, a->events[e].name))
			continue;
		v[k].name = a->events[e].name;
		v[k].a = (long)e;
		v[k++].b = find_event(b, a->events[e].name);
	}
	for (e = 0; e < b->nevents; e++) {
		if (b->events[e].occurrence || !shown(opt, b->events[e].name) ||
		    find_event(a, b->events[e].name) >= 0)
			continue;
		v[k].name = b->events[e].name;
		v[k].a = -1;
		v[k++].b = (long)e;
	}
	*n = k;
	return v;
}

/* The summary of one side; returns 1 when it has values, 0 when it has
 * none (calls 0), -1 when the event was not counted there: it could not
 * be opened, or that run did not record it at all (its calls were made,
 * but not measured by this event: not 0 calls). */
static int side(const struct cs_report *r, const struct cs_row *row, long ev, struct cs_summary *s)
{
	const struct cs_agg *a;

	memset(s, 0, sizeof(*s));
	if (ev < 0)
		return -1;
	if (cs_merge_not_counted(r, (size_t)ev))
		return -1;
	a = row ? cs_merge_agg(row, (size_t)ev) : NULL;
	return a && cs_stats_summarize(a, s) == 0;
}

static void fill_line(struct dline *l, const struct cs_report *ra, const struct cs_report *rb,
		      const struct devent *ev)
{
	struct cs_summary sa, sb;
	int ha = side(ra, l->row->a, ev->a, &sa), hb = side(rb, l->row->b, ev->b, &sb);
	long double va, vb;
	unsigned st;
	int c;

	if (ha < 0 || hb < 0)
		l->status = "not counted";
	else if (ha && hb)
		l->status = "ok";
	else if (ha)
		l->status = "only a";
	else if (hb)
		l->status = "only b";
	else
		l->status = "no data";
	for (st = 0; st < NSTATS; st++) {
		c = (int)st * NVALS;
		va = st == S_CALLS  ? sa.n
		     : st == S_MEAN ? sa.mean
		     : st == S_P50  ? sa.p50
		     : st == S_P90  ? sa.p90
				    : sa.p99;
		vb = st == S_CALLS  ? sb.n
		     : st == S_MEAN ? sb.mean
		     : st == S_P50  ? sb.p50
		     : st == S_P90  ? sb.p90
				    : sb.p99;
		l->v[c + V_A] = va;
		l->v[c + V_B] = vb;
		/* A side without calls has a call count (0) and nothing else;
		 * a side that did not count the event has nothing at all. */
		l->kind[c + V_A] = ha < 0		 ? CS_CELL_NOT_COUNTED
				   : ha || st == S_CALLS ? CS_CELL_NUM
							 : CS_CELL_NONE;
		l->kind[c + V_B] = hb < 0		 ? CS_CELL_NOT_COUNTED
				   : hb || st == S_CALLS ? CS_CELL_NUM
							 : CS_CELL_NONE;
		if (l->kind[c + V_A] != CS_CELL_NUM || l->kind[c + V_B] != CS_CELL_NUM) {
			l->kind[c + V_DIFF] = l->kind[c + V_PCT] =
				ha < 0 || hb < 0 ? CS_CELL_NOT_COUNTED : CS_CELL_NONE;
			continue;
		}
		l->v[c + V_DIFF] = vb - va;
		l->kind[c + V_DIFF] = CS_CELL_NUM;
		if (va != 0.0L) {
			l->v[c + V_PCT] = (vb - va) / va * 100.0L;
			l->kind[c + V_PCT] = CS_CELL_NUM;
		} else {
			l->v[c + V_PCT] = 0.0L;
			l->kind[c + V_PCT] = vb == 0.0L ? CS_CELL_NUM : CS_CELL_NONE;
		}
	}
}

/* Returns the column of name ("function" = -1, "mean_pct" ...), or -2. */
static int column(const char *name)
{
	char buf[64];
	unsigned st, v;

	if (strcmp(name, "function") == 0)
		return -1;
	for (st = 0; st < NSTATS; st++)
		for (v = 0; v < NVALS; v++) {
			snprintf(buf, sizeof(buf), "%s_%s", stat_names[st], val_names[v]);
			if (strcmp(buf, name) == 0)
				return (int)(st * NVALS + v);
		}
	return -2;
}

static int sort_col, sort_desc;

static int cmp_lines(const void *x, const void *y)
{
	const struct dline *a = x, *b = y;
	int c = 0;

	if (sort_col == -1) {
		/* By the name shown. */
		c = strcmp(a->row->shown_fn ? a->row->shown_fn : a->row->fn,
			   b->row->shown_fn ? b->row->shown_fn : b->row->fn);
	} else if (sort_col >= 0) {
		int na = a->kind[sort_col] == CS_CELL_NUM, nb = b->kind[sort_col] == CS_CELL_NUM;

		if (na != nb)
			return na ? -1 : 1; /* no value: last */
		if (na && a->v[sort_col] != b->v[sort_col])
			c = a->v[sort_col] < b->v[sort_col] ? -1 : 1;
	}
	if (c)
		return sort_desc ? -c : c;
	return a->row->order < b->row->order ? -1 : a->row->order > b->row->order;
}

static int cmp_drow(const void *x, const void *y)
{
	const struct drow *a = *(const struct drow *const *)x, *b = *(const struct drow *const *)y;
	int c = strcmp(a->fn, b->fn);

	if (c)
		return c;
	c = strcmp(a->mod, b->mod);
	if (c)
		return c;
	c = memcmp(a->key, b->key, a->klen < b->klen ? a->klen : b->klen);
	return c ? c : (a->klen > b->klen) - (a->klen < b->klen);
}

static const char *base_name(const char *path)
{
	const char *base = strrchr(path, '/');

	return base ? base + 1 : path;
}

/* Rows of one function name but of functions in different modules would
 * show the same label: each gets "@module" (the file name of its module
 * path) after the name.  order is sorted by cmp_drow; sorted again after. */
static void label_modules(struct drow **order, size_t n)
{
	size_t i, j, k;

	for (i = 0; i < n; i = j) {
		int differ = 0, paths = 0;

		for (j = i + 1; j < n && !strcmp(order[j]->fn, order[i]->fn); j++)
			differ |= strcmp(order[j]->tmod, order[i]->tmod) != 0;
		/* Two modules of one file name (one library under two
		 * directories): their whole paths tell them apart. */
		for (k = i; differ && k < j && !paths; k++) {
			size_t l;

			for (l = k + 1; l < j && !paths; l++)
				paths = strcmp(order[k]->tmod, order[l]->tmod) &&
					!strcmp(base_name(order[k]->tmod), base_name(order[l]->tmod));
		}
		for (k = i; differ && k < j; k++) {
			struct drow *d = order[k];
			const char *m;
			size_t len = strlen(d->fn);
			char *shown = NULL;

			m = paths && *d->tmod ? d->tmod : *d->tmod ? base_name(d->tmod) : "?";
			snprintf(d->fn + len, sizeof(d->fn) - len, "@%s", m);
			/* The demangled name too (NULL: out of memory, shown as is). */
			if (d->shown_fn && asprintf(&shown, "%s@%s", d->shown_fn, m) < 0)
				shown = NULL;
			free(d->shown_fn);
			d->shown_fn = shown;
		}
	}
	qsort(order, n, sizeof(*order), cmp_drow);
}

static void format(const struct dline *l, int c, int csv, char *buf, size_t len)
{
	long double v = l->v[c];

	if (l->kind[c] == CS_CELL_NOT_COUNTED) {
		snprintf(buf, len, "not counted");
	} else if (l->kind[c] != CS_CELL_NUM || isnan(v)) {
		snprintf(buf, len, "%s", csv ? "" : "-");
	} else if (csv) {
		cs_util_decimal(v, buf, len);
	} else if (c % NVALS == V_PCT) {
		snprintf(buf, len, "%+.1Lf%%", v);
	} else if (c % NVALS == V_DIFF) {
		buf[0] = v > 0 ? '+' : '\0';
		cs_util_human(v, buf + (v > 0), len - 1);
	} else {
		cs_util_human(v, buf, len);
	}
}

static void print_csv(FILE *out, const struct dline *lines, size_t n, const char *ev)
{
	char buf[64];
	size_t i;
	int c;

	for (i = 0; i < n; i++) {
		cs_csv_field(out, lines[i].row->fn);
		fputc(',', out);
		cs_csv_field(out, lines[i].row->cs);
		fputc(',', out);
		cs_csv_field(out, lines[i].row->mod);
		fputc(',', out);
		cs_csv_field(out, ev);
		for (c = 0; c < NCOLS; c++) {
			format(&lines[i], c, 1, buf, sizeof(buf));
			fputc(',', out);
			fputs(buf, out);
		}
		fprintf(out, ",%s\n", lines[i].status);
	}
}

static void print_table(FILE *out, const struct dline *lines, size_t n, int by_fn)
{
	size_t w[NCOLS + 3], i, k, len;
	char buf[NCOLS + 3][4 * CS_FUNCTION_MAX];
	const char *fn, *cs;
	int c;

	for (k = 0; k < NCOLS + 3; k++)
		w[k] = 0;
	/* Two passes: widths, then the lines. */
	for (int pass = 0; pass < 2; pass++) {
		for (i = 0; i <= n; i++) {
			const struct dline *l = i ? &lines[i - 1] : NULL;

			/* Names are the program's bytes: no control character
			 * reaches the terminal, and the widths are those of
			 * the escaped text, in display columns (the CSV quotes
			 * them). */
			fn = !l ? "function" : l->row->shown_fn ? l->row->shown_fn : l->row->fn;
			cs = !l ? "callsite" : l->row->shown_cs ? l->row->shown_cs : l->row->cs;
			cs_util_escape_ctl(fn, buf[0], sizeof(buf[0]));
			cs_util_escape_ctl(cs, buf[1], sizeof(buf[1]));
			cs_util_escape_ctl(l ? l->row->mod : "module", buf[2], sizeof(buf[2]));
			for (c = 0; c < NCOLS; c++) {
				if (l)
					format(l, c, 0, buf[c + 3], sizeof(buf[c + 3]));
				else
					snprintf(buf[c + 3], sizeof(buf[c + 3]), "%s_%s",
						 stat_names[c / NVALS], val_names[c % NVALS]);
			}
			for (k = 0; k < NCOLS + 3; k++) {
				len = cs_util_width(buf[k], strlen(buf[k]));
				if (pass == 0) {
					if (len > w[k])
						w[k] = len;
					continue;
				}
				if (by_fn && (k == 1 || k == 2))
					continue;
				if (k < 3)
					fprintf(out, "  %-*s", cs_util_field(buf[k], w[k]), buf[k]);
				else
					fprintf(out, "  %*s", cs_util_field(buf[k], w[k]), buf[k]);
			}
			if (pass)
				fputc('\n', out);
		}
	}
}

int cs_diff_print(FILE *out, const struct cs_report *a, const struct cs_report *b,
		  struct cs_symbols *syms, const struct cs_options *opt, int csv)
{
	struct drow *h = NULL, *d, *t, **order = NULL;
	struct dline *lines = NULL;
	struct devent *ev = NULL;
	size_t nev = 0, nrows, i, e, n;
	char col[64], name[4 * CS_EVENT_NAME_MAX];
	const char *colon;
	int ret = 0, c, demangle;

	sort_desc = -1;
	sort_col = csv ? -3 : S_MEAN * NVALS + V_PCT; /* -3: name order */
	if (opt->sort) {
		colon = strrchr(opt->sort, ':');
		snprintf(col, sizeof(col), "%.*s",
			 (int)(colon && (!strcmp(colon, ":asc") || !strcmp(colon, ":desc"))
				       ? colon - opt->sort
				       : (long)strlen(opt->sort)),
			 opt->sort);
		c = column(col);
		if (c == -2 && strchr(col, ':')) {
			cs_err("report: --sort %s: '%s' is no order (:asc or :desc)", opt->sort,
			       strrchr(col, ':'));
			return -EINVAL;
		}
		if (c == -2) {
			cs_err("report: --sort %s: with --diff, one of function, calls_a, calls_b, "
			       "calls_diff, calls_pct, mean_a ... mean_pct, p50_*, p90_*, p99_* "
			       "(:asc or :desc may follow)",
			       opt->sort);
			return -EINVAL;
		}
		sort_col = c;
		if (colon && !strcmp(colon, ":asc"))
			sort_desc = 0;
		else if (colon && !strcmp(colon, ":desc"))
			sort_desc = 1;
	}
	if (sort_desc < 0)
		sort_desc = sort_col >= 0;
	demangle = !csv && !opt->no_demangle;
	if (add_rows(&h, a, 0, syms, demangle) || add_rows(&h, b, 1, syms, demangle))
		goto nomem;
	nrows = HASH_COUNT(h);
	order = calloc(nrows + 1, sizeof(*order));
	lines = calloc(nrows + 1, sizeof(*lines));
	ev = events(a, b, opt, &nev);
	if (!order || !lines || !ev)
		goto nomem;
	i = 0;
	HASH_ITER(hh, h, d, t)
	order[i++] = d;
	qsort(order, nrows, sizeof(*order), cmp_drow);
	label_modules(order, nrows);
	for (i = 0; i < nrows; i++)
		order[i]->order = i;
	if (csv) {
		fputs("function,callsite,module,event", out);
		for (c = 0; c < NCOLS; c++)
			fprintf(out, ",%s_%s", stat_names[c / NVALS], val_names[c % NVALS]);
		fputs(",status\n", out);
	} else {
		fprintf(out, "A: %zu file%s, %s calls", a->nfiles, a->nfiles == 1 ? "" : "s",
			cs_util_u128(a->calls, col, sizeof(col)));
		fprintf(out, "; B: %zu file%s, %s calls (diff: B - A; pct: of A)\n", b->nfiles,
			b->nfiles == 1 ? "" : "s", cs_util_u128(b->calls, col, sizeof(col)));
	}
	for (e = 0; e < nev; e++) {
		for (i = 0; i < nrows; i++) {
			lines[i].row = order[i];
			fill_line(&lines[i], a, b, &ev[e]);
		}
		qsort(lines, nrows, sizeof(*lines), cmp_lines);
		n = opt->top && opt->top < nrows ? opt->top : nrows;
		if (csv) {
			print_csv(out, lines, n, ev[e].name);
			continue;
		}
		fprintf(out, "\n%s\n", cs_util_escape_ctl(ev[e].name, name, sizeof(name)));
		if (nrows == 0)
			fputs("  no calls recorded\n", out);
		else
			print_table(out, lines, n, a->by == CS_BY_FUNCTION);
	}
	goto out;
nomem:
	ret = -ENOMEM;
out:
	HASH_ITER(hh, h, d, t)
	{
		HASH_DEL(h, d);
		free(d->key);
		free(d->cs);
		free(d->mod);
		free(d->shown_fn);
		free(d->shown_cs);
		free(d);
	}
	free(order);
	free(lines);
	free(ev);
	if (!ret) {
		ret = cs_util_flushed(out);
	}
	return ret;
}
