/* SPDX-License-Identifier: MIT */
/* Private declarations of the offline cacheshim command (report/). */
#ifndef CACHESHIM_REPORT_INTERNAL_H
#define CACHESHIM_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>

#include <uthash.h>

#include "common/calc.h"
#include "common/format.h"
#include "common/presets.h"

typedef unsigned __int128 cs_u128;

/* Exit statuses of the command. */
#define CS_EXIT_OK 0
#define CS_EXIT_FAIL 1 /* a file could not be read, a run failed */
#define CS_EXIT_USAGE 2 /* bad command line */

/* ---- util.c: number formatting and small helpers ---- */

/* Writes v in decimal into buf.  Returns buf (truncated if len is too
 * small, always NUL-terminated when len > 0). */
char *cs_util_u128(cs_u128 v, char *buf, size_t len);
/* Whether two event names are one event: libpfm4's names in another case
 * (perf::page-faults, perf::PAGE-FAULTS), or one of perf's software events
 * under two of its names (perf::FAULTS).  Files and --event match events
 * so. */
int cs_event_same(const char *a, const char *b);
/* In a report's lost_why: a file lost calls without saying why (a writer
 * before header.lost_why). */
#define CS_LOST_UNSAID (1ull << 63)
/* Why calls were not recorded (header.lost_why, CS_LOST_*): the reasons
 * set, for a person ("report file full (CACHESHIM_CAPACITY_MB), ...") or
 * as keywords ("file_full,..."), into buf; the generic list of reasons for
 * 0 (a file of an earlier writer).  Returns buf. */
char *cs_util_lost_why(uint64_t why, int keywords, char *buf, size_t len);
/* cs_util_escape_cut, keeping the last keep bytes of s whole after the
 * "..." (a call site's +0xOFF, a label's @module or [argN:K], which tell
 * rows apart that the cut would make alike). */
char *cs_util_escape_cut_keep(const char *s, size_t keep, size_t cols, char *buf, size_t len);
/* The bytes at the end of label t that tell rows apart, for
 * cs_util_escape_cut_keep: a call site's "+0xOFF", a function's
 * "@module..." and "[argN:K]"; 0 when none. */
size_t cs_util_label_suffix(const char *t, int callsite, int function);
/* Writes v as a plain decimal: an integer when v is integral, else fixed
 * with up to 3 decimals, trailing zeros dropped (above 0 but below 0.001: 6
 * significant digits, "0.0004", "3.33333e-07"); from 2^64 on (beyond any
 * counter's value) 15 significant digits with an exponent, "1e+200", a
 * valid JSON number.  NaN gives "".  Returns buf. */
char *cs_util_decimal(long double v, char *buf, size_t len);
/* Writes v for a human: up to 5 digits as is, larger values with a k, M,
 * G, T, P or E suffix and 3 significant digits, past that an exponent
 * ("1e+200").  Returns buf. */
char *cs_util_human(long double v, char *buf, size_t len);
/* cs_util_human for an integer, faster. */
char *cs_util_human_u64(uint64_t v, char *buf, size_t len);
/* Returns the part of path after its last '/', path itself if none. */
const char *cs_util_basename(const char *path);
/* The next item of the comma-separated list at *rest, without the white
 * space around it (as the shim reads its lists): its start, and its length
 * in *len; *rest moves past its comma.  NULL after the last item. */
const char *cs_util_next_item(const char **rest, size_t *len);
/* Copies s into buf (len bytes) with each control character written as
 * \n, \t, \r or \xHH: a name with a newline broke the table's rows, and
 * an escape sequence reached the terminal.  The C1 controls (U+0080 to
 * U+009F) are written as the \xHH of their two UTF-8 bytes, and each byte
 * that is not part of valid UTF-8 as its \xHH: a terminal obeys the one
 * and guesses at the other.  Cut at a whole character or escape when len
 * is short.  Returns buf. */
char *cs_util_escape_ctl(const char *s, char *buf, size_t len);
/* cs_util_escape_ctl in at most cols display columns (cs_util_width; cols
 * 0: any, else more than 3): a longer text is cut after a whole character
 * or escape and ends with "...".  len of 4 * cols + 1 always has room for
 * the cut.  Returns buf. */
char *cs_util_escape_cut(const char *s, size_t cols, char *buf, size_t len);
/* s escaped (cs_util_escape_ctl), whole, in a malloc'd string; NULL when
 * out of memory. */
char *cs_util_escape_dup(const char *s);
/* 0 once all that was printed on out reached it, else -errno of the
 * failed write (-EIO when no longer known). */
int cs_util_flushed(FILE *out);
/* CS_EXIT_OK once all that was printed on stdout reached it; else says
 * so on stderr and returns CS_EXIT_FAIL: help or a listing into a full
 * disk or a closed pipe must not end as a success. */
int cs_util_stdout_done(void);
/* Length of the valid UTF-8 character at s (1 for ASCII, up to 4), 0 when
 * s does not start one. */
int cs_util_utf8_len(const char *s);
/* Display columns of the n bytes of escaped text at s: one per character
 * (printf pads by bytes, so UTF-8 names misaligned the columns). */
size_t cs_util_width(const char *s, size_t n);
/* The printf field width ("%-*s", "%*s") that pads escaped text s to cols
 * display columns. */
int cs_util_field(const char *s, size_t cols);
/* Longest name, in display columns, in a column of the text tables:
 * longer ones are cut, marked with "...". */
#define CS_NAME_COLUMNS 60
/* Whether path is a directory: a directory option naming none was
 * otherwise accepted silently (nothing found there).  Returns 0, or -1
 * with "WHAT PATH: reason" said. */
int cs_util_check_dir(const char *what, const char *path);
/* Prints "cacheshim: ", the message and a newline on stderr, the message
 * escaped as cs_util_escape_ctl escapes names: it quotes what the user
 * typed and names from the files. */
void cs_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Like cs_err, with "warning: " before the message. */
void cs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- demangle.c: C++ names for people ---- */

/* Returns name with the C++ mangled name it starts with ("_Z...", clone
 * suffixes such as .cold included) demangled by the C++ runtime's
 * __cxa_demangle, and what cacheshim put after it ([argN:KEY],
 * @module+0xOFF, a call site's +0xOFF) kept, as a malloc'd string.  NULL
 * when name is not mangled or does not demangle, when its mangled part is
 * cut bytes or longer (a name the file kept cut bytes of may have lost its
 * end; cut 0: any length), when libstdc++ cannot be loaded, or when out
 * of memory: then name is shown as it is. */
char *cs_demangle(const char *name, size_t cut);
/* fnmatch(glob, name, 0), or else fnmatch of glob and name demangled
 * (cs_demangle with cut): --function matches either form.  Returns 0 on a
 * match, else FNM_NOMATCH. */
int cs_demangle_fnmatch(const char *glob, const char *name, size_t cut);
/* The cut of cs_demangle for names of targets read from a file: it keeps
 * their first CS_TARGET_NAME_MAX - 1 bytes. */
#define CS_DEMANGLE_CUT (CS_TARGET_NAME_MAX - 1)

/* ---- reader.c: loading and validating report files ---- */

/* A validated report file held in memory.  Every pointer points into data
 * and has been bounds-checked: a user may dereference it freely. */
