/* SPDX-License-Identifier: MIT */
/* Private declarations of the offline cacheshim command (report/). */
#ifndef CACHESHIM_REPORT_INTERNAL_H
#define CACHESHIM_REPORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <uthash.h>

#include "common/format.h"

typedef unsigned __int128 cs_u128;

/* Exit statuses of the command. */
#define CS_EXIT_OK 0
#define CS_EXIT_FAIL 1 /* a file could not be read, a run failed */
#define CS_EXIT_USAGE 2 /* bad command line */

/* ---- util.c: number formatting and small helpers ---- */

/* Writes v in decimal into buf.  Returns buf (truncated if len is too
 * small, always NUL-terminated when len > 0). */
char *cs_util_u128(cs_u128 v, char *buf, size_t len);
/* Writes v as a plain decimal: an integer when v is integral, else fixed
 * with up to 3 decimals, trailing zeros dropped.  NaN gives "".  Returns buf. */
char *cs_util_decimal(long double v, char *buf, size_t len);
/* Writes v for a human: up to 5 digits as is, larger values with a k, M,
 * G, T or P suffix and 3 significant digits.  Returns buf. */
char *cs_util_human(long double v, char *buf, size_t len);
/* Returns the part of path after its last '/', path itself if none. */
const char *cs_util_basename(const char *path);
/* Prints "cacheshim: ", the message and a newline on stderr. */
void cs_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Like cs_err, with "warning: " before the message. */
void cs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- reader.c: loading and validating report files ---- */

/* A validated report file held in memory.  Every pointer points into data
 * and has been bounds-checked: a user may dereference it freely. */
struct cs_file {
	char *path; /* as given, for messages */
	unsigned char *data; /* bytes [0, used) of the file, 16-aligned */
	size_t size; /* bytes in data */
	const struct cs_file_header *hdr;
	uint64_t used; /* header.used with CS_USED_SEALED masked off */
	uint64_t end; /* offset where the block walk stopped */
	int incomplete; /* header.state is CS_STATE_RUNNING */
	char damage[256]; /* first problem past the header, "" if none */
	unsigned ndamage; /* problems found past the header */
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
/* Frees f and everything it owns; NULL is fine. */
void cs_reader_free(struct cs_file *f);
/* Returns 1 when the values of event ev at site s are measurements: the
 * site's thread opened the event (by its thread block, or by the file's
 * CS_EVENT_COUNTED flag when the thread has none), else 0. */
int cs_reader_event_usable(const struct cs_file *f, const struct cs_site_block *s, unsigned ev);
/* Returns the block with that id, or NULL. */
const struct cs_module_block *cs_reader_module(const struct cs_file *f, uint32_t id);
const struct cs_target_block *cs_reader_target(const struct cs_file *f, uint32_t id);

/* ---- stats.c: aggregates of one event and what is derived from them ---- */

/* A cs_stat widened so that any number of them can be added up: the sum
 * is 128-bit and the sum of squares 192-bit (three little-endian limbs). */
struct cs_agg {
	uint64_t n; /* values recorded: the sum of hist */
	cs_u128 sum;
	uint64_t sumsq[3];
	uint64_t min, max; /* valid when n > 0 */
	cs_u128 shift; /* overhead to take off the values in all: the sum
			* over values of their file's calibration median */
	uint64_t hist[CS_HIST_BUCKETS];
};

struct cs_summary {
	uint64_t n;
	cs_u128 total;
	long double mean, stddev; /* population standard deviation */
	uint64_t min, max;
	uint64_t p50, p90, p99;
};

/* Makes a empty: no values. */
void cs_stats_init(struct cs_agg *a);
/* Adds the values of s (one site, one event, one thread) to a.  A stat
 * without values contributes nothing.  Returns the number of values. */
uint64_t cs_stats_add(struct cs_agg *a, const struct cs_stat *s);
/* Adds b to a. */
void cs_stats_merge(struct cs_agg *a, const struct cs_agg *b);
/* Returns the estimate of the q-quantile (0 < q <= 1): the value of the
 * ceil(q*n)-th smallest value's bucket, exact below CS_HIST_EXACT,
 * interpolated by rank within wider buckets, clamped to [min, max].
 * Within 3% of the true value.  Returns 0 when a has no values. */
uint64_t cs_stats_percentile(const struct cs_agg *a, double q);
/* Returns the population standard deviation of a, computed from the exact
 * n*sumsq - sum^2; 0 when a has no values or the sums are inconsistent. */
long double cs_stats_stddev(const struct cs_agg *a);
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
	UT_hash_handle hh;
};

