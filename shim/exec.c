/* SPDX-License-Identifier: MIT */
/* exec wrappers: the report file is marked complete and trimmed before the
 * process image is replaced (no destructor runs at exec), and reopened for
 * writing if exec fails.  The new program is profiled again when
 * LD_PRELOAD survives into it.  A vfork child (another pid sharing our
 * memory) must not touch the parent's file: nothing is done there. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <unistd.h>

#include "shim/internal.h"

#define CS_MAX_EXECL_ARGS 4096

static int before_exec(void)
{
	int sealed = 0;

	/* The shim's own libc calls (getpid, ftruncate) may be targets. */
	cs_guard_take();
	if (cs_g.enabled && getpid() == cs_g.pid) {
		cs_output_seal();
		sealed = 1;
	}
	cs_guard_drop();
	return sealed;
}

static void after_failed_exec(int sealed)
{
	int saved = errno;

	if (sealed) {
		cs_guard_take();
		cs_output_unseal();
		cs_guard_drop();
	}
	errno = saved;
}

#define REAL(name)                                                        \
	static __typeof__(&name) real_##name;                             \
	if (!real_##name)                                                 \
		real_##name = (__typeof__(&name))dlsym(RTLD_NEXT, #name); \
	if (!real_##name) {                                               \
		errno = ENOSYS;                                           \
		return -1;                                                \
	}

CS_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	REAL(execve);
	int sealed = before_exec();
	int ret = real_execve(path, argv, envp);

	after_failed_exec(sealed);
	return ret;
}

CS_EXPORT int execv(const char *path, char *const argv[])
{
	REAL(execv);
	int sealed = before_exec();
	int ret = real_execv(path, argv);

	after_failed_exec(sealed);
	return ret;
}

CS_EXPORT int execvp(const char *file, char *const argv[])
{
	REAL(execvp);
	int sealed = before_exec();
	int ret = real_execvp(file, argv);

	after_failed_exec(sealed);
	return ret;
}

CS_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	REAL(execvpe);
	int sealed = before_exec();
	int ret = real_execvpe(file, argv, envp);

	after_failed_exec(sealed);
	return ret;
}

CS_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	REAL(fexecve);
	int sealed = before_exec();
	int ret = real_fexecve(fd, argv, envp);

	after_failed_exec(sealed);
	return ret;
}

/* execl, execlp, execle: collect the variadic list, then the v-forms. */
static int collect(const char *arg0, va_list ap, char **argv, char ***envp)
{
	int n = 0;

	argv[n++] = (char *)arg0;
	while (arg0 && n < CS_MAX_EXECL_ARGS) {
		argv[n] = va_arg(ap, char *);
		if (!argv[n])
			break;
		n++;
	}
	if (n == CS_MAX_EXECL_ARGS)
		return -E2BIG;
	argv[arg0 ? n : 1] = NULL;
	if (envp)
		*envp = va_arg(ap, char **);
	return 0;
}

enum list_kind { LIST_PATH, LIST_SEARCH, LIST_ENV };

/* The list forms: gather the arguments, then call the vector form. */
static int exec_list(enum list_kind kind, const char *file, const char *arg, va_list ap)
{
	char *argv[CS_MAX_EXECL_ARGS + 1];
	char **envp = NULL;
	int err = collect(arg, ap, argv, kind == LIST_ENV ? &envp : NULL);

	if (err) {
		errno = -err;
		return -1;
	}
	if (kind == LIST_ENV)
		return execve(file, argv, envp);
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
