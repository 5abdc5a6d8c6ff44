/* SPDX-License-Identifier: MIT */
/* Start and end of the shim: the constructor reads the settings once, opens
 * the report file, encodes the events and patches the GOTs; the destructor
 * seals the file.  Also the fork handler and the dlopen wrapper (modules
 * loaded later are patched before dlopen returns). */
#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "shim/internal.h"

struct cs_global cs_g;
uint64_t cs_window = CS_DEFAULT_WINDOW;
uint64_t cs_xsave_size = 512 + 64;
uint64_t cs_xsave_mask;

int cs_thread_init(void);
void cs_thread_after_fork(void);
void cs_thread_after_fork_parent(void);
void cs_thread_populate_stack(void);

static const char *env(const char *name)
{
	return getenv(name);
}

/* Sizes the slow path's XSAVE area from CPUID leaf 0xD; without XSAVE the
 * trampoline falls back to FXSAVE (x87 + SSE). */
static void xsave_setup(void)
{
	unsigned a, b, c, d;
	uint32_t lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE))
		return;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	__cpuid_count(0xd, 0, a, b, c, d);
	/* Leave out AMX tile state (bits 17, 18): the shim never touches it. */
	cs_xsave_mask = (((uint64_t)hi << 32) | lo) & ~((1ull << 17) | (1ull << 18));
	cs_xsave_size = b + 64;
}

/* One patching pass at a time, whichever thread's dlopen started it: the
 * passes read and add targets (a function entry-patched is left out of
 * the GOT pass), so two threads' passes must not interleave. */
static pthread_mutex_t patch_lock = PTHREAD_MUTEX_INITIALIZER;

/* Modules that went away: forget them and their targets, and make every
 * thread start a new site table, since its call-site addresses may come
 * back as another module's. */
static void forget_unloaded(void)
{
	if (cs_modules_forget_unloaded() > 0) {
		cs_entry_forget_unloaded();
		__atomic_fetch_add(&cs_g.epoch, 1, __ATOMIC_RELEASE);
	}
}

/* Depth of this thread's calls of the real dlopen and dlclose under the
 * wrappers below: while it is not 0, the thread holds the loader's lock
 * (a library's constructor or destructor runs). */
static __thread unsigned in_loader;
/* A forget of unloaded modules that could not wait for patch_lock. */
static int forget_wanted;

/* Takes patch_lock; 0 when it must not wait for it.  A pass holding it
 * takes holds on modules (dlopen RTLD_NOLOAD), which wait for the
 * loader's lock: a thread inside dlopen or dlclose (a constructor's
 * nested dlopen) waiting for patch_lock then hung both threads.  Such a
 * thread only tries: the outer dlopen's own pass, after its constructors,
 * patches what the nested one loaded (their calls until then are not
 * measured), and a skipped forget is made by the next pass. */
static int lock_patching(void)
{
	if (!in_loader) {
		pthread_mutex_lock(&patch_lock);
		return 1;
	}
	return pthread_mutex_trylock(&patch_lock) == 0;
}

/* Entry patching first: GOT slots of functions it patched stay as they
 * are, so no call is counted twice. */
static void patch_all(void)
{
	int held = 0, got_held = 0;

	if (!lock_patching())
		return;
	if (cs_g.settings.hook & CS_HOOK_ENTRY)
		cs_entry_patch_all(&held);
	if (cs_g.settings.hook & CS_HOOK_GOT)
		cs_got_patch_all(&got_held);
	/* Dropping a pass's hold on a module may have unloaded it. */
	if (held || got_held || __atomic_exchange_n(&forget_wanted, 0, __ATOMIC_ACQ_REL))
		forget_unloaded();
	pthread_mutex_unlock(&patch_lock);
}

