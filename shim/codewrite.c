/* SPDX-License-Identifier: MIT */
/* Writing code into the running process (entry patches), and mapping code
 * within rel32 reach of a module.
 *
 * Bytes are written through /proc/self/mem, which writes read-only text
 * without changing any page's permissions; where that fails, exactly the
 * pages concerned become RWX for the store, never non-executable, since
 * another thread may be running them.  With one thread in the process the
 * bytes are simply written.  With others, each patch is written int3
 * first: the int3 at its first byte, membarrier(SYNC_CORE), the other
 * bytes, a sync, the first byte, a sync; meanwhile a SIGTRAP handler sends
 * a thread that hits one of those int3s where the finished patch would
 * send it.  A thread that blocks SIGTRAP would be killed by such an int3:
 * then nothing is written ("deferred").  The handler stays installed after
 * a live write: a thread preempted between its int3 and the signal's
 * delivery must still find it (it passes any other SIGTRAP on to the
 * program's own disposition). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "shim/internal.h"

#define REACH (1ull << 31) /* rel32 */

/* /proc/self/mem, open during one cs_code_write only: a descriptor kept
 * would follow the parent after a fork, and could be closed and reused
 * for a file of the program's. */
static int mem_fd = -1;

#define MAX_LIVE 4096 /* patch points ever written live */

/* Patch points written while other threads ran, and where a thread that
 * hit one of their int3s goes.  Append-only: the handler reads it. */
static struct {
	uint64_t at, redirect;
} live[MAX_LIVE];
static size_t nlive;
static struct sigaction old_trap; /* the program's SIGTRAP disposition */

/* Makes the pages of [addr, addr + n) prot. */
static int protect(uint64_t addr, size_t n, int prot)
{
	uint64_t pg = (uint64_t)getpagesize();
	uint64_t lo = addr & ~(pg - 1), hi = (addr + n + pg - 1) & ~(pg - 1);

	return mprotect((void *)(uintptr_t)lo, hi - lo, prot) < 0 ? -errno : 0;
}

/* Writes n bytes of code at addr.  Returns 0 or -errno. */
static int write_code(uint64_t addr, const void *bytes, size_t n)
{
	if (mem_fd >= 0 && pwrite(mem_fd, bytes, n, (off_t)addr) == (ssize_t)n)
		return 0;
	if (protect(addr, n, PROT_READ | PROT_WRITE | PROT_EXEC) < 0)
		return -EPERM;
	memcpy((void *)(uintptr_t)addr, bytes, n);
	protect(addr, n, PROT_READ | PROT_EXEC);
	return 0;
}

static long membarrier(int cmd)
{
	return syscall(SYS_membarrier, cmd, 0, 0);
}

/* Serializes instruction fetch on every CPU running one of our threads.
 * Returns 0 or -errno (a kernel without SYNC_CORE). */
static int sync_cores(void)
{
	static int registered;

	if (!registered) {
		if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) < 0)
			return -errno;
		registered = 1;
	}
	return membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) < 0 ? -errno : 0;
}

/* A thread ran into the int3 of a patch being written: send it where the
 * finished patch will (the stack is as it was at the patch point). */
static void on_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uint64_t at = (uint64_t)uc->uc_mcontext.gregs[REG_RIP] - 1;
	size_t i, n = __atomic_load_n(&nlive, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++) {
		if (live[i].at == at) {
			uc->uc_mcontext.gregs[REG_RIP] = (greg_t)live[i].redirect;
			return;
		}
	}
	/* Not ours: what the program would have had. */
	if (old_trap.sa_flags & SA_SIGINFO) {
		old_trap.sa_sigaction(sig, si, ctx);
	} else if (old_trap.sa_handler == SIG_DFL) {
		sigaction(SIGTRAP, &old_trap, NULL);
		raise(SIGTRAP);
	} else if (old_trap.sa_handler != SIG_IGN) {
		old_trap.sa_handler(sig);
	}
}


