/* SPDX-License-Identifier: MIT */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/targetspec.h"

/* Characters a function name or fnmatch(3) glob may hold. */
static int name_char_ok(int c)
{
	return isalnum(c) || strchr("_.$@*?[]!^-+", c);
}

/* A name with '+' must be an address target: MODULE+0xHEX. */
static int address_ok(const char *tok, size_t len)
{
	const char *plus = memrchr(tok, '+', len);
	size_t i;

	if (!plus)
		return 1;
	if (plus == tok || (size_t)(plus - tok) + 3 >= len || strncmp(plus, "+0x", 3))
		return 0;
	for (i = (size_t)(plus - tok) + 3; i < len; i++) {
		if (!isxdigit((unsigned char)tok[i]))
			return 0;
	}
	return 1;
}

enum cs_target_spec_error cs_target_spec(const char *tok, size_t *namelen, unsigned *argn)
{
	const char *colon = strchr(tok, ':');
	unsigned long n = 0;
	char *end;
	size_t i;

	*namelen = colon ? (size_t)(colon - tok) : strlen(tok);
	*argn = 0;
	if (colon) {
		if (strncmp(colon + 1, "arg", 3) != 0 || !colon[4])
			return CS_TSPEC_SUFFIX;
		errno = 0;
		n = strtoul(colon + 4, &end, 10);
		if (*end || errno || n < 1 || n > 16)
			return CS_TSPEC_ARGN;
	}
	if (!*namelen)
		return CS_TSPEC_NO_NAME;
	for (i = 0; i < *namelen; i++) {
		if (!name_char_ok((unsigned char)tok[i]))
			return CS_TSPEC_CHARS;
	}
	if (!address_ok(tok, *namelen))
		return CS_TSPEC_ADDRESS;
	*argn = (unsigned)n;
	return CS_TSPEC_OK;
}

/* Length of one clone suffix component at s (".isra.0", ".cold", ...), 0
 * if s does not start with one. */
static size_t clone_part(const char *s)
{
	static const struct {
		const char *word;
		int num; /* 1: ".N" required, 2: optional, 0: none */
	} parts[] = {
		{".constprop", 1}, {".isra", 1}, {".part", 1},
		{".lto_priv", 1},  {".cold", 2}, {".localalias", 0},
	};
	size_t i, d;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		size_t n = strlen(parts[i].word);

		if (strncmp(s, parts[i].word, n) || (s[n] && s[n] != '.'))
			continue;
		if (!parts[i].num)
			return n;
		for (d = 0; s[n] == '.' && s[n + 1 + d] >= '0' && s[n + 1 + d] <= '9'; d++)
			;
		if (d && (!s[n + 1 + d] || s[n + 1 + d] == '.'))
			return n + 1 + d;
		if (parts[i].num == 2)
			return n;
	}
	return 0;
}

size_t cs_target_clone_base_len(const char *name)
{
	const char *dot;

	/* The base is what precedes the first dot from which on the name is
	 * clone suffixes only: "a.b.isra.0" is a clone of "a.b". */
	for (dot = strchr(name, '.'); dot; dot = strchr(dot + 1, '.')) {
		const char *s = dot;
		size_t n;

		if (dot == name)
			continue;
		while ((n = clone_part(s)))
			s += n;
		if (!*s)
			return (size_t)(dot - name);
	}
	return strlen(name);
}

const char *cs_target_spec_hint(const char *tok)
{
	if (strstr(tok, "::") || strchr(tok, '(') || !strncmp(tok, "operator", 8))
		return " (C++ names are given mangled, as nm(1) lists them without -C: "
		       "_ZN2ns3Foo3barEv, not ns::Foo::bar())";
	return "";
}
