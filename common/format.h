/* SPDX-License-Identifier: MIT */
/* The cacheshim report file: the one contract between shim/ and report/.
 *
 * The shim maps this file MAP_SHARED and updates it while the program runs,
 * so a crash or a kill loses at most the calls in flight.  Layout, all
 * little-endian, native x86-64 alignment:
 *
 *   struct cs_file_header            at offset 0, CS_HEADER_SIZE bytes
 *   blocks                           from CS_HEADER_SIZE up to header.used
 *
 * Every block starts with struct cs_block {type, size}.  A writer reserves
 * a block by advancing header.used (atomically: this happens on slow paths
 * only), writes the size, then the body, and stores the type last.  A
 * reader walks blocks up to header.used and stops at a block whose size is
 * zero (a reservation interrupted by a crash).  A block of unknown type is
 * skipped by its size, so newer writers can add block types without
 * breaking older readers.  docs/report-format.md is the prose version.
 *
 * Integer-only: this header is included by the shim's hot path, which is
 * built with -mgeneral-regs-only.
 */
#ifndef CACHESHIM_COMMON_FORMAT_H
#define CACHESHIM_COMMON_FORMAT_H

#include <stdint.h>

#define CS_MAGIC "CSHIMRPT"
/* 2: site blocks start on a 64-byte line (a padding block before them
 * if needed) and hold calls and entered right before stat[] (version 1
 * had them before dropped and nested), so that every per-call update of
 * the first event's aggregate lands in one cache line; series windows are
 * a multiple of 64 bytes (cs_window_size).  Readers convert version 1
 * files. */
#define CS_FORMAT_VERSION 2u
#define CS_HEADER_SIZE 4096u

#define CS_MAX_EVENTS 16u
#define CS_EVENT_NAME_MAX 64u
#define CS_PROGRAM_MAX 512u
#define CS_TARGET_NAME_MAX 128u

/* header.state */
enum cs_file_state {
	CS_STATE_RUNNING = 1, /* the writer has not finished: crash, kill or live */
	CS_STATE_COMPLETE = 2, /* the writer finished at exit */
};

/* cs_file_event.kind */
enum cs_event_kind {
	CS_EVENT_TSC = 1, /* rdtsc ticks */
	CS_EVENT_PERF = 2, /* a perf_event_open counter */
};

/* cs_file_event.flags */
#define CS_EVENT_COUNTED 0x1u /* opened in at least one thread */
#define CS_EVENT_FAILED 0x2u /* could not be opened: values are not counted */

struct cs_file_event {
	char name[CS_EVENT_NAME_MAX]; /* as the user wrote it, NUL-terminated */
	uint32_t kind; /* enum cs_event_kind */
	uint32_t flags; /* CS_EVENT_* */
	uint32_t perf_type; /* perf_event_attr.type (CS_EVENT_PERF) */
	uint32_t reserved;
	uint64_t perf_config; /* perf_event_attr.config */
	uint64_t perf_config1;
	uint64_t perf_config2;
};

struct cs_file_header {
	char magic[8]; /* CS_MAGIC, no NUL */
	uint32_t version; /* CS_FORMAT_VERSION */
	uint32_t header_size; /* CS_HEADER_SIZE */
	uint64_t capacity; /* bytes reserved for the file (its mapped size) */
	uint64_t used; /* end of the last reserved block; CS_USED_SEALED set
			* once the writer finished (mask it off) */
	uint32_t state; /* enum cs_file_state */
	uint32_t nevents; /* entries of events[] in use */
	uint32_t pid;
	uint32_t ppid;
	uint64_t start_ns; /* CLOCK_REALTIME at start */
	uint64_t end_ns; /* CLOCK_REALTIME at exit, 0 while running */
	uint64_t tsc_hz; /* measured TSC frequency, 0 if unknown */
	uint64_t lost_calls; /* calls not recorded (lost_why says why) */
	uint64_t session; /* CACHESHIM_SESSION of the launcher, 0 if none */
	uint64_t features; /* CS_FEATURE_*: what this writer records (0 in
			    * files of earlier writers) */
	uint64_t lost_why; /* CS_LOST_*: why lost_calls were not recorded
			    * (0 in files of earlier writers: not said) */
	uint64_t reserved[5];
	char program[CS_PROGRAM_MAX]; /* /proc/self/exe at start */
	struct cs_file_event events[CS_MAX_EVENTS];
};

