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

/* The variant of a constructor or destructor that mangled (n bytes) names,
 * as words to show after its demangled name d, or "" (a plain function,
 * or the complete-object one that calls know).  The demangled names of
 * ~Foo()'s deleting (D0), complete (D1) and base-object (D2) variants, or
 * Foo()'s complete (C1), base-object (C2) and allocating (C3) ones, are
 * the same: two rows of a report looked alike.  The code is found by
 * trying the other digit: a variant code demangles alike with it, the
 * same letters inside a name (fooD0) do not. */
static const char *variant(const char *mangled, size_t n, const char *d)
{
	static const struct {
		char code[3], other;
		const char *words;
	} v[] = {
		{"D0", '1', " [deleting]"},	  {"D2", '1', " [base object]"},
		{"C2", '1', " [base object]"}, {"C3", '1', " [allocating]"},
	};
	char *copy;
	size_t i, k;
	int status, same;

	/* A nested name, or a thunk to one (_ZThn8_N...D0Ev: a non-virtual
	 * thunk to the deleting destructor, next to the complete one's). */
	if (n < 6 || (strncmp(mangled, "_ZN", 3) && strncmp(mangled, "_ZTh", 4) &&
		      strncmp(mangled, "_ZTv", 4) && strncmp(mangled, "_ZTc", 4)))
		return "";
	/* After the code: the end of the nested name (E), a constructor
	 * template's arguments (C2IdEET_) or an ABI tag (C2B5cxx11Ev). */
	for (i = n - 3; i >= 3; i--) {
		if ((mangled[i] != 'C' && mangled[i] != 'D') ||
		    (mangled[i + 2] != 'E' && mangled[i + 2] != 'I' && mangled[i + 2] != 'B'))
			continue;
		for (k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
			char *o;

			if (strncmp(mangled + i, v[k].code, 2))
				continue;
			copy = strndup(mangled, n);
			if (!copy)
				return "";
			copy[i + 1] = v[k].other;
			o = cxa_demangle(copy, NULL, NULL, &status);
			same = o && status == 0 && !strcmp(o, d);
			free(o);
			free(copy);
			if (same)
				return v[k].words;
		}
	}
	return "";
}

/* cs_demangle, the variant's words added or not. */
static char *demangle(const char *name, size_t cut, int marked)
{
	size_t n, dlen, rest, wlen, at;
	char *mangled, *d, *out;
	const char *words, *clone;
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
	if (!d || status != 0) {
		free(mangled);
		free(d);
		return NULL;
	}
	/* (Only names with C or D, a digit, then E, I or B are tried again.) */
	words = marked ? variant(mangled, n, d) : "";
	free(mangled);
	dlen = strlen(d);
	wlen = strlen(words);
	rest = strlen(name + n);
	/* The words right after the name, before a clone's "[clone .cold]". */
	clone = strstr(d, " [clone ");
	at = clone ? (size_t)(clone - d) : dlen;
	out = malloc(dlen + wlen + rest + 1);
	if (out) {
		memcpy(out, d, at);
		memcpy(out + at, words, wlen);
		memcpy(out + at + wlen, d + at, dlen - at);
		memcpy(out + dlen + wlen, name + n, rest + 1);
	}
	free(d);
	return out;
}

char *cs_demangle(const char *name, size_t cut)
{
	return demangle(name, cut, 1);
}

int cs_demangle_fnmatch(const char *glob, const char *name, size_t cut)
{
	char *d;
	int ret, marked;

	if (fnmatch(glob, name, 0) == 0)
		return 0;
	/* As shown ("*[deleting]" selects deleting destructors), and without
	 * the variant's words ('ns::Base::~Base()' selects every variant). */
	for (marked = 1, ret = FNM_NOMATCH; marked >= 0 && ret; marked--) {
		d = demangle(name, cut, marked);
		if (!d)
			return FNM_NOMATCH;
		ret = fnmatch(glob, d, 0);
		free(d);
	}
	return ret;
}
