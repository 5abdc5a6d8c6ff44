/* SPDX-License-Identifier: MIT */
/* cacheshim report: prints merged report files as a table or as CSV. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report/internal.h"

enum format { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_HTML };

/* Long options without a short one. */
enum { OPT_SELF = 0x200, OPT_NESTED, OPT_SERIES, OPT_TARGETS };

static void usage(FILE *out)
{
	fputs("usage: cacheshim report [--by function|callsite|key]\n"
	      "                        [--format table|csv|json|html] [--self] [--nested]\n"
	      "                        [--series] [--targets] [--debug-dir DIR]\n"
	      "                        [--subtract-overhead] [--sort COL[:asc|:desc]]\n"
	      "                        [--top N] [--function GLOB] [--module GLOB]\n"
	      "                        [--event NAME[,NAME]] [--hist] [--cold] [--binomial]\n"
	      "                        [--derive NAME=EXPR] [--search-path DIR]\n"
	      "                        [--no-demangle] FILE...\n"
	      "       cacheshim report --diff A B [options]   (A, B: files or directories)\n"
	      "\n"
	      "  -b, --by WHAT       one row per call site (default) or per function;\n"
	      "                      key: per function and argument size class\n"
	      "  -f, --format FMT    table (default), csv, json, or html (one\n"
	      "                      self-contained page with charts)\n"
	      "      --self, --exclusive\n"
	      "                      exclusive values: without the calls of other\n"
	      "                      targets made inside (nested targets)\n"
	      "      --nested        inclusive and self mean side by side\n"
	      "      --series        the values over time, window by window\n"
	      "      --targets       per target: how its calls were caught (entry\n"
	      "                      patch, GOT slots), and why entry patching was\n"
	      "                      refused (table, csv; json always has them)\n"
	      "  -d, --debug-dir DIR where .build-id/xx/yyyy.debug files are looked\n"
	      "                      for (default /usr/lib/debug)\n"
	      "  -s, --subtract-overhead\n"
	      "                      take the measurement's own cost (the median of\n"
	      "                      the shim's calibration calls) off every value\n"
	      "      --sort COL      order by any column (calls, mean, p99, function, ...,\n"
	      "                      bin_p, cold_mean, a --derive name); :asc or :desc\n"
	      "      --top N         at most N rows per table\n"
	      "      --function GLOB, --module GLOB\n"
	      "                      only calls of matching functions / from matching\n"
	      "                      modules (repeatable)\n"
	      "      --event NAMES   only these events, in this order (comma-separated)\n"
	      "      --hist          a histogram per function and event\n"
	      "      --cold          the first call of each site and thread apart\n"
	      "      --binomial      bin_n and bin_p of count events (p = 1 - var/mean)\n"
	      "      --derive NAME=EXPR\n"
	      "                      a column computed from the means of events:\n"
	      "                      + - * / ( ), {odd::NAME-S} in braces (repeatable)\n"
	      "      --search-path DIR\n"
	      "                      where moved programs and libraries are looked for\n"
	      "                      (by name, then by build id)\n"
	      "      --diff A B      compare run A with run B per function and event\n"
	      "      --no-demangle   C++ names as mangled (_ZN2ns4workEi) in the tables\n"
	      "                      and the HTML (the CSV always has them so)\n"
	      "  -h, --help          this text\n",
	      out);
}

/* Appends name to the list in buf of the options given that mode would
 * not apply (silently dropping one is worse than refusing it). */
static void unused(char *buf, size_t len, int given, const char *name)
{
	size_t n = strlen(buf);

	if (given)
		snprintf(buf + n, len - n, "%s%s", n ? ", " : "", name);
}

/* Says which options mode (--series, --targets, --hist, --diff, a format)
 * ignores, when some were given.  Returns 1 when it said so. */
static int refuse_unused(const char *mode, const char *list)
{
	if (!list[0])
		return 0;
	cs_err("report: %s does not apply %s", mode, list);
	return 1;
}