struct cs_file {
	char *path; /* as given, for messages */
	unsigned char *data; /* bytes [0, used) of the file, 16-aligned */
	size_t size; /* bytes in data */
	size_t mapped; /* bytes mapped at data (the file read-only, or anonymous
			* memory it was read into), 0: data is malloc'd */
	pthread_t helper; /* prefaults the mapping (reader.c), if has_helper */
	int has_helper;
	const struct cs_file_header *hdr;
	/* A mapped file's header as it was checked (hdr points here): the
	 * mapping shows whatever another process writes into the file after
	 * the check, and the version alone decides whether blocks are
	 * rewritten in place (into a read-only mapping). */
	struct cs_file_header hdr_checked;
	uint64_t used; /* header.used with CS_USED_SEALED masked off */
	uint64_t end; /* offset where the block walk stopped */
	int incomplete; /* header.state is CS_STATE_RUNNING */
	int values_unchecked; /* loaded under cs_reader_targets_only(1) */
	int live_short; /* running, and the file ends before header.used */
	char damage[256]; /* first problem past the header, "" if none */
	unsigned ndamage; /* problems found past the header */
	unsigned nmerging; /* series blocks skipped: merging when the program ended */
	size_t nunknown; /* blocks of unknown or unpublished type skipped */
	const struct cs_module_block **modules; /* sorted by id */
	size_t nmodules;
	const struct cs_target_block **targets; /* sorted by id */
	size_t ntargets;
	const struct cs_site_block **sites; /* in file order */
	size_t nsites;
	const struct cs_thread_block **threads; /* sorted by tid */
	size_t nthreads;
	struct cs_tid_events {
		uint32_t tid, events_open;
	} * tids; /* events_open by tid, sorted, one per tid */
	size_t ntids;
	/* Nested blocks whose site is one of sites[], sorted by that site's
	 * offset, at most one per site (cs_reader_nested finds them). */
	const struct cs_nested_block **nested;
	size_t nnested;
	const struct cs_series_block **series; /* valid ones, in file order */
	size_t nseries;
	/* Refusal blocks whose target exists, sorted by target id, then in
	 * file order (a target may have several: all are kept). */
	const struct cs_refusal_block **refusals;
	size_t nrefusals;
	/* The shim's notes (lines it said once about what the file lacks),
	 * in file order. */
	const struct cs_note_block **notes;
	size_t nnotes;
};

/* Reads and validates the report file at path.  Returns 0 and sets *out,
 * or a negative errno (-EINVAL for a file without a usable header,
 * -ENOMEM, or what open/read failed with) and writes "PATH: what is
 * wrong" into err.  Damage past the header does not fail: the blocks that
 * are whole are kept and (*out)->damage says what was dropped. */
int cs_reader_load(const char *path, struct cs_file **out, char *err, size_t errlen);
/* Validates the len bytes at buf as a report file named name (copied:
 * buf need not stay valid nor be aligned).  Returns and fails like
 * cs_reader_load. */
int cs_reader_parse(const void *buf, size_t len, const char *name, struct cs_file **out, char *err,
		    size_t errlen);
/* Reads the header of the file at path without validating the rest.
 * Returns 0 when the file is a regular file that starts with CS_MAGIC,
 * -ENOENT-like negative errno when it cannot be read, -EINVAL when it is
 * not a report file. */
int cs_reader_peek(const char *path, struct cs_file_header *hdr);
/* on = 1: files loaded from now on are checked for what names their
 * targets (blocks, modules, notes, refusals), not for whether their
 * sites', nested blocks' and series windows' values hold together (~0.3
 * ms of a ruby run's file), for a reader that uses none of them
 * (`run -q`); their values must not be shown. */
void cs_reader_targets_only(int on);
/* 1 when headers a and b are those of one process's file (the same pid,
 * parent, session, start time and program): one is a copy of the other,
 * or a snapshot of it taken while it was written.  Read together, every
 * call would count twice. */
int cs_reader_same_writer(const struct cs_file_header *a, const struct cs_file_header *b);
/* For the n headers hdr[i] (NULL: not read, never a copy), sets keep[i]
 * to the index of the file to read for i's process: i, or another file of
 * the same writer (cs_reader_same_writer) that got further (more blocks
 * reserved, or as many and finished where i was not: a snapshot taken
 * while the file was written lacks the calls made since; neither
 * finished, with paths (the files', or NULL: headers only), the one that
 * had entered more calls, read for it), the first one of those that got
 * equally far.  Returns 0 or -ENOMEM. */
int cs_reader_copies(const struct cs_file_header *const *hdr, const char *const *paths, size_t n,
		     size_t *keep);
/* Frees f and everything it owns; NULL is fine. */
void cs_reader_free(struct cs_file *f);
/* Returns 1 when the values of event ev at site s are measurements: the
 * site's thread opened the event (by its thread block, or by the file's
 * CS_EVENT_COUNTED flag when the thread has none), else 0. */
int cs_reader_event_usable(const struct cs_file *f, const struct cs_site_block *s, unsigned ev);
/* Returns the block with that id, or NULL. */
const struct cs_module_block *cs_reader_module(const struct cs_file *f, uint32_t id);
const struct cs_target_block *cs_reader_target(const struct cs_file *f, uint32_t id);
/* Returns the nested block of site s (validated: same events, every
 * nested call among the site's calls), or NULL when it has none. */
const struct cs_nested_block *cs_reader_nested(const struct cs_file *f,
					       const struct cs_site_block *s);
/* statfit.c: NULL when the aggregate of one event over calls calls can
 * be what the shim wrote (its histogram counts them, its sums and
 * extremes are within what its buckets allow), else why not.  in_flight:
 * how many of its calls may have been cut half-way (its sums then
 * unbounded above, its histogram up to that many calls over). */
const char *cs_statfit_stat(const struct cs_stat *st, uint64_t calls, uint64_t in_flight);
const char *cs_statfit_wstat(const struct cs_wstat *w, uint64_t calls, uint64_t in_flight);

/* Like cs_reader_event_usable, for thread tid. */
int cs_reader_tid_usable(const struct cs_file *f, uint32_t tid, unsigned ev);
/* Window i (< CS_SERIES_WINDOWS) of series block sb, and its stat of
 * event ev. */
const struct cs_window *cs_reader_window(const struct cs_series_block *sb, unsigned i);
const struct cs_wstat *cs_reader_wstat(const struct cs_series_block *sb, unsigned i, unsigned ev);
/* Returns the windows of sb that hold calls: min(CS_SERIES_WINDOWS,
 * ceil(calls / 2^shift)). */
unsigned cs_reader_windows_used(const struct cs_series_block *sb);

/* ---- stats.c: aggregates of one event and what is derived from them ---- */

/* A cs_stat widened so that any number of them can be added up: the sum
 * is 128-bit and the sum of squares 192-bit (three little-endian limbs).
 * The histogram holds only the window of buckets from the lowest to the
 * highest used one (100,000 rows x 4 events of dense histograms would
 * take 3.7 GB): read it with cs_stats_bucket / cs_stats_range.  The
 * window is owned: make an agg with cs_stats_init (or cs_stats_new),
 * release it with cs_stats_fini (cs_stats_free), and never copy one by
 * assignment or memcpy (cs_stats_copy; a copy by value aborts). */