/* How many threads of the process block SIGTRAP, counted up to more than
 * limit (the scan stops there); more than limit when it cannot be told. */
static int trap_blockers(int limit)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int blocked = 0;

	if (!d)
		return limit + 1;
	while (blocked <= limit && (e = readdir(d))) {
		char path[300], buf[4096], *p;
		ssize_t n;
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue; /* the thread ended */
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		p = strstr(buf, "\nSigBlk:");
		if (!p || (strtoull(p + 8, NULL, 16) & (1ull << (SIGTRAP - 1))))
			blocked++;
	}
	closedir(d);
	return blocked;
}

/* True if some thread blocks SIGTRAP, once no thread is being created.
 * glibc's pthread_create blocks every signal around the clone, in the
 * creating thread and in the new one until it starts: on a busy machine a
 * creator preempted there made a thread dlopening in a loop defer (and so
 * not count) several loads in a row.  That moment ends: wait for it (1 s
 * at most), but only while the threads blocking SIGTRAP may all be such
 * (no more of them than threads being made): one that blocks it for good
 * (a sigwait thread) defers the patches at once, as before, however many
 * threads are being made meanwhile (dlopen took ~10x longer waiting). */
static int trap_blocked(void)
{
	struct timespec ms = {0, 1000000};
	int i, starting, n;

	for (i = 0;; i++) {
		starting = __atomic_load_n(&cs_threads_starting, __ATOMIC_ACQUIRE);
		n = trap_blockers(starting);
		if (!n)
			return 0;
		if (n > starting || i == 1000)
			return 1;
		nanosleep(&ms, NULL);
	}
}