/* Whether f recorded a call of the program's (the calibration's are the
 * shim's own) or lost one.  An unfinished file that did neither lost
 * nothing: a shell of `cacheshim run -- sh -c ...` that leaves by _exit
 * had every such run say its file was incomplete. */
static int recorded_any(const struct cs_file *f)
{
	size_t i;

	for (i = 0; i < f->nsites; i++) {
		if (!(cs_reader_target(f, f->sites[i]->target)->how & CS_HOOK_CALIBRATION))
			return 1;
	}
	return f->hdr->lost_calls != 0;
}

int cs_report_add_file(struct cs_report *r, const char *path)
{
	struct cs_file *f;
	char err[1024];
	int ret = 0, merged;

	if (cs_reader_load(path, &f, err, sizeof(err)) != 0) {
		cs_err("%s", err);
		return -1;
	}
	/* (Not from cacheshim run -q, which reads the files for the targets
	 * only: a program killed by a signal got a warning under -q.) */
	if (f->incomplete && recorded_any(f) && !r->targets_only)
		cs_warn("%s is incomplete (program still running or did not exit cleanly)", path);
	if (f->damage[0]) {
		if (f->ndamage > 1)
			cs_err("%s: damaged: %s (and %u more problem%s); the report shows what "
			       "could be read",
			       path, f->damage, f->ndamage - 1, f->ndamage > 2 ? "s" : "");
		else
			cs_err("%s: damaged: %s; the report shows what could be read", path,
			       f->damage);
		ret = 1;
	}
	if (f->nmerging && !r->targets_only)
		cs_warn("%s: %u series over time not shown: their windows were being merged "
			"when the program ended",
			path, f->nmerging);
	merged = cs_merge_add(r, f);
	if (merged == -EOVERFLOW) {
		cs_err("%s: 2^64 calls or more in one row: no real run records as many (a "
		       "damaged or crafted file?)",
		       path);
		ret = -1;
	} else if (merged) {
		cs_err("out of memory while merging %s", path);
		ret = -1;
	} else if (f->nseries && !r->targets_only) {
		/* The series are read from the file's own blocks (not for
		 * the launcher's end-of-run check, which shows none). */
		if (cs_merge_keep(r, f) == 0)
			return ret;
		cs_err("out of memory while merging %s", path);
		ret = -1;
	}
	cs_reader_free(f);
	return ret;
}

int cs_report_add_files(struct cs_report *r, char *const *paths,
			const struct cs_file_header *hdr, const size_t *keep, const int *same,
			size_t n)
{
	int ret, worst = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		if (same && same[i] >= 0) {
			/* ("the same file as" itself read oddly, and more so
			 * when that one was skipped as a copy.) */
			if (strcmp(paths[i], paths[same[i]]) == 0)
				cs_warn("%s is named more than once: read once", paths[i]);
			else
				cs_warn("%s is the same file as %s: read once", paths[i],
					paths[same[i]]);
			continue;
		}
		if (keep[i] != i) {
			cs_warn("%s is a copy of %s (the file of the same process, pid %u): read "
				"once",
				paths[i], paths[keep[i]], hdr[i].pid);
			continue;
		}
		ret = cs_report_add_file(r, paths[i]);
		if (ret < 0)
			worst = -1;
		else if (ret > 0 && worst == 0)
			worst = 1;
	}
	return worst;
}

/* Loads every file; reports every unreadable one before giving up, so
 * that one run shows all of them.  Returns 0, 1 when some file was
 * damaged (its readable part is in r) or -1 when some file could not be
 * read at all. */