/* header.features: nested blocks say in flags whether they were made
 * during their site's first recorded call (CS_NESTED_AT_FIRST). */
#define CS_FEATURE_NESTED_FIRST 1ull

/* header.lost_why: what the writer met when it let calls pass unrecorded
 * (each bit set with the first such call, by any thread). */
#define CS_LOST_FILE_FULL 0x1ull /* the file's capacity was used up */
#define CS_LOST_NO_ROOM 0x2ull /* it could not grow: no room on its file
				 * system, a quota, RLIMIT_FSIZE */
#define CS_LOST_SEALED 0x4ull /* calls after the file was sealed at exit */
#define CS_LOST_THREAD 0x8ull /* a thread without counters, or past its end */
#define CS_LOST_SECCOMP 0x10ull /* the program's seccomp filter refused the
				 * shim's system calls */
#define CS_LOST_MEMORY 0x20ull /* out of memory */
#define CS_LOST_OTHER 0x40ull /* a call site's block not made, otherwise */
#define CS_LOST_ALL 0x7full
/* Not a reason of lost_calls: functions a pattern matched were left
 * unwrapped, their target blocks refused (the file full); set with the
 * refusal's CS_LOST_FILE_FULL or CS_LOST_NO_ROOM.  (A "matched no
 * function" said of them would be false.) */
#define CS_LOST_TARGETS 0x100ull

/* Top bit of header.used: set at exit so that no block can be reserved
 * beyond the size the file is then trimmed to. */
#define CS_USED_SEALED (1ull << 63)

_Static_assert(sizeof(struct cs_file_header) <= CS_HEADER_SIZE, "header must fit its page");

/* cs_block.type */
enum cs_block_type {
	CS_BLOCK_MODULE = 1, /* struct cs_module_block */
	CS_BLOCK_TARGET = 2, /* struct cs_target_block */
	CS_BLOCK_SITE = 3, /* struct cs_site_block */
	CS_BLOCK_THREAD = 4, /* struct cs_thread_block */
	CS_BLOCK_NESTED = 5, /* struct cs_nested_block */
	CS_BLOCK_SERIES = 6, /* struct cs_series_block */
	CS_BLOCK_REFUSAL = 7, /* struct cs_refusal_block */
	CS_BLOCK_PAD = 8, /* nothing: aligns the block after it */
	CS_BLOCK_NOTE = 9, /* struct cs_note_block */
};

struct cs_block {
	uint32_t type; /* enum cs_block_type, 0 while being written */
	uint32_t size; /* whole block incl. this header, multiple of 8 */
};

/* A loaded module (executable, shared library).  Call sites are stored as
 * (module id, offset) so that the report can symbolize them offline, even
 * when a later module reuses the address range of an unloaded one. */
struct cs_module_block {
	struct cs_block hdr;
	uint32_t id; /* >= 1, unique within the file */
	uint32_t build_id_len; /* bytes of build_id in use, 0 if none */
	uint64_t base; /* load bias (link_map l_addr) */
	uint64_t lo, hi; /* mapped address range [lo, hi) */
	uint8_t build_id[32]; /* NT_GNU_BUILD_ID */
	char path[]; /* NUL-terminated, padded to the block size */
};

/* cs_target_block.how */
#define CS_HOOK_GOT 0x1u /* GOT slots (PLT and GLOB_DAT) point to the wrapper */
#define CS_HOOK_ENTRY 0x2u /* its first instructions jump to the wrapper */
/* Entry patching was refused (a CS_BLOCK_REFUSAL block says why); with
 * CS_HOOK_GOT also set, its GOT slots catch what they can instead. */
#define CS_HOOK_REFUSED 0x4u
/* Found by a symbol that is not in .dynsym (.symtab, a debug file) or by
 * an address target module+0xOFFSET. */
