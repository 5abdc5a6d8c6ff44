/* SPDX-License-Identifier: MIT */
/* Number formatting and messages shared by the report/ modules. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "common/swevents.h"
#include "report/internal.h"

static const struct {
	uint64_t bit;
	const char *keyword, *text;
} lost_reasons[] = {
	{CS_LOST_FILE_FULL, "file_full", "report file full (CACHESHIM_CAPACITY_MB)"},
	{CS_LOST_NO_ROOM, "no_room",
	 "report file could not grow (file system full, quota or RLIMIT_FSIZE)"},
	{CS_LOST_SEALED, "sealed", "report file sealed (at exit, or during an exec)"},
	{CS_LOST_THREAD, "thread", "thread without counters or past its end"},
	{CS_LOST_SECCOMP, "seccomp", "a seccomp filter refused the shim's system calls"},
	{CS_LOST_MEMORY, "memory", "out of memory"},
	{CS_LOST_OTHER, "other", "a call site's block not made"},
	{CS_LOST_UNSAID, "unsaid", NULL},
};

int cs_event_same(const char *a, const char *b)
{
	uint64_t ca, cb;

	if (!strcasecmp(a, b))
		return 1;
	return cs_sw_event_config(a, &ca) && cs_sw_event_config(b, &cb) && ca == cb;
}

char *cs_util_lost_why(uint64_t why, int keywords, char *buf, size_t len)
{
	size_t i, used = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	if (((why & CS_LOST_UNSAID) || !(why & CS_LOST_ALL)) && !keywords) {
		/* A file of an earlier writer: it did not say (then every
		 * reason it may have had, the others' among them). */
		snprintf(buf, len, "file full, file sealed at exit, thread without counters or "
				   "past its end, re-entry, or a seccomp filter");
		return buf;
	}
	for (i = 0; i < sizeof(lost_reasons) / sizeof(lost_reasons[0]); i++) {
		if (!(why & lost_reasons[i].bit) || used >= len)
			continue;
		used += (size_t)snprintf(buf + used, len - used, "%s%s",
					 used ? (keywords ? "," : "; ") : "",
					 keywords ? lost_reasons[i].keyword : lost_reasons[i].text);
	}
	return buf;
}

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

/* From here on cs_util_decimal writes an exponent: %.3Lf of 1e200 is 201
 * digits, most of them noise, and cut at a caller's buffer.  Below it are
 * all the means and totals a 64-bit counter gives, exact as integers in a
 * long double. */
#define DECIMAL_MAX 0x1p64L

