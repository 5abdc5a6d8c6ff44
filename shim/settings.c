/* SPDX-License-Identifier: MIT */
/* CACHESHIM_* environment variables, parsed once into struct cs_settings. */
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/presets.h"
#include "common/targetspec.h"
#include "shim/internal.h"

#define CS_DEFAULT_CAPACITY_MB 256u
#define CS_MAX_CAPACITY_MB 65536u
/* A site table slot holds a site block's offset / CS_SITE_ALIGN in 32 bits. */
_Static_assert((uint64_t)CS_MAX_CAPACITY_MB << 20 <= (uint64_t)CS_SITE_ALIGN << 32,
	       "site offsets fit a slot");
#define CS_MAX_WINDOW 4096u
/* parse_target zeroes a pattern from literal on; glob gets its string. */
_Static_assert(offsetof(struct cs_target_pattern, literal) ==
		       sizeof(((struct cs_target_pattern *)0)->glob),
	       "glob is a pattern's only member before literal");

/* Copies the trimmed token [b, e) into out (size outlen).  Returns its
 * length, or -1 if it does not fit. */
static int copy_token(const char *b, const char *e, char *out, size_t outlen)
{
	while (b < e && isspace((unsigned char)*b))
		b++;
	while (e > b && isspace((unsigned char)e[-1]))
		e--;
	if ((size_t)(e - b) >= outlen)
		return -1;
	memcpy(out, b, (size_t)(e - b));
	out[e - b] = '\0';
	return (int)(e - b);
}

static int parse_target(struct cs_settings *s, const char *tok)
{
	struct cs_target_pattern *p = &s->targets[s->ntargets];
	size_t namelen, i;
	unsigned argn;

	switch (cs_target_spec(tok, &namelen, &argn)) {
	case CS_TSPEC_OK:
		break;
	case CS_TSPEC_SUFFIX:
		cs_log("CACHESHIM_TARGETS: '%s': expected NAME or NAME:argN%s; ignored", tok,
		       cs_target_spec_hint(tok));
		return -EINVAL;
	case CS_TSPEC_ARGN:
		cs_log("CACHESHIM_TARGETS: '%s': N in :argN must be 1..16; ignored", tok);
		return -EINVAL;
	case CS_TSPEC_NO_NAME:
		cs_log("CACHESHIM_TARGETS: '%s' has no function name; ignored", tok);
		return -EINVAL;
	case CS_TSPEC_CHARS:
		cs_log("CACHESHIM_TARGETS: '%.*s' is not a function name or glob%s; ignored",
		       (int)namelen, tok, cs_target_spec_hint(tok));
		return -EINVAL;
	case CS_TSPEC_ADDRESS:
		cs_log("CACHESHIM_TARGETS: '%.*s' is neither a function name nor "
		       "MODULE+0xOFFSET; ignored",
		       (int)namelen, tok);
		return -EINVAL;
	}
	if (namelen >= sizeof(p->glob)) {
		cs_log("CACHESHIM_TARGETS: a name longer than %zu characters ('%.20s...'); ignored",
		       sizeof(p->glob) - 1, tok);
		return -EINVAL;
	}
	for (i = 0; i < s->ntargets; i++) {
		if (strlen(s->targets[i].glob) == namelen &&
		    !strncmp(s->targets[i].glob, tok, namelen))
			return 0; /* listed twice: once is enough */
	}
	if (s->ntargets == CS_MAX_TARGET_PATTERNS) {
		cs_log("CACHESHIM_TARGETS: more than %d patterns; '%s' and later ignored",
		       CS_MAX_TARGET_PATTERNS, tok);
		return -E2BIG;
	}
	memset(&p->literal, 0, sizeof(*p) - offsetof(struct cs_target_pattern, literal));
	memcpy(p->glob, tok, namelen);
	p->glob[namelen] = '\0';
	p->literal = (unsigned)strcspn(p->glob, "*?[\\");
	p->argn = (unsigned)argn;
	s->ntargets++;
	return 0;
}

