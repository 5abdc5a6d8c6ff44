/* SPDX-License-Identifier: MIT */
/* cacheshim calibrate: runs libcscalib's kernels under the shim and says whether each event counts what it claims. */
#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "calib/cscalib.h"
#include "report/internal.h"
#include "report/calibrate.h"

#ifndef CS_LIBDIR
#define CS_LIBDIR "/usr/local/lib"
#endif
#ifndef CS_PKGLIBDIR
#define CS_PKGLIBDIR "/usr/local/lib/cacheshim"
#endif

#define DEFAULT_EVENTS "tsc,perf::PAGE-FAULTS,@cache"
#define TARGETS                                                                             \
	"cs_calib_null,cs_calib_loop,cs_calib_branch:arg3,cs_calib_resident,cs_calib_cold," \
	"cs_calib_level:arg2,cs_calib_dtlb:arg2,cs_calib_fault"
#define KIB 1024ull
#define MIB (1024ull * 1024ull)
#define NCURVE 29 /* 4 KiB .. 64 MiB, powers of two and the points half-way */

enum { OPT_CHILD = 0x400, OPT_CALLS, OPT_HTML, OPT_FROM };

static void usage(FILE *out)
{
	fputs("usage: cacheshim calibrate [-e EVENTS] [--csv] [--calls N] [-o FILE] [--html FILE]\n"
	      "                           [--from FILE]\n"
	      "\n"
	      "  -e, --events EVENTS  events to check (default " DEFAULT_EVENTS ")\n"
	      "      --csv            CSV instead of a table\n"
	      "      --calls N        calls per kernel (default 200, at least 100)\n"
	      "  -o, --output FILE    keep the report file of the kernels' run\n"
	      "      --html FILE      write the latency curve, cache sizes marked, as HTML\n"
	      "      --from FILE      judge a report file kept with -o (default parameters;\n"
	      "                       no geometry, no kernels run; -e: only these events\n"
	      "                       and formulas)\n"
	      "  -h, --help           this text\n",
	      out);
}

/* ---- geometry: sysfs, CPUID, and the measured latency curve ---- */

struct level {
	unsigned level; /* 1, 2, 3 ... */
	char type[16]; /* Data, Instruction, Unified */
	uint64_t sysfs, cpuid; /* bytes, 0 unknown */
};

struct geometry {
	struct level lv[8];
	unsigned nlv;
	uint64_t dtlb1, stlb; /* 4 KiB entries, 0 unknown */
	uint64_t curve_bytes[NCURVE];
	double curve_ticks[NCURVE]; /* per dependent load */
	unsigned ncurve;
	uint64_t meas_l1, meas_llc; /* from the curve, 0 unknown */
	uint64_t llc; /* what sizes the kernels */
	int disagree; /* sysfs/CPUID LLC and the curve disagree */
};

static uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);

	if (*end == 'K')
		v *= KIB;
	else if (*end == 'M')
		v *= MIB;
	return v;
}

static void read_sysfs(struct geometry *g)
{
	char path[128], buf[64], type[16];
	unsigned i, level;
	uint64_t size;
	FILE *f;

	for (i = 0; i < 8 && g->nlv < 8; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%u/size", i);
		f = fopen(path, "r");
		if (!f)
			break;
		size = fgets(buf, sizeof(buf), f) ? parse_size(buf) : 0;
		fclose(f);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%u/level", i);
		f = fopen(path, "r");
		if (!f || !fgets(buf, sizeof(buf), f)) {
			if (f)
				fclose(f);
			continue;
		}
		fclose(f);
		level = (unsigned)atoi(buf);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%u/type", i);
		f = fopen(path, "r");
		type[0] = '\0';
		if (f) {
			if (fgets(type, sizeof(type), f))
				type[strcspn(type, "\n")] = '\0';
			fclose(f);
		}
		g->lv[g->nlv].level = level;
		snprintf(g->lv[g->nlv].type, sizeof(g->lv[g->nlv].type), "%s", type);
		g->lv[g->nlv].sysfs = size;
		g->nlv++;
	}
}

static const char *const cache_types[] = {"", "Data", "Instruction", "Unified"};

/* Deterministic cache parameters: Intel leaf 4, AMD leaf 0x8000001D. */
static void read_cpuid_caches(struct geometry *g)
{
	unsigned a, b = 0, c, d, leaf = 4, sub, max = 0, type, level, i, found;
	uint64_t size;

	__get_cpuid(0, &max, &b, &c, &d);
	if (b == 0x68747541 /* Auth(enticAMD) */) {
		__get_cpuid(0x80000000, &max, &b, &c, &d);
		if (max < 0x8000001D)
			return;
		leaf = 0x8000001D;
	} else if (max < 4) {
		return;
	}
	for (sub = 0; sub < 16; sub++) {
		__cpuid_count(leaf, sub, a, b, c, d);
		type = a & 31;
		if (type == 0)
			break;
		level = (a >> 5) & 7;
		size = (uint64_t)((b >> 22) + 1) * (((b >> 12) & 0x3ff) + 1) * ((b & 0xfff) + 1) *
		       ((uint64_t)c + 1);
		found = 0;
		for (i = 0; i < g->nlv; i++) {
			if (g->lv[i].level == level && type < 4 &&
			    strcmp(g->lv[i].type, cache_types[type]) == 0) {
				g->lv[i].cpuid = size;
				found = 1;
			}
		}
		if (!found && g->nlv < 8 && type < 4) {
			g->lv[g->nlv].level = level;
			snprintf(g->lv[g->nlv].type, sizeof(g->lv[g->nlv].type), "%s",
				 cache_types[type]);
			g->lv[g->nlv].cpuid = size;
			g->nlv++;
		}
	}
}

/* TLB entries for 4 KiB pages: Intel leaf 0x18, AMD 0x80000005/6.  (Leaf
 * 2's one-byte descriptors are not decoded: CPUs since Skylake put 0xFE
 * there, "see leaf 0x18".) */