char *cs_util_decimal(long double v, char *buf, size_t len)
{
	char *dot, *end;

	if (len == 0)
		return buf;
	if (isnan(v) || isinf(v)) {
		buf[0] = '\0';
		return buf;
	}
	if (fabsl(v) >= DECIMAL_MAX) {
		snprintf(buf, len, "%.15Lg", v);
		return buf;
	}
	/* Three decimals would make a mean of 1 fault in 2500 calls "0",
	 * beside a total of 1 (and the table's 0.0004): as a derived value,
	 * a positive one below 0.001 gets six significant digits. */
	if (v > 0 && v < 0.001L) {
		snprintf(buf, len, "%.6Lg", v);
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
	/* Past the last suffix: 1e200 was 180 digits and an E. */
	if (fabsl(v) >= 999.5e18L) {
		snprintf(buf, len, "%.3Lg", v);
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

const char *cs_util_next_item(const char **rest, size_t *len)
{
	const char *b = *rest, *e;

	if (!b)
		return NULL;
	e = b + strcspn(b, ",");
	*rest = *e ? e + 1 : NULL;
	while (b < e && isspace((unsigned char)*b))
		b++;
	while (e > b && isspace((unsigned char)e[-1]))
		e--;
	*len = (size_t)(e - b);
	return b;
}

static char *escape_cut(const char *s, size_t cols, char *buf, size_t len, int backslash);
static char *escape_dup(const char *s, int backslash);

static void vmsg(const char *prefix, const char *fmt, va_list ap)
{
	char *msg = NULL, *e = NULL, cut[1024];

	/* Messages quote what the user typed and names from the files: no
	 * control character reaches the terminal, as in the tables.  Names
	 * come escaped already (backslashes doubled): not doubled again. */
	if (vasprintf(&msg, fmt, ap) >= 0)
		e = escape_dup(msg, 0);
	/* One fputs per part, but stderr is unbuffered and the command is
	 * single-threaded: lines do not interleave with our own output. */
	fputs("cacheshim: ", stderr);
	fputs(prefix, stderr);
	if (e)
		fputs(e, stderr);
	else if (msg)
		fputs(escape_cut(msg, 0, cut, sizeof(cut), 0), stderr);
	else
		fputs("out of memory (formatting a message)", stderr);
	fputc('\n', stderr);
	free(e);
	free(msg);
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

int cs_util_flushed(FILE *out)
{
	/* fflush says why (ENOSPC, EPIPE with SIGPIPE ignored, EBADF): it
	 * writes again what an earlier failed flush left in the buffer.  With
	 * nothing left, only the stream's error flag tells. */
	if (fflush(out) != 0)
		return errno ? -errno : -EIO;
	return ferror(out) ? -EIO : 0;
}

int cs_util_stdout_done(void)
{
	int err = cs_util_flushed(stdout);

	if (!err)
		return CS_EXIT_OK;
	cs_err("cannot write to standard output: %s", strerror(-err));
	return CS_EXIT_FAIL;
}

int cs_util_utf8_len(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	int n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong forms, surrogates and code points past U+10FFFF. */
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
		return 0;
	return n;
}

/* Writes the byte c as \xHH at e.  Returns 4. */
static size_t hex_escape(unsigned char c, char *e)
{
	static const char hex[] = "0123456789abcdef";

	e[0] = '\\';
	e[1] = 'x';
	e[2] = hex[c >> 4];
	e[3] = hex[c & 15];
	return 4;
}

/* The text of the character at s, escaped, into e (at least 8 bytes):
 * its length there; *used is how many bytes of s it stands for.
 * backslash: a backslash is written as two. */
static size_t escape_one(const char *s, char *e, size_t *used, int backslash)
{
	unsigned char c = (unsigned char)*s;
	int n;

	*used = 1;
	/* A backslash too (in names): else a name with the four characters
	 * \x01 in it would read as one with the byte 0x01. */
	if (c == '\n' || c == '\t' || c == '\r' || (c == '\\' && backslash)) {
		e[0] = '\\';
		e[1] = c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : '\\';
		return 2;
	}
	if (c < 0x20 || c == 0x7f)
		return hex_escape(c, e);
	if (c < 0x80) {
		e[0] = (char)c;
		return 1;
	}
	/* A byte that is not UTF-8 would be the terminal's to guess at;
	 * U+0080..U+009F are the C1 controls, which terminals obey as they
	 * do ESC [ (0x9b is CSI): both written as bytes, as C0 is.  A UTF-8
	 * character is one: never cut in two. */
	n = cs_util_utf8_len(s);
	if (n == 0)
		return hex_escape(c, e);
	if (n == 2 && c == 0xc2 && (unsigned char)s[1] < 0xa0) {
		*used = 2;
		return hex_escape(c, e) + hex_escape((unsigned char)s[1], e + 4);
	}
	memcpy(e, s, (size_t)n);
	*used = (size_t)n;
	return (size_t)n;
}

/* cs_util_escape_cut, with backslashes doubled or not. */
static char *escape_cut(const char *s, size_t cols, char *buf, size_t len, int backslash)
{
	size_t o = 0, n, used, w = 0, cw, mark = 0;
	char e[8];

	if (!len)
		return buf;
	while (*s) {
		n = escape_one(s, e, &used, backslash);
		if (o + n >= len)
			break; /* whole escapes only */
		cw = cs_util_width(e, n);
		/* Where "..." goes should the rest not fit: after the last
		 * whole character or escape within cols - 3 columns. */
		if (cols && w + cw <= cols - 3)
			mark = o + n;
		w += cw;
		if (cols && w > cols) {
			/* The units after mark are at least 4 bytes with this
			 * one (as wide, at least, and 3 columns too many): room. */
			memcpy(buf + mark, "...", 3);
			o = mark + 3;
			break;
		}
		memcpy(buf + o, e, n);
		o += n;
		s += used;
	}
	buf[o] = '\0';
	return buf;
}

char *cs_util_escape_ctl(const char *s, char *buf, size_t len)
{
	return escape_cut(s, 0, buf, len, 1);
}

char *cs_util_escape_cut(const char *s, size_t cols, char *buf, size_t len)
{
	return escape_cut(s, cols, buf, len, 1);
}

size_t cs_util_label_suffix(const char *t, int callsite, int function)
{
	size_t n = strlen(t), i;
	const char *at, *arg, *p;

	if (callsite) {
		for (i = n; i > 0 && isxdigit((unsigned char)t[i - 1]); i--)
			;
		return i >= 3 && i < n && !strncmp(t + i - 3, "+0x", 3) ? n - (i - 3) : 0;
	}
	if (!function)
		return 0;
	/* A constructor's or destructor's variant (report/demangle.c), and
	 * what follows it. */
	for (i = 0; i < 3; i++) {
		static const char *const words[] = {" [deleting]", " [base object]",
						    " [allocating]"};

		if ((p = strstr(t, words[i])) != NULL)
			return n - (size_t)(p - t);
	}
	arg = NULL;
	if (n && t[n - 1] == ']')
		for (p = strstr(t, "[arg"); p; p = strstr(p + 1, "[arg"))
			arg = p;
	at = strrchr(t, '@');
	if (at && (!arg || at < arg))
		return n - (size_t)(at - t);
	return arg ? n - (size_t)(arg - t) : 0;
}

char *cs_util_escape_cut_keep(const char *s, size_t keep, size_t cols, char *buf, size_t len)
{
	size_t n = strlen(s), sw, used;
	char *head;

	if (!keep || keep >= n || !cols)
		return escape_cut(s, cols, buf, len, 1);
	escape_cut(s + n - keep, 0, buf, len, 1);
	sw = cs_util_width(buf, strlen(buf));
	escape_cut(s, 0, buf, len, 1);
	/* The end alone wider than the column, or the whole fits: as is. */
	if (sw + 4 > cols || cs_util_width(buf, strlen(buf)) <= cols)
		return escape_cut(s, cols, buf, len, 1);
	head = strndup(s, n - keep);
	if (!head)
		return escape_cut(s, cols, buf, len, 1);
	/* The head cut to what the end leaves ("..." after it), then the end. */
	escape_cut(head, cols - sw, buf, len, 1);
	free(head);
	used = strlen(buf);
	if (used < len)
		escape_cut(s + n - keep, 0, buf + used, len - used, 1);
	return buf;
}

/* s escaped, whole, in a malloc'd string (NULL when out of memory), with
 * backslashes doubled or not. */
static char *escape_dup(const char *s, int backslash)
{
	size_t len = 4 * strlen(s) + 1;
	char *e = malloc(len);

	return e ? escape_cut(s, 0, e, len, backslash) : NULL;
}

char *cs_util_escape_dup(const char *s)
{
	return escape_dup(s, 1);
}

size_t cs_util_width(const char *s, size_t n)
{
	size_t i, w = 0;

	/* Escaped text is ASCII and whole UTF-8 characters: one column per
	 * byte that does not continue a character (East Asian wide
	 * characters take two on a terminal; not worth a table here). */
	for (i = 0; i < n; i++)
		w += ((unsigned char)s[i] & 0xc0) != 0x80;
	return w;
}

int cs_util_field(const char *s, size_t cols)
{
	size_t n = strlen(s);

	return (int)(cols + n - cs_util_width(s, n));
}