static int parse_event(struct cs_settings *s, const char *tok)
{
	unsigned i;

	for (i = 0; tok[i]; i++) {
		if (!isgraph((unsigned char)tok[i])) {
			cs_log("CACHESHIM_EVENTS: '%s' has a character no event name has; ignored",
			       tok);
			return -EINVAL;
		}
	}
	/* A preset is expanded once the PMU is known (cs_events_setup);
	 * here only its name is checked. */
	if (tok[0] == '@' && !cs_preset_bits(tok)) {
		char names[CS_PRESET_NAMES_MAX];

		cs_log("CACHESHIM_EVENTS: '%s' is not a preset (%s); ignored", tok,
		       cs_preset_names(names, sizeof(names)));
		return -EINVAL;
	}
	for (i = 0; i < s->nevents; i++) {
		if (!strcmp(s->events[i], tok))
			return 0;
	}
	if (s->nevents == CS_MAX_EVENTS) {
		cs_log("CACHESHIM_EVENTS: more than %u events; '%s' and later ignored",
		       CS_MAX_EVENTS, tok);
		return -E2BIG;
	}
	strcpy(s->events[s->nevents++], tok);
	return 0;
}

/* Calls fn for each comma-separated, trimmed, non-empty token of list. */
static int each_token(struct cs_settings *s, const char *var, const char *list, size_t maxlen,
		      int (*fn)(struct cs_settings *, const char *))
{
	char tok[CS_TARGET_PATTERN_MAX + 16];
	const char *b = list, *e;
	int err = 0, r;

	for (;;) {
		e = strchr(b, ',');
		if (!e)
			e = b + strlen(b);
		r = copy_token(b, e, tok, maxlen + 1 < sizeof(tok) ? maxlen + 1 : sizeof(tok));
		if (r < 0) {
			cs_log("%s: an entry longer than %zu characters ('%.20s...'); ignored", var,
			       maxlen, b);
			err = -EINVAL;
		} else if (r > 0 && (r = fn(s, tok)) < 0) {
			err = r;
			if (r == -E2BIG)
				break;
		}
		if (!*e)
			break;
		b = e + 1;
	}
	return err;
}

static int parse_uint(const char *var, const char *v, unsigned long lo, unsigned long hi,
		      unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(v, &end, 10);
	if (!*v || *end || errno || *out < lo || *out > hi || *v == '-') {
		cs_log("%s='%.40s' is not a number from %lu to %lu; using the default", var, v, lo,
		       hi);
		return -EINVAL;
	}
	return 0;
}

