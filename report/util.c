/* SPDX-License-Identifier: MIT */
/* Number formatting and messages shared by the report/ modules. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "report/internal.h"

char *cs_util_u128(cs_u128 v, char *buf, size_t len)
{
	char tmp[48];
	size_t i = sizeof(tmp);

	if (len == 0)
		return buf;
	uint64_t w;
	size_t n;

	tmp[--i] = '\0';
	/* 128-bit division is a library call: only for what needs it. */
	while (v >> 64 && i > 0) {
		tmp[--i] = (char)('0' + (unsigned)(v % 10));
		v /= 10;
	}
	w = (uint64_t)v;
	do {
		tmp[--i] = (char)('0' + w % 10);
		w /= 10;
	} while (w && i > 0);
	/* Not snprintf: a large CSV has a total on each of its lines.  Cut
	 * to len as snprintf would. */
	n = sizeof(tmp) - 1 - i;
	if (n > len - 1)
		n = len - 1;
	memcpy(buf, tmp + i, n);
	buf[n] = '\0';
	return buf;
}

/* Writes v with dec (<= 3) decimals as snprintf("%.*Lf") would, without
 * its cost (a large report formats millions of numbers): in double and
 * integers, so only when v is small enough for double to be exact to
 * well within the rounding, and not close to a tie.  Returns 0, having
 * written nothing, when only snprintf knows the right digits. */
static int fixed(long double lv, unsigned dec, char *buf, size_t len)
{
	static const double scale[] = {1.0, 10.0, 100.0, 1000.0};
	unsigned long long u;
	double x, frac;
	long long t;
	char tmp[32];
	size_t i = sizeof(tmp);
	unsigned k;

	if (dec > 3)
		return 0;
	x = (double)lv * scale[dec];
	if (!(x < 1e9 && x > -1e9))
		return 0;
	t = (long long)x; /* toward 0 */
	frac = x - (double)t;
	if (frac < 0)
		frac = -frac;
	if (frac > 0.5 - 1e-6 && frac < 0.5 + 1e-6)
		return 0;
	u = (unsigned long long)(t < 0 ? -t : t) + (frac > 0.5);
	tmp[--i] = '\0';
	for (k = 0; k < dec; k++) {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	}
	if (dec)
		tmp[--i] = '.';
	do {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (signbit(lv))
		tmp[--i] = '-';
	if (sizeof(tmp) - i > len)
		return 0;
	memcpy(buf, tmp + i, sizeof(tmp) - i);
	return 1;
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
	if (!fixed(v, 3, buf, len))
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

char *cs_util_human_u64(uint64_t v, char *buf, size_t len)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	if (v >= 100000 || len < 7)
		return cs_util_human((long double)v, buf, len);
	tmp[--i] = '\0';
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(buf, tmp + i, sizeof(tmp) - i);
	return buf;
}

char *cs_util_human(long double v, char *buf, size_t len)
{
	static const char suffix[] = "kMGTPE";
	unsigned i = 0, dec;
	size_t n;

	if (isnan(v) || isinf(v)) {
		snprintf(buf, len, "-");
		return buf;
	}
	if (fabsl(v) < 100000.0L) {
		if (v == (long double)(long long)v) {
			if (!fixed(v, 0, buf, len))
				snprintf(buf, len, "%.0Lf", v);
		} else if (fabsl(v) < 1.0L) {
			snprintf(buf, len, "%.2Lg", v); /* 0.00013, not 0.0 */
		} else if (!fixed(v, 1, buf, len)) {
			snprintf(buf, len, "%.1Lf", v);
		}
		return buf;
	}
	v /= 1000.0L;
	while (fabsl(v) >= 999.5L && i + 1 < sizeof(suffix) - 1) {
		v /= 1000.0L;
		i++;
	}
	dec = fabsl(v) >= 99.95L ? 0 : fabsl(v) >= 9.995L ? 1 : 2;
	if (len > 1 && fixed(v, dec, buf, len - 1)) {
		n = strlen(buf);
		buf[n] = suffix[i];
		buf[n + 1] = '\0';
	} else {
		snprintf(buf, len, "%.*Lf%c", (int)dec, v, suffix[i]);
	}
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

char *cs_util_key_class(uint64_t key, char *buf, size_t len)
{
	if (key == CS_KEY_NONE && len)
		buf[0] = '\0';
	else if (key == CS_KEY_NONE)
		;
	else if (key < 2 || (key & (key - 1)) != 0)
		snprintf(buf, len, "%llu", (unsigned long long)key); /* 0, 1, or not a class */
	else
		snprintf(buf, len, "%llu-%llu", (unsigned long long)key,
			 (unsigned long long)(key | (key - 1)));
	return buf;
}

int cs_util_check_dir(const char *what, const char *path)
{
	struct stat st;
	int err = 0;

	if (stat(path, &st) != 0)
		err = errno;
	else if (!S_ISDIR(st.st_mode))
		err = ENOTDIR;
	if (err)
		cs_err("%s %s: %s", what, path, strerror(err));
	return err ? -1 : 0;
}

char *cs_util_escape_ctl(const char *s, char *buf, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, n;
	unsigned char c;
	char e[4];

	if (!len)
		return buf;
	for (; *s; s++) {
		c = (unsigned char)*s;
		if (c >= 0x20 && c != 0x7f) {
			e[0] = (char)c;
			n = 1;
		} else if (c == '\n' || c == '\t' || c == '\r') {
			e[0] = '\\';
			e[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
			n = 2;
		} else {
			e[0] = '\\';
			e[1] = 'x';
			e[2] = hex[c >> 4];
			e[3] = hex[c & 15];
			n = 4;
		}
		if (o + n >= len)
			break; /* whole escapes only */
		memcpy(buf + o, e, n);
		o += n;
	}
	buf[o] = '\0';
	return buf;
}