static void report_unmatched(void)
{
	unsigned i;

	for (i = 0; i < cs_g.settings.ntargets; i++) {
		const struct cs_target_pattern *tp = &cs_g.settings.targets[i];
		int exact = !strcmp(tp->glob, tp->ifunc_name);
		/* Each function counts under the first pattern it matches: a
		 * later one it also matches (mall*,malloc) matched nothing.
		 * Known from the names taken (cs_settings_taken), not from the
		 * pattern's text: mem*,memcpyy said a misspelt target was
		 * taken by mem*. */
		int first = (int)tp->taken_by - 1;

		if (!tp->matched && tp->ifuncs && exact)
			cs_log("'%s' is an IFUNC (its implementation is chosen at load time): "
			       "entry patching cannot wrap it; CACHESHIM_HOOK=got or both wraps "
			       "its calls",
			       tp->glob);
		else if (tp->ifuncs && exact)
			/* memcpy: memcpy@GLIBC_2.2.5 is a function, the default
			 * memcpy@@GLIBC_2.14 that programs link to an IFUNC (a
			 * review helper). */
			cs_log("'%s' is also an IFUNC (its implementation is chosen at load "
			       "time), likely the version programs call: entry patching wraps "
			       "only its other version; CACHESHIM_HOOK=got or both wraps its calls",
			       tp->glob);
		else if (tp->ifuncs && !exact)
			cs_log("target '%s' names %u IFUNC%s (%s%s) that entry patching cannot "
			       "wrap (the implementation is chosen at load time); "
			       "CACHESHIM_HOOK=got or both wraps their calls",
			       tp->glob, tp->ifuncs, tp->ifuncs > 1 ? "s" : "", tp->ifunc_name,
			       tp->ifuncs > 1 ? ", ..." : "");
		else if (tp->never && tp->matched == tp->never && cs_settings_is_glob(tp))
			cs_log("target '%s' matched only functions that are never wrapped ('%s'%s: "
			       "they return twice, look at their caller or are not entered by a "
			       "call)",
			       tp->glob, tp->never_name, tp->never > 1 ? ", ..." : "");
		else if (!tp->matched && first >= 0 && first != (int)i)
			cs_log("target '%s' is taken by the earlier target '%s'", tp->glob,
			       cs_g.settings.targets[first].glob);
		else if (!tp->matched && cs_g.settings.say_unmatched)
			cs_log("target '%s' matched no function in any loaded module (yet)",
			       tp->glob);
	}
}

/* Records the targets again in a new file (after fork). */
static void rewrite_targets(void)
{
	unsigned i;

	for (i = 0; i < cs_g.ntargets; i++) {
		struct cs_target *t = &cs_g.targets[i];
		struct cs_target_block *old = t->block, *b;

		b = cs_output_reserve(sizeof(*b));
		if (!b) {
			t->block = NULL;
			continue;
		}
		memcpy((char *)b + sizeof(b->hdr), (char *)old + sizeof(old->hdr),
		       sizeof(*b) - sizeof(b->hdr));
		/* A module unloaded before the fork is not in the child's
		 * file (cs_modules_save copies the loaded ones): its targets,
		 * named still for the parent's calls, name no module here (a
		 * file called damaged, test_fork_unloaded.sh). */
		if (b->module && !cs_modules_in_file(b->module))
			b->module = 0;
		cs_output_publish(b, CS_BLOCK_TARGET);
		t->block = b;
	}
}

/* fork: from our prepare handler (the last prepare handler to run) to our
 * child handler (the first child handler), the calls a child makes (glibc's
 * own after fork, when targeted) would be measured into the parent's file,
 * which is shared memory, into the site blocks the parent's thread goes on
 * updating: counts of both processes mixed, and torn.  So the forking
 * thread passes every call through meanwhile: the guard is held, with a
 * frame no call can be above (guard_left in hotpath.c).  Per thread: two
 * threads may fork at once. */
static __thread unsigned fork_guard;
static __thread uintptr_t fork_guard_frame;

static void before_fork(void)
{
	fork_guard = cs_tls_guard;
	fork_guard_frame = cs_tls_guard_frame;
	cs_tls_guard++;
	cs_tls_guard_frame = UINTPTR_MAX;
}

static void after_fork_parent(void)
{
	cs_tls_guard = fork_guard;
	cs_tls_guard_frame = fork_guard_frame;
}

/* fork's parent handler: as after_fork_parent, once the forking thread's
 * state is written again (cs_thread_after_fork_parent). */
static void after_fork_in_parent(void)
{
	if (cs_g.enabled)
		cs_thread_after_fork_parent();
	after_fork_parent();
}

/* In a forked child: whether another thread of the parent held lock at
 * the fork (it is held for good here).  What it guards may be half
 * written then. */
static int held_at_fork(pthread_mutex_t *lock)
{
	if (pthread_mutex_trylock(lock))
		return 1;
	pthread_mutex_unlock(lock);
	return 0;
}