#define CS_HOOK_HIDDEN 0x8u
/* Not a user target: an empty function the shim calls through the wrapper
 * at start, so the report can subtract the bracket's own cost per event. */
#define CS_HOOK_CALIBRATION 0x100u
/* With CS_HOOK_CALIBRATION: a function that calls the empty one through
 * the wrapper once, so that its median less the empty one's is what a
 * nested wrapped call costs the call around it (the nested call's own
 * bracket and the wrapper's work outside it: hooks, counter reads). */
#define CS_HOOK_CALIBRATION_NESTED 0x200u

/* A wrapped function: one per (name, address). */
struct cs_target_block {
	struct cs_block hdr;
	uint32_t id; /* >= 1, referenced by cs_site_block.target */
	uint32_t how; /* CS_HOOK_* */
	uint32_t module; /* module defining it, 0 if unknown */
	uint32_t argn; /* keyed by argument argn (1-based), 0 = not keyed */
	uint64_t addr; /* run-time address */
	uint32_t got_slots; /* GOT slots patched */
	uint32_t data_words; /* words of data pointing at it patched (vtables,
			      * tables of function pointers: R_X86_64_64);
			      * 0 in files of earlier writers */
	char name[CS_TARGET_NAME_MAX];
};

/* Why entry patching of a target was refused (or deferred), one per
 * target.  why is plain text, NUL-terminated. */
struct cs_refusal_block {
	struct cs_block hdr;
	uint32_t target; /* cs_target_block.id */
	uint32_t reserved;
	uint64_t offset; /* offset in the function the reason is about, 0 if none */
	char why[112];
};

/* A line the shim said once in the process about what the file lacks and
 * why (a limit reached, the file or file system full, an event that did
 * not open), kept where the numbers are read.  text is the line without
 * the "cacheshim: " prefix, printable (control characters replaced by
 * '?'), NUL-terminated, cut at CS_NOTE_TEXT - 1 bytes. */
#define CS_NOTE_TEXT 504
struct cs_note_block {
	struct cs_block hdr;
	char text[CS_NOTE_TEXT];
};

/* A thread that made at least one measured call. */
struct cs_thread_block {
	struct cs_block hdr;
	uint32_t tid;
	uint32_t flags;
	uint32_t events_open; /* bitmask: events that opened in this thread */
	uint32_t reserved;
	/* TSC ticks the shim's own set-up took on this thread (new call sites
	 * and blocks, window merges); the part of it that ran inside measured
	 * calls is already taken off those calls' `tsc` values.  Absent (block
	 * of CS_THREAD_BLOCK_MIN_SIZE bytes) in files of earlier writers. */
	uint64_t setup_ticks;
};

#define CS_THREAD_BLOCK_MIN_SIZE 24u

/* Histogram: values 0..CS_HIST_EXACT-1 get a bucket each; above, every
 * power of two [2^k, 2^(k+1)) is split into 2^CS_HIST_SUB_BITS equal
 * buckets (HDR-style log-linear), so a bucket is at most 1/32 of its lower
 * bound wide and its midpoint is within 1.6% of any value in it.  Values
 * of 2^CS_HIST_MAX_BITS and above share the last bucket (max is exact). */
#define CS_HIST_SUB_BITS 5u
#define CS_HIST_EXACT 64u
#define CS_HIST_MAX_BITS 40u
#define CS_HIST_BUCKETS (CS_HIST_EXACT + (CS_HIST_MAX_BITS - 6u) * (1u << CS_HIST_SUB_BITS))

/* Aggregate of one event over the calls of one site. */
struct cs_stat {
	uint64_t sum;
	uint64_t sumsq_lo, sumsq_hi; /* 128-bit sum of squares */
	uint64_t min, max;
	uint64_t first; /* value of the first measured call (the cold call) */
	uint64_t hist[CS_HIST_BUCKETS];
};

#define CS_KEY_NONE UINT64_MAX

