/* SPDX-License-Identifier: MIT */
/* One-line messages on stderr, usable anywhere (signal handlers included):
 * formatted into a stack buffer and written with one write(2). */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "shim/internal.h"

/* What descriptor 2 was when the shim started: messages go there only
 * while it still is.  A program started with stderr closed gets 2 for the
 * first file it opens, and our lines would land in its data. */
static int err_known, err_open;
static dev_t err_dev;
static ino_t err_ino;

void cs_log_init(void)
{
	struct stat st;

	err_known = 1;
	err_open = fstat(STDERR_FILENO, &st) == 0;
	err_dev = err_open ? st.st_dev : 0;
	err_ino = err_open ? st.st_ino : 0;
}

static int stderr_is_ours(void)
{
	struct stat st;

	if (!err_known)
		return 1; /* before cs_log_init (unit tests) */
	return err_open && fstat(STDERR_FILENO, &st) == 0 && st.st_dev == err_dev &&
	       st.st_ino == err_ino;
}

void cs_log_printable(char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			s[i] = '?';
	}
}

/* Writes the line to stderr.  The system call, not libc's write: that is
 * a cancellation point, and a line said in a thread's first wrapped call
 * would let a pending pthread_cancel act inside the shim.  A stderr that
 * is a pipe nobody reads any more (`prog 2>&1 | head -1` after head
 * exited) answers EPIPE with a SIGPIPE, which killed a program that
 * never wrote to stderr itself (status 141): SIGPIPE is blocked around
 * the write, and the one the write raised is taken back before it is
 * unblocked (not one that was pending already).  Nothing else to do if
 * the write fails: stderr is gone. */
static void say(const char *buf, size_t n)
{
	uint64_t pipe = 1ull << (SIGPIPE - 1), old, pending = 0;
	struct timespec zero = {0, 0};
	int blocked =
		cs_syscall6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&pipe, (long)&old, 8, 0, 0) == 0;

	if (blocked)
		cs_syscall6(SYS_rt_sigpending, (long)&pending, 8, 0, 0, 0, 0);
	if (cs_syscall6(SYS_write, STDERR_FILENO, (long)buf, (long)n, 0, 0, 0) == -EPIPE &&
	    blocked && !(pending & pipe))
		cs_syscall6(SYS_rt_sigtimedwait, (long)&pipe, 0, (long)&zero, 8, 0, 0);
	if (blocked)
		cs_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
}

void cs_log(const char *fmt, ...)
{
	char buf[512];
	int saved = errno;
	va_list ap;
	int n;

	if (!stderr_is_ours())
		return;
	/* "cacheshim: " prefix, message, newline; truncated, never split. */
	n = snprintf(buf, sizeof(buf), "cacheshim: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	cs_log_printable(buf, (size_t)n);
	buf[n++] = '\n';
	say(buf, (size_t)n);
	errno = saved;
}