struct cs_agg {
	uint64_t n; /* values recorded: the sum of the buckets */
	cs_u128 sum;
	uint64_t sumsq[3];
	uint64_t min, max; /* valid when n > 0 */
	cs_u128 shift; /* overhead to take off the values in all: the sum
			* over values of their file's calibration median */
	uint64_t *h; /* dense: counts of buckets [hlo, hlo + hlen); sparse:
		      * hlen (bucket, count) pairs (stats.c) */
	uint32_t hlo, hlen, hcap;
	int sparse;
	int nomem; /* an allocation failed: counts are missing */
	int overflow; /* 2^64 values or more: n wrapped (no real run gets
		       * there; damaged or crafted files) */
	const struct cs_agg *self; /* this agg: catches copies by value */
};

struct cs_summary {
	uint64_t n;
	cs_u128 total;
	long double mean, stddev; /* population standard deviation */
	uint64_t min, max;
	uint64_t p50, p90, p99;
};

/* Makes a empty: no values (a's earlier window, if any, is not freed). */
void cs_stats_init(struct cs_agg *a);
/* Frees a's window and makes it empty; NULL is fine. */
void cs_stats_fini(struct cs_agg *a);
/* Returns a new empty agg on the heap, or NULL when out of memory. */
struct cs_agg *cs_stats_new(void);
/* cs_stats_fini, then free(a); NULL is fine. */
void cs_stats_free(struct cs_agg *a);
/* Adds the values of s (one site, one event, one thread) to a.  A stat
 * without values contributes nothing.  Returns the number of values; 0
 * with a->nomem set when out of memory. */
uint64_t cs_stats_add(struct cs_agg *a, const struct cs_stat *s);
/* Like cs_stats_add for a stat known to hold calls values (its site's
 * calls): then only the buckets between min's and max's are read when
 * they hold them all.  Returns like cs_stats_add. */
uint64_t cs_stats_add_calls(struct cs_agg *a, const struct cs_stat *s, uint64_t calls);
/* Adds the one value v to a.  Returns 0, or -ENOMEM (a->nomem set). */
int cs_stats_add_value(struct cs_agg *a, uint64_t v);
/* Adds b to a (a->nomem set when out of memory). */
void cs_stats_merge(struct cs_agg *a, const struct cs_agg *b);
/* Makes dst (initialized) a copy of src.  Returns 0 or -ENOMEM. */
int cs_stats_copy(struct cs_agg *dst, const struct cs_agg *src);
/* Takes the values of b out of a, b being some of a's values (the first
 * calls of a's sites, say).  Counts, sums and buckets are exact; min and
 * max stay exact unless one of b's values was a's extreme, then they are
 * the bounds of the outermost non-empty buckets (exact below
 * CS_HIST_EXACT), within a's old range.  Returns 0, or -EINVAL (a
 * unchanged) when b has values a does not. */
int cs_stats_sub(struct cs_agg *a, const struct cs_agg *b);
/* Returns the count of bucket b of a. */
uint64_t cs_stats_bucket(const struct cs_agg *a, unsigned b);
/* Sets *lo and *hi to the lowest and highest non-empty buckets of a.
 * Returns 0, or -ENODATA when a has no values. */
int cs_stats_range(const struct cs_agg *a, unsigned *lo, unsigned *hi);
/* Returns the estimate of the q-quantile (0 < q <= 1): the value of the
 * ceil(q*n)-th smallest value's bucket, exact below CS_HIST_EXACT,
 * interpolated by rank within wider buckets, clamped to [min, max].
 * Within 3% of the true value.  Returns 0 when a has no values. */
uint64_t cs_stats_percentile(const struct cs_agg *a, double q);
/* Returns the population standard deviation of a, computed from the exact
 * n*sumsq - sum^2; 0 when a has no values or the sums are inconsistent. */
long double cs_stats_stddev(const struct cs_agg *a);
/* Returns the population variance of a (exact to long double), as
 * cs_stats_stddev. */
long double cs_stats_variance(const struct cs_agg *a);
/* Returns the mean of a as cs_stats_summarize has it (overhead taken
 * off), 0 when a has no values. */
long double cs_stats_mean(const struct cs_agg *a);
/* Returns the mean of a as measured (no overhead taken off), 0 when a has
 * no values. */
long double cs_stats_raw_mean(const struct cs_agg *a);
/* Returns the overhead taken off a's values, per value (the mean of their
 * files' calibration medians), 0 when a has no values or no shift. */
long double cs_stats_overhead(const struct cs_agg *a);
/* Fills *out from a; with a shift, the overhead is taken off total, mean,
 * min, max and the percentiles (never below 0; stddev is unchanged).
 * Returns 0, or -ENODATA when a has no values (then only n and total are
 * set). */
int cs_stats_summarize(const struct cs_agg *a, struct cs_summary *out);

/* ---- merge.c: rows of the report, merged over files ---- */

enum cs_by {
	CS_BY_CALLSITE, /* (function, module path + offset, event) */
	CS_BY_FUNCTION, /* (function, event) */
};

/* An event, matched by name across files. */
struct cs_event_info {
	char name[CS_EVENT_NAME_MAX];
	uint32_t kind;
	int counted; /* some file had CS_EVENT_COUNTED */
	int failed; /* some file had CS_EVENT_FAILED */
	unsigned occurrence; /* 0, or n for the n+1-th event of this name in
			      * one file (files that list a name twice) */
};

/* A module, matched by path across files. */
struct cs_module_info {
	char *path;
	uint8_t build_id[32];
	uint32_t build_id_len; /* of the first file that recorded it */
	uint32_t idx; /* 1-based index in cs_report.modules */
	/* Files recorded two build ids for the path (a program rebuilt
	 * between runs): its call sites' offsets are not of one file, and
	 * are shown as offsets, never as another build's symbols. */
	int builds_differ;
	UT_hash_handle hh;
};

struct cs_file_info {
	char *path;
	char program[CS_PROGRAM_MAX];
	uint32_t pid;
	int incomplete;
	uint64_t lost_calls;
	uint64_t lost_why; /* CS_LOST_* */
	int targets_left; /* CS_LOST_TARGETS: functions left unwrapped */
	uint64_t tsc_hz;
	uint64_t session;
	cs_u128 setup_ticks; /* its threads' cs_thread_block.setup_ticks */
};

struct cs_row_key {
	char name[CS_TARGET_NAME_MAX]; /* target name */
	uint32_t module; /* cs_module_info.idx of the caller, 0 unknown/any */
	uint32_t argn; /* of the target, 0 when not keyed */
	uint64_t offset; /* callsite - base; raw address when module is 0 */
	uint64_t key; /* CS_KEY_NONE when not keyed */
	/* Which function of that name (cs_target_info): two local functions
	 * may share a name, and must not share a row. */
	uint32_t tmodule, treserved;
	uint64_t toff;
};

/* A reason a target's entry was not patched (cs_refusal_block). */
struct cs_refusal_info {
	char why[sizeof(((struct cs_refusal_block *)0)->why)];
	uint64_t offset; /* in the function, 0 if none */
};

/* A wrapped function, merged over files: one per (name, defining module
 * path, offset of its address in that module).  A target whose module is
 * unknown, or whose address is outside it, has module 0 and offset 0:
 * then it is matched by name alone, as a process's load addresses say
 * nothing about another's. */