int cs_settings_parse(struct cs_settings *s, const char *(*getenv_fn)(const char *name))
{
	const char *v;
	unsigned long n;
	int err = 0;

	memset(s, 0, offsetof(struct cs_settings, targets));
	s->window = CS_DEFAULT_WINDOW;
	s->capacity = (uint64_t)CS_DEFAULT_CAPACITY_MB << 20;

	v = getenv_fn("CACHESHIM_TARGETS");
	if (v && each_token(s, "CACHESHIM_TARGETS", v, CS_TARGET_PATTERN_MAX + 8, parse_target) < 0)
		err = -EINVAL;

	v = getenv_fn("CACHESHIM_EVENTS");
	if (v && each_token(s, "CACHESHIM_EVENTS", v, CS_EVENT_NAME_MAX - 1, parse_event) < 0)
		err = -EINVAL;
	s->events_defaulted = !s->nevents;

	v = getenv_fn("CACHESHIM_OUTPUT");
	if (v && *v && v[strlen(v) - 1] == '/' &&
	    strlen(v) + sizeof(CS_DEFAULT_OUTPUT) <= sizeof(s->output)) {
		/* A directory: the file was named ".1" in it (review helper
		 * 56); `cacheshim run -o dir/` refuses the pattern. */
		strcpy(s->output, v);
		strcat(s->output, CS_DEFAULT_OUTPUT);
		cs_log("CACHESHIM_OUTPUT '%s' has no file name after its last '/'; writing %s", v,
		       s->output);
		err = -EINVAL;
	} else if (v && *v && strlen(v) < sizeof(s->output)) {
		strcpy(s->output, v);
	} else {
		if (v)
			cs_log("CACHESHIM_OUTPUT is %s; writing %s", *v ? "too long" : "empty",
			       CS_DEFAULT_OUTPUT);
		strcpy(s->output, CS_DEFAULT_OUTPUT);
		if (v)
			err = -EINVAL;
	}

	v = getenv_fn("CACHESHIM_WINDOW");
	if (v) {
		if (!parse_uint("CACHESHIM_WINDOW", v, 0, CS_MAX_WINDOW, &n))
			s->window = (unsigned)((n + 15) & ~15ul);
		else
			err = -EINVAL;
	}
	v = getenv_fn("CACHESHIM_CAPACITY_MB");
	if (v) {
		if (!parse_uint("CACHESHIM_CAPACITY_MB", v, 1, CS_MAX_CAPACITY_MB, &n))
			s->capacity = (uint64_t)n << 20;
		else
			err = -EINVAL;
	}
	v = getenv_fn("CACHESHIM_SESSION");
	if (v && *v) {
		char *end;

		errno = 0;
		s->session = strtoull(v, &end, 10);
		if (*end || errno) {
			cs_log("CACHESHIM_SESSION='%.40s' is not a number; ignored", v);
			s->session = 0;
			err = -EINVAL;
		}
	}
	v = getenv_fn("CACHESHIM_MAX_SITES");
	if (v) {
		if (!parse_uint("CACHESHIM_MAX_SITES", v, 1, 100000000, &n))
			s->max_sites = n;
		else
			err = -EINVAL;
	}
	/* Series over time: N > 0 is the calls of a window at the start (a
	 * power of two).  16, not 1: a new window is fresh memory for its
	 * first call, and with one call per window nearly every call of a
	 * target called a few hundred times (1,000 targets in `make bench`)
	 * missed the cache on one (~25 ns per call there). */
	s->series = CS_DEFAULT_SERIES;
	v = getenv_fn("CACHESHIM_SERIES");
	if (v) {
		if (parse_uint("CACHESHIM_SERIES", v, 0, CS_MAX_SERIES, &n)) {
			err = -EINVAL;
		} else if (n & (n - 1)) {
			cs_log("CACHESHIM_SERIES='%.40s' is not 0 or a power of two; using the "
			       "default (%u)",
			       v, CS_DEFAULT_SERIES);
			err = -EINVAL;
		} else {
			s->series = (unsigned)n;
		}
	}
	v = getenv_fn("CACHESHIM_QUIET");
	s->quiet = v && *v && strcmp(v, "0") != 0;
	s->cache = 1;
	v = getenv_fn("CACHESHIM_CACHE");
	if (v) {
		if (!parse_uint("CACHESHIM_CACHE", v, 0, 1, &n))
			s->cache = (int)n;
		else
			err = -EINVAL;
	}
	/* Patterns that match no function at start are said, unless the
	 * launcher says them once at the end of the run, for all of its
	 * processes (a shell script's every process said them). */
	s->say_unmatched = 1;
	v = getenv_fn("CACHESHIM_UNMATCHED");
	if (v && !strcmp(v, "run")) {
		s->say_unmatched = 0; /* set by cacheshim run: it says them */
		s->launcher = 1;
	} else if (v) {
		if (!strcmp(v, "0") || !strcmp(v, "1")) {
			s->say_unmatched = v[0] == '1';
		} else {
			cs_log("CACHESHIM_UNMATCHED='%.40s' is not 0, 1 or run; using the default", v);
			err = -EINVAL;
		}
	}
	/* How calls are caught: entry patching where it is safe, GOT slots
	 * for the rest (and for calls that never reach a patched entry). */
	s->hook = CS_HOOK_GOT | CS_HOOK_ENTRY;
	v = getenv_fn("CACHESHIM_HOOK");
	if (v) {
		if (!strcmp(v, "got"))
			s->hook = CS_HOOK_GOT;
		else if (!strcmp(v, "entry"))
			s->hook = CS_HOOK_ENTRY;
		else if (strcmp(v, "both")) {
			cs_log("CACHESHIM_HOOK='%s' is not got, entry or both; using both", v);
			err = -EINVAL;
		}
	}
	return err;
}

int cs_settings_output_path(const char *pattern, pid_t pid, const char *prog, char *out,
			    size_t outlen)
{
	size_t o = 0;
	char num[24];
	const char *add;
	size_t addlen;

	for (; *pattern; pattern++) {
		add = pattern;
		addlen = 1;
		if (*pattern == '%' && pattern[1]) {
			pattern++;
			if (*pattern == 'p') {
				snprintf(num, sizeof(num), "%d", (int)pid);
				add = num;
				addlen = strlen(num);
			} else if (*pattern == 'e') {
				add = prog;
				addlen = strlen(prog);
			} else if (*pattern == '%') {
				add = "%";
			} else {
				add = pattern - 1; /* unknown: kept as written */
				addlen = 2;
			}
		}
		if (o + addlen >= outlen)
			return -ENAMETOOLONG;
		memcpy(out + o, add, addlen);
		o += addlen;
	}
	out[o] = '\0';
	return 0;
}

