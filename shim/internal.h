/* SPDX-License-Identifier: MIT */
/* Private declarations of the preloaded library (shim/). */
#ifndef CACHESHIM_SHIM_INTERNAL_H
#define CACHESHIM_SHIM_INTERNAL_H

#include <elf.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/format.h"
#include "common/targetspec.h"
#include "shim/rawsys.h"

#define CS_EXPORT __attribute__((visibility("default")))

/* ---- log.c: one line on stderr, async-signal-safe (write(2) only) ---- */
void cs_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The number after "FIELD:" in /proc/self/status, -1 if none
 * (procstatus.c; slow paths only). */
long cs_proc_status(const char *field);
/* Notes what descriptor 2 is at start: cs_log writes there only while it
 * still is (first thing in the constructor). */
void cs_log_init(void);
/* Replaces the control characters of s[0, n) with '?': one line, whatever
 * the user's values held. */
void cs_log_printable(char *s, size_t n);
/* cs_log, and the line kept in the report file as a note block (output.c;
 * slow paths only: it reserves a block) when the file is open; under
 * `cacheshim run` (CACHESHIM_UNMATCHED=run) a kept line is not said here:
 * the launcher says each note once for all of the run's processes. */
void cs_log_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A line about what the report file lacks and why, said once per process
 * (a forked child, whose file is a new one, says it again): kept in the
 * file as well (cs_log_note). */
#define CS_LOG_ONCE(...)                                                                 \
	do {                                                                             \
		static uint64_t cs_said_; /* 1 + generation said in */                    \
		uint64_t cs_now_ = cs_g.generation + 1;                                  \
		/* Exchanged: two threads reaching the limit at once say it once. */     \
		if (__atomic_load_n(&cs_said_, __ATOMIC_RELAXED) != cs_now_ &&           \
		    __atomic_exchange_n(&cs_said_, cs_now_, __ATOMIC_RELAXED) != cs_now_) \
			cs_log_note(__VA_ARGS__);                                        \
	} while (0)

/* ---- settings.c: CACHESHIM_* read once ---- */
#define CS_DEFAULT_OUTPUT "cacheshim.out.%p"
#define CS_DEFAULT_WINDOW 256 /* bytes of stack arguments copied per call */
#define CS_DEFAULT_SERIES 16u /* calls of a series window at the start */
#define CS_MAX_SERIES 65536u
#define CS_SERIES_READY_FIRST 16u /* series windows mapped in when it is made */
/* A series merge waits for a claimed number's call to add itself to its
 * window (a signal handler's call interrupted it) at most this many calls
 * (shim/thread.c): many, since under a storm of signals the interrupted
 * call may get no further for a long while (with 16, handler calls on a
 * thread signalled without pause still merged under it); a bound only for
 * a number that a handler jumping out of its call left claimed for good.
 * Meanwhile only every CS_MERGE_RECHECK-th call takes the
 * slow path to look again (summing the windows' counts: 256 lines), the
 * others skip the series in the hot path.  bench -m jumpstorm, ns a call:
 * 2,232 when every call looked, 322 every 64th, 124-151 every 256th,
 * against 116 with series off. */
#define CS_MERGE_WAITS 65536u
#define CS_MERGE_RECHECK 256u

struct cs_target_pattern {
	char glob[CS_TARGET_PATTERN_MAX]; /* fnmatch(3) pattern */
	unsigned literal; /* length of glob's literal prefix (0 is always safe) */
	unsigned argn; /* name:argN, 0 = none */
	unsigned matched; /* symbols it matched (set while patching) */
	unsigned taken_by; /* 1 + an earlier pattern that took a name it matches, or 0 */
	/* IFUNCs it names that entry patching could not take (GOT pass off):
	 * how many, and the first one's name, for the start-up message. */
	unsigned ifuncs;
	char ifunc_name[48];
	/* A glob's functions whose entries a patching pass refused (said in
	 * one line per pattern at the end of the pass, shim/entry.c; an exact
	 * name's refusal is said by itself): how many, the first one and why.
	 * And the functions it matched that are never wrapped (setjmp, vfork,
	 * ...: cs_settings_never_wrap), skipped without a word unless they are
	 * all it matched (said at start, shim/init.c). */
	unsigned refused;
	char refused_name[48];
	const char *refused_why;
	unsigned never;
	char never_name[48];
};

struct cs_settings {
	unsigned ntargets;
	char events[CS_MAX_EVENTS][CS_EVENT_NAME_MAX];
	unsigned nevents;
	int events_defaulted; /* CACHESHIM_EVENTS unset: defaults chosen */
	char output[4096]; /* path pattern with %p, %e, %% */
	unsigned window; /* stack bytes copied, multiple of 16 */
	uint64_t capacity; /* bytes reserved for the report file */
	uint64_t session; /* CACHESHIM_SESSION, set by `cacheshim run` */
	unsigned series; /* CACHESHIM_SERIES: calls of a series window at the
			  * start (a power of two), 0: no series */
	uint64_t max_sites; /* CACHESHIM_MAX_SITES, 0 = from the capacity */
	unsigned hook; /* CACHESHIM_HOOK: CS_HOOK_GOT and/or CS_HOOK_ENTRY */
	int cache; /* CACHESHIM_CACHE: keep branch scans on disk (default 1) */
	int quiet; /* CACHESHIM_QUIET=1: no informational lines */
	int say_unmatched; /* CACHESHIM_UNMATCHED (default 1): say patterns
			    * that match no function at start */
	int launcher; /* CACHESHIM_UNMATCHED=run: `cacheshim run` sums up
		       * the run at its end (patterns unmatched, entries
		       * refused) for all of its processes */
	/* Last, and only the first ntargets zeroed by the parse: all 64 are
	 * 275 KB, whose zeroing faulted in ~70 pages of the shim's bss at
	 * every start (~0.2 ms of a 9 ms `ruby -e 0`). */
	struct cs_target_pattern targets[CS_MAX_TARGET_PATTERNS];
};

/* Parses the CACHESHIM_* variables through getenv_fn (getenv, or a fake
 * in tests) into *s.  Returns 0, or -EINVAL with one cs_log line per
 * problem for unusable values; the parts that parsed stay usable. */
int cs_settings_parse(struct cs_settings *s, const char *(*getenv_fn)(const char *name));
/* Expands the %p, %e and %% of pattern into out.  Returns 0 or -ENAMETOOLONG. */
int cs_settings_output_path(const char *pattern, pid_t pid, const char *prog, char *out,
			    size_t outlen);
/* True for functions no wrapper may stand in front of (setjmp, vfork,
 * clone, the signal return trampoline...): they are never wrapped. */
int cs_settings_never_wrap(const char *name);
/* True if pattern p is a glob, not one function's name. */
int cs_settings_is_glob(const struct cs_target_pattern *p);
/* Index of the first pattern that matches name, or -1. */
int cs_settings_match(const struct cs_settings *s, const char *name);
/* The same from pattern from on. */
int cs_settings_match_from(const struct cs_settings *s, const char *name, unsigned from);
/* Function name counted under pattern pat (its first: matched), and noted
 * as taken by pat in each later pattern it matches too (the start-up
 * message names pat for a later pattern that matched nothing else). */