/* A forked child: the parent's counters and report file are not ours.
 * Keep the target list, open a file of our own, re-record modules and
 * targets there; threads set up again at their next call. */
static void after_fork_child(void)
{
	static struct cs_target_block copies[CS_MAX_TARGETS];
	int saved_errno = errno; /* fork() returned 0: the child's errno is the program's */
	unsigned i;
	int cancel;

	cs_unwind_after_fork();
	if (!cs_g.enabled) {
		after_fork_parent(); /* the guard as before the fork */
		return;
	}
	cs_g.enabled = 0;
	if (cs_g.sandboxed) {
		/* No file of its own without system calls: the child runs
		 * unmeasured and leaves the parent's file alone. */
		cs_g.generation++;
		cs_tls_thread = NULL;
		cs_g.hdr = NULL;
		after_fork_parent();
		return;
	}
	cs_g.pid = getpid();
	/* The forking thread's pending cancellation is the child's too. */
	cancel = cs_cancel_off();
	/* A pass's memo of the loads it handled, half cleared by a thread
	 * of the parent (its blocks freed, the pointers to them not yet
	 * forgotten), had them freed a second time by the child's next
	 * pass (test_fork_memo.sh): let go, the next pass looks at every
	 * module. */
	if (held_at_fork(&cs_entry_lock))
		cs_entry_memo_abandon();
	if (held_at_fork(&cs_got_lock))
		cs_got_memo_abandon();
	if (held_at_fork(&cs_modules_lock))
		cs_modules_memo_abandon();
	pthread_mutex_init(&patch_lock, NULL);
	pthread_mutex_init(&cs_entry_lock, NULL);
	pthread_mutex_init(&cs_got_lock, NULL);
	pthread_mutex_init(&cs_modules_lock, NULL);
	pthread_mutex_init(&cs_cache_lock, NULL);
	cs_g.nsites = 0;
	cs_site_rows_after_fork();
	cs_g.series_bytes = 0;
	cs_g.nested_bytes = 0;
	cs_threads_starting = 0; /* other threads' creations are not the child's */
	cs_g.generation++;
	cs_thread_after_fork();
	cs_side_after_fork();
	cs_modules_after_fork();
	/* The target blocks live in the parent's mapping: copy them first. */
	for (i = 0; i < cs_g.ntargets; i++) {
		if (cs_g.targets[i].block)
			copies[i] = *cs_g.targets[i].block;
		cs_g.targets[i].block = &copies[i];
	}
	cs_modules_save();
	cs_calibrate_save();
	cs_output_forget();
	if (cs_output_open() == 0) {
		cs_g.hdr->nevents = cs_g.nevents;
		memcpy(cs_g.hdr->events, cs_g.events, sizeof(cs_g.events));
		cs_modules_restore();
		rewrite_targets();
		cs_calibrate_restore();
		cs_g.enabled = 1;
		cs_thread_populate_stack();
		cs_side_populate();
	}
	cs_cancel_restore(cancel);
	errno = saved_errno;
	after_fork_parent(); /* the guard as before the fork */
}

/* _Fork (glibc 2.34): fork without the fork handlers, async-signal-safe,
 * so its child may be a signal handler's, or one of a process whose other
 * threads held locks: it cannot set up a file of its own as a fork child
 * does (locks, malloc).  Left alone, its calls would be measured into the
 * parent's file (shared memory), mixed into the parent's counts and
 * tearing them.  So the child runs unmeasured: plain stores only.  The
 * real _Fork is looked up in the constructor (dlsym is not
 * async-signal-safe), or at the first call if that comes earlier; glibc's
 * own fork calls its _Fork directly, not through this. */
static pid_t (*real_Fork)(void);

CS_EXPORT pid_t _Fork(void)
{
	pid_t pid;

	/* Called before our constructor (a library's constructor can run
	 * first): look it up now, which is not async-signal-safe, but so
	 * early no signal handler of the program's is likely to fork. */
	if (!real_Fork)
		real_Fork = (pid_t(*)(void))dlsym(RTLD_NEXT, "_Fork");
	if (!real_Fork) {
		errno = ENOSYS;
		return -1;
	}
	before_fork();
	pid = real_Fork();
	if (pid == 0) {
		cs_g.enabled = 0; /* no new thread or call site sets up */
		cs_g.generation++; /* the parent's calls in flight return unmeasured */
		cs_tls_thread = NULL; /* its calls pass through */
	}
	after_fork_parent(); /* the guard as before the fork */
	return pid;
}

