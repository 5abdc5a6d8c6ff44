/* SPDX-License-Identifier: MIT */
/* What one entry of CACHESHIM_TARGETS may be: shared by the shim
 * (shim/settings.c), which ignores a bad entry with a line, and `cacheshim
 * run` (report/cmd_run.c), which refuses it before the program runs. */
#ifndef CACHESHIM_COMMON_TARGETSPEC_H
#define CACHESHIM_COMMON_TARGETSPEC_H

#include <stddef.h>

/* Distinct patterns the shim takes; later ones are ignored (said). */
#define CS_MAX_TARGET_PATTERNS 64
/* Bytes of a pattern's name or glob, NUL included: C++ names run to
 * thousands of characters.  (A report file keeps the first
 * CS_TARGET_NAME_MAX - 1 bytes of the name of each function it wraps.) */
#define CS_TARGET_PATTERN_MAX 4096

enum cs_target_spec_error {
	CS_TSPEC_OK = 0,
	CS_TSPEC_SUFFIX, /* ':' not followed by argN */
	CS_TSPEC_ARGN, /* :argN with N outside 1..16 */
	CS_TSPEC_NO_NAME, /* nothing before ':' */
	CS_TSPEC_CHARS, /* a character no function name or glob has */
	CS_TSPEC_ADDRESS, /* a '+' that is not MODULE+0xHEX */
};

/* Checks the trimmed, non-empty entry tok: NAME (a function name or an
 * fnmatch(3) glob) or MODULE+0xOFFSET, either with :argN (N 1..16).  Sets
 * *namelen to the length before ':' and *argn to N (0 without :argN). */
enum cs_target_spec_error cs_target_spec(const char *tok, size_t *namelen, unsigned *argn);

/* A hint for a bad entry tok that reads as a demangled C++ name
 * (ns::f, f(int), operator new): that C++ names are given mangled; ""
 * otherwise.  The shim and `cacheshim run` add it to their lines. */
const char *cs_target_spec_hint(const char *tok);

/* Length of the name a compiler clone was made from: "foo" of
 * "foo.constprop.0", "a.b" of "a.b.isra.0"; strlen(name) when name has no
 * clone suffix.  The shim matches a clone by that name (shim/entry.c), and
 * `cacheshim run` says a target matched nothing by the same rule. */
size_t cs_target_clone_base_len(const char *name);

#endif
