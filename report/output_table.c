/* SPDX-License-Identifier: MIT */
/* The human-readable report: a summary, then one aligned table per event. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

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
	cs_symbols_callsite(m->builds_differ ? NULL : syms, m->path, m->build_id, m->build_id_len,
			    row->k.offset, cs, cslen);
	snprintf(mod, modlen, "%s", cs_util_basename(m->path));
}

static void event_list(FILE *out, const struct cs_report *r)
{
	char name[4 * CS_EVENT_NAME_MAX];
	size_t i;

	for (i = 0; i < r->nevents; i++)
		fprintf(out, "%s%s%s", i ? ", " : "",
			cs_util_escape_ctl(r->events[i].name, name, sizeof(name)),
			cs_merge_not_counted(r, i) ? " (not counted)" : "");
	if (r->nevents == 0)
		fputs("none", out);
}

/* Whether file i's pid is that of an earlier file (an exec chain writes
 * a file per program under one pid). */
static int pid_seen(const struct cs_report *r, size_t i)
{
	size_t j;

	for (j = 0; j < i; j++)
		if (r->files[j].pid == r->files[i].pid)
			return 1;
	return 0;
}

/* "pids: 1, 2": each distinct pid once, in file order ("files:" counts
 * the files). */
static void pid_list(FILE *out, const struct cs_report *r)
{
	size_t i, npids = 0, shown = 0;

	for (i = 0; i < r->nfiles; i++)
		npids += !pid_seen(r, i);
	fprintf(out, "\n%s ", npids == 1 ? "pid:     " : "pids:    ");
	for (i = 0; i < r->nfiles && shown < MAX_PIDS_SHOWN; i++)
		if (!pid_seen(r, i))
			fprintf(out, "%s%u", shown++ ? ", " : "", r->files[i].pid);
	if (npids > MAX_PIDS_SHOWN)
		fprintf(out, " and %zu more", npids - MAX_PIDS_SHOWN);
}

void cs_table_summary(FILE *out, const struct cs_report *r)
{
	size_t i, j, shown = 0;
	char b1[48], b2[48], prog[4 * CS_PROGRAM_MAX], name[4 * CS_EVENT_NAME_MAX];

	/* Distinct programs, in file order. */
	fputs("program:  ", out);
	for (i = 0; i < r->nfiles; i++) {
		for (j = 0; j < i; j++)
			if (strcmp(r->files[j].program, r->files[i].program) == 0)
				break;
		if (j < i)
			continue;
		fprintf(out, "%s%s", shown++ ? ", " : "",
			r->files[i].program[0]
				? cs_util_escape_ctl(r->files[i].program, prog, sizeof(prog))
				: "?");
	}
	pid_list(out, r);
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
	if (r->lost_calls) {
		char why[512];

		fprintf(out, "calls not recorded (%s): %s\n",
			cs_util_lost_why(r->lost_why, 0, why, sizeof(why)),
			cs_util_u128(r->lost_calls, b1, sizeof(b1)));
	}
	/* What wrapping an empty function reads: the floor under every
	 * number below. */
	for (i = 0, shown = 0; i < r->nevents; i++) {
		const struct cs_agg *c = cs_merge_calibration(r, i);

		if (!c || cs_merge_not_counted(r, i))
			continue;
		fprintf(out, "%s%s %s", shown++ ? ", " : "overhead: ",
			cs_util_escape_ctl(r->events[i].name, name, sizeof(name)),
			cs_util_human((long double)cs_stats_percentile(c, 0.5), b1, sizeof(b1)));
	}
	if (shown)
		fprintf(out, " (median per call around an empty function%s)\n",
			r->subtract_overhead ? ", subtracted below" : "");
	/* What a wrapped call costs the call around it: more than that
	 * (its hooks and counter reads are outside its own bracket).  With
	 * --self, what is left of it in the exclusive values: beyond its own
	 * bracket, which went out with the nested call's value. */
	for (i = 0, shown = 0; i < r->nevents; i++) {
		const struct cs_agg *c = cs_merge_calibration(r, i);
		uint64_t v, one = c ? cs_stats_percentile(c, 0.5) : 0;

		if (cs_merge_not_counted(r, i) || !cs_merge_nested_overhead(r, i, &v))
			continue;
		if (r->self)
			v = v > one ? v - one : 0;
		fprintf(out, "%s%s %s", shown++ ? ", " : "nested:   ",
			cs_util_escape_ctl(r->events[i].name, name, sizeof(name)),
			cs_util_human((long double)v, b1, sizeof(b1)));
	}
	if (shown)
		fprintf(out, " (what a wrapped call adds to the call around it%s%s)\n",
			r->self ? " beyond its own value" : "",
			r->subtract_overhead ? ", subtracted below per nested call" : "");
	/* Nested calls' new sites and blocks were made inside the calls
	 * around them: said, since those calls' tsc is lower by it. */
	if (r->setup_ticks)
		fprintf(out, "set-up:   %s TSC ticks spent by the shim making call sites and "
			"blocks; what ran inside measured calls is taken off their tsc\n",
			cs_util_u128(r->setup_ticks, b1, sizeof(b1)));
}

