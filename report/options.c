/* SPDX-License-Identifier: MIT */
/* The report options that select, sort and add columns, and --diff. */
#include <dirent.h>
#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/internal.h"

/*
 * cmd_report.c parses the command line; the options of this file are
 * handed here (cs_options_parse) and take effect in two steps: what the
 * merge needs before the files are read (cs_options_before: --function,
 * --module, --cold, --search-path), and what needs the report's events
 * after (cs_options_after: --event, --derive, --sort).
 */

const struct option cs_options_long[] = {
	{"sort", required_argument, NULL, CS_OPT_SORT},
	{"top", required_argument, NULL, CS_OPT_TOP},
	{"function", required_argument, NULL, CS_OPT_FUNCTION},
	{"module", required_argument, NULL, CS_OPT_MODULE},
	{"event", required_argument, NULL, CS_OPT_EVENT},
	{"hist", no_argument, NULL, CS_OPT_HIST},
	{"cold", no_argument, NULL, CS_OPT_COLD},
	{"binomial", no_argument, NULL, CS_OPT_BINOMIAL},
	{"derive", required_argument, NULL, CS_OPT_DERIVE},
	{"search-path", required_argument, NULL, CS_OPT_SEARCH},
	{"diff", required_argument, NULL, CS_OPT_DIFF},
	{"no-demangle", no_argument, NULL, CS_OPT_NO_DEMANGLE},
	{NULL, 0, NULL, 0},
};

static int push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = strdup(s);
	if (!nv[*n])
		return -ENOMEM;
	(*n)++;
	return 0;
}

/* Splits list at commas into v.  Returns 0, -ENOMEM, or -EINVAL for an
 * empty name (",", "a,,b": a typo, not "every event"). */
static int push_list(char ***v, size_t *n, const char *list)
{
	const char *p = list, *comma;
	char *name;
	int ret = 0;

	do {
		comma = strchr(p, ',');
		if (comma == p || *p == '\0')
			return -EINVAL;
		name = strndup(p, comma ? (size_t)(comma - p) : strlen(p));
		if (!name)
			return -ENOMEM;
		ret = push(v, n, name);
		free(name);
		p = comma + 1;
	} while (comma && !ret);
	return ret;
}

int cs_options_parse(struct cs_options *a, int c, const char *arg)
{
	struct cs_derive *nd;
	char err[1024], *end;
	unsigned long long n;
	int ret = 0;

	switch (c) {
	case CS_OPT_SORT:
		a->sort = arg;
		return 0;
	case CS_OPT_TOP:
		errno = 0;
		n = strtoull(arg, &end, 10);
		/* 0: every row, as without it (and as cacheshim run's --top 0). */
		if (errno || end == arg || *end || arg[0] == '-' || n > SIZE_MAX) {
			cs_err("report: --top wants a number (0: every row), not '%s'", arg);
			return -1;
		}
		a->top = (size_t)n;
		return 0;
	case CS_OPT_FUNCTION:
		ret = push(&a->fn_globs, &a->nfn_globs, arg);
		break;
	case CS_OPT_MODULE:
		ret = push(&a->mod_globs, &a->nmod_globs, arg);
		break;
	case CS_OPT_EVENT:
		ret = push_list(&a->events, &a->nevents, arg);
		if (ret == -EINVAL) {
			cs_err("report: --event '%s': an empty event name", arg);
			return -1;
		}
		break;
	case CS_OPT_HIST:
		a->hist = 1;
		return 0;
	case CS_OPT_COLD:
		a->cold = 1;
		return 0;
	case CS_OPT_BINOMIAL:
		a->binomial = 1;
		return 0;
	case CS_OPT_DERIVE:
		nd = realloc(a->derive, (a->nderive + 1) * sizeof(*nd));
		if (!nd) {
			ret = -ENOMEM;
			break;
		}
		a->derive = nd;
		ret = cs_derive_parse(arg, &a->derive[a->nderive], err, sizeof(err));
		if (ret == -EINVAL) {
			cs_err("report: %s", err);
			return -1;
		}
		if (ret == 0)
			a->nderive++;
		break;
	case CS_OPT_SEARCH:
		if (cs_util_check_dir("report: --search-path", arg))
			return -1;
		ret = push(&a->search, &a->nsearch, arg);
		break;
	case CS_OPT_DIFF:
		/* --diff --by callsite A B took "--by" for run A. */
		if (arg[0] == '-' && arg[1] && access(arg, F_OK) != 0) {
			cs_err("report: --diff A B: the two runs come right after --diff, not '%s' "
			       "(options go before --diff or after B)",
			       arg);
			return -1;
		}
		a->diff = arg;
		return 0;
	case CS_OPT_NO_DEMANGLE:
		a->no_demangle = 1;
		return 0;
	default:
		return 1;
	}
	if (ret) {
		cs_err("out of memory");
		return -1;
	}
	return 0;
}

