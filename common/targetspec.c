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
