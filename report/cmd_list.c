/* SPDX-License-Identifier: MIT */
/* cacheshim list: the events libpfm4 knows here, with their perf encoding,
 * and the presets (@cache, ...) of this PMU's recipe with their formulas. */
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "report/internal.h"
#include "report/pfm.h"

#define NAME_WIDTH 52 /* column where the encoding starts */

/* Returns 0, or -1 with a message. */
static int load_pfm(void)
{
	const char *why;

	if (cs_pfm_load(&why) < 0) {
		cs_err("list: cannot load libpfm4: %s", why);
		return -1;
	}
	return 0;
}

static void usage(FILE *out)
{
	fputs("usage: cacheshim list [--pmu NAME] [@PRESET | PATTERN]\n"
	      "\n"
	      "  @PRESET         the recipe of a preset for this PMU: its events with their\n"
	      "                  encodings and sources, its formulas, the counters it\n"
	      "                  needs (@cache, @l1, @l2, @l3, @tlb, @ipc, @all)\n"
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
 * "(needs a umask)" and the like when libpfm4 cannot encode it alone.
 * Returns 0 with *out (when not NULL) set, or the libpfm4 error. */
static int encode_attr(const char *ev, char *buf, size_t len, struct perf_event_attr *out)
{
	struct perf_event_attr attr;
	int n, ret;

	ret = cs_pfm_encode(ev, &attr);
	if (ret == PFM_ERR_UMASK) {
		snprintf(buf, len, "(needs a umask)");
		return ret;
	}
	if (ret != PFM_SUCCESS) {
		snprintf(buf, len, "(cannot encode: %s)", cs_pfm.strerror(ret));
		return ret;
	}
	n = snprintf(buf, len, "type %u config 0x%llx", attr.type, (unsigned long long)attr.config);
	if (attr.config1 && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " config1 0x%llx",
			      (unsigned long long)attr.config1);
	if (attr.config2 && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " config2 0x%llx",
			 (unsigned long long)attr.config2);
	if (out)
		*out = attr;
	return 0;
}

static void encoding(const char *ev, char *buf, size_t len)
{
	encode_attr(ev, buf, len, NULL);
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

	for (e = pi->first_event; e != -1; e = cs_pfm.event_next(e)) {
		memset(&ei, 0, sizeof(ei));
		ei.size = sizeof(ei);
		if (cs_pfm.event_info(e, PFM_OS_PERF_EVENT_EXT, &ei) != PFM_SUCCESS)
			continue;
		snprintf(full, sizeof(full), "%s::%s", pi->name, ei.name);
		/* When only some umasks match, show the event with just
		 * those. */
		any_umask_match = 0;
		if (!matches(f, full)) {
			for (a = 0; a < ei.nattrs && !any_umask_match; a++) {
				memset(&ai, 0, sizeof(ai));
				ai.size = sizeof(ai);
				if (cs_pfm.attr_info(e, a, PFM_OS_PERF_EVENT_EXT, &ai) !=
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
			if (cs_pfm.attr_info(e, a, PFM_OS_PERF_EVENT_EXT, &ai) != PFM_SUCCESS ||
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

/* The core PMU presets are for, as the shim picks it: the first present
 * one with a recipe, else the first present one.  Returns 0 or -1. */
static int core_pmu(pfm_pmu_info_t *out)
{
	pfm_pmu_info_t pi;
	int i, found = 0;

	for (i = PFM_PMU_NONE; i < PFM_PMU_MAX + 512; i++) { /* newer libpfm4 */
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (cs_pfm.pmu_info((pfm_pmu_t)i, &pi) != PFM_SUCCESS || !pi.is_present ||
		    pi.type != PFM_PMU_TYPE_CORE)
			continue;
		if (cs_preset_family_of(pi.name)) {
			*out = pi;
			return 0;
		}
		if (!found)
			*out = pi;
		found = 1;
	}
	return found ? 0 : -1;
}

/* Prints label and text indented by 18 columns, wrapped at 100. */
static void wrapped(const char *label, const char *text)
{
	const char *p = text;
	int col = printf("%18s%s", "", label), fresh = 1;

	while (*p) {
		size_t n = strcspn(p, " ");

		if (n) {
			if (!fresh && col + 1 + (int)n > 100)
				col = printf("\n%18s", "") - 1;
			else if (!fresh)
				col += printf(" ");
			col += printf("%.*s", (int)n, p);
			fresh = 0;
		}
		p += n;
		if (*p)
			p++;
	}
	putchar('\n');
}

/* 1 when the kernel's NMI watchdog is on here: it holds a counter on
 * every CPU (common/presets.h). */
static int nmi_watchdog_on(void)
{
	char c = '0';
	FILE *fp = fopen("/proc/sys/kernel/nmi_watchdog", "re");

	if (!fp)
		return 0;
	if (fread(&c, 1, 1, fp) != 1)
		c = '0';
	fclose(fp);
	return c != '0';
}

/* True when no hardware counter opens here (a virtual machine). */
static int no_pmu_here(void)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == ENOENT || errno == EOPNOTSUPP || errno == ENODEV;
}

/* Prints the PMUs that have a recipe, one a line, on stderr. */
static void recipe_pmus(void)
{
	const struct cs_preset_family *const *ff;
	unsigned i;

	for (ff = cs_preset_families; *ff; ff++)
		for (i = 0; (*ff)->pmus[i]; i++)
			fprintf(stderr, "  %s (%s)\n", (*ff)->pmus[i], (*ff)->title);
}

/* Says why --pmu name gave nothing to list (for @PRESET when preset is
 * set): a PMU this libpfm4 has but without a recipe (perf, perf_raw:
 * not a CPU's core PMU), one a recipe is for but this libpfm4 is too old
 * to have (adl_glc in 4.13), or a name nobody knows.  "unknown PMU"
 * for the first two sent the user looking for another spelling.
 * Returns the exit status. */
static int pmu_not_listed(const char *name, const char *preset)
{
	const struct cs_preset_family *f = cs_preset_family_of(name);
	pfm_pmu_info_t pi;
	int i;

	for (i = PFM_PMU_NONE; i < PFM_PMU_MAX + 512; i++) {
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (cs_pfm.pmu_info((pfm_pmu_t)i, &pi) == PFM_SUCCESS && pi.name &&
		    !strcmp(pi.name, name))
			break;
	}
	if (i < PFM_PMU_MAX + 512 && preset) {
		cs_err("list: PMU '%s' (%s) has no %s: presets are recipes for a CPU's core PMU; "
		       "recipes exist for:",
		       name, pi.desc ? pi.desc : "", preset);
		recipe_pmus();
		return CS_EXIT_USAGE;
	}
	if (i < PFM_PMU_MAX + 512) {
		/* Known, but libpfm4 would not make it present. */
		cs_err("list: libpfm4 cannot make PMU '%s' present here", name);
		return CS_EXIT_FAIL;
	}
	if (f) {
		/* pfm_get_version() says 4.0 for 4.13: no number here. */
		cs_err("list: this libpfm4 does not know PMU '%s', which cacheshim's %s recipe "
		       "(%s) is for: it needs a newer libpfm4",
		       name, f->name, f->title);
		return CS_EXIT_FAIL;
	}
	cs_err("list: unknown PMU '%s' (libpfm4 names such as skl, icl, amd64_fam17h)", name);
	return CS_EXIT_USAGE;
}

/* cacheshim list @PRESET: the recipe rows of the preset for pi, their
 * encodings and sources, the formulas they allow and the runs they need
 * when they do not fit in the counters. */
static int list_preset(const char *preset, unsigned bits, const pfm_pmu_info_t *pi, int forced)
{
	const struct cs_preset_family *f = cs_preset_family_of(pi->name);
	const char *names[32], *fixed[32];
	char full[256], enc[160];
	struct perf_event_attr attr;
	uint32_t mask, runs[8], low = 0;
	unsigned i, ngp = 0, nfixed = 0, nruns, r, shown = 0, limit, nlow = 0;
	unsigned low_limit = f ? f->low_counters : 0, all;
	/* This machine's watchdog: not another model's (--pmu). */
	int wd = !forced && nmi_watchdog_on();

	if (!f) {
		cs_err("list: no preset recipe for PMU '%s'; recipes exist for:", pi->name);
		recipe_pmus();
		return CS_EXIT_FAIL;
	}
	mask = cs_preset_events(f, bits);
	printf("%s on %s: %s recipe, %s\n", preset, pi->name, f->name, f->title);
	all = cs_preset_counters(f, pi->num_cntrs);
	limit = cs_preset_watchdog_counters(all, pi->num_fixed_cntrs, wd);
	printf("counters: %u general-purpose, %d fixed\n", all, pi->num_fixed_cntrs);
	if (wd)
		printf("note: the NMI watchdog (kernel.nmi_watchdog=1) holds %s on every CPU "
		       "(sysctl -w kernel.nmi_watchdog=0 frees it)\n",
		       limit < all ? "one general-purpose counter"
				   : "the fixed cycles counter: cycles take a general-purpose one");
	if (f->notes)
		wrapped("", f->notes);
	if (!forced && no_pmu_here())
		printf("note: no hardware PMU visible here (virtual machine?): these events "
		       "would not count on this machine\n");
	printf("\nevents:\n");
	for (i = 0; i < f->nevents; i++) {
		if (!(mask & (1u << i)))
			continue;
		snprintf(full, sizeof(full), "%s::%s", pi->name, f->events[i].event);
		if (encode_attr(full, enc, sizeof(enc), &attr) != 0) {
			/* cannot be encoded: in no run */
		} else if (pi->num_fixed_cntrs > 0 &&
			   cs_preset_fixed_counter_free(attr.type, attr.config, wd)) {
			/* A fixed counter's: free, so in every run (as in the
			 * shim's suggestion), else no run has the inputs of the
			 * formulas over instructions and cycles. */
			fixed[nfixed++] = f->events[i].event;
		} else {
			if (cs_preset_low_counter(f, attr.type, attr.config)) {
				low |= 1u << ngp;
				nlow++;
			}
			names[ngp++] = f->events[i].event;
		}
		printf("  %-16s %-52s %s\n", f->events[i].alias, f->events[i].event, enc);
		wrapped("", f->events[i].what);
		wrapped("source: ", f->events[i].source);
		shown++;
	}
	if (!shown)
		printf("  none: the %s recipe has no events for %s\n", f->name, preset);
	printf("\nformulas (computed by `cacheshim report` from the events above):\n");
	for (i = 0, shown = 0; i < f->nformulas; i++) {
		uint32_t in = cs_preset_formula_inputs(f, &f->formulas[i]);

		if (!in || (in & ~mask))
			continue;
		printf("  %s = %s (%s)\n", f->formulas[i].name, f->formulas[i].expr,
		       f->formulas[i].kind == CS_FORMULA_RATIO ? "ratio" : "count");
		wrapped("", f->formulas[i].what);
		wrapped("source: ", f->formulas[i].source);
		shown++;
	}
	if (!shown)
		printf("  none with these events alone (@all shows every formula)\n");
	if (limit > 0 && (ngp > limit || nlow > low_limit)) {
		nruns = cs_preset_split(f, names, ngp, limit, low, low_limit, runs, 8);
		if (ngp > limit)
			printf("\n%s needs %u general-purpose counters, %s has %u: measure it "
			       "in %u runs and merge the files with `cacheshim report`:\n",
			       preset, ngp, pi->name, limit, nruns);
		else
			printf("\n%s has %u events that %s counts on its first %u "
			       "general-purpose counters only: measure it in %u runs and merge "
			       "the files with `cacheshim report`:\n",
			       preset, nlow, pi->name, low_limit, nruns);
		for (r = 0; r < nruns; r++) {
			printf("  CACHESHIM_EVENTS=tsc");
			for (i = 0; i < nfixed; i++)
				printf(",%s", fixed[i]);
			for (i = 0; i < ngp; i++)
				if (runs[r] & (1u << i))
					printf(",%s", names[i]);
			putchar('\n');
		}
	}
	return cs_util_stdout_done();
}

/* The presets of pi's recipe and their sizes, after a full listing. */
static void preset_summary(const pfm_pmu_info_t *pi)
{
	static const char *const names[] = {"@cache", "@l1", "@l2", "@l3", "@tlb", "@ipc"};
	const struct cs_preset_family *f = cs_preset_family_of(pi->name);
	size_t i;

	if (!f)
		return;
	printf("\npresets for %s (%s recipe; `cacheshim list @NAME` shows one):", pi->name,
	       f->name);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		printf("%s %s %d", i ? "," : "", names[i],
		       __builtin_popcount(cs_preset_events(f, cs_preset_bits(names[i]))));
	printf(" events\n");
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
			return cs_util_stdout_done();
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
		if (f.pattern[0] == '@' && !cs_preset_bits(f.pattern)) {
			char names[CS_PRESET_NAMES_MAX];

			cs_err("list: '%s' is not a preset (%s)", f.pattern,
			       cs_preset_names(names, sizeof(names)));
			return CS_EXIT_USAGE;
		}
	}
	/* libpfm4 reads it in pfm_initialize: the PMU is then the only one
	 * present, as if this machine had it. */
	if (pmu && setenv("LIBPFM_FORCE_PMU", pmu, 1) != 0) {
		cs_err("list: cannot set LIBPFM_FORCE_PMU");
		return CS_EXIT_FAIL;
	}
	if (load_pfm() < 0)
		return CS_EXIT_FAIL;
	ret = cs_pfm.initialize();
	if (ret != PFM_SUCCESS) {
		cs_err("list: cannot initialize libpfm4: %s", cs_pfm.strerror(ret));
		return CS_EXIT_FAIL;
	}
	if (f.pattern && f.pattern[0] == '@') {
		if (core_pmu(&pi) != 0 || (pmu && strcmp(pi.name, pmu) != 0)) {
			if (pmu)
				ret = pmu_not_listed(pmu, f.pattern);
			else {
				cs_err("list: libpfm4 does not know this CPU's PMU; try --pmu "
				       "NAME");
				ret = CS_EXIT_FAIL;
			}
			cs_pfm.terminate();
			return ret;
		}
		ret = list_preset(f.pattern, cs_preset_bits(f.pattern), &pi, pmu != NULL);
		cs_pfm.terminate();
		return ret;
	}
	/* libpfm4 finds the CPU's PMU by CPUID, which a virtual machine
	 * passes on without the counters: its events would be listed with
	 * encodings as if they counted. */
	if (!pmu && no_pmu_here())
		printf("note: no hardware PMU visible here (virtual machine?): hardware events "
		       "would not count on this machine; software events (perf::PAGE-FAULTS, "
		       "...) and tsc do\n");
	for (i = PFM_PMU_NONE; i < PFM_PMU_MAX; i++) {
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (cs_pfm.pmu_info(i, &pi) != PFM_SUCCESS || !pi.is_present)
			continue;
		if (pmu && strcmp(pi.name, pmu) != 0)
			continue;
		pmus++;
		list_pmu(&pi, &f, &shown);
	}
	if (!f.pattern && core_pmu(&pi) == 0)
		preset_summary(&pi);
	if (pmu && pmus == 0) {
		ret = pmu_not_listed(pmu, NULL);
		cs_pfm.terminate();
		return ret;
	}
	cs_pfm.terminate();
	if (shown == 0 && f.pattern)
		cs_warn("list: no event matches '%s'", f.pattern);
	return cs_util_stdout_done();
}