struct cs_target_key {
	char name[CS_TARGET_NAME_MAX];
	uint32_t module; /* cs_module_info.idx of the defining module, 0 unknown */
	uint32_t reserved;
	uint64_t offset; /* addr - module base */
};

struct cs_target_info {
	struct cs_target_key k;
	const struct cs_module_info *mod; /* of k.module, NULL when 0 */
	uint64_t addr; /* run-time address in the first file, for module 0 */
	uint32_t how; /* CS_HOOK_* of every file, or'ed */
	uint32_t got_slots; /* the most any file patched */
	uint32_t data_words; /* of words of data (vtables): the most any file */
	cs_u128 calls; /* measured calls, over all its sites */
	struct cs_refusal_info *refusals; /* distinct reasons, in file order */
	size_t nrefusals, refusals_cap;
	struct cs_refusal_seen *refusals_seen; /* the same as a set (merge.c) */
	/* Functions of this name in its module: above 1, its rows are
	 * labelled name@module+0xOFF; else, modules with a function of
	 * this name: above 1, name@module (the module's file name). */
	const unsigned *same_name, *name_modules;
	/* Modules of its module's file name with a function of this name:
	 * above 1, the label names the module by its whole path. */
	const unsigned *base_clash;
	/* Whether --function matches its name (merge.c): 0 not known yet,
	 * 1 no, 2 yes. */
	int fn_match;
	UT_hash_handle hh;
};

/* One (function, call site) or one function: all events. */
struct cs_row {
	struct cs_row_key k;
	const struct cs_target_info *target; /* the function it calls */
	cs_u128 calls, entered, dropped; /* sums over blocks and files: no wrap */
	size_t naggs;
	struct cs_agg **aggs; /* per event of the report, NULL = no values */
	/* The other view (inclusive when cs_report.self, else exclusive),
	 * per event; only made once a site of the row has a nested block,
	 * NULL until then: both views are the same. */
	struct cs_agg **other;
	size_t nother;
	/* --cold: per event, the first call of each of the row's sites
	 * (per thread); NULL unless cs_report.cold (cs_merge_cold). */
	struct cs_agg **cold;
	size_t ncold;
	/* The distinct sets of events (bit e: report event e, for e < 64)
	 * its blocks recorded values of: a derived column's events are over
	 * the same calls only if no set holds some of them but not all. */
	uint64_t *evsets;
	size_t nevsets;
	UT_hash_handle hh;
};

struct cs_report {
	enum cs_by by;
	struct cs_event_info *events;
	size_t nevents, events_cap;
	struct cs_module_info **modules; /* modules[idx - 1] */
	size_t nmodules;
	struct cs_module_info *module_hash;
	struct cs_file_info *files;
	size_t nfiles;
	struct cs_row *rows; /* uthash head */
	size_t nrows;
	cs_u128 calls, entered, dropped; /* sums over blocks and files: no wrap */
	cs_u128 not_returned; /* sum over sites of entered - calls - dropped */
	cs_u128 lost_calls; /* summed over files: no wrap */
	uint64_t lost_why; /* CS_LOST_* of the files that lost calls */
	cs_u128 setup_ticks; /* the shim's set-up inside measured calls */
	/* Per event: the calls of the calibration target (CS_HOOK_CALIBRATION),
	 * the cost of the measurement itself.  Not in rows. */
	struct cs_agg **calib;
	size_t ncalib;
	/* Per event: the calls of the nested calibration target
	 * (CS_HOOK_CALIBRATION_NESTED): a wrapped call inside another. */
	struct cs_agg **calib_nested;
	size_t ncalib_nested;
	/* Set before adding files: take each file's calibration median off
	 * every value of its rows (cs_agg.shift). */
	int subtract_overhead;
	/* Set before adding files (--function, --module): only sites whose
	 * target name matches one of fn_globs (when there are any) and
	 * whose caller's module path or base name matches one of mod_globs
	 * (when any) are added.  fnmatch(3) patterns. */
	char **fn_globs, **mod_globs;
	size_t nfn_globs, nmod_globs;
	/* Set before adding files: the files' targets, modules, notes and
	 * refusals only, no call site's values nor calibration (the
	 * launcher's end-of-run check, `run -q`). */
	int targets_only;
	/* mod_seen[i]: a site's caller module matched mod_globs[i] (any
	 * target's), so that a glob no module matches can be said. */
	unsigned char *mod_seen;
	/* Set before adding files (--cold): rows keep their first calls. */
	int cold;
	/* Where the aggs of rows->aggs live (merge.c): allocated in chunks,
	 * 100,000 rows x 4 events of malloc calls cost more than merging. */
	struct cs_agg_chunk *chunks;
	/* Set before adding files: rows hold exclusive (self) values, the
	 * nested targets' calls taken out (cs_merge_split). */
	int self;
	/* Files kept for their series blocks (cs_merge_keep), with the map
	 * of their events to the report's. */
	struct cs_kept_file {
		struct cs_file *f;
		size_t evmap[CS_MAX_EVENTS];
	} * kept;
	size_t nkept;
	/* Every target of every file but the calibration one (uthash head),
	 * and the number of functions per name (merge.c). */
	struct cs_target_info *targets;
	size_t ntargets;
	struct cs_name_count *names;
	/* The shim's notes of every file, one per text (uthash head), and how
	 * many there are. */
	struct cs_note_info *notes;
	size_t nnotes;
};

/* A note of the shim (cs_note_block) and the files that hold it. */
struct cs_note_info {
	UT_hash_handle hh; /* keyed by text */
	size_t order; /* the note's place among all, first seen first */
	size_t nfiles; /* files holding it (each counted once) */
	char text[CS_NOTE_TEXT];
};

/* Returns a new empty report, or NULL when out of memory. */
struct cs_report *cs_merge_new(enum cs_by by);
/* Adds every site of f to r.  Returns 0, or -ENOMEM (r then holds part of
 * f and should be freed). */
int cs_merge_add(struct cs_report *r, const struct cs_file *f);
/* Returns a malloc'd array of the rows of r sorted by function, module,
 * offset and key, and sets *n; NULL (and *n = 0) when empty or out of
 * memory. */
struct cs_row **cs_merge_sorted(const struct cs_report *r, size_t *n);
/* Compares rows x and y of r in the order of cs_merge_sorted: <0, 0, >0. */
int cs_merge_compare(const struct cs_report *r, const struct cs_row *x, const struct cs_row *y);
/* Returns the agg of event ev in row, or NULL when it has no values. */
const struct cs_agg *cs_merge_agg(const struct cs_row *row, size_t ev);
/* Returns the calls of the calibration target for event ev, or NULL when
 * no file had one. */
const struct cs_agg *cs_merge_calibration(const struct cs_report *r, size_t ev);
/* Sets *out to what a wrapped call adds to the call around it for event
 * ev (the nested calibration's median less the calibration's, at least
 * 0) and returns 1; 0 when no file had a nested calibration. */
int cs_merge_nested_overhead(const struct cs_report *r, size_t ev, uint64_t *out);
/* Returns the first calls (the cold ones: one per site and thread) of
 * event ev of row, or NULL when it has none or cs_report.cold was not
 * set. */
const struct cs_agg *cs_merge_cold(const struct cs_row *row, size_t ev);
/* Returns 1 when event ev of r was not counted in any file (failed and
 * never counted), else 0. */