static int load_all(struct cs_report *r, char **paths, int n)
{
	struct cs_file_header *hdr = calloc((size_t)n, sizeof(*hdr));
	const struct cs_file_header **hp = calloc((size_t)n, sizeof(*hp));
	struct stat *st = calloc((size_t)n, sizeof(*st));
	size_t *keep = calloc((size_t)n, sizeof(*keep));
	int *same = calloc((size_t)n, sizeof(*same));
	unsigned char *statted = calloc((size_t)n, 1);
	int i, j, worst = 0;

	if (!hdr || !hp || !st || !keep || !same || !statted) {
		cs_err("out of memory");
		worst = -1;
		goto out;
	}
	/* A file named twice (a.rpt ./a.rpt, or a glob and a name) would
	 * count every call twice; so would a copy of a file (cp, or a
	 * snapshot taken while it was written) given with it: of one
	 * process's files the one that got furthest is read, the first
	 * named of those alike (a snapshot named first lost the calls made
	 * since). */
	for (i = 0; i < n; i++) {
		same[i] = -1;
		statted[i] = stat(paths[i], &st[i]) == 0;
		for (j = 0; j < i && statted[i] && same[i] < 0; j++)
			if (statted[j] && st[i].st_dev == st[j].st_dev &&
			    st[i].st_ino == st[j].st_ino)
				same[i] = j;
		if (same[i] < 0 && cs_reader_peek(paths[i], &hdr[i]) == 0)
			hp[i] = &hdr[i];
	}
	if (cs_reader_copies(hp, (const char *const *)paths, (size_t)n, keep)) {
		cs_err("out of memory");
		worst = -1;
		goto out;
	}
	worst = cs_report_add_files(r, paths, hdr, keep, same, (size_t)n);
out:
	free(hdr);
	free(hp);
	free(st);
	free(keep);
	free(same);
	free(statted);
	return worst;
}