static void event_title(FILE *out, const struct cs_report *r, size_t ev)
{
	const struct cs_event_info *e = &r->events[ev];
	char name[4 * CS_EVENT_NAME_MAX];
	uint64_t hz = 0;
	size_t i;

	fputs(cs_util_escape_ctl(e->name, name, sizeof(name)), out);
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

/* The cells of a table, formatted: ncols per line, header first. */
struct grid {
	char *buf;
	size_t len, cap;
	uint32_t *off; /* [(nlines + 1) * ncols] */
	uint16_t *clen; /* their lengths */
	size_t ncols, nlines;
	size_t *w; /* column widths, in display columns (cs_util_width) */
	size_t *wb; /* the most bytes a cell of the column has */
};

static int grid_put(struct grid *g, size_t line, size_t col, const char *s)
{
	size_t n = strlen(s), cap, k = line * g->ncols + col, w;
	char *nb;

	if (n > 4000)
		n = 4000;
	if (g->len + n > g->cap) {
		cap = g->cap ? g->cap : 4096;
		while (g->len + n > cap)
			cap *= 2;
		nb = realloc(g->buf, cap);
		if (!nb)
			return -ENOMEM;
		g->buf = nb;
		g->cap = cap;
	}
	memcpy(g->buf + g->len, s, n);
	g->off[k] = (uint32_t)g->len;
	g->clen[k] = (uint16_t)n;
	g->len += n;
	w = cs_util_width(s, n);
	if (w > g->w[col])
		g->w[col] = w;
	if (n > g->wb[col])
		g->wb[col] = n;
	return g->len > UINT32_MAX ? -ENOMEM : 0;
}

static int grid_init(struct grid *g, size_t nlines, size_t ncols)
{
	memset(g, 0, sizeof(*g));
	g->ncols = ncols;
	g->nlines = nlines;
	g->off = malloc((nlines + 1) * ncols * sizeof(*g->off));
	g->clen = malloc((nlines + 1) * ncols * sizeof(*g->clen));
	g->w = calloc(2 * ncols, sizeof(*g->w));
	g->wb = g->w ? g->w + ncols : NULL;
	return g->off && g->clen && g->w ? 0 : -ENOMEM;
}

static void grid_free(struct grid *g)
{
	free(g->buf);
	free(g->off);
	free(g->clen);
	free(g->w);
}

/* Prints g: text columns (text[c]) left-aligned, numbers right-aligned,
 * padded to their widths in display columns; each line is put together
 * first and written at once.  Returns 0 or -ENOMEM. */
static int grid_print(FILE *out, const struct grid *g, const int *text)
{
	size_t i, c, k, room = 2, p, pad;
	const char *cell;
	char *line;

	/* A cell's bytes and its padding: at most its column's bytes and
	 * width. */
	for (c = 0; c < g->ncols; c++)
		room += g->wb[c] + g->w[c] + 2;
	line = malloc(room + 1);
	if (!line)
		return -ENOMEM;
	for (i = 0; i <= g->nlines; i++) {
		memset(line, ' ', room);
		p = 2;
		for (c = 0; c < g->ncols; c++) {
			k = i * g->ncols + c;
			cell = g->buf + g->off[k];
			pad = g->w[c] - cs_util_width(cell, g->clen[k]);
			if (c)
				p += 2;
			if (!text[c])
				p += pad;
			memcpy(line + p, cell, g->clen[k]);
			p += g->clen[k];
			/* No trailing blanks after the last column. */
			if (text[c] && c + 1 < g->ncols)
				p += pad;
		}
		line[p++] = '\n';
		fwrite_unlocked(line, 1, p, out);
	}
	free(line);
	return 0;
}

/* The columns of an event's table, in order.  Returns how many. */
static size_t table_columns(const struct cs_report *r, const struct cs_output_opts *o, int source,
			    int *cols)
{
	static const int plain[] = {CS_COL_MEAN, -1,	     CS_COL_STDDEV, CS_COL_MIN,	 CS_COL_P50,
				    CS_COL_P90,	 CS_COL_P99, CS_COL_MAX,    CS_COL_TOTAL};
	static const int coldwarm[] = {CS_COL_COLD_N,	   CS_COL_COLD_MEAN, CS_COL_COLD_MIN,
				       CS_COL_COLD_MAX,	   CS_COL_WARM_MEAN, -1,
				       CS_COL_WARM_STDDEV, CS_COL_WARM_MIN,  CS_COL_WARM_P50,
				       CS_COL_WARM_P90,	   CS_COL_WARM_P99,  CS_COL_WARM_MAX};
	const int *set = o->cold ? coldwarm : plain;
	size_t n = 0, i,
	       nset = o->cold ? sizeof(coldwarm) / sizeof(coldwarm[0])
			      : sizeof(plain) / sizeof(plain[0]);

	cols[n++] = CS_COL_FUNCTION;
	if (r->by == CS_BY_CALLSITE) {
		cols[n++] = CS_COL_CALLSITE;
		cols[n++] = CS_COL_MODULE;
		if (source)
			cols[n++] = CS_COL_SOURCE;
	}
	cols[n++] = CS_COL_CALLS;
	for (i = 0; i < nset; i++) {
		if (set[i] >= 0) {
			cols[n++] = set[i];
		} else if (o->nested || o->subtract) {
			/* --subtract-overhead: the mean as measured after the
			 * corrected one; --nested: the inclusive and self means */
			if (o->subtract && !o->cold)
				cols[n++] = CS_COL_RAW_MEAN;
			if (!o->nested)
				continue;
			cols[n++] = CS_COL_INCL;
			cols[n++] = CS_COL_SELF;
		}
	}
	if (o->binomial) {
		cols[n++] = CS_COL_BIN_N;
		cols[n++] = CS_COL_BIN_P;
	}
	return n;
}

/* Formats statistic column col (calls ... total) of summary s (NULL: no
 * values) as cs_view_format would, without looking the row up again for
 * each cell. */
static void stat_cell(const struct cs_summary *s, int col, char *buf, size_t len)
{
	uint64_t u;

	if (!s) {
		snprintf(buf, len, "%s", col == CS_COL_CALLS ? "0" : "-");
		return;
	}
	switch (col) {
	case CS_COL_MEAN:
		cs_util_human(s->mean, buf, len);
		return;
	case CS_COL_STDDEV:
		cs_util_human(s->stddev, buf, len);
		return;
	case CS_COL_TOTAL:
		cs_util_human((long double)s->total, buf, len);
		return;
	case CS_COL_CALLS:
		u = s->n;
		break;
	case CS_COL_MIN:
		u = s->min;
		break;
	case CS_COL_P50:
		u = s->p50;
		break;
	case CS_COL_P90:
		u = s->p90;
		break;
	case CS_COL_P99:
		u = s->p99;
		break;
	default:
		u = s->max;
		break;
	}
	cs_util_human_u64(u, buf, len);
}

/* Formats text column col of row i for the table. */
static void text_cell(struct cs_view *v, size_t i, int col, int truncate, char *buf, size_t len)
{
	const char *t = cs_view_text(v, i, col);

	/* The table has the base name: the CSV has the whole path. */
	if (col == CS_COL_SOURCE)
		t = cs_util_basename(t);
	/* Names are the program's bytes: no control character reaches the
	 * terminal (CSV, JSON and HTML quote them their own way).  Cut in
	 * the escaping: cutting its output split escapes and characters. */
	cs_util_escape_cut_keep(t, cs_util_label_suffix(t, col == CS_COL_CALLSITE, col == CS_COL_FUNCTION), truncate ? CS_NAME_COLUMNS : 0, buf, len);
}

/* Formats rows order[0, n) with columns cols[0, ncols) for event ev (the
 * per-row columns ignore it) into g, text[c] set for the text columns.
 * Returns 0 or -ENOMEM (g is then to be freed all the same). */
static int build_rows(struct cs_view *v, const struct cs_output_opts *o, size_t ev,
		      const size_t *order, size_t n, const int *cols, size_t ncols, struct grid *g,
		      int *text)
{
	const struct cs_summary *s;
	char buf[4096];
	size_t i, c;
	int ret = grid_init(g, n, ncols);

	for (c = 0; !ret && c < ncols; c++) {
		text[c] = cs_view_text_column(cols[c]);
		ret = grid_put(g, 0, c, cs_view_column_name(cols[c], o));
	}
	for (i = 0; !ret && i < n; i++) {
		if (i + 16 < n)
			cs_view_prefetch(v, order[i + 16], ev, 0);
		if (i + 8 < n)
			cs_view_prefetch(v, order[i + 8], ev, 1);
		s = ev != (size_t)-1 ? cs_view_summary(v, order[i], ev) : NULL;
		for (c = 0; !ret && c < ncols; c++) {
			if (text[c])
				text_cell(v, order[i], cols[c], o->truncate, buf, sizeof(buf));
			else if (ev != (size_t)-1 && cols[c] >= CS_COL_CALLS &&
				 cols[c] <= CS_COL_TOTAL)
				stat_cell(s, cols[c], buf, sizeof(buf));
			else if (cols[c] == CS_COL_CALLS && ev == (size_t)-1)
				cs_util_human((long double)cs_view_row(v, order[i])->calls, buf,
					      sizeof(buf));
			else
				cs_view_format(v, order[i], ev, cols[c], buf, sizeof(buf));
			ret = grid_put(g, i + 1, c, buf);
		}
	}
	return ret;
}

/* Prints rows as build_rows formats them.  Returns 0 or -ENOMEM. */
static int print_rows(FILE *out, struct cs_view *v, const struct cs_output_opts *o, size_t ev,
		      const size_t *order, size_t n, const int *cols, size_t ncols)
{
	int text[CS_NCOLS + 64];
	struct grid g;
	int ret = build_rows(v, o, ev, order, n, cols, ncols, &g, text);

	if (!ret)
		ret = grid_print(out, &g, text);
	grid_free(&g);
	return ret;
}

/* One event's table, made (by any thread) before it is printed. */
struct table_job {
	size_t ev;
	size_t *order, n; /* the rows, sorted and cut */
	int ret;
	struct grid g;
	int text[CS_NCOLS + 8];
};

/* The tables of all events, shared by the threads that make them. */
struct tables {
	const struct cs_report *r;
	struct cs_view *v;
	const struct cs_output_opts *o;
	struct table_job *jobs;
	size_t njobs, next;
	int format; /* 0: sort the rows, 1: format them */
};

/* Sorts (format 0) or formats (1) the tables of t, job by job, until
 * there are none left. */
static void *work_tables(void *arg)
{
	struct tables *t = arg;
	struct table_job *job;
	int cols[CS_NCOLS + 8];
	size_t k, ncols;

	while ((k = __atomic_fetch_add(&t->next, 1, __ATOMIC_RELAXED)) < t->njobs) {
		job = &t->jobs[k];
		if (!t->format) {
			job->order = cs_view_order_opts(t->v, job->ev, CS_COL_TOTAL, &job->n);
			if (!job->order)
				job->ret = -ENOMEM;
			continue;
		}
		if (job->ret)
			continue;
		ncols = table_columns(t->r, t->o,
				      t->r->by == CS_BY_CALLSITE &&
					      cs_view_any_source(t->v, job->order, job->n),
				      cols);
		job->ret = build_rows(t->v, t->o, job->ev, job->order, job->n, cols, ncols, &job->g,
				      job->text);
	}
	return NULL;
}

/* Runs work_tables over all jobs, with a second thread when parallel. */
static void run_tables(struct tables *t, int parallel)
{
	pthread_t helper;
	int started = 0;

	t->next = 0;
	if (parallel && t->njobs > 1)
		started = pthread_create(&helper, NULL, work_tables, t) == 0;
	work_tables(t);
	if (started)
		pthread_join(helper, NULL);
}

/* Makes the tables of the events of jobs[0, n).  Sorting and formatting
 * 100,000 rows per event is most of the time of a large report, so two
 * threads share the events: the view is only read then, but for each
 * thread's own event, as long as no row's text is made on the way
 * (numbers to sort by; every text made before formatting). */
static void make_tables(const struct cs_report *r, struct cs_view *v,
			const struct cs_output_opts *o, struct table_job *jobs, size_t n,
			int all_text)
{
	struct tables t = {.r = r, .v = v, .o = o, .jobs = jobs, .njobs = n};

	/* A derived column's values are cached per row, for all events:
	 * sorting by one stays in one thread. */
	run_tables(&t, o->sort - 1 < CS_COL_DERIVED &&
			       (all_text || !o->sort || !cs_view_text_column(o->sort - 1)));
	t.format = 1;
	run_tables(&t, all_text);
}

/* The --derive columns: one table of every row, after the events. */
static int print_derived(FILE *out, const struct cs_report *r, struct cs_view *v,
			 const struct cs_output_opts *o)
{
	int cols[CS_NCOLS + 8 + 64];
	size_t n, ncols, nev, *order, i;
	const size_t *evs = cs_view_events(v, &nev);
	int ret;

	fputs("\nderived, per row from the means per call of its events:", out);
	for (i = 0; i < o->nderive; i++) {
		/* The expression as typed: a newline or tab in it is white
		 * space to the parser, an escape here. */
		char *text = cs_util_escape_dup(o->derive[i].text);

		if (!text)
			return -ENOMEM;
		fprintf(out, "%s %s = %s", i ? ";" : "", o->derive[i].name, text);
		free(text);
	}
	fputc('\n', out);
	if (cs_view_nrows(v) == 0) {
		fputs("  no calls recorded\n", out);
		return 0;
	}
	/* A sort column of the events: the first event shown says. */
	order = cs_view_order_opts(v, nev ? evs[0] : 0, CS_COL_DERIVED, &n);
	if (!order)
		return -ENOMEM;
	ncols = 0;
	cols[ncols++] = CS_COL_FUNCTION;
	if (r->by == CS_BY_CALLSITE) {
		cols[ncols++] = CS_COL_CALLSITE;
		cols[ncols++] = CS_COL_MODULE;
		if (cs_view_any_source(v, order, n))
			cols[ncols++] = CS_COL_SOURCE;
	}
	cols[ncols++] = CS_COL_CALLS;
	for (i = 0; i < o->nderive && i < 64; i++)
		cols[ncols++] = CS_COL_DERIVED + (int)i;
	ret = print_rows(out, v, o, (size_t)-1, order, n, cols, ncols);
	free(order);
	return ret;
}

int cs_table_print(FILE *out, const struct cs_report *r, struct cs_symbols *syms,
		   const struct cs_output_opts *o)
{
	struct table_job *jobs;
	struct cs_view *v;
	const size_t *evs;
	size_t nev, i, njobs = 0, refused;
	int ret = 0, all;

	if (o->summary) {
		cs_table_summary(out, r);
		fputc('\n', out);
	}
	if (cs_view_new(r, syms, o, &v))
		return -ENOMEM;
	evs = cs_view_events(v, &nev);
	/* Most rows will be shown: their texts are made at once. */
	all = !o->top || o->top * 4 >= cs_view_nrows(v);
	if (all) {
		cs_view_all_text(v, r->by == CS_BY_CALLSITE);
		cs_view_any_source(v, NULL, cs_view_nrows(v));
	}
	jobs = calloc(nev + 1, sizeof(*jobs));
	if (!jobs) {
		cs_view_free(v);
		return -ENOMEM;
	}
	for (i = 0; i < nev; i++)
		if (!cs_merge_not_counted(r, evs[i]) && cs_view_nrows(v))
			jobs[njobs++].ev = evs[i];
	make_tables(r, v, o, jobs, njobs, all);
	for (i = 0, njobs = 0; i < nev; i++) {
		if (i)
			fputc('\n', out);
		event_title(out, r, evs[i]);
		if (cs_merge_not_counted(r, evs[i])) {
			fputs("  not counted (the event could not be opened)\n", out);
		} else if (cs_view_nrows(v) == 0) {
			fputs("  no calls recorded\n", out);
		} else {
			if (!ret)
				ret = jobs[njobs].ret;
			if (!ret)
				ret = grid_print(out, &jobs[njobs].g, jobs[njobs].text);
			if (!ret && o->say_more && o->top && cs_view_nrows(v) > o->top)
				fprintf(out,
					"  ... and %zu more (cacheshim run --top 0, or cacheshim "
					"report, shows them all)\n",
					cs_view_nrows(v) - o->top);
			grid_free(&jobs[njobs].g);
			free(jobs[njobs++].order);
		}
	}
	free(jobs);
	if (r->nevents == 0)
		fputs("no events recorded\n", out);
	if (!ret && o->nderive)
		ret = print_derived(out, r, v, o);
	cs_view_free(v);
	if (ret)
		return ret;
	/* The preset formulas, after the events they are made of. */
	if (cs_formulas_table(out, r, syms, o->raw_names) == -ENOMEM)
		return -ENOMEM;
	/* Calls of a refused function that no GOT slot saw are missing
	 * from the rows above: say so where it will be read. */
	refused = cs_targets_refused(r);
	if (refused)
		fprintf(out,
			"\n%zu target%s refused entry patching (cacheshim report --targets shows "
			"why)\n",
			refused, refused == 1 ? "" : "s");
	if (!o->no_notes)
		cs_table_notes(out, r);
	return cs_util_flushed(out);
}

void cs_table_notes(FILE *out, const struct cs_report *r)
{
	struct cs_note_info **v;
	size_t i, n;
	char *e;

	v = cs_merge_notes(r, &n);
	if (n)
		fputs("\nnotes of the shim (said on the program's stderr as it ran):\n", out);
	for (i = 0; i < n; i++) {
		e = cs_util_escape_dup(v[i]->text);
		fprintf(out, "  %s", e ? e : "?");
		if (v[i]->nfiles < r->nfiles)
			fprintf(out, "  [%zu of %zu files]", v[i]->nfiles, r->nfiles);
		fputc('\n', out);
		free(e);
	}
	free(v);
}