int cs_merge_not_counted(const struct cs_report *r, size_t ev);
/* Returns a malloc'd array of the notes of r, first seen first, and sets
 * *n; NULL (and *n = 0) when none or out of memory. */
struct cs_note_info **cs_merge_notes(const struct cs_report *r, size_t *n);
/* Returns a malloc'd array of the targets of r sorted by name, module
 * path and offset, and sets *n; NULL (and *n = 0) when none or out of
 * memory. */
struct cs_target_info **cs_merge_targets(const struct cs_report *r, size_t *n);
/* Writes the label of target t of file f (already merged into r) into
 * buf: its name, or name@module+0xOFF when r has several functions of
 * that name, as cs_merge_function.  Returns buf. */
char *cs_merge_target_label(const struct cs_report *r, const struct cs_file *f,
			    const struct cs_target_block *t, char *buf, size_t len);
/* Room for a function column: name@module+0xOFF[argN:KEY]. */
#define CS_FUNCTION_MAX (CS_TARGET_NAME_MAX + 128)
/* Writes the function column of row ("name", or "name[argN:KEY]" for a
 * keyed target; "name@module+0xOFF..." when the report has several
 * functions of that name) into buf.  Returns buf. */
char *cs_merge_function(const struct cs_row *row, char *buf, size_t len);
/* As cs_merge_function, without the "@module" of functions of one name in
 * different modules (--diff tells them apart by their module itself). */
char *cs_merge_function_in_module(const struct cs_row *row, char *buf, size_t len);
/* Whether the events of mask (bit e: report event e) were counted over
 * different calls of row: one of its blocks recorded some of them, not
 * all. */
int cs_merge_mixed_events(const struct cs_row *row, uint64_t mask);
/* Whether --function glob selects function ti: by its name (or the name
 * demangled), or with an @ by name@FILE or name@PATH of its module
 * (puts@libc.so.6). */
int cs_merge_fn_glob(const char *glob, const struct cs_target_info *ti);
/* Frees r and the files it kept; NULL is fine. */
void cs_merge_free(struct cs_report *r);
/* Hands f, already added with cs_merge_add, over to r, which frees it in
 * cs_merge_free: the series are read from the file's own blocks.
 * Returns 0, or -ENOMEM (f is then still the caller's). */
int cs_merge_keep(struct cs_report *r, struct cs_file *f);
/* Writes into out the exclusive distribution of one event of a site:
 * site - incl + excl, where incl and excl are the event's stats of the
 * site's nested block.  Counts, sums, sums of squares and histograms are
 * exact; min and max are exact where the histograms allow and otherwise
 * bucket bounds (see merge.c).  at_first: whether the nested block was
 * made during the site's first call (its first is the cold call's), -1
 * when the file does not say (cs_merge_at_first).  Returns out. */
struct cs_stat *cs_merge_split(const struct cs_stat *site, const struct cs_stat *incl,
			       const struct cs_stat *excl, int at_first, struct cs_stat *out);
/* What nested block nb of file f says of its site's first call, for
 * cs_merge_split. */
int cs_merge_at_first(const struct cs_file *f, const struct cs_nested_block *nb);
/* Returns the inclusive (exclusive = 0) or exclusive (1) values of event
 * ev of row, or NULL when it has none. */
const struct cs_agg *cs_merge_view(const struct cs_report *r, const struct cs_row *row, size_t ev,
				   int exclusive);

/* ---- symbols.c: offline symbolization of call sites (libdwfl) ---- */

struct cs_symbols;
/* Returns a symbolizer that falls back to debug_root/.build-id/xx/yyyy.debug
 * (NULL: /usr/lib/debug), or NULL when out of memory. */
struct cs_symbols *cs_symbols_new(const char *debug_root);
/* Writes the call site at offset (a link-time address) of the module at
 * path, whose recorded build id is build_id[0..build_id_len), into buf as
 * "symbol+0xOFF", or "module+0xOFF" when the module or symbol cannot be
 * found.  Returns 1 when symbolized, 0 when not. */
int cs_symbols_callsite(struct cs_symbols *s, const char *path, const uint8_t *build_id,
			uint32_t build_id_len, uint64_t offset, char *buf, size_t len);
/* Writes the source line of the call site as "FILE:LINE" into buf, FILE
 * as the debug information names it (full) or its base name (!full), or
 * "" when the module has no line information.  Returns 1 when found. */
int cs_symbols_source(struct cs_symbols *s, const char *path, const uint8_t *build_id,
		      uint32_t build_id_len, uint64_t offset, int full, char *buf, size_t len);
/* Returns the whole name (malloc'd) of a symbol at offset in the module
 * at path (build id as above) that starts with prefix, without the
 * version that .dynsym names carry ("@@GLIBC_2.2.5"), or NULL when none
 * is found (the module is gone, or out of memory).  A report file keeps
 * the first CS_TARGET_NAME_MAX - 1 bytes of a target's name. */
char *cs_symbols_name_at(struct cs_symbols *s, const char *path, const uint8_t *build_id,
			 uint32_t build_id_len, uint64_t offset, const char *prefix);
/* Adds dir to the directories searched (recursively) for a module whose
 * recorded path is missing or has another build id: a file there with
 * the recorded build id is used instead.  Returns 0 or -ENOMEM. */
int cs_symbols_search_path(struct cs_symbols *s, const char *dir);
/* Frees s and its per-module cache; NULL is fine. */
void cs_symbols_free(struct cs_symbols *s);

/* ---- output_table.c / output_csv.c ---- */

/* Options shared by both outputs. */
struct cs_output_opts {
	int summary; /* print the program/pid/events header */
	int truncate; /* table: shorten very long names */
	int nested; /* --nested: inclusive and self mean side by side */
	/* Selection and extra columns (view.c), all off when 0/NULL. */
	int sort; /* --sort: 1 + (enum cs_col or CS_COL_DERIVED + i), 0: default */
	int sort_dir; /* 0: the column's default, 1 ascending, 2 descending */
	size_t top; /* --top: at most this many rows per table, 0 = all */
	const unsigned char *event_shown; /* [report nevents], NULL: all shown */
	const size_t *event_order; /* the events shown, in --event's order */
	size_t nevent_order;
	int cold; /* --cold: first calls apart from the others */
	int binomial; /* --binomial: bin_n and bin_p columns */
	int ascii; /* --hist bars in ASCII (set from the locale) */
	const struct cs_derive *derive; /* --derive, resolved against the report */
	size_t nderive;
	int subtract; /* --subtract-overhead: raw_mean and overhead shown */
	int no_notes; /* table: leave out the shim's notes (cacheshim run says them) */
	int say_more; /* table: say how many rows top left out (cacheshim run) */
	/* --no-demangle: C++ names as the file and the symbol tables have
	 * them.  0: the tables and HTML show them demangled (cs_demangle),
	 * the JSON adds the demangled form; the CSV never demangles. */
	int raw_names;
};

/* Prints r as aligned tables, one per event.  Returns 0, or -EIO when
 * writing failed, -ENOMEM. */
int cs_table_print(FILE *out, const struct cs_report *r, struct cs_symbols *syms,
		   const struct cs_output_opts *o);
/* Prints the shim's notes of r (none: nothing), a title line first, each
 * note with how many of the files hold it when not all of them. */