struct cs_file_info {
	char *path;
	char program[CS_PROGRAM_MAX];
	uint32_t pid;
	int incomplete;
	uint64_t lost_calls;
	uint64_t tsc_hz;
	uint64_t session;
};

struct cs_row_key {
	char name[CS_TARGET_NAME_MAX]; /* target name */
	uint32_t module; /* cs_module_info.idx of the caller, 0 unknown/any */
	uint32_t argn; /* of the target, 0 when not keyed */
	uint64_t offset; /* callsite - base; raw address when module is 0 */
	uint64_t key; /* CS_KEY_NONE when not keyed */
};

/* One (function, call site) or one function: all events. */
struct cs_row {
	struct cs_row_key k;
	uint64_t calls, entered, dropped;
	size_t naggs;
	struct cs_agg **aggs; /* per event of the report, NULL = no values */
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
	uint64_t calls, entered, dropped;
	uint64_t not_returned; /* sum over sites of entered - calls - dropped */
	uint64_t lost_calls;
	/* Per event: the calls of the calibration target (CS_HOOK_CALIBRATION),
	 * the cost of the measurement itself.  Not in rows. */
	struct cs_agg **calib;
	size_t ncalib;
	/* Set before adding files: take each file's calibration median off
	 * every value of its rows (cs_agg.shift). */
	int subtract_overhead;
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
/* Returns the agg of event ev in row, or NULL when it has no values. */
const struct cs_agg *cs_merge_agg(const struct cs_row *row, size_t ev);
/* Returns the calls of the calibration target for event ev, or NULL when
 * no file had one. */
const struct cs_agg *cs_merge_calibration(const struct cs_report *r, size_t ev);
/* Returns 1 when event ev of r was not counted in any file (failed and
 * never counted), else 0. */
int cs_merge_not_counted(const struct cs_report *r, size_t ev);
/* Writes the function column of row ("name", or "name[argN:KEY]" for a
 * keyed target) into buf.  Returns buf. */
char *cs_merge_function(const struct cs_row *row, char *buf, size_t len);
/* Frees r; NULL is fine. */
void cs_merge_free(struct cs_report *r);

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
/* Frees s and its per-module cache; NULL is fine. */
void cs_symbols_free(struct cs_symbols *s);

/* ---- output_table.c / output_csv.c ---- */

/* Options shared by both outputs. */
struct cs_output_opts {
	int summary; /* print the program/pid/events header */
	int truncate; /* table: shorten very long names */
};

/* Prints r as aligned tables, one per event.  Returns 0, or -EIO when
 * writing failed, -ENOMEM. */
int cs_table_print(FILE *out, const struct cs_report *r, struct cs_symbols *syms,
		   const struct cs_output_opts *o);
/* Prints the summary header (programs, pids, events, files, calls that
 * did not return) of r. */
void cs_table_summary(FILE *out, const struct cs_report *r);
/* Prints r as CSV (RFC 4180), one row per (function, call site, event).
 * Returns 0, -EIO or -ENOMEM. */
int cs_csv_print(FILE *out, const struct cs_report *r, struct cs_symbols *syms);
/* Writes field to out, quoted when it holds a comma, quote, CR or LF. */
void cs_csv_field(FILE *out, const char *field);

/* Shared by both outputs: the callsite and module columns of row. */
void cs_output_callsite(const struct cs_report *r, const struct cs_row *row,
			struct cs_symbols *syms, char *cs, size_t cslen, char *mod, size_t modlen);

/* ---- commands (main.c dispatches) ---- */
/* cmd_report.c: loads the file at path and merges it into r, printing
 * what is wrong with it on stderr.  Returns 0, 1 when the file was
 * damaged (its readable part is merged) or -1 when it could not be read
 * or merged. */
int cs_report_add_file(struct cs_report *r, const char *path);
/* The subcommands: argv[0] is the command's name, options follow.  Each
 * returns the exit status of cacheshim (CS_EXIT_*; run: the program's,
 * or 126/127 when it could not be executed; run may instead kill itself
 * with the signal that killed the program). */
int cs_cmd_run(int argc, char **argv);
int cs_cmd_report(int argc, char **argv);
int cs_cmd_list(int argc, char **argv);

#endif /* CACHESHIM_REPORT_INTERNAL_H */