/* Everything one thread measured for one (target, call site, key). */
struct cs_site_block {
	struct cs_block hdr;
	uint32_t target; /* cs_target_block.id */
	uint32_t tid;
	uint64_t callsite; /* raw return address */
	uint32_t module; /* cs_module_block.id of the caller, 0 = unknown */
	uint32_t nevents; /* entries of stat[] (== header.nevents) */
	uint64_t offset; /* callsite - module base */
	uint64_t key; /* argument size class, CS_KEY_NONE when not keyed */
	uint64_t dropped; /* returned, but the reading was unusable */
	uint64_t nested; /* file offset of its cs_nested_block, 0 if none */
	/* The block starts on a 64-byte line; this second line holds every
	 * field a call updates but its histogram bucket (for the first event). */
	uint64_t calls; /* measured calls that returned */
	uint64_t entered; /* calls that entered the wrapper */
	struct cs_stat stat[];
};

/* Where a site block starts in the file (its offset is a multiple). */
#define CS_SITE_ALIGN 64u
_Static_assert(__builtin_offsetof(struct cs_site_block, calls) == 64 &&
		       __builtin_offsetof(struct cs_site_block, stat[0].first) < 128,
	       "a call's updates of the first event share one line");

/* Inclusive and exclusive values of the calls of one site during which
 * other wrapped calls returned (a target calling a target).  Made at the
 * first such call.  Exclusive = inclusive minus the nested calls'
 * inclusive values.  The exclusive distribution of all calls of the site
 * is its cs_site_block stat minus stat[0, n) plus stat[n, 2n) (the other
 * calls had nothing nested: exclusive = inclusive). */
struct cs_nested_block {
	struct cs_block hdr;
	uint64_t site; /* file offset of the cs_site_block */
	uint64_t calls; /* calls with something nested */
	uint64_t children; /* nested calls made during those calls: each one's
			    * own bracket cost (the calibration target) is still
			    * inside the exclusive values */
	uint32_t nevents;
	uint32_t flags; /* CS_NESTED_* */
	struct cs_stat stat[]; /* 2 * nevents: inclusive, then exclusive */
};

/* cs_nested_block.flags: made during the site's first recorded call, so
 * that call's exclusive value is the exclusive stat's first (the cold
 * call of --self); only where header.features has
 * CS_FEATURE_NESTED_FIRST. */
#define CS_NESTED_AT_FIRST 1u

/* Series over time: per (thread, target), successive windows of
 * 2^shift calls each.  When all CS_SERIES_WINDOWS windows are used,
 * adjacent windows merge pairwise and shift grows by one, so the whole
 * run is kept at the finest resolution that fits.  Window i covers the
 * calls [i << shift, (i + 1) << shift) of that thread to that target.
 * A window is struct cs_window followed by nevents struct cs_wstat. */
#define CS_SERIES_WINDOWS 256u
#define CS_WHIST_EXACT 16u
#define CS_WHIST_SUB_BITS 3u
#define CS_WHIST_BUCKETS (CS_WHIST_EXACT + (CS_HIST_MAX_BITS - 4u) * (1u << CS_WHIST_SUB_BITS))

struct cs_window {
	uint64_t calls; /* calls recorded in this window */
	uint64_t first_tsc; /* rdtsc at the end of its first call */
};

struct cs_wstat {
	uint64_t sum, min, max;
	uint32_t hist[CS_WHIST_BUCKETS]; /* coarse: 8 buckets per power of two */
};

struct cs_series_block {
	struct cs_block hdr;
	uint32_t target; /* cs_target_block.id */
	uint32_t tid;
	uint32_t nevents;
	uint32_t shift; /* log2 of the calls per window; CS_SERIES_MERGING
			 * set while the windows merge */
	uint64_t calls; /* calls recorded in all windows */
	uint64_t skipped; /* calls that arrived while the windows were merging */
	uint64_t window_size; /* bytes of one window (cs_window + wstats) */
	uint64_t ready; /* windows mapped in so far: none at or past it holds
			 * a call (0 in files of earlier writers) */
	/* CS_SERIES_WINDOWS windows of window_size bytes follow */
};

/* In cs_series_block.shift while the windows merge: a thread stopped then
 * (the process exited under it) left windows half merged, which no reader
 * can use. */
#define CS_SERIES_MERGING 0x80000000u