void cs_table_notes(FILE *out, const struct cs_report *r);
/* Prints the summary header (programs, pids, events, files, calls that
 * did not return) of r. */
void cs_table_summary(FILE *out, const struct cs_report *r);
/* Prints r as CSV (RFC 4180), one row per (function, call site, event),
 * names as the file and the symbol tables have them (o->raw_names is
 * ignored).  Returns 0, -EIO or -ENOMEM. */
int cs_csv_print(FILE *out, const struct cs_report *r, struct cs_symbols *syms,
		 const struct cs_output_opts *o);
/* Writes field to out, quoted when it holds a comma, quote, CR or LF. */
void cs_csv_field(FILE *out, const char *field);
/* Writes the empty fields of the columns after key/self_mean (source,
 * --binomial, --cold, --derive, and raw_mean and overhead with
 * --subtract-overhead) for a row that has none of them. */
void cs_csv_extras_blank(FILE *out, const struct cs_output_opts *o);

/* Shared by both outputs: the callsite and module columns of row. */
void cs_output_callsite(const struct cs_report *r, const struct cs_row *row,
			struct cs_symbols *syms, char *cs, size_t cslen, char *mod, size_t modlen);

/* ---- output_targets.c: --targets, how each target's calls were caught ---- */

/* How t's calls were caught, as a stable token: entry, entry+got, got,
 * got-refused, refused or none. */
const char *cs_targets_how(const struct cs_target_info *t);
/* Writes t's address as "module+0xOFF" (module's base name), or as the
 * raw "0xADDR" when its module is unknown, into buf.  Returns buf. */
char *cs_targets_address(const struct cs_target_info *t, char *buf, size_t len);
/* Writes t's reasons ("why (+0xOFF)", several joined by "; ") into buf,
 * "" when none.  Returns buf. */
char *cs_targets_reason(const struct cs_target_info *t, char *buf, size_t len);
/* Prints the targets of r as a table and a summary line (names
 * demangled unless raw_names) / as CSV (names as the file has them).  Returns 0, -EIO or -ENOMEM. */
int cs_targets_print_table(FILE *out, const struct cs_report *r, int raw_names);
int cs_targets_print_csv(FILE *out, const struct cs_report *r);
/* Returns 1 when t is listed: --function, when given, matches its
 * name (--module selects callers, not targets). */
int cs_targets_listed(const struct cs_report *r, const struct cs_target_info *t);
/* Returns how many targets of r had entry patching refused (and not
 * patched at their entry in another file). */
size_t cs_targets_refused(const struct cs_report *r);

/* ---- view.c: the rows an output shows: their values, labels and order ---- */

/* Columns of the tables and the CSV, and what --sort accepts
 * (cs_view_column).  Per (row, event) unless said otherwise. */
enum cs_col {
	CS_COL_FUNCTION, /* text, per row */
	CS_COL_CALLSITE, /* text, per row */
	CS_COL_MODULE, /* text, per row */
	CS_COL_SOURCE, /* text, per row: file:line of the call site */
	CS_COL_CALLS,
	CS_COL_MEAN,
	CS_COL_STDDEV,
	CS_COL_MIN,
	CS_COL_P50,
	CS_COL_P90,
	CS_COL_P99,
	CS_COL_MAX,
	CS_COL_TOTAL,
	CS_COL_BIN_N, /* binomial view of a count event */
	CS_COL_BIN_P,
	CS_COL_COLD_N, /* --cold: the first calls... */
	CS_COL_COLD_MEAN,
	CS_COL_COLD_MIN,
	CS_COL_COLD_MAX,
	CS_COL_WARM_N, /* ...and the others */
	CS_COL_WARM_MEAN,
	CS_COL_WARM_STDDEV,
	CS_COL_WARM_MIN,
	CS_COL_WARM_P50,
	CS_COL_WARM_P90,
	CS_COL_WARM_P99,
	CS_COL_WARM_MAX,
	CS_COL_WARM_TOTAL,
	CS_COL_INCL, /* inclusive mean (nested targets) */
	CS_COL_SELF, /* exclusive mean */
	CS_COL_RAW_MEAN, /* --subtract-overhead: the mean as measured */
	CS_NCOLS,
	CS_COL_DERIVED = 0x1000, /* + i: --derive column i, per row */
};

/* What a cell holds. */
enum cs_cell {
	CS_CELL_NUM, /* a number */
	CS_CELL_NONE, /* none: no data, or undefined (division by 0, p out of range) */
	CS_CELL_NOT_COUNTED, /* the event, or an input of a derived column, was not counted */
};

/* A view is made and used by one thread, but for this: once every row's
 * text is made (cs_view_all_text) and cs_view_any_source is known for all
 * rows, threads may each sort, read and format a different event. */
struct cs_view;

/* Returns the column named name (as in the table headers, or a derived
 * column's name in o), or -1. */
int cs_view_column(const char *name, const struct cs_output_opts *o);
/* Returns the name of column col (a derived column's from o). */
const char *cs_view_column_name(int col, const struct cs_output_opts *o);
/* 1 for the text columns (function, callsite, module, source). */
int cs_view_text_column(int col);
/* Makes the view of r for the options o: the events shown and every row.
 * Returns 0 and sets *out, or -ENOMEM. */
int cs_view_new(const struct cs_report *r, struct cs_symbols *syms, const struct cs_output_opts *o,
		struct cs_view **out);
void cs_view_free(struct cs_view *v);
/* The events shown (indexes into r->events), and how many. */
const size_t *cs_view_events(const struct cs_view *v, size_t *n);
/* Rows of the view (all of r's), and row i of them. */
size_t cs_view_nrows(const struct cs_view *v);
const struct cs_row *cs_view_row(const struct cs_view *v, size_t i);
/* Returns a malloc'd array of row indexes in the order to show them for
 * event ev (an index into r->events; for the per-row columns any), cut
 * to o->top, and sets *n; sorted by column col (-1: the order of
 * cs_merge_sorted) descending when desc.  Rows without a value of col
 * come last.  NULL when out of memory (*n = 0), or when there are no
 * rows. */
size_t *cs_view_order(struct cs_view *v, size_t ev, int col, int desc, size_t *n);
/* Sorts by o->sort when set, else by defcol (-1: cs_merge_sorted order),
 * in o->sort_dir or else the column's default direction (text columns
 * ascending, numbers descending).  As cs_view_order. */
size_t *cs_view_order_opts(struct cs_view *v, size_t ev, int defcol, size_t *n);
/* Computes the summaries of every event shown for every row (two
 * threads), as cs_view_summary would one by one. */
void cs_view_fill_all(struct cs_view *v);
/* Returns the summary of event ev of row i (computed once), or NULL when
 * it has no values. */
const struct cs_summary *cs_view_summary(struct cs_view *v, size_t i, size_t ev);
/* Sets *val to column col of row i for event ev.  Returns enum cs_cell. */
int cs_view_value(struct cs_view *v, size_t i, size_t ev, int col, long double *val);
/* Tells the CPU that row i will be shown for event ev soon: its values
 * (strings 0) or its text (1, some rows later).  Rows come in the
 * order of a column, scattered in memory: without this the table waits
 * on cache misses for a third of its time. */
void cs_view_prefetch(const struct cs_view *v, size_t i, size_t ev, int strings);
/* Makes the text columns of every row at once (with source when
 * source is set): for an output that shows most rows. */
