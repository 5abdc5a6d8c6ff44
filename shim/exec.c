/* SPDX-License-Identifier: MIT */
/* exec wrappers: the report file is marked complete and trimmed before the
 * process image is replaced (no destructor runs at exec), and reopened for
 * writing if exec fails.  The new program is profiled again when
 * LD_PRELOAD survives into it.  A vfork child (another pid sharing our
 * memory) must not touch the parent's file: nothing is done there, and
 * its target calls pass through (cs_vfork_prepare, shim/vfork.S). */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "shim/internal.h"

static pid_t no_vfork(void)
{
	errno = ENOSYS;
	return -1;
}

/* The calling thread is about to make a child that shares its memory and
 * thread pointer while the thread waits (vfork, clone with CLONE_VM |
 * CLONE_VFORK): its calls pass through from here until they are back in
 * this process (cs_hot_enter).  A thread with no state yet: the slow path
 * asks whose process it runs in (thread.c). */
void cs_vfork_mark(void)
{
	struct cs_thread *t = cs_tls_thread;

	if (t && t->ready == 1)
		t->ready = CS_THREAD_VFORKED;
}

/* vfork's C part (shim/vfork.S), in the parent before the system call.
 * Returns the real vfork. */
pid_t (*cs_vfork_prepare(void))(void)
{
	static pid_t (*real)(void);

	if (!real) {
		cs_guard_take(); /* dlsym's own calls may be targets */
		real = (pid_t(*)(void))dlsym(RTLD_NEXT, "vfork");
		cs_guard_drop();
	}
	cs_vfork_mark();
	return real ? real : no_vfork;
}

static int before_exec(void)
{
	int sealed = 0;

	/* Under the program's seccomp filter (shim/sandbox.c) not even
	 * getpid: the file stays RUNNING, and is read as incomplete. */
	if (cs_g.sandboxed)
		return 0;
	/* The shim's own libc calls (getpid, ftruncate) may be targets. */
	cs_guard_take();
	if (cs_g.enabled && getpid() == cs_g.pid) {
		cs_output_seal_gone();
		sealed = 1;
	}
	cs_guard_drop();
	return sealed;
}

static void after_failed_exec(int sealed)
{
	int saved;

	cs_guard_take(); /* errno is read through a function that may be a target */
	saved = errno;
	if (sealed)
		cs_output_unseal();
	errno = saved;
	cs_guard_drop();
}

#define REAL(name)                                                        \
	static __typeof__(&name) real_##name;                             \
	if (!real_##name)                                                 \
		real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name); \
	if (!real_##name) {                                               \
		errno = ENOSYS;                                           \
		return -1;                                                \
	}

/* Under the program's seccomp filter (shim/sandbox.c) the image exec'd
 * next would start the shim under that filter too, and its start (the
 * report file) makes system calls the filter may refuse: killed where it
 * ran without us.  So it gets the environment with the shim left out of
 * LD_PRELOAD, as it would be had the user not preloaded it, and runs
 * unmeasured.  The copy lives on the exec wrapper's stack: no malloc and
 * no system call of ours.  Only when it fits there (cs_env_fits), else
 * as it is. */
extern char **environ;

/* Room left on this thread's stack below the copy: signal handlers, the
 * real exec's frames.  A thread whose stack the shim does not know (made
 * under the filter, by clone, or on a signal stack) gets a small copy
 * only. */
#define CS_ENV_MARGIN (64u << 10)
#define CS_ENV_UNKNOWN (16u << 10)

static size_t env_count(char *const envp[])
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return n;
}

/* Bytes for the rewritten LD_PRELOAD entries of envp (each its own), 0
 * if none; *count: how many there are (ld.so reads the last, getenv the
 * first). */
static size_t preload_len(char *const envp[], size_t n, size_t *count)
{
	size_t i, len = 0;

	*count = 0;
	for (i = 0; i < n; i++)
		if (!strncmp(envp[i], "LD_PRELOAD=", 11)) {
			len += strlen(envp[i]) + 1;
			++*count;
		}
	return len;
}

/* Whether a copy of need bytes fits on this thread's stack, below frame. */
static int cs_env_fits(uintptr_t frame, size_t need)
{
	uint64_t lo = cs_tls_stack_lo, hi = cs_tls_stack_hi;

	if (need > SIZE_MAX / 2)
		return 0;
	if (lo && frame > lo && frame <= hi)
		return frame - lo > CS_ENV_MARGIN && frame - lo - CS_ENV_MARGIN > need;
	return need <= CS_ENV_UNKNOWN;
}

/* Whether LD_PRELOAD's item [p, p + len) names this library. */
static int is_shim(const char *p, size_t len)
{
	static const char name[] = "libcacheshim.so";
	size_t k = sizeof(name) - 1;

	return len >= k && !memcmp(p + len - k, name, k) && (len == k || p[len - k - 1] == '/');
}

/* envp into out[n + 1] without the shim in LD_PRELOAD: each entry that
 * names it is rewritten into its own part of buf (preload_len bytes);
 * one that does not is passed as it is.  An entry left empty is dropped
 * if it is the only one (count), else kept empty, so that ld.so and
 * getenv still read the entries they read before. */