void cs_settings_matched(struct cs_settings *s, int pat, const char *name);
/* The noting alone (an IFUNC under entry patching: not a match). */
void cs_settings_taken(struct cs_settings *s, int pat, const char *name);
/* What every function name a name pattern can match holds: its literal
 * prefix (str[i], len[i] bytes; arrays of CS_MAX_TARGET_PATTERNS).
 * Address targets (module+0xOFFSET) match no name and are left out.
 * Returns how many, or -1 when some pattern has no literal prefix (any
 * name may match it). */
int cs_settings_literals(const struct cs_settings *s, const char **str, size_t *len);

/* ---- events.c: encodings (at start) and per-thread counter groups ---- */
struct cs_event_enc {
	uint32_t kind; /* enum cs_event_kind */
	uint32_t perf_type;
	uint64_t config, config1, config2;
	int exclude_user, exclude_kernel, exclude_hv; /* libpfm4's: ":k" sets exclude_user */
	int usable; /* opened in the start-up probe */
};

/* Encodes the configured events (with libpfm4, which is loaded only when
 * an event is not one of perf's software events) and probes each one with
 * perf_event_open.  Fills hdr->events.  Returns the number of events (>= 1:
 * tsc is always usable); failures are logged once and marked failed. */
int cs_events_setup(struct cs_settings *s, struct cs_file_header *hdr);
struct cs_thread;
/* Opens the calling thread's counter group into t.  Returns 0 or -errno
 * (logged once per process); on failure nothing stays open. */
int cs_events_open_thread(struct cs_thread *t);
/* Closes what cs_events_open_thread opened. */
void cs_events_close_thread(struct cs_thread *t);

/* Group read buffer: PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED | RUNNING.
 * The rdpmc path fills it too, with time_enabled - time_running (the
 * off-PMU time, all that is compared) in time_enabled. */
struct cs_group_read {
	uint64_t nr;
	uint64_t time_enabled;
	uint64_t time_running;
	uint64_t values[CS_MAX_EVENTS];
};

/* ---- frame: what the trampoline keeps for one call (shim/trampoline.S) ---- */
struct cs_site_block;
struct cs_frame {
	/* Saved by the trampoline at entry, restored before the target runs. */
	uint64_t rdi, rsi, rdx, rcx, r8, r9, rax, r10, r11; /* 0x00 .. 0x40 */
	uint64_t target_addr; /* 0x48: what to call */
	uint64_t copy_qwords; /* 0x50: stack argument qwords to copy */
	uint64_t result; /* 0x58: CS_ENTER_* */
	uint64_t rdx_out; /* 0x60: rdx saved after the call */
	uint64_t rax_out; /* 0x68: rax saved after the call */
	uint64_t target_idx; /* 0x70: index into cs_targets */
	uint64_t ret_addr; /* 0x78: the caller's return address */
	uint64_t stack_args; /* 0x80: address of the caller's stack arguments */
	struct cs_site_block *site; /* 0x88 */
	uint64_t tsc_start; /* 0x90: written by the trampoline */
	uint64_t rcx_out, rsi_out, rdi_out, r8_out, r9_out, r10_out, r11_out;
	struct cs_group_read start; /* counters at entry */
	struct cs_group_read end; /* counters at exit */
	uint64_t tsc_end; /* 0x200: written by the trampoline */
	uint64_t child[CS_MAX_EVENTS]; /* inclusive values of nested calls */
	uint64_t nest; /* 1 + its entry in the thread's nesting stack, 0: none */
	uint64_t nchildren; /* nested measured calls that returned */
	uint64_t stolen0; /* the thread's set-up ticks when measuring began */
	int64_t side_stack; /* 0x2a0: the side stack SLOW_CALL took, -1: none */
	uint64_t generation; /* cs_g.generation when measuring began (last slot) */
};

#define CS_FRAME_SIZE 0x2b0u
_Static_assert(sizeof(struct cs_frame) == CS_FRAME_SIZE, "cs_frame layout");
_Static_assert(offsetof(struct cs_frame, target_addr) == 0x48, "frame");
_Static_assert(offsetof(struct cs_frame, copy_qwords) == 0x50, "frame");
_Static_assert(offsetof(struct cs_frame, result) == 0x58, "frame");
_Static_assert(offsetof(struct cs_frame, rdx_out) == 0x60, "frame");
_Static_assert(offsetof(struct cs_frame, rax_out) == 0x68, "frame");
_Static_assert(offsetof(struct cs_frame, target_idx) == 0x70, "frame");
_Static_assert(offsetof(struct cs_frame, ret_addr) == 0x78, "frame");
_Static_assert(offsetof(struct cs_frame, stack_args) == 0x80, "frame");
_Static_assert(offsetof(struct cs_frame, rcx_out) == 0x98, "frame");
_Static_assert(offsetof(struct cs_frame, tsc_start) == 0x90, "frame");
_Static_assert(offsetof(struct cs_frame, tsc_end) == 0x200, "frame");
_Static_assert(offsetof(struct cs_frame, generation) == CS_FRAME_SIZE - 8, "frame");
_Static_assert(offsetof(struct cs_frame, side_stack) == 0x2a0, "frame");

/* cs_frame.result, returned by cs_hot_enter */
enum cs_enter_result {
	CS_ENTER_PASS = 0, /* not measured: jump straight to the target */
	CS_ENTER_MEASURE = 1, /* measured: call through, then cs_hot_exit */
	CS_ENTER_SLOW = 2, /* this thread needs set-up (cs_thread_enter_slow) */
};

/* ---- per-thread state (thread.c creates it, hotpath.c uses it) ---- */
/* 16 bytes, so that a thread with 10,000 call sites probes a table of
 * 512 KB (it is on every call's path: with 32-byte slots it alone filled
 * a megabyte of L2). */
struct cs_site_slot {
	uint64_t callsite;
	uint32_t tag; /* cs_site_tag(target, key) */
	uint32_t site; /* file offset of the site block / CS_SITE_ALIGN; 0:
			* empty slot (offset 0 is the header); stored last;
			* or CS_SITE_NOT_MADE */
};

/* A slot's site value for a call site whose block could not be made (the
 * file was full): its calls are not recorded (hotpath.c: not_made).
 * Offset 64 is inside the header, so no block has it. */
#define CS_SITE_NOT_MADE 1u

/* Open-addressing table of a thread's sites.  Replaced whole when it grows
 * (one pointer store), and an old table is only unmapped at thread exit:
 * a signal handler's call may insert while the interrupted call probes. */
struct cs_site_table {
	uint64_t mask; /* slots - 1 */
	uint64_t nsites;
	struct cs_site_table *older; /* replaced tables, unmapped when no probe
				      * can be reading them (or at exit) */
	uint64_t reserved;
	struct cs_site_slot slot[];
};

/* Where a thread carves its call-site and nested blocks from: a range of
 * the file it reserved, zero-written and mapped in one go (output.c). */
struct cs_arena {
	uint64_t next, end; /* file offsets: the unused part [next, end) */
	uint64_t used; /* bytes of blocks the thread has made */
};

/* Entry of a thread's nesting stack (see hotpath.c). */
struct cs_nest {
	uint64_t frame; /* address of the call's cs_frame */
	uint64_t nchildren; /* nested calls that returned */
	uint64_t child[]; /* their values, by event index */
};