/* The column and direction of "COLUMN[:asc|:desc]"; col -1 when the
 * column is unknown. */
static void sort_spec(const char *spec, char *col, size_t len, int *dir)
{
	const char *colon = strrchr(spec, ':');
	size_t n = strlen(spec);

	*dir = 0;
	if (colon && (strcmp(colon, ":asc") == 0 || strcmp(colon, ":desc") == 0)) {
		*dir = strcmp(colon, ":asc") == 0 ? 1 : 2;
		n = (size_t)(colon - spec);
	}
	snprintf(col, len, "%.*s", (int)n, spec);
}

int cs_options_before(const struct cs_options *a, struct cs_report *r, struct cs_symbols *syms)
{
	char col[128];
	size_t i;
	int dir;

	r->fn_globs = a->fn_globs;
	r->nfn_globs = a->nfn_globs;
	r->mod_globs = a->mod_globs;
	r->nmod_globs = a->nmod_globs;
	if (a->nmod_globs) {
		r->mod_seen = calloc(a->nmod_globs, 1);
		if (!r->mod_seen)
			return -ENOMEM;
	}
	r->cold = a->cold;
	if (a->sort) {
		/* Sorting by a cold or warm column needs the first calls too. */
		sort_spec(a->sort, col, sizeof(col), &dir);
		if (strncmp(col, "cold_", 5) == 0 || strncmp(col, "warm_", 5) == 0)
			r->cold = 1;
	}
	for (i = 0; syms && i < a->nsearch; i++)
		if (cs_symbols_search_path(syms, a->search[i]))
			return -ENOMEM;
	return 0;
}

/* 1 when LC_CTYPE of the environment is UTF-8.  The command keeps the C
 * locale otherwise: numbers must not get a decimal comma. */
static int utf8_locale(void)
{
	const char *old = setlocale(LC_CTYPE, NULL);
	char *saved = old ? strdup(old) : NULL;
	int utf8 = 0;

	if (setlocale(LC_CTYPE, ""))
		utf8 = strcmp(nl_langinfo(CODESET), "UTF-8") == 0;
	setlocale(LC_CTYPE, saved ? saved : "C");
	free(saved);
	return utf8;
}

/* Whether glob matches the name of a function in the files (as the file
 * has it, or demangled): one that matches none is most likely a typo (or
 * '[' with no ']'), and would print an empty report with exit 0. */
static int matches_a_function(const struct cs_report *r, const char *glob)
{
	struct cs_target_info *t, *tmp;

	HASH_ITER(hh, r->targets, t, tmp)
	{
		if (cs_merge_fn_glob(glob, t))
			return 1;
	}
	return 0;
}