int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
		      void *dso);

static void program_path(void)
{
	ssize_t n = readlink("/proc/self/exe", cs_g.hdr_program, sizeof(cs_g.hdr_program) - 1);

	cs_g.hdr_program[n > 0 ? n : 0] = '\0';
	if (n <= 0)
		strcpy(cs_g.hdr_program, "unknown");
}

__attribute__((constructor)) static void cs_init(void)
{
	int saved_errno = errno;

	/* Wanted even when not profiling: _Fork, _exit and _Exit are exported
	 * either way. */
	real_Fork = (pid_t(*)(void))dlsym(RTLD_NEXT, "_Fork");
	cs_quickexit_init();
	cs_unwind_init();
	/* Never act inside setuid/setgid programs; nor under a seccomp
	 * filter a library's constructor installed before this ran, which
	 * refuses system calls of the shim's (shim/sandbox.c). */
	if (getauxval(AT_SECURE) || __atomic_load_n(&cs_g.sandboxed, __ATOMIC_ACQUIRE)) {
		errno = saved_errno;
		return;
	}
	cs_guard_take();
	cs_log_init();
	cs_g.pid = getpid();
	if (cs_settings_parse(&cs_g.settings, env) < 0 && !cs_g.settings.ntargets)
		goto out;
	if (!cs_g.settings.ntargets) {
		cs_log("CACHESHIM_TARGETS is not set or names no function; not profiling");
		goto out;
	}
	cs_window = cs_g.settings.window;
	/* Said because nothing else would show it: the target just reads
	 * whatever lies past the copy. */
	if (cs_window < CS_DEFAULT_WINDOW && !cs_g.settings.quiet)
		cs_log("CACHESHIM_WINDOW=%u: a wrapped function reading more than %u bytes of "
		       "stack arguments (large structs by value, long variadic lists) reads "
		       "garbage past them",
		       (unsigned)cs_window, (unsigned)cs_window);
	program_path();
	xsave_setup();
	cs_side_init();
	cs_thread_stack_main();
	if (cs_output_open() < 0)
		goto out;
	cs_events_setup(&cs_g.settings, cs_g.hdr);
	/* Sites may use at most half the file (as made: limits on file size
	 * and address space can make it smaller than asked): the other half
	 * is for series, nested blocks and the overflow rows. */
	cs_g.max_blocks = cs_g.hdr->capacity / 2 / cs_site_block_size(cs_g.nevents);
	cs_g.max_sites = cs_g.settings.max_sites ? cs_g.settings.max_sites : cs_g.max_blocks;
	memcpy(cs_g.events, cs_g.hdr->events, sizeof(cs_g.events));
	if (cs_stubs_init() < 0 || cs_thread_init() < 0)
		goto out;
	/* For no library (dso NULL), as the seal at exit: pthread_atfork ties
	 * the handlers to this one, and its finalization (after cs_fini,
	 * before the destructors of the libraries the program linked)
	 * unregisters them; a fork in one of those destructors then left the
	 * child measuring into the parent's file, both processes tearing
	 * its counts. */
	__register_atfork(before_fork, after_fork_in_parent, after_fork_child, NULL);
	cs_modules_scan();
	cs_unwind_accessors(); /* libgcc_s of a C++ program: there from the start */
	cs_g.enabled = 1;
	cs_quickexit_register();
	patch_all();
	report_unmatched();
	/* Measured calls need the guard down.  The calibration target is
	 * added under the patching lock like any other. */
	cs_guard_drop();
	pthread_mutex_lock(&patch_lock);
	cs_calibrate();
	pthread_mutex_unlock(&patch_lock);
	errno = saved_errno;
	return;
out:
	cs_guard_drop();
	errno = saved_errno;
}

int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

static void seal_at_exit(void *unused)
{
	(void)unused;
	/* The shim's own getpid, close, ftruncate... may be targets: they
	 * must not be measured into the file being sealed. */
	cs_guard_take();
	if (cs_g.enabled && getpid() == cs_g.pid)
		cs_output_close();
	cs_guard_drop();
}