#define CS_NEST_DEPTH 16384u /* deeper calls are measured, not nested */

struct cs_thread {
	int ready; /* 0: not measuring in this thread (PASS); 1: measuring;
		    * CS_THREAD_VFORKED: it called vfork (shim/vfork.S) */
#define CS_THREAD_VFORKED 2
	int group_fd; /* perf group leader, -1 when only tsc */
	unsigned nperf; /* members of the group */
	unsigned read_size; /* bytes of one group read */
	unsigned perf_event[CS_MAX_EVENTS]; /* group member -> event index */
	int fds[CS_MAX_EVENTS];
	int rdpmc; /* every member's mmap page allows rdpmc */
	void *pages[CS_MAX_EVENTS]; /* perf mmap pages (rdpmc only) */
	uint64_t stack_lo, stack_hi; /* this thread's stack */
	/* TSC ticks the shim's own slow paths took on this thread (new call
	 * sites, blocks, window merges): taken off the `tsc` value of every
	 * measured call they ran inside (a nested call's set-up is not the
	 * enclosing call's cost).  Also kept in the thread's report block. */
	uint64_t stolen;
	/* Histogram bucket of the first event's value of the thread's last
	 * measured call: the next call's guess of its own bucket. */
	uint64_t last_bucket;
	struct cs_thread_block *block;
	uint64_t epoch; /* cs_g.epoch when the site table was started */
	struct cs_site_table *sites;
	/* Nonzero while the hot path probes `sites`: a signal handler's slow
	 * path that replaces the table then must not unmap the old one, which
	 * the interrupted probe goes on reading. */
	uint64_t probing;
	/* Site blocks of call sites in unloaded modules, by file and offset:
	 * the same call site loaded again takes its block back (thread.c). */
	struct cs_retired_sites *retired;
	struct cs_series_block **series; /* by target index; NULL: series off */
#define CS_NO_SERIES ((struct cs_series_block *)1) /* over the budget */
	int series_busy; /* windows are being merged */
	/* By target index, in the mapping of `series` (thread.c): numbers
	 * of the series claimed by calls that never added themselves to a
	 * window (a signal handler jumped out of them), so that merges stop
	 * waiting for them; and merges put off in a row. */
	uint64_t *series_lost;
	uint32_t *merge_waits;
	void *nest; /* CS_NEST_DEPTH entries of nest_stride bytes */
	uint64_t nest_stride;
	uint64_t depth; /* entries in use */
	uint64_t max_depth; /* live measured calls at most (stack budget) */
	struct cs_arena arena;
	uint32_t tid;
	unsigned exit_rounds; /* key destructor rounds seen at thread exit */
	/* Calls of call sites whose block could not be made (file full), and
	 * nested calls since a nested block could not be made (nonzero from
	 * then on until one is): each CS_NOT_MADE_RECHECK-th tries again. */
	uint32_t not_made_calls;
	uint32_t nested_not_made;
};

#define CS_NOT_MADE_RECHECK 256u

/* Argument size class (0, 1, 2, 4, ... or CS_KEY_NONE) as 0..65. */
static inline uint32_t cs_key_code(uint64_t key)
{
	return key == CS_KEY_NONE ? 0 : key ? 2 + (uint32_t)__builtin_ctzll(key) : 1;
}

/* Target id (below 2^25) and key in one word, as a slot holds them. */
static inline uint32_t cs_site_tag(uint32_t target, uint64_t key)
{
	return target << 7 | cs_key_code(key);
}

static inline uint64_t cs_site_hash(uint32_t tag, uint64_t callsite)
{
	return (callsite ^ (callsite >> 13)) + tag * 0x9e3779b97f4a7c15ull;
}

extern __thread struct cs_thread *cs_tls_thread;
void cs_hot_unwound(const struct cs_frame *f);
/* threadstart.c: this thread's stack, learnt at its start (pthread_create
 * wrapped) or in the constructor (main thread); 0, 0 when unknown.
 * cs_tls_stack_floor: how far down it may grow when that is below
 * cs_tls_stack_lo (the main thread without a stack limit), else 0. */
extern __thread uint64_t cs_tls_stack_lo, cs_tls_stack_hi, cs_tls_stack_floor;
/* The main thread's stack [*lo, *hi) as glibc would say it, without
 * reading /proc/self/maps.  Returns 0 (nothing set) when it cannot tell. */
int cs_main_stack(uint64_t *lo, uint64_t *hi);
/* threadstart.c: nonzero once the thread's start routine has returned (or
 * it called pthread_exit): it is exiting. */
extern __thread int cs_tls_thread_done;
/* threadstart.c: threads that may block every signal because a wrapped
 * pthread_create is making them or they are being made (glibc blocks all
 * around the clone, in both, until the new thread starts). */
extern int cs_threads_starting;
void cs_thread_stack_main(void);
/* Nonzero while the shim's own code runs on this thread: targets it calls
 * (libc, libpfm4) are not measured.  cs_tls_guard_frame is the frame of
 * the code that took it first, so that a guard left behind by a non-local
 * exit (a signal handler's siglongjmp out of a slow path) can be told from
 * a live one (cs_hot_enter). */
extern __thread unsigned cs_tls_guard;
extern __thread uintptr_t cs_tls_guard_frame;

static inline __attribute__((always_inline)) void cs_guard_take(void)
{
	if (cs_tls_guard++ == 0)
		cs_tls_guard_frame = (uintptr_t)__builtin_frame_address(0);
}

static inline __attribute__((always_inline)) void cs_guard_drop(void)
{
	if (--cs_tls_guard == 0)
		cs_tls_guard_frame = 0;
}

/* The guard with the asynchronous signals blocked (shim/rawsys.h), for
 * shim code that takes a while on a live thread (thread teardown): a
 * program's signal handler calling a target inside it would pass through
 * the guard neither measured nor counted; blocked, it runs right after,
 * and its call is measured or counted as lost there.  Only around system
 * calls: never around malloc or anything that may wait for another thread
 * (a program's malloc may wait for a thread that waits for this one's
 * handler: tests/robust/test_gcstop.sh), nor around the program's own
 * code (execve would pass the mask on). */
static inline __attribute__((always_inline)) void cs_guard_take_quiet(uint64_t *mask)
{
	cs_signals_block(mask);
	cs_guard_take();
}

static inline __attribute__((always_inline)) void cs_guard_drop_quiet(const uint64_t *mask)
{
	cs_guard_drop();
	cs_signals_restore(mask);
}

/* Shim code that calls libc's cancellation points (open, read, close,
 * nanosleep: the patching pass after dlopen, a fork child's new file) on
 * a thread the program may have asked to cancel (pthread_cancel, the
 * default deferred kind): the request acted inside the shim, holding the
 * patching lock (the next dlopen hung), or inside fork in the child
 * (which exited 0).  Such stretches run with cancellation disabled; the
 * request stays pending for the program's next cancellation point, as
 * without us.  Under the guard: pthread_setcancelstate may be a target. */
