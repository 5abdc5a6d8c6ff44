/* SPDX-License-Identifier: MIT */
/* Programs that sandbox themselves: once a program installs a seccomp
 * filter (sshd's privilege-separated child, libseccomp users), a system
 * call it does not make itself may kill it, and the shim's own
 * (getpid and gettid at a thread's set-up, sched_getaffinity for its
 * stack, perf_event_open, the report file's growth and seal) killed
 * programs that ran fine without it.  A filter present at start is the
 * environment's (systemd's SystemCallFilter=): the shim's probe of
 * perf_event_open handles that one (events.c).  One the program installs
 * later is seen here, by the prctl and syscall wrappers (shim/syscall.S),
 * before the kernel has it, and run on each system call the shim may make
 * (with the arguments a filter is likely to look at).  If it refuses one, from then on the shim makes
 * no system call of its own: calls that would need one (a new thread's or call site's
 * first, a new block) pass through and are counted as not recorded,
 * measured calls go on on call sites known already, and the file is
 * sealed at exit by stores alone (not trimmed).  A filter installed by a
 * raw syscall instruction (Chrome's sandbox) is not seen. */
#include <dlfcn.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "shim/internal.h"
#include "shim/rawsys.h"

/* The system calls the shim may make after start-up (slow paths, the
 * report file, thread set-up and teardown, patching after dlopen, the
 * seal), with the arguments a filter is likely to look at. */
static const struct {
	int nr;
	unsigned hot; /* CS_SB_*: made on the hot path, under a filter too */
	uint64_t arg1, arg2, arg3; /* as the shim passes them (fds, addresses: 0) */
} shim_calls[] = {
	{SYS_getpid, CS_SB_GETPID, 0, 0, 0},
	{SYS_brk, 0, 0, 0, 0},
	{SYS_getppid, 0, 0, 0, 0},
	{SYS_gettid, 0, 0, 0, 0},
	{SYS_sched_getaffinity, 0, 0, 0, 0},
	{SYS_perf_event_open, 0, 0, 0, 0},
	{SYS_read, CS_SB_READ, 0, 0, 0},
	{SYS_ioctl, 0, 0, 0, 0},
	{SYS_mmap, 0, 0, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS},
	{SYS_mmap, 0, 0, PROT_READ | PROT_WRITE, MAP_SHARED},
	{SYS_munmap, 0, 0, 0, 0},
	{SYS_mprotect, 0, 0, PROT_READ | PROT_WRITE, 0},
	{SYS_mprotect, 0, 0, PROT_READ | PROT_EXEC, 0},
	{SYS_madvise, 0, 0, MADV_POPULATE_WRITE, 0},
	{SYS_mincore, 0, 0, 0, 0},
	{SYS_rt_sigprocmask, 0, 0, 0, 0},
	{SYS_sigaltstack, CS_SB_SIGALTSTACK, 0, 0, 0},
	{SYS_openat, 0, 0, O_RDONLY | O_CLOEXEC, 0},
	{SYS_openat, 0, 0, O_RDWR | O_CLOEXEC, 0},
	{SYS_close, 0, 0, 0, 0},
	{SYS_fstat, 0, 0, 0, 0},
	{SYS_newfstatat, 0, 0, 0, 0},
	{SYS_ftruncate, 0, 0, 0, 0},
	{SYS_fallocate, 0, 0, 0, 0},
	{SYS_pwritev, 0, 0, 0, 0},
	{SYS_pwrite64, 0, 0, 0, 0},
	{SYS_fcntl, 0, F_DUPFD_CLOEXEC, 0, 0},
	{SYS_prlimit64, 0, RLIMIT_FSIZE, 0, 0},
	{SYS_prlimit64, 0, RLIMIT_NOFILE, 0, 0},
	{SYS_prlimit64, 0, RLIMIT_AS, 0, 0},
	{SYS_futex, CS_SB_FUTEX, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, 0},
	{SYS_sched_yield, 0, 0, 0, 0},
	{SYS_membarrier, 0, 0, 0, 0},
	{SYS_write, 0, 0, 0, 0},
	/* cs_log: SIGPIPE held back around its write (shim/log.c). */
	{SYS_rt_sigpending, 0, 0, 0, 0},
	{SYS_rt_sigtimedwait, 0, 0, 0, 0},
	{SYS_readlink, 0, 0, 0, 0},
	{SYS_getdents64, 0, 0, 0, 0},
	{SYS_lseek, 0, 0, 0, 0},
	{SYS_wait4, 0, 0, 0, 0},
};