int cs_options_after(struct cs_options *a, struct cs_report *r, struct cs_output_opts *o)
{
	char err[1024], col[128];
	size_t i, e;
	int found, c, dir;

	o->top = a->top;
	o->cold = a->cold;
	o->binomial = a->binomial;
	o->ascii = !utf8_locale();
	o->raw_names = a->no_demangle;
	free(a->event_shown);
	free(a->event_order);
	a->event_shown = NULL;
	a->event_order = NULL;
	o->event_shown = NULL;
	o->event_order = NULL;
	o->nevent_order = 0;
	for (i = 0; r->nfiles && i < a->nfn_globs; i++) {
		if (!matches_a_function(r, a->fn_globs[i])) {
			cs_err("report: --function %s: no function in the files matches", a->fn_globs[i]);
			return CS_EXIT_USAGE;
		}
	}
	/* The same for a module: an empty table with exit 0 looked like
	 * "no calls from there". */
	for (i = 0; r->nfiles && r->mod_seen && i < a->nmod_globs; i++) {
		if (!r->mod_seen[i]) {
			cs_err("report: --module %s: no call in the files is made from a matching "
			       "module",
			       a->mod_globs[i]);
			return CS_EXIT_USAGE;
		}
	}
	if (a->nevents) {
		a->event_shown = calloc(r->nevents + 1, 1);
		a->event_order = calloc(r->nevents + 1, sizeof(*a->event_order));
		if (!a->event_shown || !a->event_order) {
			cs_err("out of memory");
			return CS_EXIT_FAIL;
		}
		/* In the order given: the first is the one CSV rows sort by. */
		for (i = 0; i < a->nevents; i++) {
			for (e = 0; e < i; e++) {
				if (cs_event_same(a->events[e], a->events[i])) {
					cs_err("report: --event %s: named twice", a->events[i]);
					return CS_EXIT_USAGE;
				}
			}
			found = 0;
			for (e = 0; e < r->nevents; e++) {
				if (cs_event_same(r->events[e].name, a->events[i])) {
					if (!a->event_shown[e])
						a->event_order[o->nevent_order++] = e;
					a->event_shown[e] = 1;
					found = 1;
				}
			}
			if (!found && r->nfiles) {
				cs_err("report: --event %s: no such event in the files",
				       a->events[i]);
				return CS_EXIT_USAGE;
			}
		}
		o->event_shown = a->event_shown;
		o->event_order = a->event_order;
	}
	if (a->nderive) {
		c = cs_derive_resolve(a->derive, a->nderive, r, err, sizeof(err));
		if (c) {
			cs_err(c == -ENOMEM ? "out of memory" : "report: %s", err);
			return c == -ENOMEM ? CS_EXIT_FAIL : CS_EXIT_USAGE;
		}
		o->derive = a->derive;
		o->nderive = a->nderive;
	}
	o->sort = 0;
	o->sort_dir = 0;
	if (a->sort && !a->diff) {
		sort_spec(a->sort, col, sizeof(col), &dir);
		c = cs_view_column(col, o);
		if (c < 0 && strchr(col, ':')) {
			cs_err("report: --sort %s: '%s' is no order (:asc or :desc)", a->sort,
			       strrchr(col, ':'));
			return CS_EXIT_USAGE;
		}
		if (c < 0) {
			cs_err("report: --sort %s: no such column (function, callsite, module, "
			       "source, "
			       "calls, mean, stddev, min, p50, p90, p99, max, total, bin_n, bin_p, "
			       "cold_n, cold_mean, cold_min, cold_max, warm_n, warm_mean, "
			       "warm_stddev, "
			       "warm_min, warm_p50, warm_p90, warm_p99, warm_max, warm_total, "
			       "incl, "
			       "self, or a --derive name; :asc or :desc may follow)",
			       a->sort);
			return CS_EXIT_USAGE;
		}
		o->sort = c + 1;
		o->sort_dir = dir;
	}
	return CS_EXIT_OK;
}

void cs_options_free(struct cs_options *a)
{
	size_t i;

	for (i = 0; i < a->nfn_globs; i++)
		free(a->fn_globs[i]);
	for (i = 0; i < a->nmod_globs; i++)
		free(a->mod_globs[i]);
	for (i = 0; i < a->nevents; i++)
		free(a->events[i]);
	for (i = 0; i < a->nsearch; i++)
		free(a->search[i]);
	free(a->fn_globs);
	free(a->mod_globs);
	free(a->events);
	free(a->search);
	cs_derive_free(a->derive, a->nderive);
	free(a->derive);
	free(a->event_shown);
	free(a->event_order);
	memset(a, 0, sizeof(*a));
}

/* Adds to r the file at path, or every report file directly in the
 * directory at path (in name order; of one process's files, a copy, the
 * one that got furthest: cs_reader_copies).  Returns as load_all does: 0,
 * 1 (some damage) or -1. */
static int add_path(struct cs_report *r, const char *path)
{
	struct cs_file_header *hdr = NULL;
	const struct cs_file_header **hp = NULL;
	struct dirent **names;
	struct stat st;
	char **files = NULL;
	size_t *keep = NULL, nfiles = 0, i;
	int n, ret, worst = 0;

	if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return cs_report_add_file(r, path);
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		cs_err("%s: cannot read the directory: %s", path, strerror(errno));
		return -1;
	}
	files = calloc((size_t)n + 1, sizeof(*files));
	hdr = calloc((size_t)n + 1, sizeof(*hdr));
	if (!files || !hdr)
		worst = -1;
	/* Only report files: a directory of runs may hold the program's
	 * other output too. */
	for (i = 0; i < (size_t)n; i++) {
		if (!worst && asprintf(&files[nfiles], "%s/%s", path, names[i]->d_name) < 0) {
			files[nfiles] = NULL;
			worst = -1;
		}
		if (!worst && cs_reader_peek(files[nfiles], &hdr[nfiles]) == 0) {
			nfiles++;
		} else if (files) {
			free(files[nfiles]);
			files[nfiles] = NULL;
		}
		free(names[i]);
	}
	free(names);
	hp = calloc(nfiles + 1, sizeof(*hp));
	keep = calloc(nfiles + 1, sizeof(*keep));
	for (i = 0; hp && i < nfiles; i++)
		hp[i] = &hdr[i];
	if (worst || !hp || !keep || cs_reader_copies(hp, (const char *const *)files, nfiles, keep)) {
		cs_err("out of memory");
		worst = -1;
		nfiles = 0;
	} else if (!nfiles) {
		cs_err("%s: no report files in this directory", path);
		worst = -1;
	}
	if (nfiles) {
		ret = cs_report_add_files(r, files, hdr, keep, NULL, nfiles);
		if (ret < 0 || worst == 0)
			worst = ret;
	}
	for (i = 0; files && files[i]; i++)
		free(files[i]);
	free(files);
	free(hdr);
	free(hp);
	free(keep);
	return worst;
}