static void unshimmed(char *const envp[], size_t n, size_t count, char **out, char *buf)
{
	size_t i, j = 0;

	for (i = 0; i < n; i++) {
		const char *p = envp[i] + 11, *q;
		char *w = buf + 11;
		int removed = 0;

		if (strncmp(envp[i], "LD_PRELOAD=", 11)) {
			out[j++] = envp[i];
			continue;
		}
		memcpy(buf, "LD_PRELOAD=", 11);
		for (; *p; p = *q ? q + 1 : q) {
			for (q = p; *q && *q != ':' && *q != ' '; q++)
				;
			if (q == p)
				continue;
			if (is_shim(p, (size_t)(q - p))) {
				removed = 1;
				continue;
			}
			if (w > buf + 11)
				*w++ = ':';
			memcpy(w, p, (size_t)(q - p));
			w += q - p;
		}
		*w = '\0';
		if (!removed)
			out[j++] = envp[i];
		else if (w > buf + 11 || count > 1) {
			out[j++] = buf;
			buf = w + 1;
		}
	}
	out[j] = NULL;
}

/* The exec of call, with envp unshimmed under the program's seccomp
 * filter.  A macro: the copies must live in the wrapper's own frame. */
#define SANDBOXED_EXEC(envp, call)                                                       \
	do {                                                                             \
		if (__atomic_load_n(&cs_g.sandboxed, __ATOMIC_ACQUIRE)) {                \
			size_t n_, len_, count_;                                         \
                                                                                         \
			cs_guard_take(); /* strlen, memcpy may be targets */             \
			n_ = env_count(envp);                                            \
			len_ = preload_len(envp, n_, &count_);                           \
			if (count_ &&                                                    \
			    n_ < SIZE_MAX / sizeof(char *) - 1 &&                        \
			    cs_env_fits((uintptr_t)__builtin_frame_address(0),           \
					(n_ + 1) * sizeof(char *) + len_ + 1)) {         \
				char *env_[n_ + 1], buf_[len_ + 1];                      \
                                                                                         \
				unshimmed(envp, n_, count_, env_, buf_);                 \
				cs_guard_drop();                                         \
				return call;                                             \
			}                                                                \
			cs_guard_drop();                                                 \
		}                                                                        \
	} while (0)

CS_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	REAL(execve);
	SANDBOXED_EXEC(envp, real_execve(path, argv, env_));
	int sealed = before_exec();
	int ret = real_execve(path, argv, envp);

	after_failed_exec(sealed);
	return ret;
}

CS_EXPORT int execv(const char *path, char *const argv[])
{
	REAL(execv);
	REAL(execve);
	SANDBOXED_EXEC(environ, real_execve(path, argv, env_));
	int sealed = before_exec();
	int ret = real_execv(path, argv);

	after_failed_exec(sealed);
	return ret;
}

CS_EXPORT int execvp(const char *file, char *const argv[])
{
	REAL(execvp);
	REAL(execvpe);
	SANDBOXED_EXEC(environ, real_execvpe(file, argv, env_));
	int sealed = before_exec();
	int ret = real_execvp(file, argv);

	after_failed_exec(sealed);
	return ret;
}

CS_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	REAL(execvpe);
	SANDBOXED_EXEC(envp, real_execvpe(file, argv, env_));
	int sealed = before_exec();
	int ret = real_execvpe(file, argv, envp);

	after_failed_exec(sealed);
	return ret;
}

CS_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	REAL(fexecve);
	SANDBOXED_EXEC(envp, real_fexecve(fd, argv, env_));
	int sealed = before_exec();
	int ret = real_fexecve(fd, argv, envp);

	after_failed_exec(sealed);
	return ret;
}

/* execveat (glibc 2.34): by a directory descriptor and a path, or
 * AT_EMPTY_PATH and a descriptor.  Not wrapped, it left the file of the
 * image it replaced RUNNING (the report called it incomplete, every call
 * in it), and under the program's seccomp filter started the next image
 * with the shim.  Declared here for a glibc without it (dlsym then finds
 * none: ENOSYS, as the program would get from that glibc's syscall). */
int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags);

CS_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	REAL(execveat);
	SANDBOXED_EXEC(envp, real_execveat(dirfd, path, argv, env_, flags));
	int sealed = before_exec();
	int ret = real_execveat(dirfd, path, argv, envp, flags);

	after_failed_exec(sealed);
	return ret;
}

/* execl, execlp, execle: the variadic list into an array on the stack,
 * sized by counting first (as glibc's own execl does: no limit of ours,
 * no malloc, which a vfork child must not call), then the v-forms. */
enum list_kind { LIST_PATH, LIST_SEARCH, LIST_ENV };

static size_t count_args(const char *arg0, va_list ap)
{
	va_list c;
	size_t n = 1;

	if (!arg0)
		return 1;
	va_copy(c, ap);
	while (va_arg(c, char *))
		n++;
	va_end(c);
	return n;
}

static int exec_list(enum list_kind kind, const char *file, const char *arg, va_list ap)
{
	size_t n = count_args(arg, ap), i;
	char *argv[n + 1];
	char **envp = NULL;

	argv[0] = (char *)arg;
	for (i = 1; i < n; i++)
		argv[i] = va_arg(ap, char *);
	if (arg)
		(void)va_arg(ap, char *); /* the terminating NULL */
	argv[n] = NULL;
	if (kind == LIST_ENV) {
		envp = va_arg(ap, char **);
		return execve(file, argv, envp);
	}
	return kind == LIST_SEARCH ? execvp(file, argv) : execv(file, argv);
}

CS_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg);
	ret = exec_list(LIST_PATH, path, arg, ap);
	va_end(ap);
	return ret;
}

CS_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg);
	ret = exec_list(LIST_SEARCH, file, arg, ap);
	va_end(ap);
	return ret;
}

CS_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	int ret;

	va_start(ap, arg);
	ret = exec_list(LIST_ENV, path, arg, ap);
	va_end(ap);
	return ret;
}