#define PAGE 4096ul

/* Whether [p, p + n) can be read: each page asked of the kernel by a
 * futex wait that cannot wait (EFAULT where it cannot read; see
 * readable_window in hotpath.c).  The filter is the program's pointer,
 * and a bad one must fail its seccomp call, not crash us. */
static int readable(const void *p, size_t n)
{
	static const struct timespec now = {0, 0};
	uintptr_t a = (uintptr_t)p & ~(PAGE - 1), end = (uintptr_t)p + n;

	if (!p || end < (uintptr_t)p)
		return 0;
	for (; a < end; a += PAGE) {
		uintptr_t w = a < (uintptr_t)p ? ((uintptr_t)p & ~3ul) : a;

		if (cs_syscall6(SYS_futex, (long)w, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, (long)&now,
				0, 0) == -EFAULT)
			return 0;
	}
	return 1;
}

/* The action of classic BPF program f (n instructions) for system call nr
 * with arguments (0, arg1, arg2, arg3), as the kernel's seccomp would run it; a program it
 * would refuse (a bad jump, a load past seccomp_data) gives KILL. */
static uint32_t run_filter(const struct sock_filter *f, unsigned n, int nr, uint64_t arg1,
			   uint64_t arg2, uint64_t arg3)
{
	struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64,
				 .args = {0, arg1, arg2, arg3}};
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
	unsigned pc, steps = 0;

	for (pc = 0; pc < n && steps++ < 4096; pc++) {
		const struct sock_filter *i = &f[pc];
		uint32_t k = i->k, src = BPF_SRC(i->code) == BPF_X ? x : k;

		switch (BPF_CLASS(i->code)) {
		case BPF_LD:
		case BPF_LDX: {
			uint32_t v;

			if (BPF_MODE(i->code) == BPF_ABS) {
				if (BPF_SIZE(i->code) != BPF_W || k > sizeof(d) - 4 || k % 4)
					return SECCOMP_RET_KILL_PROCESS;
				memcpy(&v, (const char *)&d + k, 4);
			} else if (BPF_MODE(i->code) == BPF_IMM) {
				v = k;
			} else if (BPF_MODE(i->code) == BPF_MEM && k < BPF_MEMWORDS) {
				v = mem[k];
			} else if (BPF_MODE(i->code) == BPF_LEN) {
				v = sizeof(d);
			} else {
				return SECCOMP_RET_KILL_PROCESS;
			}
			if (BPF_CLASS(i->code) == BPF_LD)
				a = v;
			else
				x = v;
			break;
		}
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return SECCOMP_RET_KILL_PROCESS;
			mem[k] = BPF_CLASS(i->code) == BPF_ST ? a : x;
			break;
		case BPF_ALU:
			switch (BPF_OP(i->code)) {
			case BPF_ADD: a += src; break;
			case BPF_SUB: a -= src; break;
			case BPF_MUL: a *= src; break;
			case BPF_DIV:
				if (!src)
					return SECCOMP_RET_KILL_PROCESS;
				a /= src;
				break;
			case BPF_MOD:
				if (!src)
					return SECCOMP_RET_KILL_PROCESS;
				a %= src;
				break;
			case BPF_AND: a &= src; break;
			case BPF_OR: a |= src; break;
			case BPF_XOR: a ^= src; break;
			case BPF_LSH: a = src < 32 ? a << src : 0; break;
			case BPF_RSH: a = src < 32 ? a >> src : 0; break;
			case BPF_NEG: a = -a; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			break;
		case BPF_JMP: {
			int taken;

			if (BPF_OP(i->code) == BPF_JA) {
				pc += k;
				break;
			}
			switch (BPF_OP(i->code)) {
			case BPF_JEQ: taken = a == src; break;
			case BPF_JGT: taken = a > src; break;
			case BPF_JGE: taken = a >= src; break;
			case BPF_JSET: taken = (a & src) != 0; break;
			default: return SECCOMP_RET_KILL_PROCESS;
			}
			pc += taken ? i->jt : i->jf;
			break;
		}
		case BPF_RET:
			return BPF_RVAL(i->code) == BPF_A ? a : k;
		case BPF_MISC:
			if (BPF_MISCOP(i->code) == BPF_TAX)
				x = a;
			else
				a = x;
			break;
		default:
			return SECCOMP_RET_KILL_PROCESS;
		}
	}
	return SECCOMP_RET_KILL_PROCESS; /* fell off the end */
}