/* Bucket of v in a window histogram. */
static inline unsigned cs_whist_index(uint64_t v)
{
	unsigned k;

	if (v < CS_WHIST_EXACT)
		return (unsigned)v;
	k = 63u - (unsigned)__builtin_clzll(v); /* k >= 4 */
	if (k >= CS_HIST_MAX_BITS)
		return CS_WHIST_BUCKETS - 1u;
	return CS_WHIST_EXACT + (k - 4u) * (1u << CS_WHIST_SUB_BITS) +
	       (unsigned)((v >> (k - CS_WHIST_SUB_BITS)) & ((1u << CS_WHIST_SUB_BITS) - 1u));
}

/* Smallest value in window-histogram bucket b. */
static inline uint64_t cs_whist_lower(unsigned b)
{
	unsigned k, s;

	if (b < CS_WHIST_EXACT)
		return b;
	k = 4u + (b - CS_WHIST_EXACT) / (1u << CS_WHIST_SUB_BITS);
	s = (b - CS_WHIST_EXACT) % (1u << CS_WHIST_SUB_BITS);
	return (1ull << k) + ((uint64_t)s << (k - CS_WHIST_SUB_BITS));
}

/* Bytes of one window: a multiple of 64 since format version 2 (the
 * shim places a series block so that its windows start on 64-byte lines),
 * so that a call's updates of the window's count and of the first
 * event's sum, min and max share one cache line. */
static inline uint64_t cs_window_size(unsigned nevents)
{
	return (sizeof(struct cs_window) + (uint64_t)nevents * sizeof(struct cs_wstat) + 63) &
	       ~63ull;
}

/* The same in format version 1: not rounded. */
static inline uint64_t cs_window_size_v1(unsigned nevents)
{
	return sizeof(struct cs_window) + (uint64_t)nevents * sizeof(struct cs_wstat);
}

static inline uint64_t cs_series_block_size(unsigned nevents)
{
	return sizeof(struct cs_series_block) + CS_SERIES_WINDOWS * cs_window_size(nevents);
}

_Static_assert(sizeof(struct cs_window) + __builtin_offsetof(struct cs_wstat, hist) <= 64,
	       "a window's counts share a line");

static inline uint64_t cs_nested_block_size(unsigned nevents)
{
	return sizeof(struct cs_nested_block) + 2ull * nevents * sizeof(struct cs_stat);
}

/* Bucket of value v. */
static inline unsigned cs_hist_index(uint64_t v)
{
	unsigned k;

	if (v < CS_HIST_EXACT)
		return (unsigned)v;
	k = 63u - (unsigned)__builtin_clzll(v); /* k >= 6 */
	if (k >= CS_HIST_MAX_BITS)
		return CS_HIST_BUCKETS - 1u;
	return CS_HIST_EXACT + (k - 6u) * (1u << CS_HIST_SUB_BITS) +
	       (unsigned)((v >> (k - CS_HIST_SUB_BITS)) & ((1u << CS_HIST_SUB_BITS) - 1u));
}

/* Smallest value that falls into bucket b. */
static inline uint64_t cs_hist_lower(unsigned b)
{
	unsigned k, s;

	if (b < CS_HIST_EXACT)
		return b;
	k = 6u + (b - CS_HIST_EXACT) / (1u << CS_HIST_SUB_BITS);
	s = (b - CS_HIST_EXACT) % (1u << CS_HIST_SUB_BITS);
	return (1ull << k) + ((uint64_t)s << (k - CS_HIST_SUB_BITS));
}

/* Number of values in bucket b (the last bucket is open-ended: its width
 * here is that of a regular bucket). */
static inline uint64_t cs_hist_width(unsigned b)
{
	if (b < CS_HIST_EXACT)
		return 1;
	return 1ull << (6u + (b - CS_HIST_EXACT) / (1u << CS_HIST_SUB_BITS) - CS_HIST_SUB_BITS);
}

/* Bytes of a site block with n events. */
static inline uint64_t cs_site_block_size(unsigned n)
{
	return sizeof(struct cs_site_block) + (uint64_t)n * sizeof(struct cs_stat);
}

#endif /* CACHESHIM_COMMON_FORMAT_H */
