/* SPDX-License-Identifier: MIT */
/* Number formatting and messages shared by the report/ modules. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "report/internal.h"

char *cs_util_u128(cs_u128 v, char *buf, size_t len)
{
	char tmp[48];
	size_t i = sizeof(tmp);

	if (len == 0)
		return buf;
	tmp[--i] = '\0';
	do {
		tmp[--i] = (char)('0' + (unsigned)(v % 10));
		v /= 10;
	} while (v && i > 0);
	snprintf(buf, len, "%s", tmp + i);
	return buf;
}

char *cs_util_decimal(long double v, char *buf, size_t len)
{
	char *dot, *end;

	if (len == 0)
		return buf;
	if (isnan(v) || isinf(v)) {
		buf[0] = '\0';
		return buf;
	}
	snprintf(buf, len, "%.3Lf", v);
	dot = strchr(buf, '.');
	if (dot) {
		/* "12.500" -> "12.5", "12.000" -> "12" */
		end = buf + strlen(buf) - 1;
		while (end > dot && *end == '0')
			*end-- = '\0';
		if (end == dot)
			*end = '\0';
	}
	/* A tiny negative value rounds to "-0": scripts want "0". */
	if (strcmp(buf, "-0") == 0)
		snprintf(buf, len, "0");
	return buf;
}

char *cs_util_human(long double v, char *buf, size_t len)
{
	static const char suffix[] = "kMGTPE";
	unsigned i = 0;

	if (isnan(v) || isinf(v)) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (fabsl(v) < 100000.0L) {
		if (v == floorl(v))
			snprintf(buf, len, "%.0Lf", v);
		else if (fabsl(v) < 1.0L)
			snprintf(buf, len, "%.2Lg", v); /* 0.00013, not 0.0 */
		else
			snprintf(buf, len, "%.1Lf", v);
		return buf;
	}
	v /= 1000.0L;
	while (fabsl(v) >= 999.5L && i + 1 < sizeof(suffix) - 1) {
		v /= 1000.0L;
		i++;
	}
	if (fabsl(v) >= 99.95L)
		snprintf(buf, len, "%.0Lf%c", v, suffix[i]);
	else if (fabsl(v) >= 9.995L)
		snprintf(buf, len, "%.1Lf%c", v, suffix[i]);
	else
		snprintf(buf, len, "%.2Lf%c", v, suffix[i]);
	return buf;
}

const char *cs_util_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	/* One fprintf per part, but stderr is unbuffered and the command is
	 * single-threaded: lines do not interleave with our own output. */
	fputs("cacheshim: ", stderr);
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cs_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void cs_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}