/* Runs inside exit, in glibc's pass over the destructors (the library is
 * NODELETE: never at a dlclose).  A preloaded library is finalized
 * before the libraries the program linked (it was initialized after
 * them), and before those it dlopened and never closed: calls of targets
 * in their destructors found the file sealed (counted as not recorded).
 * So the seal is an exit handler registered now, which glibc runs once
 * the handler running the destructors returns (it runs the handlers
 * registered meanwhile).  Registered for no library (dso NULL): atexit
 * would tie it to this one, whose own finalization runs it at once.
 * Sealed here only if it cannot be registered. */
__attribute__((destructor)) static void cs_fini(void)
{
	int later;

	if (cs_g.sandboxed) {
		/* No system call (shim/sandbox.c); a forked child has
		 * measuring off, and no file of its own. */
		if (cs_g.enabled)
			cs_output_seal_stores();
		return;
	}
	cs_guard_take(); /* getpid may be a target */
	later = cs_g.enabled && getpid() == cs_g.pid && __cxa_atexit(seal_at_exit, NULL, NULL) == 0;
	cs_guard_drop();
	if (!later)
		seal_at_exit(NULL);
}

/* The directory of the module holding address a ($ORIGIN as glibc sees it
 * for that module), or 0 if unknown. */
static int origin_of(const struct link_map *lm, char *dir, size_t size)
{
	char path[PATH_MAX], *slash;

	if (lm->l_name && lm->l_name[0]) {
		if (!realpath(lm->l_name, path))
			return 0;
	} else {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

		if (n <= 0)
			return 0;
		path[n] = '\0';
	}
	slash = strrchr(path, '/');
	if (!slash)
		return 0;
	*slash = '\0';
	return snprintf(dir, size, "%s", path[0] ? path : "/") < (int)size;
}

/* s with $ORIGIN and ${ORIGIN} replaced by origin, into out.  Returns 0 if
 * it does not fit. */
static int expand_origin(const char *s, size_t len, const char *origin, char *out, size_t size)
{
	size_t n = 0, olen = strlen(origin);

	while (len) {
		size_t skip = !strncmp(s, "$ORIGIN", 7) && len >= 7	 ? 7
			      : !strncmp(s, "${ORIGIN}", 9) && len >= 9 ? 9
									  : 0;

		if (skip) {
			if (n + olen >= size)
				return 0;
			memcpy(out + n, origin, olen);
			n += olen;
		} else {
			if (n + 1 >= size)
				return 0;
			out[n++] = *s;
			skip = 1;
		}
		s += skip;
		len -= skip;
	}
	out[n] = '\0';
	return 1;
}

/* glibc resolves a dlopen name on behalf of the function that called
 * dlopen: $ORIGIN is that module's directory, and a bare name is searched
 * along its DT_RUNPATH (or DT_RPATH).  Through this wrapper the caller is
 * libcacheshim, so both went wrong (a plugin host's dlopen failed).  This
 * works out what the caller would get: file with $ORIGIN expanded (when
 * it holds one), or else, for a bare name, the first existing file along
 * the caller's run path.  Returns 1 with out filled, 0 to use file as is. */
static int caller_path(const char *file, const void *caller, int search, char *out, size_t size)
{
	const ElfW(Dyn) *d;
	struct link_map *lm = NULL;
	const char *strtab = NULL, *run = NULL, *rpath = NULL, *p;
	char origin[PATH_MAX], dir[PATH_MAX];
	Dl_info info;

	if (!file || !dladdr1(caller, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm ||
	    !origin_of(lm, origin, sizeof(origin)))
		return 0;
	if (strchr(file, '$'))
		return expand_origin(file, strlen(file), origin, out, size) && strcmp(out, file);
	if (!search || strchr(file, '/'))
		return 0;
	for (d = lm->l_ld; d && d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_STRTAB)
			strtab = (const char *)d->d_un.d_ptr;
		else if (d->d_tag == DT_RUNPATH)
			run = (const char *)(uintptr_t)d->d_un.d_val;
		else if (d->d_tag == DT_RPATH)
			rpath = (const char *)(uintptr_t)d->d_un.d_val;
	}
	if (!strtab || (!run && !rpath))
		return 0;
	/* Offsets into the (relocated) string table. */
	p = strtab + (uintptr_t)(run ? run : rpath);
	while (*p) {
		size_t len = strcspn(p, ":");

		if (len && expand_origin(p, len, origin, dir, sizeof(dir)) &&
		    snprintf(out, size, "%s/%s", dir, file) < (int)size && access(out, F_OK) == 0)
			return 1;
		p += len;
		if (*p == ':')
			p++;
	}
	return 0;
}