static int write_live(struct cs_code_patch *p, size_t n)
{
	struct sigaction sa, prev;
	size_t i, base = nlive;
	int ok = 0;

	for (i = 0; i < n; i++) {
		live[base + i].at = p[i].at;
		live[base + i].redirect = p[i].redirect;
	}
	__atomic_store_n(&nlive, base + n, __ATOMIC_RELEASE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_trap;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	sigaction(SIGTRAP, &sa, &prev);
	/* The program may have set a disposition of its own since. */
	if (!(prev.sa_flags & SA_SIGINFO) || prev.sa_sigaction != on_trap)
		old_trap = prev;
	for (i = 0; i < n; i++)
		p[i].written = write_code(p[i].at, "\xcc", 1) == 0;
	sync_cores();
	for (i = 0; i < n; i++) {
		if (p[i].written && write_code(p[i].at + 1, p[i].bytes + 1, p[i].n - 1) < 0) {
			/* Cannot happen after the first byte was written; if
			 * it does, the int3 stays and the handler redirects. */
			continue;
		}
	}
	sync_cores();
	for (i = 0; i < n; i++) {
		if (p[i].written && write_code(p[i].at, p[i].bytes, 1) == 0)
			ok++;
	}
	sync_cores();
	return ok;
}

static int write_all(struct cs_code_patch *p, size_t n, int fresh, const char **why)
{
	size_t i;
	int ok = 0;

	if (cs_proc_status("Threads") == 1) {
		for (i = 0; i < n; i++) {
			p[i].written = write_code(p[i].at, p[i].bytes, p[i].n) == 0;
			ok += p[i].written;
		}
		return ok;
	}
	/* A thread could be stopped between two instructions of a window of
	 * a module that runs already: only brand-new modules are patched
	 * while other threads run. */
	if (!fresh) {
		*why = "deferred: other threads may be running this module's code";
		return -1;
	}
	if (trap_blocked()) {
		*why = "deferred: a thread blocks SIGTRAP";
		return -1;
	}
	if (sync_cores() < 0) {
		*why = "deferred: threads are running and membarrier(SYNC_CORE) is missing";
		return -1;
	}
	if (n > MAX_LIVE - nlive) {
		*why = "deferred: too many entries patched while threads run";
		return -1;
	}
	return write_live(p, n);
}

int cs_code_write(struct cs_code_patch *p, size_t n, int fresh, const char **why)
{
	size_t i;
	int ret;

	*why = NULL;
	for (i = 0; i < n; i++)
		p[i].written = 0;
	mem_fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ret = write_all(p, n, fresh, why);
	if (mem_fd >= 0)
		close(mem_fd);
	mem_fd = -1;
	return ret;
}

/* Bytes from the lowest to the highest address of [lo, hi) and the
 * mapping [p, p + size). */
static uint64_t span(uint64_t lo, uint64_t hi, uint64_t p, uint64_t size)
{
	uint64_t a = p < lo ? p : lo, b = p + size > hi ? p + size : hi;

	return b - a;
}

/* Maps size bytes at an address chosen by probing 1 MB steps above the
 * module, then below it; NULL when nothing within reach is free.  The
 * program's heap (brk) grows up from just past the main executable (right
 * after it where the break is not randomized: under gdb, setarch -R,
 * kernel.randomize_va_space < 2): a mapping of ours above a module the
 * break follows would stop sbrk there (ENOMEM; malloc falls back to mmap,
 * a program's own sbrk fails).  For that module: below it first, then
 * above it from the far end of reach down, leaving the heap its room. */
static void *map_probing(uint64_t lo, uint64_t hi, size_t size, int prot)
{
	uint64_t step = 1ull << 20, a, brk_now = (uint64_t)(uintptr_t)sbrk(0);
	uint64_t heap_top = (brk_now + step - 1) & ~(step - 1);
	int heap_follows = brk_now != (uint64_t)-1 && brk_now >= hi && brk_now - hi < REACH;
	int i;

	/* Above the module first (the heap usually follows the program),
	 * then below it. */
	for (i = 0; i < 2; i++) {
		int below = heap_follows ? i == 0 : i == 1;

		for (a = 0; a < (heap_follows && !below ? REACH : REACH / 2); a += step) {
			uint64_t want = !below ? ((hi + step - 1) & ~(step - 1)) + a
					       : ((lo - size) & ~(step - 1)) - a;
			void *p;

			if (below && lo < size + a + step)
				break;
			if (!below && heap_follows) {
				want = ((lo + REACH - size - 1) & ~(step - 1)) - a;
				if (want < heap_top + step)
					break;
			}
			p = mmap((void *)(uintptr_t)want, size, prot,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
				 -1, 0);
			if (p == MAP_FAILED)
				continue;
			if (span(lo, hi, (uint64_t)(uintptr_t)p, size) < REACH)
				return p;
			munmap(p, size); /* an old kernel took the hint as a hint */
		}
	}
	return NULL;
}

/* Entry stubs of many loads share arenas: ARENA_BYTES of address space
 * reserved (PROT_NONE) near a module and handed out front to back, a few
 * hundred bytes per load.  With a mapping of its own per load, one at
 * each 1 MB step, a library loaded and unloaded ~1,700 times had filled
 * its 2 GB neighbourhood (and kept a page per load).  Bytes that held
 * stubs are never handed out again (a retired load's stubs might still be
 * run by a thread that has not left them), so an arena only ever fills.
 * Pages are made executable as stubs reach them; the rest of a page
 * whose first stubs are live is written through /proc/self/mem, since
 * making it writable would take it from threads running those.  Callers
 * hold cs_entry_lock. */
#define ARENA_BYTES (1ull << 20)
#define MAX_ARENAS 4096
#define PAGE 4096ull

static struct arena {
	uint64_t base, used;
	uint64_t exec_end; /* pages below are executable (page-aligned) */
} arenas[MAX_ARENAS];
static unsigned narenas;
static int mem_writable = -1; /* /proc/self/mem can be written; -1: not tried */

static struct arena *arena_of(uint64_t p)
{
	unsigned i;

	for (i = 0; i < narenas; i++)
		if (p >= arenas[i].base && p < arenas[i].base + ARENA_BYTES)
			return &arenas[i];
	return NULL;
}

static int write_mem(uint64_t at, const void *src, size_t n)
{
	int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ssize_t w = -1;

	if (fd >= 0) {
		w = pwrite(fd, src, n, (off_t)at);
		close(fd);
	}
	return w == (ssize_t)n ? 0 : -EIO;
}

/* Takes size bytes of an arena within reach of [lo, hi).  Without a
 * writable /proc/self/mem, each load starts on a page of its own. */
static void *take(struct arena *a, uint64_t lo, uint64_t hi, size_t size)
{
	uint64_t used = a->used, p;

	if (mem_writable < 0) {
		int fd = open("/proc/self/mem", O_RDWR | O_CLOEXEC);

		mem_writable = fd >= 0;
		if (fd >= 0)
			close(fd);
	}
	if (!mem_writable && a->base + used < a->exec_end)
		used = a->exec_end - a->base;
	p = a->base + used;
	if (used + size > ARENA_BYTES || span(lo, hi, p, size) >= REACH)
		return NULL;
	a->used = used + size;
	return (void *)(uintptr_t)p;
}

void *cs_code_map_near(uint64_t lo, uint64_t hi, size_t size)
{
	void *p;
	unsigned i;

	size = (size + 15) & ~(size_t)15;
	if (size > ARENA_BYTES / 4)
		return map_probing(lo, hi, size, PROT_READ | PROT_WRITE);
	/* Newest first: the arena the last load of this module used. */
	for (i = narenas; i-- > 0;) {
		p = take(&arenas[i], lo, hi, size);
		if (p)
			return p;
	}
	if (narenas == MAX_ARENAS)
		return map_probing(lo, hi, size, PROT_READ | PROT_WRITE);
	p = map_probing(lo, hi, ARENA_BYTES, PROT_NONE);
	if (!p)
		return NULL;
	arenas[narenas].base = (uint64_t)(uintptr_t)p;
	arenas[narenas].used = 0;
	arenas[narenas].exec_end = arenas[narenas].base;
	return take(&arenas[narenas++], lo, hi, size);
}

int cs_code_install(void *dst, const void *src, size_t n)
{
	uint64_t p = (uint64_t)(uintptr_t)dst, end = p + n, first, last;
	struct arena *a = arena_of(p);
	const char *from = src;

	if (!a) {
		/* A mapping of its own (cs_code_map_near): still writable. */
		memcpy(dst, src, n);
		return mprotect(dst, (n + PAGE - 1) & ~(PAGE - 1), PROT_READ | PROT_EXEC) < 0
			       ? -errno
			       : 0;
	}
	if (p < a->exec_end) {
		size_t k = (end < a->exec_end ? end : a->exec_end) - p;

		if (write_mem(p, from, k) < 0)
			return -EIO;
		p += k;
		from += k;
	}
	if (p == end)
		return 0;
	/* Pages nobody runs yet: writable for the copy, then executable. */
	first = p & ~(PAGE - 1);
	last = (end + PAGE - 1) & ~(PAGE - 1);
	if (mprotect((void *)(uintptr_t)first, last - first, PROT_READ | PROT_WRITE) < 0)
		return -errno;
	memcpy((void *)(uintptr_t)p, from, end - p);
	if (mprotect((void *)(uintptr_t)first, last - first, PROT_READ | PROT_EXEC) < 0)
		return -errno;
	if (last > a->exec_end)
		a->exec_end = last;
	return 0;
}

void cs_code_unmap_near(void *p, size_t size)
{
	uint64_t at = (uint64_t)(uintptr_t)p;
	struct arena *a = arena_of(at);

	size = (size + 15) & ~(size_t)15;
	if (!size)
		return;
	if (!a) {
		/* A mapping of its own: its pages from p on, if p starts one. */
		if (!(at & (PAGE - 1)))
			munmap(p, size);
		return;
	}
	/* The newest bytes handed out, which nothing runs: handed out again
	 * (executable pages among them are written over through
	 * /proc/self/mem, like any page with live stubs). */
	if (at + size == a->base + a->used)
		a->used -= size;
}