int cs_options_diff(struct cs_options *a, int npaths, char **paths, enum cs_by by, int subtract,
		    const char *debug_dir, int csv)
{
	struct cs_report *ra = NULL, *rb = NULL;
	struct cs_symbols *syms = NULL;
	int da, db, ret = CS_EXIT_FAIL, st;
	const char *b_path;
	size_t i, e;

	if (npaths != 1) {
		cs_err("report: --diff A B: %s",
		       npaths ? "one run B after A, not more" : "run B is missing");
		return CS_EXIT_USAGE;
	}
	if (a->hist || a->cold || a->binomial || a->nderive) {
		cs_err("report: --diff compares calls, mean and percentiles: not with --hist, "
		       "--cold, --binomial or --derive");
		return CS_EXIT_USAGE;
	}
	b_path = paths[0];
	ra = cs_merge_new(by);
	rb = cs_merge_new(by);
	syms = cs_symbols_new(debug_dir);
	if (!ra || !rb || !syms) {
		cs_err("out of memory");
		goto out;
	}
	ra->subtract_overhead = rb->subtract_overhead = subtract;
	if (cs_options_before(a, ra, syms) || cs_options_before(a, rb, NULL)) {
		cs_err("out of memory");
		goto out;
	}
	da = add_path(ra, a->diff);
	db = add_path(rb, b_path);
	if (da < 0 || db < 0)
		goto out;
	/* As without --diff: a --function or --module glob that matches
	 * nothing in either run printed empty tables with exit 0. */
	for (i = 0; i < a->nfn_globs; i++) {
		if (!matches_a_function(ra, a->fn_globs[i]) &&
		    !matches_a_function(rb, a->fn_globs[i])) {
			cs_err("report: --function %s: no function in the files matches",
			       a->fn_globs[i]);
			ret = CS_EXIT_USAGE;
			goto out;
		}
	}
	for (i = 0; i < a->nmod_globs; i++) {
		if (!(ra->mod_seen && ra->mod_seen[i]) && !(rb->mod_seen && rb->mod_seen[i])) {
			cs_err("report: --module %s: no call in the files is made from a matching "
			       "module",
			       a->mod_globs[i]);
			ret = CS_EXIT_USAGE;
			goto out;
		}
	}
	/* Events are matched by name: a name must be in one run or other. */
	for (i = 0; i < a->nevents; i++) {
		for (e = 0; e < ra->nevents && !cs_event_same(ra->events[e].name, a->events[i]); e++)
			;
		if (e < ra->nevents)
			continue;
		for (e = 0; e < rb->nevents && !cs_event_same(rb->events[e].name, a->events[i]); e++)
			;
		if (e == rb->nevents) {
			cs_err("report: --event %s: no such event in the files", a->events[i]);
			ret = CS_EXIT_USAGE;
			goto out;
		}
	}
	st = cs_diff_print(stdout, ra, rb, syms, a, csv);
	if (st == -EINVAL) {
		ret = CS_EXIT_USAGE;
		goto out;
	}
	if (st) {
		cs_err("report: cannot write the report: %s", strerror(-st));
		goto out;
	}
	ret = da || db ? CS_EXIT_FAIL : CS_EXIT_OK;
out:
	cs_merge_free(ra);
	cs_merge_free(rb);
	cs_symbols_free(syms);
	return ret;
}

const struct option *cs_options_table(const struct option *theirs, struct option *buf, size_t n)
{
	size_t i = 0, j;

	for (; theirs[i].name && i + 1 < n; i++)
		buf[i] = theirs[i];
	for (j = 0; cs_options_long[j].name && i + 1 < n; j++)
		buf[i++] = cs_options_long[j];
	memset(&buf[i], 0, sizeof(buf[i]));
	return buf;
}