int cs_settings_match(const struct cs_settings *s, const char *name)
{
	return cs_settings_match_from(s, name, 0);
}

int cs_settings_match_from(const struct cs_settings *s, const char *name, unsigned from)
{
	unsigned i;

	for (i = from; i < s->ntargets; i++) {
		const char *g = s->targets[i].glob;
		size_t lit = s->targets[i].literal;

		/* Asked for every symbol of every module: the first character
		 * turns most away. */
		if (lit && g[0] != name[0])
			continue;

		/* fnmatch converts both strings to wide characters in a UTF-8
		 * locale (milliseconds over a large program's symbols): compare
		 * the literal part first. */
		if (strncmp(g, name, lit) != 0)
			continue;
		if (!g[lit] ? !name[lit] : !fnmatch(g, name, 0))
			return (int)i;
	}
	return -1;
}

int cs_settings_literals(const struct cs_settings *s, const char **str, size_t *len)
{
	unsigned i;
	int n = 0;

	for (i = 0; i < s->ntargets; i++) {
		const struct cs_target_pattern *p = &s->targets[i];

		if (strchr(p->glob, '+'))
			continue;
		if (!p->literal)
			return -1;
		str[n] = p->glob;
		len[n++] = p->literal;
	}
	return n;
}

/* Functions a call-through wrapper must never stand in front of: those that
 * return twice (the second return would land in a wrapper frame that is
 * gone), start a thread or process on a fresh or shared stack, or are
 * entered by the kernel rather than called (the signal return trampoline). */
#define NEVER(s) {s, sizeof(s) - 1}
static const struct {
	const char *name;
	size_t len;
} never_wrapped[] = {
	NEVER("setjmp"),	NEVER("_setjmp"),	NEVER("__setjmp"),
	NEVER("sigsetjmp"),	NEVER("__sigsetjmp"),	NEVER("savectx"),
	NEVER("getcontext"),	NEVER("__getcontext"),	NEVER("swapcontext"),
	NEVER("__swapcontext"), NEVER("vfork"),		NEVER("__vfork"),
	NEVER("clone"),		NEVER("__clone"),	NEVER("__clone_internal"),
	NEVER("clone3"),	NEVER("__clone3"),	NEVER("__restore_rt"),
	NEVER("__sigreturn"),	NEVER("_dl_runtime_resolve"), NEVER("_start"),
	/* They find their caller's module by the return address, which
	 * would be the trampoline's: dlsym(RTLD_NEXT) answered the object
	 * after libcacheshim, and dlopen took its $ORIGIN and scope. */
	NEVER("dlsym"),		NEVER("dlvsym"),	NEVER("dlopen"),
	NEVER("dlmopen"),
};
#undef NEVER

int cs_settings_never_wrap(const char *name)
{
	/* Asked for every symbol of every module at start (thousands in
	 * libruby): the length and the first character answer most. */
	size_t i, len = strlen(name);

	for (i = 0; i < sizeof(never_wrapped) / sizeof(never_wrapped[0]); i++) {
		if (never_wrapped[i].len == len && name[0] == never_wrapped[i].name[0] &&
		    !memcmp(name, never_wrapped[i].name, len))
			return 1;
	}
	return 0;
}

int cs_settings_is_glob(const struct cs_target_pattern *p)
{
	return p->glob[p->literal] != '\0';
}

void cs_settings_matched(struct cs_settings *s, int pat, const char *name)
{
	s->targets[pat].matched++;
	cs_settings_taken(s, pat, name);
}

void cs_settings_taken(struct cs_settings *s, int pat, const char *name)
{
	int j = pat;

	while ((j = cs_settings_match_from(s, name, (unsigned)j + 1)) >= 0)
		if (!s->targets[j].taken_by)
			s->targets[j].taken_by = (unsigned)pat + 1;
}