/* dlopen: patch what the new module (and its dependencies) bring before
 * the caller can use the handle.  The name is resolved as for the real
 * caller (caller_path), see docs/design.md. */
CS_EXPORT void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	const void *caller = __builtin_return_address(0);
	char path[PATH_MAX];
	void *h;
	int saved, ours;

	if (!real)
		real = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	if (!real)
		return NULL;
	/* The shim's own loads (libpfm4, held modules) use full paths. */
	ours = cs_tls_guard != 0;
	cs_guard_take(); /* errno is read through a function that may be a target */
	saved = errno;
	if (!ours && file && strchr(file, '$') && caller_path(file, caller, 0, path, sizeof(path)))
		file = path;
	errno = saved;
	cs_guard_drop();
	in_loader++;
	h = real(file, mode);
	if (!h && !ours && file && file != path && !strchr(file, '/')) {
		/* Not found where libcacheshim's own search looks: try the
		 * caller's run path. */
		int found;

		cs_guard_take();
		saved = errno;
		found = caller_path(file, caller, 1, path, sizeof(path));
		errno = saved;
		cs_guard_drop();
		if (found)
			h = real(path, mode);
	}
	in_loader--;
	if (!ours)
		cs_modules_loader_usable(); /* the real dlopen got its lock */
	if (h && cs_g.enabled && !cs_g.sandboxed && !cs_tls_guard) {
		/* Signals stay open (not cs_guard_take_quiet): the pass
		 * mallocs, and a program's malloc may wait for a thread that
		 * waits for this one's signal handler (a garbage collector
		 * stopping the world). */
		int cancel;

		cs_guard_take();
		saved = errno;
		cancel = cs_cancel_off();
		cs_modules_scan();
		patch_all();
		/* The module may have brought libgcc_s (a C++ plugin). */
		cs_unwind_flush();
		cs_cancel_restore(cancel);
		errno = saved;
		cs_guard_drop();
	}
	return h;
}

/* dlsym's real function (shim/dlsym.S jumps to it for RTLD_NEXT). */
void *(*cs_real_dlsym)(void *, const char *);

static void *no_dlsym(void *handle, const char *name)
{
	(void)handle;
	(void)name;
	return NULL;
}

void *(*cs_dlsym_init(void))(void *, const char *)
{
	void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");

	if (!p)
		p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	__atomic_store_n(&cs_real_dlsym, p ? (void *(*)(void *, const char *))p : no_dlsym,
			 __ATOMIC_RELEASE);
	return cs_real_dlsym;
}

/* Whether dlsym must look at its answer: a module's handle (not
 * RTLD_NEXT or RTLD_DEFAULT) and the name of a function whose GOT slots
 * point at its stub.  Every other lookup is the real dlsym's alone,
 * entered by a jump with the caller's return address (shim/dlsym.S):
 * glibc takes the caller's scope and records a dependency of the caller
 * from the caller.  Answered from here, dlsym(RTLD_DEFAULT) in a plugin
 * loaded RTLD_LOCAL missed the plugin's own libraries and every library
 * found became undeletable; asked through the main program's handle
 * instead, no dependency was recorded and a library the plugin used was
 * unloaded under it.  So RTLD_DEFAULT answers the real address, even of a
 * GOT-hooked target.  No lock: targets are only appended, an entry
 * complete before ntargets counts it. */
int cs_dlsym_wanted(void *handle, const char *name)
{
	unsigned i, n;
	int wanted = 0;

	if (handle == RTLD_DEFAULT || !name || cs_tls_guard || !cs_g.enabled)
		return 0;
	cs_guard_take(); /* strcmp may be a target */
	n = __atomic_load_n(&cs_g.ntargets, __ATOMIC_ACQUIRE);
	for (i = 0; i < n && !wanted; i++) {
		const struct cs_target *t = &cs_g.targets[i];

		wanted = t->name[0] == name[0] && t->block && (t->block->how & CS_HOOK_GOT) &&
			 !strcmp(t->name, name);
	}
	cs_guard_drop();
	return wanted;
}

