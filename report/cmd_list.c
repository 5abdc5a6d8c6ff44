/* SPDX-License-Identifier: MIT */
/* cacheshim list: the events libpfm4 knows here, with their perf encoding. */
#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <perfmon/pfmlib_perf_event.h>

#include "report/internal.h"

#define NAME_WIDTH 52 /* column where the encoding starts */

static void usage(FILE *out)
{
	fputs("usage: cacheshim list [--pmu NAME] [PATTERN]\n"
	      "\n"
	      "  PATTERN         a glob (fnmatch, case-insensitive) or a substring of\n"
	      "                  PMU::EVENT or PMU::EVENT:UMASK\n"
	      "  -p, --pmu NAME  list the events of PMU NAME as if this machine had it\n"
	      "                  (LIBPFM_FORCE_PMU), e.g. skl, amd64_fam17h\n"
	      "  -h, --help      this text\n",
	      out);
}

struct filter {
	const char *pattern; /* NULL: everything */
	int glob;
};

static int match1(const struct filter *f, const char *s)
{
	if (f->glob)
		return fnmatch(f->pattern, s, FNM_CASEFOLD) == 0;
	return strcasestr(s, f->pattern) != NULL;
}

/* An event matches under its full name and its bare name, so that
 * "MEM_LOAD*" and "skl::MEM_LOAD*" both work. */
static int matches(const struct filter *f, const char *full)
{
	const char *bare = strstr(full, "::");

	if (!f->pattern)
		return 1;
	return match1(f, full) || (bare && match1(f, bare + 2));
}

/* Writes " type T config 0x..." for the event string ev into buf, or
 * "(needs a umask)" and the like when libpfm4 cannot encode it alone. */
static void encoding(const char *ev, char *buf, size_t len)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	int n, ret;

	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	ret = pfm_get_os_event_encoding(ev, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret == PFM_ERR_UMASK) {
		snprintf(buf, len, "(needs a umask)");
		return;
	}
	if (ret != PFM_SUCCESS) {
		snprintf(buf, len, "(cannot encode: %s)", pfm_strerror(ret));
		return;
	}
	n = snprintf(buf, len, "type %u config 0x%llx", attr.type, (unsigned long long)attr.config);
	if (attr.config1 && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " config1 0x%llx",
			      (unsigned long long)attr.config1);
	if (attr.config2 && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " config2 0x%llx",
			 (unsigned long long)attr.config2);
}

static void line(const char *name, const char *enc, const char *note)
{
	int pad = NAME_WIDTH - (int)strlen(name);

	printf("%s%*s %s%s\n", name, pad > 0 ? pad : 0, "", enc, note);
}

/* Lists the events of one PMU that match f, after a blank line when
 * *shown says something was listed before.  Adds their number to *shown. */
static void list_pmu(const pfm_pmu_info_t *pi, const struct filter *f, unsigned *shown)
{
	pfm_event_attr_info_t ai;
	pfm_event_info_t ei;
	char full[512], um[640], enc[160], label[160];
	int e, a, any_umask_match, header = 0;

	for (e = pi->first_event; e != -1; e = pfm_get_event_next(e)) {
		memset(&ei, 0, sizeof(ei));
		ei.size = sizeof(ei);
		if (pfm_get_event_info(e, PFM_OS_PERF_EVENT_EXT, &ei) != PFM_SUCCESS)
			continue;
		snprintf(full, sizeof(full), "%s::%s", pi->name, ei.name);
		/* When only some umasks match, show the event with just
		 * those. */
		any_umask_match = 0;
		if (!matches(f, full)) {
			for (a = 0; a < ei.nattrs && !any_umask_match; a++) {
				memset(&ai, 0, sizeof(ai));
				ai.size = sizeof(ai);
				if (pfm_get_event_attr_info(e, a, PFM_OS_PERF_EVENT_EXT, &ai) !=
					    PFM_SUCCESS ||
				    ai.type != PFM_ATTR_UMASK)
					continue;
				snprintf(um, sizeof(um), "%s:%s", full, ai.name);
				any_umask_match = matches(f, um);
			}
			if (!any_umask_match)
				continue;
		}
		if (!header) {
			printf("%s%s: %s\n", *shown ? "\n" : "", pi->name,
			       pi->desc ? pi->desc : "");
			header = 1;
		}
		encoding(full, enc, sizeof(enc));
		line(full, enc, "");
		(*shown)++;
		for (a = 0; a < ei.nattrs; a++) {
			memset(&ai, 0, sizeof(ai));
			ai.size = sizeof(ai);
			if (pfm_get_event_attr_info(e, a, PFM_OS_PERF_EVENT_EXT, &ai) !=
				    PFM_SUCCESS ||
			    ai.type != PFM_ATTR_UMASK)
				continue;
			snprintf(um, sizeof(um), "%s:%s", full, ai.name);
			if (any_umask_match && !matches(f, um))
				continue;
			encoding(um, enc, sizeof(enc));
			snprintf(label, sizeof(label), "    :%s", ai.name);
			line(label, enc, ai.is_dfl ? " (default)" : "");
		}
	}
}

int cs_cmd_list(int argc, char **argv)
{
	static const struct option opts[] = {
		{"pmu", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct filter f = {NULL, 0};
	const char *pmu = NULL;
	pfm_pmu_info_t pi;
	unsigned shown = 0, pmus = 0;
	int c, ret, i;

	while ((c = getopt_long(argc, argv, "p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pmu = optarg;
			break;
		case 'h':
			usage(stdout);
			return CS_EXIT_OK;
		default:
			usage(stderr);
			return CS_EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		cs_err("list: one pattern at most");
		usage(stderr);
		return CS_EXIT_USAGE;
	}
	if (optind < argc) {
		f.pattern = argv[optind];
		f.glob = strpbrk(f.pattern, "*?[") != NULL;
	}
	/* libpfm4 reads it in pfm_initialize: the PMU is then the only one
	 * present, as if this machine had it. */
	if (pmu && setenv("LIBPFM_FORCE_PMU", pmu, 1) != 0) {
		cs_err("list: cannot set LIBPFM_FORCE_PMU");
		return CS_EXIT_FAIL;
	}
	ret = pfm_initialize();
	if (ret != PFM_SUCCESS) {
		cs_err("list: cannot initialize libpfm4: %s", pfm_strerror(ret));
		return CS_EXIT_FAIL;
	}
	for (i = PFM_PMU_NONE; i < PFM_PMU_MAX; i++) {
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info(i, &pi) != PFM_SUCCESS || !pi.is_present)
			continue;
		if (pmu && strcmp(pi.name, pmu) != 0)
			continue;
		pmus++;
		list_pmu(&pi, &f, &shown);
	}
	pfm_terminate();
	if (pmu && pmus == 0) {
		cs_err("list: unknown PMU '%s' (libpfm4 names such as skl, icl, amd64_fam17h)",
		       pmu);
		return CS_EXIT_USAGE;
	}
	if (shown == 0 && f.pattern)
		cs_warn("list: no event matches '%s'", f.pattern);
	fflush(stdout);
	return ferror(stdout) ? CS_EXIT_FAIL : CS_EXIT_OK;
}
