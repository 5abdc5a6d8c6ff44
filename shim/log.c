/* SPDX-License-Identifier: MIT */
/* One-line messages on stderr, usable anywhere (signal handlers included):
 * formatted into a stack buffer and written with one write(2). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "shim/internal.h"

void cs_log(const char *fmt, ...)
{
	char buf[512];
	int saved = errno;
	va_list ap;
	int n;

	/* "cacheshim: " prefix, message, newline; truncated, never split. */
	n = snprintf(buf, sizeof(buf), "cacheshim: ");
	va_start(ap, fmt);
	n += vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	/* One line, whatever the user's values held: no control characters. */
	for (int i = 0; i < n; i++) {
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			buf[i] = '?';
	}
	buf[n++] = '\n';
	if (write(STDERR_FILENO, buf, (size_t)n) < 0) {
		/* Nothing to do: stderr is gone. */
	}
	errno = saved;
}