int cs_cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"by", required_argument, NULL, 'b'},
		{"format", required_argument, NULL, 'f'},
		{"debug-dir", required_argument, NULL, 'd'},
		{"subtract-overhead", no_argument, NULL, 's'},
		{"self", no_argument, NULL, OPT_SELF},
		{"exclusive", no_argument, NULL, OPT_SELF},
		{"nested", no_argument, NULL, OPT_NESTED},
		{"series", no_argument, NULL, OPT_SERIES},
		{"targets", no_argument, NULL, OPT_TARGETS},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cs_output_opts o = {.summary = 1, .truncate = 1};
	struct cs_options args = {0}; /* options.c: --sort ... --diff */
	struct option all[64];
	enum cs_by by = CS_BY_CALLSITE;
	enum format fmt = FMT_TABLE;
	const char *debug_dir = NULL;
	struct cs_symbols *syms;
	struct cs_report *r;
	char b[48];
	int c, ret, damaged, subtract = 0, self = 0, series = 0, targets = 0;

	while ((c = getopt_long(argc, argv, "b:f:d:sh", cs_options_table(opts, all, 64), NULL)) !=
	       -1) {
		switch (c) {
		case 'b':
			args.by_given = 1;
			if (strcmp(optarg, "function") == 0)
				by = CS_BY_FUNCTION;
			else if (strcmp(optarg, "callsite") == 0)
				by = CS_BY_CALLSITE;
			else if (strcmp(optarg, "key") == 0)
				by = CS_BY_FUNCTION; /* keyed rows are per class anyway */
			else {
				cs_err("report: unknown --by value '%s' (function, callsite or "
				       "key)",
				       optarg);
				return CS_EXIT_USAGE;
			}
			break;
		case 'f':
			if (strcmp(optarg, "table") == 0)
				fmt = FMT_TABLE;
			else if (strcmp(optarg, "csv") == 0)
				fmt = FMT_CSV;
			else if (strcmp(optarg, "json") == 0)
				fmt = FMT_JSON;
			else if (strcmp(optarg, "html") == 0)
				fmt = FMT_HTML;
			else {
				cs_err("report: unknown --format value '%s' (table, csv, json or "
				       "html)",
				       optarg);
				return CS_EXIT_USAGE;
			}
			break;
		case 'd':
			if (cs_util_check_dir("report: --debug-dir", optarg)) {
				cs_options_free(&args);
				return CS_EXIT_USAGE;
			}
			debug_dir = optarg;
			break;
		case 's':
			subtract = 1;
			o.subtract = 1;
			break;
		case OPT_SELF:
			self = 1;
			break;
		case OPT_NESTED:
			o.nested = 1;
			break;
		case OPT_SERIES:
			series = 1;
			break;
		case OPT_TARGETS:
			targets = 1;
			break;
		case 'h':
			usage(stdout);
			return cs_util_stdout_done();
		default:
			ret = cs_options_parse(&args, c, optarg);
			if (ret == 0)
				break;
			if (ret > 0)
				usage(stderr);
			cs_options_free(&args);
			return CS_EXIT_USAGE;
		}
	}
	if (args.hist && fmt != FMT_TABLE) {
		cs_err("report: --hist draws in the table format only");
		cs_options_free(&args);
		return CS_EXIT_USAGE;
	}
	if ((args.sort || args.top) && !args.diff && (fmt == FMT_JSON || fmt == FMT_HTML)) {
		/* They hold every row, grouped by function: a cut or an order
		 * asked for would silently not happen. */
		cs_err("report: --sort and --top order and cut the table and the CSV; "
		       "--format %s holds every row and event (select with --function, --module)",
		       fmt == FMT_JSON ? "json" : "html");
		cs_options_free(&args);
		return CS_EXIT_USAGE;
	}
	{
		char list[256] = "";
		const char *mode = NULL;

		if (args.diff) {
			/* cs_options_diff prints a table or the CSV of plain values. */
			mode = "--diff";
			unused(list, sizeof(list), fmt == FMT_JSON, "--format json");
			unused(list, sizeof(list), fmt == FMT_HTML, "--format html");
			unused(list, sizeof(list), self, "--self");
			unused(list, sizeof(list), o.nested, "--nested");
			unused(list, sizeof(list), series, "--series");
		} else if (targets) {
			/* One row per target, whatever the rows of the calls
			 * (the JSON document holds both). */
			mode = "--targets";
			unused(list, sizeof(list), args.by_given && fmt != FMT_JSON, "--by");
			unused(list, sizeof(list), args.nmod_globs, "--module");
			unused(list, sizeof(list), args.nevents, "--event");
			unused(list, sizeof(list), args.sort != NULL, "--sort");
			unused(list, sizeof(list), args.top, "--top");
			unused(list, sizeof(list), args.nderive, "--derive");
			unused(list, sizeof(list), args.binomial, "--binomial");
			unused(list, sizeof(list), args.cold, "--cold");
			unused(list, sizeof(list), o.nested, "--nested");
			unused(list, sizeof(list), self, "--self");
			unused(list, sizeof(list), subtract, "--subtract-overhead");
		} else if (series && (fmt == FMT_TABLE || fmt == FMT_CSV)) {
			/* The windows hold the values as measured, without the
			 * nested calls' values or counts that --self and
			 * --subtract-overhead need: refused, not dropped. */
			mode = "--series";
			unused(list, sizeof(list), self, "--self");
			unused(list, sizeof(list), subtract, "--subtract-overhead");
			unused(list, sizeof(list), args.by_given, "--by");
			unused(list, sizeof(list), args.nfn_globs, "--function");
			unused(list, sizeof(list), args.nmod_globs, "--module");
			unused(list, sizeof(list), args.nevents, "--event");
			unused(list, sizeof(list), args.sort != NULL, "--sort");
			unused(list, sizeof(list), args.top, "--top");
			unused(list, sizeof(list), args.hist, "--hist");
			unused(list, sizeof(list), args.nderive, "--derive");
			unused(list, sizeof(list), args.binomial, "--binomial");
			unused(list, sizeof(list), args.cold, "--cold");
			unused(list, sizeof(list), o.nested, "--nested");
		} else if (fmt == FMT_JSON || fmt == FMT_HTML) {
			/* The document holds every event, both views and no
			 * derived, binomial or cold/warm columns. */
			mode = fmt == FMT_JSON ? "--format json" : "--format html";
			unused(list, sizeof(list), args.nevents, "--event");
			unused(list, sizeof(list), args.nderive, "--derive");
			unused(list, sizeof(list), args.binomial, "--binomial");
			unused(list, sizeof(list), args.cold, "--cold");
			unused(list, sizeof(list), o.nested, "--nested");
		} else if (args.hist) {
			mode = "--hist";
			unused(list, sizeof(list), args.nderive, "--derive");
			unused(list, sizeof(list), args.binomial, "--binomial");
			unused(list, sizeof(list), args.cold, "--cold");
			unused(list, sizeof(list), o.nested, "--nested");
		}
		if (mode && refuse_unused(mode, list)) {
			cs_options_free(&args);
			return CS_EXIT_USAGE;
		}
	}
	if (targets && (fmt == FMT_HTML || series || args.hist || args.diff)) {
		cs_err("report: --targets prints a table, CSV or JSON, without --series, --hist "
		       "and --diff");
		cs_options_free(&args);
		return CS_EXIT_USAGE;
	}
	if (args.diff) {
		ret = cs_options_diff(&args, argc - optind, argv + optind,
				      args.by_given ? by : CS_BY_FUNCTION, subtract, debug_dir,
				      fmt == FMT_CSV);
		cs_options_free(&args);
		return ret;
	}
	if (optind >= argc) {
		cs_err("report: no report file given");
		usage(stderr);
		return CS_EXIT_USAGE;
	}

	r = cs_merge_new(by);
	syms = cs_symbols_new(debug_dir);
	if (!r || !syms) {
		cs_err("out of memory");
		cs_merge_free(r);
		cs_symbols_free(syms);
		return CS_EXIT_FAIL;
	}
	r->subtract_overhead = subtract;
	r->self = self;
	if (cs_options_before(&args, r, syms)) {
		cs_err("out of memory");
		cs_merge_free(r);
		cs_symbols_free(syms);
		cs_options_free(&args);
		return CS_EXIT_FAIL;
	}
	damaged = load_all(r, argv + optind, argc - optind);
	ret = damaged < 0 ? CS_EXIT_FAIL : cs_options_after(&args, r, &o);
	if (ret != CS_EXIT_OK) {
		cs_merge_free(r);
		cs_symbols_free(syms);
		cs_options_free(&args);
		return ret;
	}
	if (targets && fmt == FMT_TABLE) {
		ret = cs_targets_print_table(stdout, r, o.raw_names);
	} else if (targets && fmt == FMT_CSV) {
		ret = cs_targets_print_csv(stdout, r);
	} else if (series && (fmt == FMT_CSV || fmt == FMT_TABLE)) {
		ret = fmt == FMT_CSV ? cs_series_print_csv(stdout, r)
				     : cs_series_print_table(stdout, r, o.raw_names);
	} else if (fmt == FMT_JSON) {
		ret = cs_json_print(stdout, r, syms, &o);
	} else if (fmt == FMT_HTML) {
		ret = cs_html_print(stdout, r, syms, &o);
	} else if (fmt == FMT_CSV) {
		ret = cs_csv_print(stdout, r, syms, &o);
		/* The CSV has no room for it; the table has it in its summary. */
		if (r->not_returned)
			cs_warn("calls that did not return: %s (still running, or left by longjmp, "
				"exit or a crash)",
				cs_util_u128(r->not_returned, b, sizeof(b)));
	} else if (args.hist) {
		ret = cs_hist_print(stdout, r, &o);
	} else {
		ret = cs_table_print(stdout, r, syms, &o);
	}
	cs_merge_free(r);
	cs_symbols_free(syms);
	cs_options_free(&args);
	if (ret == -EOVERFLOW) {
		cs_err("report: 2^64 calls or more in one function: no real run records as "
		       "many (damaged or crafted files?)");
		return CS_EXIT_FAIL;
	}
	if (ret) {
		cs_err("report: cannot write the report: %s", strerror(-ret));
		return CS_EXIT_FAIL;
	}
	/* A damaged file: the numbers shown are incomplete, and a script
	 * that only looks at the status must notice. */
	return damaged ? CS_EXIT_FAIL : CS_EXIT_OK;
}