void cs_view_all_text(struct cs_view *v, int source);
/* Returns 1 when one of rows order[0, n) (order NULL: rows 0 to n) has a
 * source line (by call site only).  Remembered when the rows are all of
 * them. */
int cs_view_any_source(struct cs_view *v, const size_t *order, size_t n);
/* Returns text column col of row i (computed once; "" when unknown). */
const char *cs_view_text(struct cs_view *v, size_t i, int col);
/* Writes column col of row i for event ev for a human (cs_util_human;
 * "-" for none, "not counted") into buf.  Returns buf. */
char *cs_view_format(struct cs_view *v, size_t i, size_t ev, int col, char *buf, size_t len);
/* Writes it for a script: plain decimals, "" for none, "not counted".
 * Returns buf. */
char *cs_view_format_csv(struct cs_view *v, size_t i, size_t ev, int col, char *buf, size_t len);

/* ---- expr.c: the expressions of --derive ---- */

/* An expression over named variables: numbers, + - * /, unary minus,
 * parentheses, names ([A-Za-z_][A-Za-z0-9_.]*) and names in braces
 * ({perf::PAGE-FAULTS}: anything but braces). */
struct cs_expr;

/* Parses text.  Returns 0 and sets *out, -EINVAL with a message in err
 * (what and where), or -ENOMEM. */
int cs_expr_parse(const char *text, struct cs_expr **out, char *err, size_t errlen);
/* Returns the number of distinct variables of e, and the name of
 * variable i (in order of first appearance). */
size_t cs_expr_nvars(const struct cs_expr *e);
const char *cs_expr_var(const struct cs_expr *e, size_t i);
/* Evaluates e with vals[i] and kinds[i] (enum cs_cell) for variable i.
 * Returns CS_CELL_NOT_COUNTED when some variable is not counted (even
 * one multiplied by 0: never a number computed from nothing),
 * CS_CELL_NONE when some variable has none or e divides by 0 or is not
 * finite, else CS_CELL_NUM with *out set. */
int cs_expr_eval(const struct cs_expr *e, const long double *vals, const int *kinds,
		 long double *out);
void cs_expr_free(struct cs_expr *e);

/* A --derive column: NAME=EXPR, evaluated per row on the means per call
 * of its events (a ratio of means, not a mean of per-call ratios: the
 * file keeps aggregates only). */
struct cs_derive {
	char name[64];
	const char *text; /* EXPR as given */
	struct cs_expr *expr;
	/* After cs_derive_resolve, per variable: the report's event index,
	 * or -1 - j for derived column j (an earlier one). */
	long *var;
	/* A row whose events were counted over different calls was said
	 * (view.c): once per column, whichever views show it. */
	int said_mixed;
};

/* Parses "NAME=EXPR" into d.  Returns 0, -EINVAL (message in err) or
 * -ENOMEM. */
int cs_derive_parse(const char *arg, struct cs_derive *d, char *err, size_t errlen);
/* Resolves the variables of d[0, n) against the events of r and the
 * derived columns before each.  Returns 0, or -EINVAL (message in err:
 * an unknown name) or -ENOMEM. */
int cs_derive_resolve(struct cs_derive *d, size_t n, const struct cs_report *r, char *err,
		      size_t errlen);
/* Frees what cs_derive_parse made in d[0, n). */
void cs_derive_free(struct cs_derive *d, size_t n);

/* ---- output_hist.c: --hist ---- */

/* Prints, per (function, event) shown, a histogram of the values: at
 * most ~20 rows of merged buckets (one row per value for small
 * integers), count, percentage and a bar.  Returns 0, -EIO or -ENOMEM. */
int cs_hist_print(FILE *out, const struct cs_report *r, const struct cs_output_opts *o);
/* The rows of a histogram of a: group is the number of buckets per row
 * (a power of two), *first and *last the first and last bucket shown.
 * Returns the number of rows (0 when a has no values). */
unsigned cs_hist_rows(const struct cs_agg *a, unsigned maxrows, unsigned *group, unsigned *first,
		      unsigned *last);

/* ---- diff.c: --diff A B ---- */

struct cs_options;
/* Compares the reports a and b (same options) per row and event (events
 * and rows matched by name): calls, mean, p50, p90, p99 of each and the
 * change, as a table (names demangled unless --no-demangle) or (csv)
 * CSV (names as they are); --event, --sort (a
 * diff column) and --top of opt apply.  Returns 0, -EINVAL (bad --sort, said on stderr),
 * -EIO or -ENOMEM. */
int cs_diff_print(FILE *out, const struct cs_report *a, const struct cs_report *b,
		  struct cs_symbols *syms, const struct cs_options *opt, int csv);

/* ---- options.c: the options of --sort ... --diff for cmd_report.c ---- */

enum {
	CS_OPT_SORT = 0x300, /* getopt codes, clear of cmd_report.c's own */
	CS_OPT_TOP,
	CS_OPT_FUNCTION,
	CS_OPT_MODULE,
	CS_OPT_EVENT,
	CS_OPT_HIST,
	CS_OPT_COLD,
	CS_OPT_BINOMIAL,
	CS_OPT_DERIVE,
	CS_OPT_SEARCH,
	CS_OPT_DIFF,
	CS_OPT_NO_DEMANGLE,
};

/* What those options said. */
struct cs_options {
	char **fn_globs, **mod_globs, **events, **search;
	size_t nfn_globs, nmod_globs, nevents, nsearch;
	const char *sort; /* "COLUMN[:asc|:desc]" as given */
	size_t top;
	int hist, cold, binomial, by_given;
	int no_demangle; /* --no-demangle */
	struct cs_derive *derive;
	size_t nderive;
	const char *diff; /* run A of --diff A B */
	unsigned char *event_shown; /* made by cs_options_after */
	size_t *event_order;
};

/* Returns cmd_report's options theirs (ending with a NULL name) followed
 * by the options of this file, in buf (n entries). */
const struct option *cs_options_table(const struct option *theirs, struct option *buf, size_t n);
/* Takes option c (CS_OPT_*) with its argument.  Returns 0, -1 when the
 * argument is bad (said on stderr), or 1 when c is not one of these. */
int cs_options_parse(struct cs_options *a, int c, const char *arg);
/* Sets what must be known before files are merged into r (filters,
 * --cold) and the search path of syms (may be NULL).  Returns 0 or
 * -ENOMEM. */
int cs_options_before(const struct cs_options *a, struct cs_report *r, struct cs_symbols *syms);
/* Fills o from a once the files are in r: the events shown, the derived
 * columns, the sort column.  Returns CS_EXIT_OK, or CS_EXIT_USAGE /
 * CS_EXIT_FAIL (said on stderr). */
int cs_options_after(struct cs_options *a, struct cs_report *r, struct cs_output_opts *o);
/* --diff: loads run a->diff and run B, the one path in paths (each a
 * file or a directory of report files), and prints the comparison as a
 * table or CSV.  Returns an exit status. */
int cs_options_diff(struct cs_options *a, int npaths, char **paths, enum cs_by by, int subtract,
		    const char *debug_dir, int csv);
void cs_options_free(struct cs_options *a);

/* ---- series.c: per-call values over time, in windows of calls ---- */