/* dlsym of a module's handle and a name cs_dlsym_wanted said yes to: the
 * real answer, or the stub of the function of that name if its GOT slots
 * and data words point at its stub (so both answers agree).  A handle's
 * lookup is the handle's scope whoever asks, and records no dependency.
 * An alias at the same address keeps the real answer, as its own GOT
 * slots do.  The patching lock is only tried: a dlsym in a constructor
 * holds the loader's lock, which a patching pass holding ours may be
 * waiting for. */
void *cs_dlsym_mapped(void *handle, const char *name)
{
	void *p;
	uint64_t a;
	int i;

	cs_guard_take();
	p = cs_real_dlsym(handle, name);
	a = (uint64_t)(uintptr_t)p;
	if (p && pthread_mutex_trylock(&patch_lock) == 0) {
		for (i = cs_target_at(a); i >= 0; i = cs_g.targets[i].next_same) {
			const struct cs_target *t = &cs_g.targets[i];

			if (!t->unloaded && t->block && (t->block->how & CS_HOOK_GOT) &&
			    !strcmp(t->name, name) && !cs_entry_is_patched(a)) {
				p = t->stub;
				break;
			}
		}
		pthread_mutex_unlock(&patch_lock);
	}
	cs_guard_drop();
	return p;
}

/* dladdr of an address in a GOT-hooked target's stub answers for the same
 * offset in the function: stubs live in anonymous memory, so dladdr of a
 * pointer the program got from a patched slot or from dlsym found no
 * module and failed.  The symbol's address is then the stub, as the
 * program sees the function (dli_saddr == p for p = dlsym(...)). */
struct unstubbed {
	const void *addr; /* what to ask the real dladdr */
	const void *stub, *fn; /* the stub and its function; NULL: no stub */
};

static struct unstubbed unstub(const void *a)
{
	struct unstubbed u = {a, NULL, NULL};
	uint64_t off;
	int i = cs_stub_containing((uint64_t)(uintptr_t)a, &off);

	if (i >= 0 && (unsigned)i < __atomic_load_n(&cs_g.ntargets, __ATOMIC_ACQUIRE)) {
		u.stub = (const char *)a - off;
		u.fn = (const void *)(uintptr_t)cs_g.targets[i].addr;
		u.addr = (const char *)u.fn + off;
	}
	return u;
}

static void restub(const struct unstubbed *u, Dl_info *info)
{
	if (u->stub && info->dli_saddr == u->fn)
		info->dli_saddr = (void *)(uintptr_t)u->stub;
}

CS_EXPORT int dladdr(const void *addr, Dl_info *info)
{
	static int (*real)(const void *, Dl_info *);
	struct unstubbed u = unstub(addr);
	int ret;

	if (!real)
		real = (int (*)(const void *, Dl_info *))dlsym(RTLD_NEXT, "dladdr");
	ret = real ? real(u.addr, info) : 0;
	if (ret)
		restub(&u, info);
	return ret;
}

CS_EXPORT int dladdr1(const void *addr, Dl_info *info, void **extra, int flags)
{
	static int (*real)(const void *, Dl_info *, void **, int);
	struct unstubbed u = unstub(addr);
	int ret;

	if (!real)
		real = (int (*)(const void *, Dl_info *, void **, int))dlsym(RTLD_NEXT, "dladdr1");
	ret = real ? real(u.addr, info, extra, flags) : 0;
	if (ret)
		restub(&u, info);
	return ret;
}

/* dlclose: when a module really goes away, forget it and its targets. */
CS_EXPORT int dlclose(void *handle)
{
	static int (*real)(void *);
	int ret, saved;

	if (!real)
		real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
	if (!real)
		return -1;
	in_loader++;
	ret = real(handle);
	in_loader--;
	if (!cs_tls_guard)
		cs_modules_loader_usable();
	if (ret == 0 && cs_g.enabled && !cs_g.sandboxed && !cs_tls_guard) {
		int cancel;

		cs_guard_take();
		saved = errno;
		cancel = cs_cancel_off();
		if (lock_patching()) {
			forget_unloaded();
			pthread_mutex_unlock(&patch_lock);
		} else {
			__atomic_store_n(&forget_wanted, 1, __ATOMIC_RELEASE);
		}
		cs_cancel_restore(cancel);
		errno = saved;
		cs_guard_drop();
	}
	return ret;
}