static inline int cs_cancel_off(void)
{
	int old = PTHREAD_CANCEL_ENABLE;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

static inline void cs_cancel_restore(int old)
{
	if (old == PTHREAD_CANCEL_ENABLE)
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
}

/* The slow paths' locks (entry.c, got.c, modules.c, branchscan.c; init.c
 * has the patching lock over the first two).  Order: patching, then entry
 * or GOT, then branch cache or modules.  A forked child starts them afresh
 * (init.c): a thread of the parent may have held one at the fork, and the
 * child scans its modules again right away. */
extern pthread_mutex_t cs_entry_lock, cs_got_lock, cs_modules_lock, cs_cache_lock;

/* ---- hotpath.c (built -mgeneral-regs-only) ---- */
uint64_t cs_hot_enter(struct cs_frame *f);
/* Returns 0, or CS_EXIT_SLOW when a block must be made first
 * (cs_thread_exit_slow, with the extended state saved). */
uint64_t cs_hot_exit(struct cs_frame *f);
#define CS_EXIT_SLOW 1u
/* Adds the values of the finished call in f to its site, nested block and
 * series.  Returns CS_EXIT_SLOW, having written nothing, when one of those
 * does not exist yet or the series must merge its windows first. */
uint64_t cs_hot_record(struct cs_thread *t, struct cs_frame *f);
/* Reads the thread's counter group into out (out->nr = 0 on failure). */
void cs_hot_read(struct cs_thread *t, struct cs_group_read *out);
/* Starts measuring the call of frame f at site: counts the entry, sizes
 * the stack copy, reads the counters.  Called with the guard held. */
void cs_hot_begin(struct cs_thread *t, struct cs_frame *f, struct cs_site_block *site);
/* Call site of the call in frame f: its return address, or for a tail call
 * from another wrapped function, the call site of that function's call. */
uint64_t cs_hot_callsite(const struct cs_frame *f);
/* The instruction after the trampoline's call of a target. */
void cs_trampoline_return(void);
/* Key of a call: size class of argument argn, CS_KEY_NONE if argn is 0. */
uint64_t cs_hot_key(const struct cs_frame *f, unsigned argn);

/* Set by init.c before any stub is reachable; read by the trampoline. */
extern uint64_t cs_window; /* stack bytes copied per call (multiple of 16) */
extern uint64_t cs_xsave_size; /* bytes of the XSAVE area + alignment slack */
/* sidestack.c: stacks the slow path runs on (the trampoline takes them). */
void cs_side_init(void);
void cs_side_after_fork(void);
/* Writes again, uncounted, the side stacks' pages written before a fork
 * (in fork, both processes; not under a seccomp filter). */
void cs_side_populate(void);
extern uint64_t cs_xsave_mask; /* XCR0 components saved; 0 = use FXSAVE */

/* ---- targets: one per (name, address) matched ---- */
#define CS_MAX_TARGETS 4096
_Static_assert(CS_MAX_TARGETS < (1u << 24), "target ids fit cs_site_tag");

struct cs_target {
	uint64_t addr; /* the real function */
	int unloaded; /* its module was unloaded: never matched again */
	uint32_t module; /* the module map's id of its module when added, 0 if unknown */
	uint64_t file; /* that module's file (cs_modules_file), 0 if unknown */
	int entry_done; /* entry patched or refused: not tried again */
	int entry_deferred; /* its deferral was recorded already */
	const char *refused_why; /* the reason its entry was last refused for */
	int entry_pattern; /* 1 + the pattern its entry candidate matched, 0: none
			    * (its name may be cut: CS_TARGET_NAME_MAX) */
	void *stub; /* entry stub that pushes the index */
	struct cs_target_block *block; /* in the report file */
	int next_same; /* the next older target at addr (cs_target_at), or -1 */
	char name[CS_TARGET_NAME_MAX];
};

/* What the per-call path reads of target index i, packed into 16 bytes
 * (cs_g.hot[i]): with 1,000 targets, reading it from struct cs_target
 * (~170 bytes each, the name included) cost an L1 miss per call. */
struct cs_target_hot {
	uint64_t call; /* what the trampoline calls: the function, or the
			* thunk of its relocated entry instructions when
			* entry-patched */
	uint32_t argn; /* keyed by this argument (1-based), 0 = not keyed */
	uint32_t reserved;
};

/* The file id of target index idx (cs_target_block.id). */
static inline uint32_t cs_target_id(unsigned idx)
{
	return idx + 1;
}

/* ---- stubs.c ---- */
/* Maps the entry stubs of all CS_MAX_TARGETS indexes.  Returns 0 or -errno
 * (logged). */
int cs_stubs_init(void);
/* Entry stub of target index idx: pushes idx and enters the trampoline. */
void *cs_stub_addr(unsigned idx);
/* True if addr is one of the stubs (a slot patched already). */
int cs_stub_is(uint64_t addr);
/* The target index of the stub at addr, or -1 when addr starts no stub. */
int cs_stub_index(uint64_t addr);
/* The target index of the stub holding addr, and addr's offset in it; -1
 * if addr is in no stub. */
int cs_stub_containing(uint64_t addr, uint64_t *offset);

/* ---- got.c ---- */
/* Index of the target (name, addr), recorded in the file when new.
 * Returns -1 (logged once) when the table or the file is full. */
int cs_target_add(const char *name, uint64_t addr, unsigned argn, uint32_t how);
/* The newest target at addr (aliases, or functions of unloaded modules
 * whose address came back, follow through next_same), or -1.  Under the
 * patching lock, as cs_target_add. */
int cs_target_at(uint64_t addr);
/* Marks the targets in [lo, hi) unloaded: a module there went away.  With
 * module not 0, only those added as that module's (or of no known module):
 * the module map may see a module gone after another one was mapped at its
 * addresses and patched.  Under the patching lock. */
void cs_target_forget_range(uint64_t lo, uint64_t hi, uint32_t module);
/* Patches the GOT slots of every loaded module that are not patched yet.
 * Returns the number of slots patched.  *held is set when modules were
 * held loaded meanwhile (with dlopen): dropping them may have unloaded one
 * that another thread had closed, unseen by our dlclose wrapper (the
 * caller runs cs_forget_unloaded then). */
int cs_got_patch_all(int *held);
/* Forked child, cs_got_lock held at the fork: the pass's memo let go. */
void cs_got_memo_abandon(void);

/* ---- loadmemo.c: what a pass over the loaded modules learned about each
 * one, kept until a module is unloaded (each memo under its user's lock) ---- */
#define CS_NO_SUBS (~0ull) /* dl_iterate_phdr gives no count of loads */
struct dl_phdr_info;
struct cs_load_memo {
	struct {
		uint64_t base; /* dlpi_addr */
		const void *phdr; /* dlpi_phdr: with base, the load */
		uintptr_t data; /* the user's */
	} * e;
	size_t n, cap, next;
	unsigned long long subs;
	int valid;
	void (*drop)(uintptr_t data); /* frees an entry's data, or NULL */
};
/* Drops the memo if subs (cs_load_subs) moved since the last call.
 * Returns 1 if the memo can be used (0: no count here). */
int cs_load_memo_check(struct cs_load_memo *m, unsigned long long subs);
void cs_load_memo_clear(struct cs_load_memo *m);
/* In a forked child, a memo whose user's lock another thread held at the
 * fork: it may be half updated (cs_load_memo_clear stopped between
 * freeing entries and forgetting them, whose next clear freed them a
 * second time), so its entries are let go, never freed or read again. */
void cs_load_memo_abandon(struct cs_load_memo *m);
/* 1 and the data kept for the load (base, phdr), or 0 if it is new. */
int cs_load_memo_find(struct cs_load_memo *m, uint64_t base, const void *phdr, uintptr_t *data);
/* Records a load.  Returns 0, or -ENOMEM, -ENOSYS (no memo here). */
int cs_load_memo_add(struct cs_load_memo *m, uint64_t base, const void *phdr, uintptr_t data);
/* A count that moves whenever a module dl_iterate_phdr lists is unloaded:
 * its count of loads less the modules it lists now (not its dlpi_subs,
 * which other namespaces' loads lower).  Also from a dl_iterate_phdr
 * callback, of the list that iteration shows. */
unsigned long long cs_load_subs(void);
/* dl_iterate_phdr's count of loads (dlpi_adds, any namespace's) now: a
 * module loaded since a listing, at an address it showed another at, is
 * one load more (CS_NO_SUBS: no count). */
unsigned long long cs_load_adds(void);

/* ---- elfsyms.c: function symbols of a module, from its file (slow path) ----
 * Reads the module's ELF file (mapped read-only, never through the loaded
 * image's section headers, which are not loaded): .dynsym, .symtab, and the
 * .symtab of a separate debug file found by build-id
 * (/usr/lib/debug/.build-id/xx/rest.debug) or .gnu_debuglink (the module's
 * directory, its .debug/ subdirectory, /usr/lib/debug/<dir>/).  Also the
 * function starts listed in the loaded image's .eh_frame_hdr. */
enum cs_sym_source {
	CS_SYM_DYNSYM = 1,
	CS_SYM_SYMTAB = 2, /* the module's own .symtab */
	CS_SYM_DEBUG = 3, /* .symtab of its separate debug file */
	CS_SYM_ADDRESS = 4, /* an address target module+0xOFFSET */
};

struct cs_elf_func {
	uint64_t addr; /* run-time address (load bias added) */
	uint64_t size; /* st_size, 0 if unknown */
	const char *name; /* valid until cs_elf_close */
	int local; /* STB_LOCAL: several functions may share the name */
	int source; /* enum cs_sym_source */
};

struct cs_elf_module;
/* Opens the ELF file of a loaded module whose load bias is base and
 * program headers phdr/phnum (from dl_iterate_phdr; the run-time image is
 * read through them).  Path "" or NULL is the main program: /proc/self/exe,
 * or if that is ld.so (a program started as "ld.so prog"), the file that
 * /proc/self/maps shows at the program's first segment.  phdr NULL: the
 * file's own program headers and contents are used instead (a file that is
 * not loaded).  The separate debug file is looked for only when the file
 * has no .symtab.  Returns 0 and *out, or -errno:
 * -ENOEXEC for anything but a well-formed ELF64 x86-64 ET_EXEC/ET_DYN file
 * (tables outside the file included), -ESTALE if the file's build-id
 * differs from the loaded image's, -ENOMEM, or open(2)'s error. */
int cs_elf_open(const char *path, uint64_t base, const void *phdr, unsigned phnum,
		struct cs_elf_module **out);
/* Substrings every wanted function name holds (target patterns' literal
 * prefixes): s[i] is len[i] bytes long. */
struct cs_elf_wanted {
	const char *const *s;
	const size_t *len;
	unsigned n;
};
#define CS_ELF_UNWANTED 1
/* cs_elf_open, but when none of the module's symbol tables (.dynsym,
 * .symtab, the debug file's .symtab) has a wanted substring in its strings
 * returns CS_ELF_UNWANTED with *out NULL and reads no symbol.  wanted NULL:
 * every module is wanted. */
int cs_elf_open_wanted(const char *path, uint64_t base, const void *phdr, unsigned phnum,
		       const struct cs_elf_wanted *wanted, struct cs_elf_module **out);
/* Unmaps and frees m (NULL is fine); names given out die with it. */
void cs_elf_close(struct cs_elf_module *m);
/* Calls fn with the name of each IFUNC m exports (.dynsym), which the
 * function list leaves out; stops at fn's first nonzero return, which it
 * returns. */
int cs_elf_each_ifunc(struct cs_elf_module *m, int (*fn)(const char *name, void *arg), void *arg);
/* Calls fn once per defined function symbol (STT_FUNC with a section:
 * not SHN_UNDEF, not SHN_ABS, value nonzero, address inside an executable
 * PT_LOAD; st_size is not checked; STT_GNU_IFUNC excluded: an IFUNC's symbol
 * is its resolver): .dynsym's (source CS_SYM_DYNSYM), then .symtab's, then
 * the debug file's, each in its table's order.  Not sorted, and a function
 * listed in several tables comes once from each (a .symtab name may carry
 * an "@VERSION" tail that .dynsym's has not).  Stops early when fn returns
 * nonzero, and returns that value; else 0. */
int cs_elf_each_func(struct cs_elf_module *m, int (*fn)(const struct cs_elf_func *f, void *arg),
		     void *arg);
/* The run-time function starts listed in .eh_frame_hdr, sorted ascending,
 * unique.  Only the table encodings toolchains emit are read (fde_count
 * udata4, table datarel|sdata4); another encoding, a version other than
 * 1 or a table that does not fit its segment gives 0 starts.  Returns their
 * number (0: no usable table, which means "unknown", not "none") and
 * *starts (owned by m). */
size_t cs_elf_fde_starts(struct cs_elf_module *m, const uint64_t **starts);
/* End of the function starting at addr, from its FDE's pc_range in the
 * loaded image's .eh_frame; 0 when addr has no FDE or it cannot be read
 * with certainty. */
uint64_t cs_elf_fde_end(struct cs_elf_module *m, uint64_t addr);
/* True if addr is a function start listed in .eh_frame_hdr. */
int cs_elf_is_fde_start(struct cs_elf_module *m, uint64_t addr);
/* The module's executable PT_LOAD ranges at run time ([lo, hi) pairs,
 * p_memsz long, in program header order); returns their number (at most
 * max, and at most 16). */
unsigned cs_elf_exec_ranges(struct cs_elf_module *m, uint64_t *lo, uint64_t *hi, unsigned max);
/* The module's NT_GNU_BUILD_ID (the loaded image's, else the file's);
 * returns its length (0: none, *id NULL). */
unsigned cs_elf_build_id(struct cs_elf_module *m, const uint8_t **id);
/* Length of the name a compiler clone was made from: the name without its
 * trailing run of ".constprop.N", ".isra.N", ".part.N", ".lto_priv.N",
 * ".cold", ".cold.N", ".localalias" ("foo.isra.0.constprop.0",
 * "foo.part.0.cold" -> 3); any other name -> strlen(name). */
size_t cs_elf_clone_base_len(const char *name);
/* Where separate debug files are looked for, instead of /usr/lib/debug
 * (NULL: back to it).  For tests; not thread-safe. */
void cs_elf_set_debug_dir(const char *dir);

/* ---- relocate.c: can a function's entry be patched, and its displaced
 * instructions moved (Zydis decodes and re-encodes) ---- */
#define CS_PATCH_JMP_SIZE 5u /* jmp rel32 written at the patch point */
#define CS_STUB_BYTES 16u /* an entry stub: push $index, jmp *trampoline(%rip), int3s */
#define CS_THUNK_MAX 160u /* bytes of relocated code + the jump back */

struct cs_reloc_plan {
	uint64_t func; /* function start */
	uint64_t patch; /* patch point: func, or func + 4 after an endbr64 */
	unsigned window; /* bytes replaced at patch (>= CS_PATCH_JMP_SIZE) */
	unsigned ninsn; /* whole instructions in the window */
	uint8_t orig[32]; /* the original bytes at patch, window of them */
};

/* Decides whether the entry of the function [func, func_end) can be
 * patched.  code points at the function's bytes as they are at run-time
 * address func (normally code == (uint8_t *)func; tests pass a buffer),
 * readable up to limit_end >= func_end, which must not pass the next
 * function's start (a function that begins with nops is no padding); bytes
 * in [func_end, limit_end) are only used when the window crosses func_end,
 * and must then be padding (int3, nop forms) after a function whose last
 * instruction is a ret, jmp, ud2 or hlt.  A leading endbr64 is kept: the
 * patch point follows it.  Checks: the window holds whole decodable
 * instructions (at most 4 + 15 bytes), none of them loop/jrcxz/xbegin, a
 * far branch, an indirect call before the window's end, or anything the
 * encoder cannot move; no direct branch or rip-relative lea of the
 * function targets an address strictly inside the window; every indirect
 * jmp of the function is a recognised jump table bounded by cmp + ja/jae,
 * whose entries (read at their run-time address with process_vm_readv, so
 * a bad address fails instead of faulting) do not land inside the window,
 * and whose set-up no branch enters past the bounds check.  Returns 0 and
 * fills *plan, or -1 with *why set to a static reason and *why_off to the
 * function offset it concerns. */
int cs_reloc_plan(const uint8_t *code, uint64_t func, uint64_t func_end, uint64_t limit_end,
		  struct cs_reloc_plan *plan, const char **why, uint64_t *why_off);
/* Writes the relocated window followed by a jump back to patch + window,
 * as code that will run at address thunk: rip-relative operands, jcc, jmp
 * and call re-targeted (a call, direct or indirect, is emulated: a real call
 * whose pushed address is overwritten with the original return address,
 * registers and flags untouched, so the callee returns into the original
 * code and backtraces see it; refused when its operand is read from the
 * 8 bytes below rsp that address takes, or through an index off rsp); a jump
 * target out of rel32 reach goes through jmp *0(%rip) and an absolute
 * address.  Returns the bytes written (<= cap), or -1 with *why set (a
 * rip-relative operand out of reach, cap too small). */
int cs_reloc_emit(const struct cs_reloc_plan *plan, uint64_t thunk, uint8_t *out, size_t cap,
		  const char **why);
/* The DWARF call frame instructions (DW_CFA_*, code alignment 1, data
 * alignment -8) that describe code[at, n), a thunk cs_reloc_emit made,
 * entered by a call (CFA = rsp + 8, the return address below it): the
 * CFA as the relocated instructions move rsp (push, pop, sub/add/lea of
 * rsp, mov %rsp,%rbp) and the callee-saved registers they push, rows
 * relative to offset at; an rsp change it cannot follow makes the return
 * address undefined there (an unwinder stops).  Writes at most cap bytes
 * to out; returns how many it needed. */
size_t cs_reloc_cfi(const uint8_t *code, size_t n, size_t at, uint8_t *out, size_t cap);
/* The .eh_frame of n entry stubs and their thunks, as register_unwind
 * registers it (entry.c): stub i's bytes at code[i], run at addr[i], len[i]
 * bytes of stub and thunk.  Returns it malloc'd, its size in *size; NULL
 * without memory. */
uint8_t *cs_unwind_blob(const uint8_t *const *code, const uint64_t *addr, const unsigned *len,
			size_t n, size_t *size);

/* ---- branchscan.c: direct branch targets of a whole module ---- */
struct cs_branch_set {
	const uint64_t *off; /* offsets from base, sorted, unique */
	size_t n;
	uint64_t base; /* the module's load bias: address i is base + off[i] */
	uint64_t *owned; /* off when not cached (freed by cs_branches_free) */
	void *map; /* the disk cache file mapped, off inside it (unmapped by
		    * cs_branches_free) */
	size_t maplen;
};
/* Decodes the executable ranges [lo[i], hi[i]) of a loaded module (live,
 * readable memory) linearly, restarting at each function start in starts
 * (sorted ascending; data between functions cannot hide a branch past the
 * next start), and collects the targets of direct jmp/jcc/call/loop/jrcxz
 * and of rip-relative lea that lie in some range.  Cached per build-id
 * (build_id_len 0 or over 64: not cached) as offsets from base, the module's load
 * bias: in memory, and when disk is set, in
 * ${XDG_CACHE_HOME:-$HOME/.cache}/cacheshim/branches-<build-id>.bin (a
 * missing, corrupt or unwritable cache silently means scanning).  Returns
 * 0 and *out (release with cs_branches_free; a set cached in memory
 * stays valid until cs_branches_forget), or -ENOMEM. */
int cs_branches_scan_ranges(const uint64_t *lo, const uint64_t *hi, unsigned nranges,
			    const uint64_t *starts, size_t nstarts, uint64_t base,
			    const uint8_t *build_id, unsigned build_id_len, int disk,
			    struct cs_branch_set *out);
/* cs_branches_scan_ranges on module m (load bias base) with its first 16
 * executable ranges, .eh_frame_hdr function starts and build-id.  disk:
 * use the disk cache (CACHESHIM_CACHE != 0).  Built only with
 * CS_HAVE_ELFSYMS (elfsyms.c present).  Returns 0 or -ENOMEM. */
int cs_branches_scan(struct cs_elf_module *m, uint64_t base, int disk, struct cs_branch_set *out);
/* True if some branch target lies in (lo, hi): strictly inside. */
int cs_branches_inside(const struct cs_branch_set *s, uint64_t lo, uint64_t hi);
/* Releases s and empties it (a second call does nothing). */
void cs_branches_free(struct cs_branch_set *s);
/* Drops the in-memory cache (tests; a module rescanned after this is read
 * from disk or scanned again). */
void cs_branches_forget(void);

/* ---- codewrite.c: writing code into the running process ---- */
struct cs_code_patch {
	uint64_t at; /* where the bytes go */
	uint8_t bytes[32]; /* bytes[0] is written last when threads run */
	unsigned n;
	uint64_t redirect; /* where a thread hitting its int3 is sent */
	uint64_t thunk; /* the caller's */
	uint8_t orig[5]; /* the caller's: the first bytes before the patch */
	int cookie; /* the caller's */
	int written; /* set by cs_code_write */
};
/* Writes n patches into a module; fresh: no thread can be running its
 * code yet (loaded since the last pass).  With other threads, int3 first,
 * and only into a fresh module.  Returns how many were written, or -1
 * with *why set when none could be written safely (an old module while
 * threads run; a thread blocks SIGTRAP; no membarrier SYNC_CORE). */
int cs_code_write(struct cs_code_patch *p, size_t n, int fresh, const char **why);
/* Reserves size bytes of code space within rel32 reach of all of
 * [lo, hi), for cs_code_install.  Returns NULL when no such space is free.
 * Callers hold cs_entry_lock (as for the two below). */
void *cs_code_map_near(uint64_t lo, uint64_t hi, size_t size);
/* Puts n bytes of code at dst (reserved by cs_code_map_near), executable
 * from then on.  Returns 0 or -errno. */
int cs_code_install(void *dst, const void *src, size_t n);
/* Gives back [p, p + size) of a reservation, which nothing runs. */
void cs_code_unmap_near(void *p, size_t size);

/* ---- entry.c: entry patching of every loaded module ---- */
/* Finds the functions matching the targets in every module not handled
 * yet, patches the entries that are safe (CACHESHIM_HOOK=entry|both) and
 * records the refused ones.  Called before cs_got_patch_all.  Returns the
 * number of functions patched; sets *held when it held a module loaded
 * meanwhile (dropping the hold may have unloaded it). */
int cs_entry_patch_all(int *held);
/* True if a function at addr is entry-patched: its GOT slots stay as they
 * are (the entry catches those calls). */
int cs_entry_is_patched(uint64_t addr);
/* Forgets the modules that were unloaded (their addresses may be reused). */
void cs_entry_forget_unloaded(void);
/* Forked child, cs_entry_lock held at the fork: the pass's memo let go. */
void cs_entry_memo_abandon(void);

/* ---- calibrate.c ---- */
/* Measures the wrapper's own cost: calls an empty function through a stub
 * of its own many times (calibrate.c: 1,000, fewer with perf events; a
 * target flagged CS_HOOK_CALIBRATION, which the report subtracts). */
void cs_calibrate(void);
/* A forked child, before it lets go of the parent's file: copies the
 * calibration calls' site block (and its thread's block) out of it. */
void cs_calibrate_save(void);
/* A forked child, once its own file has its modules and targets: writes
 * the copies there (nothing when the save found none or could not copy). */
void cs_calibrate_restore(void);

/* ---- quickexit.c ---- */
/* Looks up the real _exit and _Exit (the constructor: dlsym is not
 * async-signal-safe, and _exit may be called in a signal handler). */
void cs_quickexit_init(void);
/* Registers the seal as an at_quick_exit handler (profiling only). */
void cs_quickexit_register(void);

/* ---- unwindreg.c ---- */
/* Looks up the real backtrace (the constructor). */
void cs_unwind_init(void);
/* Registers the .eh_frame blob (malloc'd, kept for good) of a patching
 * pass's stubs and thunks with libgcc, now if libgcc_s.so.1 is loaded,
 * else once it is (cs_unwind_flush, the exported backtrace). */
void cs_unwind_add(void *blob);
/* Registers the waiting blobs if libgcc_s.so.1 has been loaded since. */
void cs_unwind_flush(void);
/* Learns libgcc_s's accessors for the trampoline's personality routine
 * once libgcc_s is loaded (asks the loader: never inside an unwind). */
void cs_unwind_accessors(void);
/* The module map saw a module loaded from path (shim/modules.c). */
void cs_unwind_saw(const char *path);
/* In a forked child: the lock as new (its holder stayed in the parent). */
void cs_unwind_after_fork(void);

/* ---- siterows.c ---- */
/* Whether call site (callsite, target, key) has a row of its own: it had
 * one (in any thread), or gets one now, being at most the
 * CACHESHIM_MAX_SITES-th; else its calls go to the overflow row.  Slow
 * path only (signals blocked). */
int cs_site_rows_claim(uint32_t target, uint64_t callsite, uint64_t key);
/* An exited thread's site block (a cs_site_at index) of (callsite,
 * cs_site_tag), its call site valid in epoch (the thread's cs_g.epoch),
 * which a later thread with the same events open may take over in that
 * epoch (cs_site_rows_adopt: the index, or 0 when there is none). */
void cs_site_rows_leave(uint64_t callsite, uint32_t tag, uint32_t site, uint32_t events_open,
			uint64_t epoch);
uint32_t cs_site_rows_adopt(uint64_t callsite, uint32_t tag, uint32_t events_open);
void cs_site_rows_after_fork(void);

/* ---- sandbox.c ---- */
/* syscall(3) for SYS_seccomp and SYS_prctl (shim/syscall.S jumps here):
 * a seccomp filter they install is run on the shim's own calls first. */
long cs_sandbox_syscall(long nr, long op, long a2, long a3, long a4, long a5);
/* cs_g.sandbox_refused: the hot path's own system calls. */
#define CS_SB_READ 1u /* a perf group's read (no rdpmc) */
#define CS_SB_FUTEX 2u /* readable_window's probe */
#define CS_SB_GETPID 4u /* back from vfork? */
#define CS_SB_SIGALTSTACK 8u /* guard_left */

/* ---- modules.c ---- */
#define CS_MAX_MODULES 2048 /* loaded at once */
/* Records every loaded module that is not recorded yet in the file. */
void cs_modules_scan(void);
/* Module id of the module containing addr (recording it if needed), 0 if
 * none; *base receives its load bias.  Not async-signal-safe-free: called
 * on the slow path of a new call site only. */
uint32_t cs_modules_lookup(uint64_t addr, uint64_t *base);
/* What file module id was loaded from (a hash of its path and build-id),
 * 0 if that module is unknown or unloaded. */
uint64_t cs_modules_file(uint32_t id);
/* The same, also for a module unloaded since (while its slot is not taken
 * by another). */
uint64_t cs_modules_file_any(uint32_t id);
/* Whether module id is loaded and its block is in the report file (in a
 * forked child: copied by cs_modules_restore). */
int cs_modules_in_file(uint32_t id);
/* The ids of the modules loaded now, ascending, into ids[max].  Returns
 * how many. */
unsigned cs_modules_live(uint32_t *ids, unsigned max);
/* Forgets modules that are no longer loaded (after dlclose) and the
 * targets they defined.  Returns the number of modules forgotten. */
int cs_modules_forget_unloaded(void);
struct dl_phdr_info;
/* True for the modules no patch may touch: the shim itself, the vdso and
 * the dynamic loader. */
int cs_modules_untouchable(const struct dl_phdr_info *info);
/* A forked child: copies the module blocks out of the parent's file
 * (before cs_output_forget), then writes them into the child's own file
 * (after cs_output_open), with the same ids. */
void cs_modules_save(void);
void cs_modules_restore(void);
/* A forked child looks up unknown addresses without a scan until a dlopen
 * or dlclose of the program returns (the loader's lock is free then). */
void cs_modules_after_fork(void);
void cs_modules_loader_usable(void);
/* Forked child, cs_modules_lock held at the fork: the scan's memo let go,
 * and the next forget of unloaded modules looks at every module. */
void cs_modules_memo_abandon(void);

/* ---- output.c: the report file ---- */
/* Creates and maps the report file named by the settings, sets cs_g.hdr.
 * Returns 0 or -errno (logged). */
int cs_output_open(void);
/* Reserves a block of size bytes (multiple of 8) of the given type, zeroed
 * apart from its header.  Returns NULL when the file is full. The caller
 * fills the body and then calls cs_output_publish. */
/* fd moved to a high number (close-on-exec), away from the numbers a
 * program's own open calls get.  If it cannot be moved: fd itself, or
 * with or_none fd closed and -1 (EMFILE). */
#define CS_FD_HIGH 900
int cs_fd_high(int fd, int or_none);
void *cs_output_reserve(uint32_t size);
/* cs_output_reserve, but only the first populate bytes are mapped in now
 * (the rest with cs_output_populate before their first use), and the
 * block placed so that block + skew is a multiple of align (a power of
 * two, at least 8; skew a multiple of 8): a padding block fills the gap. */
void *cs_output_reserve_skewed(uint32_t size, uint32_t populate, uint32_t align, uint32_t skew);
/* A block of size bytes at a multiple of align (at most CS_SITE_ALIGN)
 * from the thread's arena a, which grows by a new arena when it is used
 * up; like cs_output_reserve otherwise.  Only the thread itself, in slow
 * paths, may carve from its arena. */
void *cs_output_carve(struct cs_arena *a, uint32_t size, uint32_t align);
/* Gives the unused rest of a thread's arena to the threads after it (at
 * thread exit, or when it takes a new arena). */
void cs_output_arena_release(struct cs_arena *a);
/* Maps [p, p + len) of the file in (MADV_POPULATE_WRITE: not counted as
 * page faults).  Writes no data, so other code may be writing there.
 * Returns 0, or -1 if the file system could not back a page of it (no
 * room): nothing may be stored there. */
int cs_output_populate(const void *p, uint64_t len);
/* The same after writing zeros over the whole pages of the range when it
 * is large (faster on ext4): only for bytes nobody else may be writing. */
int cs_output_prefault(const void *p, uint64_t len);
/* Whether reserving failed for want of room on the file system (not for
 * the capacity): what the messages about a full file blame. */
int cs_output_no_room(void);
void cs_output_publish(void *block, uint32_t type);
/* The seal without a system call (under the program's seccomp filter):
 * COMPLETE, not trimmed. */
void cs_output_seal_stores(void);
/* Marks the file complete and trims it to its used size; no block can be
 * reserved afterwards (blocks already reserved stay writable). */
void cs_output_seal(void);
/* cs_output_seal, and the series windows no call reached made holes (on
 * disk they were allocated): at exit, _exit, quick_exit and an exec. */
void cs_output_seal_gone(void);
/* Odd while cs_output_seal_gone punches; moves at its start and end
 * (populate_windows). */
uint64_t cs_output_punch_gen(void);
/* Undoes cs_output_seal (an exec that failed). */
void cs_output_unseal(void);
/* Seals the file and closes its descriptor (exit). */
void cs_output_close(void);
/* Drops the mapping and fd (a forked child's inherited ones). */
void cs_output_forget(void);

/* ---- thread.c ---- */
struct cs_thread;
/* Sets up the calling thread (counters, site table).  Returns
 * CS_ENTER_MEASURE or CS_ENTER_PASS (thread could not be set up). */
uint64_t cs_thread_enter_slow(struct cs_frame *f);
/* Marks the calling thread for a child that shares its memory while it
 * waits (vfork, clone with CLONE_VM | CLONE_VFORK): shim/exec.c. */
void cs_vfork_mark(void);
/* Makes the nested or series block the finished call in f needs (or
 * merges series windows), then records the call.  Returns 0. */
uint64_t cs_thread_exit_slow(struct cs_frame *f);
/* Finds or creates the site block of (target, callsite, key) for thread t.
 * Returns NULL when the file is full. */
struct cs_site_block *cs_thread_site(struct cs_thread *t, uint32_t target, uint64_t callsite,
				     uint64_t key);

/* ---- the one global state, set in the constructor and then read-only ---- */
struct cs_global {
	struct cs_settings settings;
	struct cs_event_enc enc[CS_MAX_EVENTS];
	unsigned nevents; /* all events incl. tsc */
	unsigned nperf; /* perf events in the group (usable ones) */
	int tsc_index; /* index of tsc in events, -1 if none */
	int perf_index[CS_MAX_EVENTS]; /* group position -> event index */
	struct cs_file_header *hdr; /* the mapped report file */
	struct cs_target targets[CS_MAX_TARGETS];
	struct cs_target_hot hot[CS_MAX_TARGETS]; /* by target index */
	unsigned ntargets;
	struct cs_file_event events[CS_MAX_EVENTS]; /* as in the file header */
	char hdr_program[CS_PROGRAM_MAX]; /* /proc/self/exe */
	int enabled; /* 0: inert */
	union {
		/* Both below as one word, which shim/sandbox.c changes by
		 * compare-and-swap only: a refused filter's undo must not
		 * clear what another thread's filter set meanwhile. */
		uint64_t sandbox_word;
		struct {
			/* The program installed a seccomp filter
			 * (shim/sandbox.c): no system call of the shim's own
			 * from then on.  Nonzero: how many filters refusing
			 * the shim's calls it installed (or is installing). */
			int sandboxed;
			/* The system calls of the hot path some filter
			 * refuses (CS_SB_*): under the filter the calls that
			 * would need one are dropped. */
			unsigned sandbox_refused;
		};
	} __attribute__((aligned(8)));
	uint64_t nsites; /* site blocks made (incl. attempts past the limit) */
	uint64_t max_blocks; /* site blocks that fit in half the file */
	uint64_t nrows; /* call sites with rows of their own (siterows.c) */
	uint64_t max_sites; /* CACHESHIM_MAX_SITES, or max_blocks */
	uint64_t series_bytes; /* reserved for series blocks (at most 1/4 file) */
	uint64_t nested_bytes; /* of nested blocks (at most 1/8 file) */
	uint64_t generation; /* bumped in a forked child: calls in flight at the
			      * fork belong to the parent's file */
	uint64_t epoch; /* bumped when a module is unloaded: call-site
			 * addresses may now belong to another module */
	pid_t pid;
};

extern struct cs_global cs_g;

/* CS_LOST_* of the thread's last reservation refused (shim/output.c): why
 * its block was not made.  The thread's own: the calls that pass for want
 * of that block are its calls (its site table). */
extern __thread uint64_t cs_tls_refusal;

/* A call let pass unrecorded, for reason why (CS_LOST_*, or 0 when the
 * reason is the thread's last refused reservation's, if any): counted,
 * and the reason said in the file. */
static inline void cs_lost_call(uint64_t why)
{
	if (!why)
		why = cs_tls_refusal;
	if (!why)
		why = CS_LOST_OTHER;
	if (!cs_g.hdr)
		return;
	if (!(__atomic_load_n(&cs_g.hdr->lost_why, __ATOMIC_RELAXED) & why))
		__atomic_fetch_or(&cs_g.hdr->lost_why, why, __ATOMIC_RELAXED);
	__atomic_fetch_add(&cs_g.hdr->lost_calls, 1, __ATOMIC_RELAXED);
}

/* The site block a slot's site field names. */
static inline struct cs_site_block *cs_site_at(uint32_t site)
{
	return (struct cs_site_block *)((char *)cs_g.hdr + (uint64_t)site * CS_SITE_ALIGN);
}

#endif /* CACHESHIM_SHIM_INTERNAL_H */