static void read_cpuid_tlb(struct geometry *g)
{
	unsigned a, b = 0, c, d, max = 0, sub, nsub, type, level;

	__get_cpuid(0, &max, &b, &c, &d);
	if (b == 0x68747541) {
		__get_cpuid(0x80000000, &max, &b, &c, &d);
		if (max >= 0x80000005) {
			__cpuid(0x80000005, a, b, c, d);
			g->dtlb1 = (b >> 16) & 0xff;
		}
		if (max >= 0x80000006) {
			__cpuid(0x80000006, a, b, c, d);
			g->stlb = (b >> 16) & 0xfff;
		}
		return;
	}
	if (max < 0x18)
		return;
	__cpuid_count(0x18, 0, nsub, b, c, d);
	for (sub = 0; sub <= nsub && sub < 32; sub++) {
		__cpuid_count(0x18, sub, a, b, c, d);
		type = d & 31;
		level = (d >> 5) & 7;
		if (!type || !(b & 1)) /* invalid, or no 4 KiB pages */
			continue;
		if (level == 1 && (type == 1 || type == 4))
			g->dtlb1 += (uint64_t)(b >> 16) * c;
		else if (level == 2 && (type == 1 || type == 3))
			g->stlb += (uint64_t)(b >> 16) * c;
	}
}

/* Ticks per dependent load over a random chain of footprint bytes, best
 * of 3 (the machine may be busy: the least disturbed pass is the truth). */
static double latency(uint64_t footprint, uint64_t *seed)
{
	uint64_t n = footprint / 64, loads = n * 2 < 200000 ? 200000 : n * 2, i, t0, t1;
	double best = 0;
	void **p;
	char *buf;
	int rep;

	buf = mmap(NULL, footprint, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 0;
	p = cs_calib_chain(buf, n, 64, 0, seed);
	if (!p) {
		munmap(buf, footprint);
		return 0;
	}
	for (i = 0; i < n; i++) /* warm: caches and TLB */
		p = *p;
	for (rep = 0; rep < 3; rep++) {
		t0 = __rdtsc();
		for (i = 0; i < loads; i++)
			p = *p;
		_mm_lfence();
		t1 = __rdtsc();
		if (rep == 0 || (double)(t1 - t0) / (double)loads < best)
			best = (double)(t1 - t0) / (double)loads;
	}
	__asm__ volatile("" : : "r"(p));
	munmap(buf, footprint);
	return best;
}

static void measure_curve(struct geometry *g)
{
	uint64_t seed = 0x2545f4914f6cdd1dull, b;
	double mem, l1;
	unsigned i;

	g->ncurve = 0;
	for (b = 4 * KIB; b <= 64 * MIB && g->ncurve + 1 < NCURVE; b *= 2) {
		g->curve_bytes[g->ncurve] = b;
		g->curve_ticks[g->ncurve++] = latency(b, &seed);
		if (b < 64 * MIB) {
			g->curve_bytes[g->ncurve] = b + b / 2;
			g->curve_ticks[g->ncurve++] = latency(b + b / 2, &seed);
		}
	}
	l1 = g->curve_ticks[0];
	mem = g->curve_ticks[g->ncurve - 1];
	/* L1: the last footprint still as fast as 4 KiB.  LLC: the last one
	 * below half the memory latency (the curve rises smoothly past the
	 * real size, as lines start to be evicted). */
	for (i = 0; i < g->ncurve; i++) {
		if (g->curve_ticks[i] <= l1 * 1.3)
			g->meas_l1 = g->curve_bytes[i];
		if (g->curve_ticks[i] < mem / 2)
			g->meas_llc = g->curve_bytes[i];
	}
	if (mem < l1 * 2) /* no step at all: the curve says nothing */
		g->meas_llc = 0;
}

static uint64_t sized_llc(const struct geometry *g)
{
	uint64_t best = 0;
	unsigned i;

	for (i = 0; i < g->nlv; i++) {
		uint64_t s = g->lv[i].sysfs ? g->lv[i].sysfs : g->lv[i].cpuid;

		if (strcmp(g->lv[i].type, "Instruction") != 0 && s > best)
			best = s;
	}
	return best;
}

static uint64_t level_size(const struct geometry *g, unsigned level)
{
	unsigned i;

	for (i = 0; i < g->nlv; i++)
		if (g->lv[i].level == level && strcmp(g->lv[i].type, "Instruction") != 0)
			return g->lv[i].sysfs ? g->lv[i].sysfs : g->lv[i].cpuid;
	return 0;
}

static uint64_t pow2_floor(uint64_t v)
{
	return v ? 1ull << (63 - __builtin_clzll(v)) : 0;
}

/* The footprints of level(L): half of L1, between each pair of levels
 * (geometric mean), and 8x past the last level. */
static void choose_levels(const struct geometry *g, struct cs_calib_params *p)
{
	uint64_t sizes[4], prev;
	unsigned n = 0, i;

	sizes[n++] = level_size(g, 1) ? level_size(g, 1) : 32 * KIB;
	for (i = 2; i <= 4; i++) {
		uint64_t s = level_size(g, i);

		if (s > g->llc)
			s = 0;
		if (s && s > sizes[n - 1] && n < 3)
			sizes[n++] = s;
	}
	if (g->llc > sizes[n - 1] && n < 4)
		sizes[n++] = g->llc;
	else if (g->llc && g->llc <= sizes[n - 1])
		sizes[n - 1] = g->llc; /* measured LLC smaller than sysfs says */
	p->nlevels = 0;
	p->level_bytes[p->nlevels++] = pow2_floor(sizes[0] / 2);
	for (i = 1; i < n; i++) {
		prev = pow2_floor(
			(uint64_t)__builtin_sqrt((double)sizes[i - 1] * (double)sizes[i]));
		if (prev <= sizes[i - 1])
			prev = pow2_floor(sizes[i - 1]) * 2;
		if (prev >= sizes[i])
			continue;
		p->level_bytes[p->nlevels++] = prev;
	}
	p->level_bytes[p->nlevels] = pow2_floor(sizes[n - 1]) * 8;
	if (p->level_bytes[p->nlevels] > 256 * MIB)
		p->level_bytes[p->nlevels] = 256 * MIB;
	p->nlevels++;
}

/* ---- the child: runs the kernels under the shim ---- */

static int child(const char *params, const char *lib)
{
	struct cs_calib_params p = {0};
	int (*drive)(const struct cs_calib_params *);
	unsigned long long v[6 + CS_CALIB_MAX_LEVELS];
	unsigned n = 0, i;
	const char *s = params;
	char *end;
	void *h;

	while (*s && n < 6 + CS_CALIB_MAX_LEVELS) {
		v[n++] = strtoull(s, &end, 10);
		s = *end == ',' ? end + 1 : end;
	}
	if (n < 7) {
		cs_err("calibrate: bad --child parameters");
		return CS_EXIT_USAGE;
	}
	p.calls = (unsigned)v[0];
	p.loop_n = v[1];
	p.branch_n = v[2];
	p.lines = v[3];
	p.dtlb_pages = v[4];
	p.fault_pages = v[5];
	for (i = 6; i < n; i++)
		p.level_bytes[p.nlevels++] = v[i];
	/* dlopen through the shim's wrapper: it patches the new module's
	 * GOT, so the driver's calls of the kernels are measured. */
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		cs_err("calibrate: %s", dlerror());
		return CS_EXIT_FAIL;
	}
	*(void **)&drive = dlsym(h, "cs_calib_drive");
	if (!drive) {
		cs_err("calibrate: %s: no cs_calib_drive", lib);
		return CS_EXIT_FAIL;
	}
	if (drive(&p) != 0) {
		cs_err("calibrate: out of memory for the kernels");
		return CS_EXIT_FAIL;
	}
	return CS_EXIT_OK;
}

