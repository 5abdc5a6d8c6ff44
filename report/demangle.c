/* SPDX-License-Identifier: MIT */
/* C++ names for people: the C++ runtime's demangler, found at run time. */
#include <dlfcn.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

/*
 * The demangler is libstdc++'s __cxa_demangle (the Itanium ABI's), looked
 * up with dlopen rather than linked: the command stays a C program with
 * no C++ runtime to load for C reports, and where libstdc++ is missing
 * names are shown as the file has them.  Debian always has it (apt needs
 * it).  It takes clone suffixes (.cold, .isra.0, .constprop.0) itself:
 * "foo() [clone .cold]".
 */

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static cxa_demangle_fn cxa_demangle;

static void find_demangler(void)
{
	void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);

	/* Kept open: the function is used until the command exits. */
	if (h)
		cxa_demangle = (cxa_demangle_fn)dlsym(h, "__cxa_demangle");
}

/* Length of the mangled name at the start of s: the characters of
 * Itanium names and of the clone suffixes after them; what follows
 * ('[', '@', '+') is cacheshim's. */
static size_t mangled_len(const char *s)
{
	size_t n = 0;

	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
	       (s[n] >= '0' && s[n] <= '9') || s[n] == '_' || s[n] == '.')
		n++;
	return n;
}

char *cs_demangle(const char *name, size_t cut)
{
	size_t n, dlen, rest;
	char *mangled, *d, *out;
	int status = -1;

	if (strncmp(name, "_Z", 2) != 0)
		return NULL;
	n = mangled_len(name);
	/* The file keeps the first cut bytes of a name: one that long may
	 * have lost its end, and what is left could demangle to another
	 * function's name. */
	if (cut && n >= cut)
		return NULL;
	pthread_once(&once, find_demangler);
	if (!cxa_demangle)
		return NULL;
	mangled = strndup(name, n);
	if (!mangled)
		return NULL;
	d = cxa_demangle(mangled, NULL, NULL, &status);
	free(mangled);
	if (!d || status != 0) {
		free(d);
		return NULL;
	}
	dlen = strlen(d);
	rest = strlen(name + n);
	out = malloc(dlen + rest + 1);
	if (out) {
		memcpy(out, d, dlen);
		memcpy(out + dlen, name + n, rest + 1);
	}
	free(d);
	return out;
}

int cs_demangle_fnmatch(const char *glob, const char *name, size_t cut)
{
	char *d;
	int ret;

	if (fnmatch(glob, name, 0) == 0)
		return 0;
	d = cs_demangle(name, cut);
	if (!d)
		return FNM_NOMATCH;
	ret = fnmatch(glob, d, 0);
	free(d);
	return ret;
}