/* The system calls of the shim's that filter prog refuses: 0 if none,
 * else CS_SB_ANY and the CS_SB_* bits of those the hot path makes.  A
 * filter the kernel will not take (unreadable, empty, too long) refuses
 * nothing: the call fails, and nothing changes. */
#define CS_SB_ANY 0x80000000u
static unsigned refused_by(const struct sock_fprog *prog)
{
	unsigned i, refused = 0;

	if (!readable(prog, sizeof(*prog)) || !prog->len || prog->len > BPF_MAXINSNS ||
	    !readable(prog->filter, prog->len * sizeof(*prog->filter)))
		return 0;
	for (i = 0; i < sizeof(shim_calls) / sizeof(shim_calls[0]); i++) {
		uint32_t act = run_filter(prog->filter, prog->len, shim_calls[i].nr,
					  shim_calls[i].arg1, shim_calls[i].arg2,
					  shim_calls[i].arg3) &
			       SECCOMP_RET_ACTION_FULL;

		if (act != SECCOMP_RET_ALLOW && act != SECCOMP_RET_LOG)
			refused |= CS_SB_ANY | shim_calls[i].hot;
	}
	return refused;
}

/* cs_g.sandbox_word of sandboxed (low half, a count) and refused (high). */
#define SB_WORD(count, refused) ((uint64_t)(uint32_t)(count) | (uint64_t)(refused) << 32)

/* prog: the filter about to be installed, NULL for strict mode (read,
 * write, exit and sigreturn only).  Each filter is run, also once the
 * shim is sandboxed: the hot path's own calls are checked against all.
 * A filter installed before the shim's constructor ran (by a library's)
 * leaves the shim inert (cs_init).  Returns what sandbox_undo needs if
 * the kernel then refuses the filter: nonzero (cs_g.sandbox_word as this
 * made it) when this filter is the one that made the shim sandboxed. */