/* Returns the path of a library: $env, or next to the running command
 * (.libs/ of the build tree), or dir/name (static storage per slot). */
static const char *lib_path(const char *env, const char *name, const char *dir, int slot)
{
	static char buf[2][PATH_MAX + 64];
	const char *e = getenv(env);
	char exe[PATH_MAX], *slash;
	ssize_t n;

	if (e && e[0])
		return e;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(buf[slot], sizeof(buf[slot]), "%s/.libs/%s", exe, name);
			if (access(buf[slot], R_OK) == 0)
				return buf[slot];
		}
	}
	snprintf(buf[slot], sizeof(buf[slot]), "%s/%s", dir, name);
	return buf[slot];
}

/* Runs the kernels in a child with the shim preloaded.  Returns 0 or -1
 * (said on stderr). */
static int run_kernels(const struct cs_calib_params *p, const char *events, const char *out)
{
	const char *shim = lib_path("CACHESHIM_LIB", "libcacheshim.so", CS_LIBDIR, 0);
	const char *lib = lib_path("CACHESHIM_CALIB_LIB", "libcscalib.so", CS_PKGLIBDIR, 1);
	char params[512], arg[600];
	size_t len;
	unsigned i;
	int status;
	pid_t pid;

	len = (size_t)snprintf(params, sizeof(params), "%u,%llu,%llu,%llu,%llu,%llu", p->calls,
			       (unsigned long long)p->loop_n, (unsigned long long)p->branch_n,
			       (unsigned long long)p->lines, (unsigned long long)p->dtlb_pages,
			       (unsigned long long)p->fault_pages);
	for (i = 0; i < p->nlevels && len < sizeof(params); i++)
		len += (size_t)snprintf(params + len, sizeof(params) - len, ",%llu",
					(unsigned long long)p->level_bytes[i]);
	snprintf(arg, sizeof(arg), "--child=%s", params);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		cs_err("calibrate: fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		char *argv[] = {"cacheshim", "calibrate", arg, (char *)lib, NULL};

		unsetenv("CACHESHIM_SESSION");
		/* The shim would say at start that no kernel matched a
		 * function: libcscalib is loaded later (then hooked), so it
		 * said so for all eight, every run.  A kernel that stays
		 * unhooked shows as a kernel without calls (check_kernels);
		 * the shim's other lines (events that did not open) come. */
		if (setenv("LD_PRELOAD", shim, 1) || setenv("CACHESHIM_TARGETS", TARGETS, 1) ||
		    setenv("CACHESHIM_EVENTS", events, 1) || setenv("CACHESHIM_OUTPUT", out, 1) ||
		    setenv("CACHESHIM_UNMATCHED", "0", 1))
			_exit(127);
		execv("/proc/self/exe", argv);
		cs_err("calibrate: cannot re-run myself: %s", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			cs_err("calibrate: waitpid: %s", strerror(errno));
			return -1;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		cs_err("calibrate: the kernels' run failed (status %d)", status);
		return -1;
	}
	return 0;
}

/* ---- verdicts ---- */

struct kres {
	char kernel[CS_TARGET_NAME_MAX];
	uint64_t key;
	const struct cs_row *row;
};

static int cmp_kres(const void *a, const void *b)
{
	static const char *const order[] = {"null", "loop",  "branch", "resident",
					    "cold", "level", "dtlb",   "fault"};
	const struct kres *x = a, *y = b;
	int ix = 8, iy = 8, i;

	for (i = 0; i < 8; i++) {
		if (strcmp(x->kernel + 9, order[i]) == 0)
			ix = i;
		if (strcmp(y->kernel + 9, order[i]) == 0)
			iy = i;
	}
	if (ix != iy)
		return ix - iy;
	return x->key < y->key ? -1 : x->key > y->key;
}

static const char *size_str(uint64_t b, char *buf, size_t len)
{
	if (b >= MIB && b % MIB == 0)
		snprintf(buf, len, "%lluM", (unsigned long long)(b / MIB));
	else if (b >= KIB && b % KIB == 0)
		snprintf(buf, len, "%lluK", (unsigned long long)(b / KIB));
	else if (b)
		snprintf(buf, len, "%llu", (unsigned long long)b);
	else
		snprintf(buf, len, "?");
	return buf;
}

static double row_median(const struct cs_row *row, size_t ev)
{
	const struct cs_agg *a = row ? cs_merge_agg(row, ev) : NULL;

	return a ? (double)cs_stats_percentile(a, 0.5) : -1;
}

static void print_geometry(FILE *out, const struct geometry *g, int csv)
{
	char a[32], b[32];
	unsigned i;

	if (csv)
		return;
	fputs("geometry (sysfs, CPUID; measured = lat_mem_rd-style curve below)\n", out);
	for (i = 0; i < g->nlv; i++)
		fprintf(out, "  L%u %-12s sysfs %-6s cpuid %s\n", g->lv[i].level, g->lv[i].type,
			size_str(g->lv[i].sysfs, a, sizeof(a)),
			size_str(g->lv[i].cpuid, b, sizeof(b)));
	fprintf(out, "  DTLB (4 KiB pages): L1 %llu entries, L2 %llu entries%s\n",
		(unsigned long long)g->dtlb1, (unsigned long long)g->stlb,
		g->dtlb1 || g->stlb ? "" : " (unknown)");
	fputs("latency curve: footprint  ticks/load\n", out);
	for (i = 0; i < g->ncurve; i++)
		fprintf(out, "  %8s  %8.1f\n", size_str(g->curve_bytes[i], a, sizeof(a)),
			g->curve_ticks[i]);
	fprintf(out,
		"measured: L1 <= %s, last level <= %s (loads slower than half the memory "
		"latency beyond)\n",
		size_str(g->meas_l1, a, sizeof(a)), size_str(g->meas_llc, b, sizeof(b)));
	if (g->disagree)
		fprintf(out,
			"note: sysfs/CPUID say the last level holds %s, the curve reaches memory "
			"latency past %s: the kernels are sized by the measured knees\n",
			size_str(sized_llc(g), a, sizeof(a)), size_str(g->meas_llc, b, sizeof(b)));
	fputc('\n', out);
}

/* Writes the latency curve as a self-contained HTML page: an SVG chart
 * (log footprint against ticks per load) with the sysfs/CPUID cache sizes
 * and the measured last level marked.  Returns 0 or -1 (said on stderr). */
static int write_html(const char *path, const struct geometry *g)
{
	const double w = 760, h = 360, l = 60, rt = 20, t = 20, b = 40;
	double ymax = 1, x, y, lo, hi;
	char sz[32];
	unsigned i;
	FILE *f;

	f = fopen(path, "w");
	if (!f) {
		cs_err("calibrate: %s: %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < g->ncurve; i++)
		if (g->curve_ticks[i] > ymax)
			ymax = g->curve_ticks[i];
	lo = __builtin_log2((double)g->curve_bytes[0]);
	hi = __builtin_log2((double)g->curve_bytes[g->ncurve ? g->ncurve - 1 : 0]);
	if (hi <= lo)
		hi = lo + 1;
#define X(bytes) (l + (__builtin_log2((double)(bytes)) - lo) / (hi - lo) * (w - l - rt))
#define Y(v) (t + (1 - (v) / ymax) * (h - t - b))
	fprintf(f,
		"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
		"<title>cacheshim calibrate: latency curve</title></head><body "
		"style=\"font-family:sans-serif\">\n<h1>Latency curve</h1>\n"
		"<p>Ticks per dependent load against footprint (lat_mem_rd style). "
		"Dashed: cache sizes from sysfs/CPUID; red: the measured last level.</p>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\">\n"
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n"
		"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
		w, h, l, h - b, w - rt, h - b, l, t, l, h - b);
	for (i = 0; i < g->nlv; i++) {
		uint64_t s = g->lv[i].sysfs ? g->lv[i].sysfs : g->lv[i].cpuid;

		if (!s || !strcmp(g->lv[i].type, "Instruction"))
			continue;
		x = X(s);
		if (x < l || x > w - rt)
			continue;
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"gray\" "
			"stroke-dasharray=\"4\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">L%u "
			"%s</text>\n",
			x, t, x, h - b, x + 3, t + 12 + 12.0 * i, g->lv[i].level,
			size_str(s, sz, sizeof(sz)));
	}
	if (g->meas_llc) {
		x = X(g->meas_llc);
		fprintf(f,
			"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"red\"/>"
			"<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"red\">measured last "
			"level %s</text>\n",
			x, t, x, h - b, x + 3, h - b - 8, size_str(g->meas_llc, sz, sizeof(sz)));
	}
	fputs("<polyline fill=\"none\" stroke=\"steelblue\" stroke-width=\"2\" points=\"", f);
	for (i = 0; i < g->ncurve; i++)
		fprintf(f, "%.1f,%.1f ", X(g->curve_bytes[i]), Y(g->curve_ticks[i]));
	fputs("\"/>\n", f);
	for (i = 0; i < g->ncurve; i += 2) {
		x = X(g->curve_bytes[i]);
		fprintf(f,
			"<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
			"text-anchor=\"middle\">%s</text>\n",
			x, h - b + 14, size_str(g->curve_bytes[i], sz, sizeof(sz)));
	}
	for (i = 0; i <= 4; i++) {
		y = Y(ymax * i / 4);
		fprintf(f,
			"<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
			"text-anchor=\"end\">%.0f</text>\n",
			l - 4, y + 3, ymax * i / 4);
	}
#undef X
#undef Y
	fputs("</svg>\n<table border=\"1\" cellpadding=\"3\"><tr><th>footprint</th>"
	      "<th>ticks/load</th></tr>\n",
	      f);
	for (i = 0; i < g->ncurve; i++)
		fprintf(f, "<tr><td>%s</td><td>%.1f</td></tr>\n",
			size_str(g->curve_bytes[i], sz, sizeof(sz)), g->curve_ticks[i]);
	fputs("</table>\n</body></html>\n", f);
	if (fclose(f) != 0) {
		cs_err("calibrate: %s: write failed", path);
		return -1;
	}
	return 0;
}

/* A tsc ratio check: "effect" medians of the kernels a over b. */
static void print_check(FILE *out, int csv, const char *what, double num, double den, double min)
{
	double ratio = den > 0 && num >= 0 ? num / den : 0;
	const char *v = den <= 0 || num < 0 ? "UNSUPPORTED" : ratio >= min ? "OK" : "FAIL";

	if (csv)
		fprintf(out, "ratio:%s,,tsc,>=%g,%.2f,,,%s\n", what, min, ratio, v);
	else
		fprintf(out, "  %-32s %8.2f  (want >= %g)  %s\n", what, ratio, min, v);
}

/* Whether name is an entry of the comma-separated list only (case
 * aside, white space around entries ignored); every name when only is
 * NULL (--from -e: the rows to print). */
static int shown(const char *only, const char *name)
{
	size_t n = strlen(name), len;
	const char *rest = only, *b;

	if (!only)
		return 1;
	while ((b = cs_util_next_item(&rest, &len)))
		if (len == n && strncasecmp(b, name, n) == 0)
			return 1;
	return 0;
}

/* Prints a row per preset formula (common/presets_*.c) whose inputs were
 * recorded, at one kernel: its mean per call in the median column
 * (formulas are computed from the inputs' means: the file keeps
 * aggregates), no p10/p90, and a verdict where an expectation is known. */
static void print_formulas(FILE *out, const struct cs_report *r, const struct cs_formula *fs,
			   size_t nf, const struct cs_row *row, const struct cs_row *null_row,
			   const char *kernel, uint64_t key, const char *argtxt,
			   const struct cs_calib_params *p, const char *only, int csv)
{
	char e[32], vb[48];
	struct cs_formula_value v, nv;
	struct cs_calib_exp xe = {0, 0, 0};
	double ex, base, factor, val;
	const char *verd;
	size_t j;
	int have;

	for (j = 0; j < nf; j++) {
		if (!shown(only, fs[j].f->name))
			continue;
		cs_formulas_eval(r, &fs[j], row, &v);
		have = cs_calib_expect(cs_calib_classify(fs[j].f->name), kernel, key, p, &xe);
		ex = xe.value;
		snprintf(e, sizeof(e), have ? "%g" : "-", ex);
		if (v.status != CS_CALC_OK) {
			verd = v.status == CS_CALC_NOT_COUNTED ? "UNSUPPORTED" : "UNDEFINED";
			if (csv)
				fprintf(out, "%s,%s,%s,%s,,,,%s\n", kernel + 9, argtxt,
					fs[j].f->name, have ? e : "", verd);
			else
				fprintf(out, "%-18s %-6s %-28s %10s %10s %10s %10s  %s\n",
					kernel + 9, argtxt, fs[j].f->name, e, "-", "-", "-", verd);
			continue;
		}
		val = (double)v.value;
		base = 0;
		if (null_row && null_row != row) {
			cs_formulas_eval(r, &fs[j], null_row, &nv);
			if (nv.status == CS_CALC_OK && nv.value > 0)
				base = (double)nv.value;
		}
		if (have) {
			double net = val - base > 0 ? val - base : 0;

			verd = cs_calib_judge(&xe, net, net, net, &factor);
			if (factor > 0) {
				snprintf(vb, sizeof(vb), "SCALED x%.2f", factor);
				verd = vb;
			}
		} else {
			verd = "NO EXPECTATION";
		}
		if (csv)
			fprintf(out, "%s,%s,%s,%s,%.2f,,,%s\n", kernel + 9, argtxt, fs[j].f->name,
				have ? e : "", val, verd);
		else
			fprintf(out, "%-18s %-6s %-28s %10s %10.1f %10s %10s  %s\n", kernel + 9,
				argtxt, fs[j].f->name, e, val, "(mean)", "", verd);
	}
}

/* The cross-check of the cold kernel: L1D-misses >= L2-misses >=
 * L3-misses per call, over the formulas that were recorded. */
static void print_order_check(FILE *out, const struct cs_report *r, const struct cs_formula *fs,
			      size_t nf, const struct cs_row *cold, const char *only, int csv)
{
	static const char *const names[] = {"L1D-misses", "L2-misses", "L3-misses"};
	double val[3];
	int have[3] = {0, 0, 0}, n = 0, ok = 1, i, prev = -1;
	struct cs_formula_value v;
	size_t j;

	if (!cold)
		return;
	for (i = 0; i < 3; i++) {
		for (j = 0; j < nf; j++) {
			if (strcasecmp(fs[j].f->name, names[i]) != 0 || !shown(only, names[i]))
				continue;
			cs_formulas_eval(r, &fs[j], cold, &v);
			if (v.status == CS_CALC_OK) {
				val[i] = (double)v.value;
				have[i] = 1;
				n++;
			}
		}
	}
	if (n < 2)
		return;
	for (i = 0; i < 3; i++) {
		if (!have[i])
			continue;
		if (prev >= 0 && val[prev] < val[i])
			ok = 0;
		prev = i;
	}
	if (csv)
		fprintf(out, "check:misses L1D>=L2>=L3 at cold,,,,,,,%s\n", ok ? "OK" : "FAIL");
	else
		fprintf(out, "  %-32s %8s  %s\n", "misses L1D >= L2 >= L3 (cold)", "",
			ok ? "OK" : "FAIL");
}

static int print_results(FILE *out, const struct cs_report *r, const struct cs_calib_params *par,
			 const struct geometry *g, const char *only, int csv)
{
	struct cs_calib_params lp = *par, *p = &lp;
	struct kres ks[64] = {0};
	size_t nrows, nk = 0, i, ev, tsc = SIZE_MAX;
	struct cs_row **rows = cs_merge_sorted(r, &nrows);
	const struct cs_row *null_row = NULL, *res = NULL, *cold = NULL, *bc = NULL, *brn = NULL;
	const struct cs_row *below = NULL, *above = NULL;
	char kname[80], e[32], m[32], a[32], b[32];
	struct cs_formula *fs = NULL;
	size_t nf = 0;

	if (cs_formulas_find(r, &fs, &nf) != 0) {
		fs = NULL;
		nf = 0;
	}
	for (i = 0; i < nrows && nk < 64; i++) {
		if (strncmp(rows[i]->k.name, "cs_calib_", 9) != 0)
			continue;
		snprintf(ks[nk].kernel, sizeof(ks[nk].kernel), "%s", rows[i]->k.name);
		ks[nk].key = rows[i]->k.key;
		ks[nk].row = rows[i];
		nk++;
	}
	free(rows);
	qsort(ks, nk, sizeof(ks[0]), cmp_kres);
	/* --from has no geometry: the level footprints are the level
	 * kernel's keys, smallest first (the i-th is past i cache levels). */
	if (p->nlevels == 0)
		for (i = 0; i < nk && p->nlevels < CS_CALIB_MAX_LEVELS; i++)
			if (!strcmp(ks[i].kernel + 9, "level"))
				p->level_bytes[p->nlevels++] = ks[i].key;
	/* The pages dtlb walked: its key (files of versions that did not
	 * key it: the default). */
	for (i = 0; i < nk; i++)
		if (!strcmp(ks[i].kernel + 9, "dtlb") && ks[i].key != CS_KEY_NONE && ks[i].key)
			p->dtlb_pages = ks[i].key;
	for (ev = 0; ev < r->nevents; ev++)
		if (cs_calib_classify(r->events[ev].name) == CS_CALIB_TSC && tsc == SIZE_MAX)
			tsc = ev;
	for (i = 0; i < nk; i++) {
		const char *k = ks[i].kernel + 9;

		if (!strcmp(k, "null"))
			null_row = ks[i].row;
		else if (!strcmp(k, "resident"))
			res = ks[i].row;
		else if (!strcmp(k, "cold"))
			cold = ks[i].row;
		else if (!strcmp(k, "branch") && ks[i].key == 0)
			bc = ks[i].row;
		else if (!strcmp(k, "branch") && ks[i].key == 1)
			brn = ks[i].row;
		else if (!strcmp(k, "level") && g->llc) {
			if (ks[i].key <= g->llc / 2)
				below = ks[i].row;
			else if (!above && ks[i].key >= g->llc * 2)
				above = ks[i].row;
		}
	}

	if (csv)
		fputs("kernel,arg,event,expected,median,p10,p90,verdict\n", out);
	else
		fprintf(out, "%-18s %-6s %-28s %10s %10s %10s %10s  %s\n", "kernel", "arg", "event",
			"expected", "median", "p10", "p90", "verdict");
	for (i = 0; i < nk; i++) {
		const char *k = ks[i].kernel + 9;
		const char *argtxt = "";
		char argbuf[32];

		if (!strcmp(k, "loop"))
			argtxt = size_str(p->loop_n, argbuf, sizeof(argbuf));
		else if (!strcmp(k, "branch"))
			argtxt = ks[i].key ? "random" : "const";
		else if (!strcmp(k, "resident") || !strcmp(k, "cold"))
			argtxt = size_str(p->lines, argbuf, sizeof(argbuf));
		else if (!strcmp(k, "level"))
			argtxt = size_str(ks[i].key, argbuf, sizeof(argbuf));
		else if (!strcmp(k, "dtlb"))
			argtxt = size_str(p->dtlb_pages, argbuf, sizeof(argbuf));
		else if (!strcmp(k, "fault"))
			argtxt = size_str(p->fault_pages, argbuf, sizeof(argbuf));
		snprintf(kname, sizeof(kname), "%s", k);
		for (ev = 0; ev < r->nevents; ev++) {
			const struct cs_agg *ag = cs_merge_agg(ks[i].row, ev);
			enum cs_calib_class c = cs_calib_classify(r->events[ev].name);
			struct cs_calib_exp xe = {0, 0, 0};
			double ex, med, p10, p90, base, factor;
			const char *v;
			int have_exp;

			if (!shown(only, r->events[ev].name))
				continue;
			have_exp = cs_calib_expect(c, ks[i].kernel, ks[i].key, p, &xe);
			ex = xe.value;
			if (have_exp)
				snprintf(e, sizeof(e), "%g", ex);
			else
				snprintf(e, sizeof(e), "-");
			if (cs_merge_not_counted(r, ev) || !ag) {
				/* Never a 0 for an event that did not open. */
				if (csv)
					fprintf(out, "%s,%s,%s,%s,,,,UNSUPPORTED\n", kname, argtxt,
						r->events[ev].name, have_exp ? e : "");
				else
					fprintf(out, "%-18s %-6s %-28s %10s %10s %10s %10s  %s\n",
						kname, argtxt, r->events[ev].name, e, "-", "-", "-",
						"UNSUPPORTED");
				continue;
			}
			med = (double)cs_stats_percentile(ag, 0.5);
			p10 = (double)cs_stats_percentile(ag, 0.1);
			p90 = (double)cs_stats_percentile(ag, 0.9);
			/* Expectations are net of the bracket: the null kernel's
			 * median comes off (never below 0). */
			base = null_row && ks[i].row != null_row ? row_median(null_row, ev) : 0;
			if (base < 0)
				base = 0;
			if (!have_exp) {
				v = c == CS_CALIB_TSC ? "-" : "NO EXPECTATION";
			} else {
				v = cs_calib_judge(&xe, med - base > 0 ? med - base : 0,
						     p10 - base > 0 ? p10 - base : 0,
						     p90 - base > 0 ? p90 - base : 0, &factor);
				if (factor > 0) {
					snprintf(m, sizeof(m), "SCALED x%.2f", factor);
					v = m;
				}
			}
			if (csv) {
				fprintf(out, "%s,%s,%s,%s,%.0f,%.0f,%.0f,%s\n", kname, argtxt,
					r->events[ev].name, have_exp ? e : "", med, p10, p90, v);
			} else {
				snprintf(a, sizeof(a), "%.0f", p10);
				snprintf(b, sizeof(b), "%.0f", p90);
				fprintf(out, "%-18s %-6s %-28s %10s %10.0f %10s %10s  %s\n", kname,
					argtxt, r->events[ev].name, e, med, a, b, v);
			}
		}
		print_formulas(out, r, fs, nf, ks[i].row, null_row, ks[i].kernel, ks[i].key, argtxt,
			       p, only, csv);
	}
	if (!csv)
		fputs("\n(expected values are net of the null kernel, the bracket's own cost; "
		      "tsc has no expected value: see the ratios; formulas: mean per call)\n\n"
		      "checks:\n",
		      out);
	print_order_check(out, r, fs, nf, cold, only, csv);
	free(fs);
	if (tsc != SIZE_MAX && !shown(only, r->events[tsc].name))
		return 0; /* --from -e without tsc: its checks are not asked for */
	if (tsc == SIZE_MAX) {
		if (!csv)
			fputs("  tsc not measured: no checks\n", out);
		return 0;
	}
	print_check(out, csv, "cold/resident", row_median(cold, tsc), row_median(res, tsc), 5);
	print_check(out, csv, "branch random/const", row_median(brn, tsc), row_median(bc, tsc), 3);
	print_check(out, csv, "level past LLC/below LLC", row_median(above, tsc),
		    row_median(below, tsc), 2);
	return 0;
}

/* Returns 1 when r recorded an event other than tsc and perf:: software
 * events. */
static int hardware_events(const struct cs_report *r)
{
	size_t ev;

	for (ev = 0; ev < r->nevents; ev++)
		if (cs_calib_classify(r->events[ev].name) != CS_CALIB_TSC &&
		    strncasecmp(r->events[ev].name, "perf::", 6) != 0)
			return 1;
	return 0;
}

/* Whether the -o file exists (said).  The shim never overwrites a file
 * (it appends .1, .2, ... as for cacheshim run -o), so the kernels' report
 * went to FILE.1 unsaid, this run read the old FILE, and a later --from
 * FILE judged the old run. */
static int output_taken(const char *output)
{
	struct stat st;

	if (lstat(output, &st) != 0)
		return 0;
	cs_err("calibrate: -o %s exists: report files are never overwritten (remove it or "
	       "name another)",
	       output);
	return 1;
}

/* Returns the number of rows of r that are calls of a kernel. */
static size_t kernel_rows(const struct cs_report *r)
{
	size_t nrows, i, n = 0;
	struct cs_row **rows = cs_merge_sorted(r, &nrows);

	for (i = 0; rows && i < nrows; i++)
		n += strncmp(rows[i]->k.name, "cs_calib_", 9) == 0;
	free(rows);
	return n;
}

/* Whether name is an event or a preset formula r recorded. */
static int recorded(const struct cs_report *r, const struct cs_formula *fs, size_t nf,
		    const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < r->nevents; i++)
		if (strlen(r->events[i].name) == len && !strncasecmp(r->events[i].name, name, len))
			return 1;
	for (i = 0; i < nf; i++)
		if (strlen(fs[i].f->name) == len && !strncasecmp(fs[i].f->name, name, len))
			return 1;
	return 0;
}

/* --from -e: each entry must name an event or formula of the file (a
 * misspelt name printed no row and no message).  Returns 0 or
 * CS_EXIT_USAGE (said). */
static int check_only(const struct cs_report *r, const char *path, const char *only)
{
	struct cs_formula *fs = NULL;
	const char *rest = only, *b;
	size_t nf = 0, len;
	int ret = 0;

	if (cs_formulas_find(r, &fs, &nf) != 0) {
		fs = NULL;
		nf = 0;
	}
	while (!ret && (b = cs_util_next_item(&rest, &len))) {
		if (len && !recorded(r, fs, nf, b, len)) {
			cs_err("calibrate: --from %s: -e '%.*s': no such event or formula in the file",
			       path, (int)len, b);
			ret = CS_EXIT_USAGE;
		}
	}
	free(fs);
	return ret;
}

/* --from: the verdicts of a kept report file, without geometry (the
 * level check needs it: UNSUPPORTED), of the events and formulas in only
 * (all when NULL).  Returns an exit status. */
static int judge_file(const char *path, const struct cs_calib_params *p, const char *only,
		      int csv)
{
	struct geometry g = {0};
	struct cs_report *r = cs_merge_new(CS_BY_FUNCTION);
	int ret;

	if (!r) {
		cs_err("out of memory");
		return CS_EXIT_FAIL;
	}
	if (cs_report_add_file(r, path) < 0) {
		cs_merge_free(r);
		return CS_EXIT_FAIL;
	}
	/* A file of `cacheshim run` printed an empty table, exit 0. */
	if (!kernel_rows(r)) {
		cs_err("calibrate: --from %s: no calibration calls (cs_calib_*) in the file: not "
		       "one kept with calibrate -o",
		       path);
		cs_merge_free(r);
		return CS_EXIT_FAIL;
	}
	ret = check_only(r, path, only);
	if (ret) {
		cs_merge_free(r);
		return ret;
	}
	if (!csv)
		printf("cacheshim calibrate: verdicts of %s (default kernel parameters)\n\n", path);
	print_results(stdout, r, p, &g, only, csv);
	cs_merge_free(r);
	return cs_util_stdout_done();
}

int cs_cmd_calibrate(int argc, char **argv)
{
	static const struct option opts[] = {
		{"events", required_argument, NULL, 'e'},
		{"csv", no_argument, NULL, 'c'},
		{"calls", required_argument, NULL, OPT_CALLS},
		{"output", required_argument, NULL, 'o'},
		{"child", required_argument, NULL, OPT_CHILD},
		{"html", required_argument, NULL, OPT_HTML},
		{"from", required_argument, NULL, OPT_FROM},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cs_calib_params p = {.calls = 200,
				    .loop_n = 10000,
				    .branch_n = 4096,
				    .lines = 64,
				    .dtlb_pages = 4096,
				    .fault_pages = 64};
	const char *events = DEFAULT_EVENTS, *output = NULL, *child_params = NULL, *html = NULL,
		   *from = NULL;
	char dir[] = "/tmp/cacheshim-calib.XXXXXX", path[sizeof(dir) + 16];
	struct geometry g = {0};
	struct cs_report *r;
	uint64_t syslc;
	int c, csv = 0, ret, events_given = 0, calls_given = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "e:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			events = optarg;
			events_given = 1;
			break;
		case 'c':
			csv = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case OPT_CALLS:
			errno = 0;
			p.calls = (unsigned)strtoul(optarg, &end, 10);
			if (*end || errno || p.calls < 100 || p.calls > 100000) {
				cs_err("calibrate: --calls must be 100..100000");
				return CS_EXIT_USAGE;
			}
			calls_given = 1;
			break;
		case OPT_CHILD:
			child_params = optarg;
			break;
		case OPT_HTML:
			html = optarg;
			break;
		case OPT_FROM:
			from = optarg;
			break;
		case 'h':
			usage(stdout);
			return cs_util_stdout_done();
		default:
			usage(stderr);
			return CS_EXIT_USAGE;
		}
	}
	if (child_params)
		return optind < argc ? child(child_params, argv[optind]) : CS_EXIT_USAGE;
	if (output && (!output[0] || strchr(output, '%'))) {
		/* The shim would expand %p, %e: the file could not be found. */
		cs_err("calibrate: --output takes a plain file name (no %%)");
		return CS_EXIT_USAGE;
	}
	if (optind < argc) {
		usage(stderr);
		return CS_EXIT_USAGE;
	}
	if (!from && output && output_taken(output))
		return CS_EXIT_USAGE;

	if (from && (html || output || calls_given)) {
		/* They measure, and --from measures nothing: --html wrote no
		 * file, silently. */
		cs_err("calibrate: --from does not apply %s (nothing is measured)",
		       html ? "--html" : output ? "-o" : "--calls");
		return CS_EXIT_USAGE;
	}
	if (from)
		return judge_file(from, &p, events_given ? events : NULL, csv);
	/* As run checks them: an unknown name ran the whole calibration
	 * and printed every row UNSUPPORTED. */
	ret = cs_run_check_events("calibrate", events, "-e");
	if (ret)
		return ret;
	read_sysfs(&g);
	read_cpuid_caches(&g);
	read_cpuid_tlb(&g);
	measure_curve(&g);
	syslc = sized_llc(&g);
	g.llc = syslc;
	if (g.meas_llc && (!syslc || syslc > 2 * g.meas_llc || syslc * 2 < g.meas_llc)) {
		g.disagree = 1;
		g.llc = g.meas_llc;
	}
	/* A power of two, so that the row's key (the argument's size class,
	 * a power of two) is K itself: --from reads it there. */
	if (g.stlb + g.dtlb1 > 0)
		p.dtlb_pages = pow2_floor(4 * (g.stlb > g.dtlb1 ? g.stlb : g.dtlb1) - 1);
	if (p.dtlb_pages < 1024)
		p.dtlb_pages = 1024;
	choose_levels(&g, &p);
	if (html && write_html(html, &g) != 0)
		return CS_EXIT_FAIL;

	if (!output) {
		if (!mkdtemp(dir)) {
			cs_err("calibrate: mkdtemp: %s", strerror(errno));
			return CS_EXIT_FAIL;
		}
		snprintf(path, sizeof(path), "%s/calib.csr", dir);
		output = path;
	}
	ret = run_kernels(&p, events, output);
	r = ret == 0 ? cs_merge_new(CS_BY_FUNCTION) : NULL;
	if (ret == 0 && !r)
		cs_err("out of memory");
	if (r && cs_report_add_file(r, output) < 0) {
		cs_merge_free(r);
		r = NULL;
	}
	if (output == path) {
		unlink(path);
		rmdir(dir);
	}
	if (r && !kernel_rows(r)) {
		cs_err("calibrate: the kernels' run recorded no call of them (the shim did not "
		       "hook %s?)",
		       lib_path("CACHESHIM_CALIB_LIB", "libcscalib.so", CS_PKGLIBDIR, 1));
		cs_merge_free(r);
		r = NULL;
	}
	if (!r)
		return CS_EXIT_FAIL;
	if (!csv) {
		printf("cacheshim calibrate: %u calls per kernel, events %s\n", p.calls, events);
		if (strchr(events, '@') && !hardware_events(r))
			puts("note: no hardware event was recorded: the presets fell back to tsc "
			     "and "
			     "page faults (no hardware PMU visible, or perf_event_paranoid)");
		putchar('\n');
	}
	print_geometry(stdout, &g, csv);
	print_results(stdout, r, &p, &g, NULL, csv);
	cs_merge_free(r);
	return cs_util_stdout_done();
}
