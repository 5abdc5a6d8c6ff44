/* SPDX-License-Identifier: MIT */
/* One-line messages on stderr, usable anywhere (signal handlers included):
 * formatted into a stack buffer and written with one write(2). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
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
	/* The system call, not libc's write: that is a cancellation point,
	 * and a line said in a thread's first wrapped call would let a
	 * pending pthread_cancel act inside the shim.  Nothing to do if
	 * it fails: stderr is gone. */
	cs_syscall6(SYS_write, STDERR_FILENO, (long)buf, n, 0, 0, 0);
	errno = saved;
}