static uint64_t sandbox_enter(const struct sock_fprog *prog)
{
	int saved = errno;
	unsigned refused = prog ? refused_by(prog)
				: CS_SB_ANY | CS_SB_FUTEX | CS_SB_GETPID | CS_SB_SIGALTSTACK;
	uint64_t old, now;
	uint32_t count;

	if (!refused) {
		errno = saved;
		return 0;
	}
	/* Counted and marked in one step, so that an undo of an earlier
	 * filter the kernel refused sees that this one came. */
	old = __atomic_load_n(&cs_g.sandbox_word, __ATOMIC_ACQUIRE);
	do {
		count = (uint32_t)old;
		now = SB_WORD(count + (count != UINT32_MAX),
			      (uint32_t)(old >> 32) | (refused & ~CS_SB_ANY));
	} while (!__atomic_compare_exchange_n(&cs_g.sandbox_word, &old, now, 0, __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	if (count) {
		errno = saved;
		return 0;
	}
	if (cs_g.enabled) {
		/* The last system call of our own: the filter is not in place
		 * yet (write may be a target: under the guard). */
		cs_guard_take();
		if (!cs_g.settings.quiet)
			cs_log("the program installs a seccomp filter that refuses system calls "
			       "the shim makes: from now on no new thread, call site or block "
			       "is measured (their calls are counted as not recorded) and the "
			       "report file is not trimmed");
		cs_guard_drop();
	}
	errno = saved;
	return now;
}

/* The kernel refused the filter sandbox_enter saw (a malformed one:
 * EINVAL; EACCES without no_new_privs; EFAULT): no filter came, so the
 * shim goes on as before, unless another refusing filter was seen since.
 * (A filter refusing nothing of the shim's changes nothing either way.)
 * One compare-and-swap: checked, then cleared by two stores, the state
 * was cleared after another thread's filter had come between the two (a
 * review helper, under a debugger: killed by that filter, SIGSYS). */
static void sandbox_undo(uint64_t was)
{
	int saved = errno;

	if (!was || !__atomic_compare_exchange_n(&cs_g.sandbox_word, &was, 0, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if (cs_g.enabled && !cs_g.settings.quiet) {
		cs_guard_take();
		cs_log("the kernel did not install that seccomp filter (errno %d): measuring "
		       "goes on as before",
		       saved);
		cs_guard_drop();
	}
	errno = saved;
}

/* What installs a filter, of syscall(nr, op, a2, a3) and of prctl(op,
 * a2, a3): seccomp's SET_MODE_FILTER with the filter in a3, prctl's
 * PR_SET_SECCOMP with the mode in a2 and the filter in a3, or strict
 * mode.  Returns sandbox_enter's value. */
static uint64_t sandbox_install(long nr, long op, long a2, long a3)
{
	if (nr == SYS_seccomp && op == SECCOMP_SET_MODE_STRICT)
		return sandbox_enter(NULL);
	if (nr == SYS_seccomp && op == SECCOMP_SET_MODE_FILTER)
		return sandbox_enter((const struct sock_fprog *)a3);
	if (nr == SYS_prctl && op == PR_SET_SECCOMP && a2 == SECCOMP_MODE_STRICT)
		return sandbox_enter(NULL);
	if (nr == SYS_prctl && op == PR_SET_SECCOMP && a2 == SECCOMP_MODE_FILTER)
		return sandbox_enter((const struct sock_fprog *)a3);
	return 0;
}

void *cs_real_syscall;

void *cs_syscall_init(void)
{
	int saved = errno;
	void *p = dlsym(RTLD_NEXT, "syscall");

	errno = saved;
	__atomic_store_n(&cs_real_syscall, p, __ATOMIC_RELEASE);
	return p;
}

/* syscall with no real one to go to (cannot be, with glibc). */
long cs_syscall_missing(void)
{
	errno = ENOSYS;
	return -1;
}

/* syscall(SYS_seccomp or SYS_prctl, ...), from syscall.S: neither takes
 * more than five arguments, so all are in registers and the real call is
 * made here, to undo what its filter did to the shim if it fails. */
long cs_sandbox_syscall(long nr, long op, long a2, long a3, long a4, long a5)
{
	long (*real)(long, ...) = __atomic_load_n(&cs_real_syscall, __ATOMIC_ACQUIRE);
	uint64_t nth = sandbox_install(nr, op, a2, a3);
	long r;

	if (!real)
		real = (long (*)(long, ...))cs_syscall_init();
	if (!real)
		return cs_syscall_missing();
	r = real(nr, op, a2, a3, a4, a5);
	if (r == -1)
		sandbox_undo(nth);
	return r;
}

CS_EXPORT int prctl(int option, ...)
{
	static int (*real)(int, ...);
	unsigned long a2, a3, a4, a5;
	uint64_t nth;
	va_list ap;
	int ret;

	va_start(ap, option);
	a2 = va_arg(ap, unsigned long);
	a3 = va_arg(ap, unsigned long);
	a4 = va_arg(ap, unsigned long);
	a5 = va_arg(ap, unsigned long);
	va_end(ap);
	if (!real) {
		int saved = errno;

		real = (int (*)(int, ...))dlsym(RTLD_NEXT, "prctl");
		errno = saved;
		if (!real) {
			errno = ENOSYS;
			return -1;
		}
	}
	nth = sandbox_install(SYS_prctl, option, (long)a2, (long)a3);
	ret = real(option, a2, a3, a4, a5);
	if (ret == -1)
		sandbox_undo(nth);
	return ret;
}