/* One window of a series line, computed for one event. */
struct cs_series_point {
	uint64_t first_call, last_call; /* 1-based call numbers, per thread */
	uint64_t calls; /* values in the window (all threads merged) */
	long double mean;
	uint64_t min, p50, p99, max;
	uint64_t first_tsc; /* earliest rdtsc of the window, 0 unknown */
};

/* The windows of one (target, event), of one thread (tid != 0) or of all
 * the threads that called the target (tid == 0: same shift, merged). */
struct cs_series_line {
	char target[CS_FUNCTION_MAX]; /* as cs_merge_target_label */
	size_t event; /* index in cs_report.events */
	uint32_t tid; /* 0 = all threads merged */
	uint32_t pid; /* of the thread's file; 0 when merged */
	unsigned shift; /* log2 of the calls per window */
	uint64_t skipped; /* calls not in any window (while merging) */
	size_t npoints;
	struct cs_series_point *points;
};

/* Computes the lines of r's series, sorted by target, event, tid.
 * Returns 0 with *lines (free with cs_series_lines_free) and *n set, or
 * -ENOMEM.  No series: 0 and *n = 0. */
int cs_series_lines(const struct cs_report *r, struct cs_series_line **lines, size_t *n);
void cs_series_lines_free(struct cs_series_line *lines, size_t n);
/* Prints the series as tables (target names demangled unless raw_names)
 * / as CSV (names as the file has them).  Returns 0, -EIO or -ENOMEM. */
int cs_series_print_table(FILE *out, const struct cs_report *r, int raw_names);
int cs_series_print_csv(FILE *out, const struct cs_report *r);
/* Returns the q-quantile of the n values of a window histogram
 * (CS_WHIST_BUCKETS counts), interpolated by rank within its bucket and
 * clamped to [min, max]: exact below CS_WHIST_EXACT, else within 1/8 of
 * the value; 0 when n is 0. */
uint64_t cs_series_percentile(const uint64_t *hist, uint64_t n, double q, uint64_t min,
			      uint64_t max);

/* ---- output_json.c / output_html.c ---- */

/* Prints r as one JSON document (docs/report.schema.json).  Returns 0,
 * -EIO or -ENOMEM. */
int cs_json_print(FILE *out, const struct cs_report *r, struct cs_symbols *syms,
		  const struct cs_output_opts *o);
/* Prints r as a self-contained HTML page: the JSON document, inline CSS,
 * and inline JavaScript that draws tables and charts from it.  Returns 0,
 * -EIO or -ENOMEM. */
int cs_html_print(FILE *out, const struct cs_report *r, struct cs_symbols *syms,
		  const struct cs_output_opts *o);
/* Writes the size class whose lower bound is key as "lo-hi" ("0", "1",
 * "2-3", "64-127"); "" for CS_KEY_NONE.  Returns buf. */
char *cs_util_key_class(uint64_t key, char *buf, size_t len);

/* ---- formulas.c: the formulas of the preset recipes, per row ---- */

/* A formula of a preset recipe (common/presets.h) whose inputs were all
 * recorded, by name, in the report. */
struct cs_formula {
	const struct cs_preset_family *family; /* the recipe the events matched best */
	const struct cs_preset_formula *f;
	struct cs_calc calc; /* f->expr parsed */
	size_t ev[CS_CALC_MAX_VARS]; /* report event of each name of calc */
	const struct cs_preset_event *input[CS_CALC_MAX_VARS]; /* its recipe row */
	int not_counted; /* an input was not counted in any file */
	int sum; /* a sum of distinct inputs (or one): exact totals */
};

/* A formula's value at one row, from its inputs' means (the file keeps
 * per-site aggregates, not per-call values). */
struct cs_formula_value {
	int status; /* CS_CALC_OK, or _NOT_COUNTED when an input has no values
		     * at this row (failed, never opened in its thread, every
		     * call dropped), or _UNDEFINED (division by 0) */
	long double value; /* the formula over the inputs' means per call */
	uint64_t calls; /* the fewest values any input has */
	int have_total; /* sum of count inputs over the same calls: */
	cs_u128 total; /* their totals added up */
	int have_dist; /* the per-call distribution is known exactly: one */
	struct cs_summary dist; /* input, or the one not always 0 of a sum */
};

/* Finds the recipe family that matches the most events of r (by name,
 * first of equals) and its formulas whose inputs are all among them.
 * Returns 0 with *out (free()) and *n set (0 and NULL when none applies),
 * or -ENOMEM. */
int cs_formulas_find(const struct cs_report *r, struct cs_formula **out, size_t *n);
/* Computes formula d at row into *v. */
void cs_formulas_eval(const struct cs_report *r, const struct cs_formula *d,
		      const struct cs_row *row, struct cs_formula_value *v);
/* Writes "ALIAS = EVENT, ..." for the inputs of d into buf.  Returns buf. */
char *cs_formulas_where(const struct cs_formula *d, char *buf, size_t len);
/* Prints a table per formula of r (after the events' tables): value per
 * call, the distribution where exact, "not counted" where an input was
 * not; names demangled unless raw_names.  Returns 0, -EIO or -ENOMEM. */
int cs_formulas_table(FILE *out, const struct cs_report *r, struct cs_symbols *syms, int raw_names);
/* Prints the CSV lines of the formulas d[0, nd) at row, after its events'
 * lines: event = the formula's name, status derived, not counted or
 * undefined. */
void cs_formulas_csv(FILE *out, const struct cs_report *r, const struct cs_formula *d, size_t nd,
		     const struct cs_row *row, const char *fn, const char *cs, const char *mod,
		     const struct cs_output_opts *o);

/* ---- commands (main.c dispatches) ---- */
/* cmd_report.c: loads the file at path and merges it into r, printing
 * what is wrong with it on stderr.  Returns 0, 1 when the file was
 * damaged (its readable part is merged) or -1 when it could not be read
 * or merged. */
int cs_report_add_file(struct cs_report *r, const char *path);
/* cmd_report.c: cs_report_add_file for each of the n files at paths but
 * those said and skipped: named twice (same[i] >= 0, the index of the
 * same file before it; same may be NULL) or a copy of another file of
 * the same process (keep[i] != i: cs_reader_copies, of headers hdr).
 * Returns 0, 1 when some file was damaged or -1 when some file could not
 * be read. */
int cs_report_add_files(struct cs_report *r, char *const *paths,
			const struct cs_file_header *hdr, const size_t *keep, const int *same,
			size_t n);
/* The subcommands: argv[0] is the command's name, options follow.  Each
 * returns the exit status of cacheshim (CS_EXIT_*; run: the program's,
 * or 126/127 when it could not be executed; run may instead kill itself
 * with the signal that killed the program). */
int cs_cmd_run(int argc, char **argv);
/* cmd_run.c: checks each event of the comma-separated list as the shim
 * will take it: tsc, a known preset, a name libpfm4 encodes here, at most
 * CS_MAX_EVENTS distinct names.  cmd (run, calibrate) and what (-e,
 * CACHESHIM_EVENTS) name the source in the message.  Returns 0, or
 * CS_EXIT_USAGE (said on stderr). */
int cs_run_check_events(const char *cmd, const char *list, const char *what);
int cs_cmd_report(int argc, char **argv);
int cs_cmd_list(int argc, char **argv);

#endif /* CACHESHIM_REPORT_INTERNAL_H */
