/* SPDX-License-Identifier: MIT */
/* Entry patching: the first instructions of a target (after a leading
 * endbr64) become a 5-byte jump to a stub next to the module, so every
 * call that enters the function is caught: direct calls, calls of static
 * and hidden functions, calls inside -Bsymbolic or LTO builds.  The stub
 * pushes the target's index and enters the trampoline like a GOT stub; the
 * trampoline then calls a thunk holding the displaced instructions
 * (relocated by shim/relocate.c) followed by a jump back.
 *
 * Safety comes first: a function is patched only when shim/relocate.c
 * accepts its entry and no direct branch anywhere in its module lands
 * inside the patched bytes (shim/branchscan.c); otherwise it is refused,
 * with the reason logged once and recorded in the report, and its GOT
 * slots catch what they can (CACHESHIM_HOOK=both, the default).
 *
 * Writing code (shim/codewrite.c): the constructor runs while the process
 * has one thread, and the dlopen wrapper patches a new module before its
 * handle is returned; with other threads running, patches are written
 * int3 first, or deferred (GOT slots only) when that is not safe. */
#include <dlfcn.h>
#include <errno.h>
#include <fnmatch.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "shim/internal.h"

void cs_trampoline(void);

#define STUB_BYTES CS_STUB_BYTES
#define ENTRY_BYTES (STUB_BYTES + CS_THUNK_MAX) /* stub + thunk */
#define MAX_MODULES 1024
#define MAX_RANGES 16

/* A module handled already: one load of it.  The dlclose wrapper forgets
 * a module only after the real dlclose returned, and meanwhile another
 * thread's dlopen may map another module at its addresses (or the same
 * file again) and pass it: so a load is known by more than its address. */
struct done_module {
	uint64_t base, lo, hi; /* load bias, mapped range; hi == 0: a free entry */
	uint64_t name_hash; /* of its path */
	uint64_t mark_at; /* one of its patched entries, 0 if none */
	uint8_t mark[5]; /* the jump there (a new load has the file's bytes) */
	uint8_t orig[5]; /* the file's bytes there */
	uint64_t file_id[3]; /* its file when patched: device, inode, mtime */
	int retry; /* some of its patches were deferred */
	int gone; /* another module overlaps it: it was unloaded */
};

/* A matched function of the module being patched. */
struct candidate {
	uint64_t addr, size;
	uint64_t next; /* the first function start after addr (bound) */
	int pattern; /* settings pattern index */
	int hidden; /* 1: not in .dynsym; 2: an address target (sorts last) */
	int never; /* a never-wrapped function's alias, or the entry point (bound) */
	int folded; /* a .symtab "name@VERSION" of .dynsym's "name" (bound) */
	char name[CS_TARGET_NAME_MAX];
};

/* Everything collected about one module during a pass. */
struct module_pass {
	const char *path; /* "" for the main program */
	const char *shown; /* for messages */
	char base_name[4096]; /* basename, for address targets */
	uint64_t base;
	struct cs_elf_module *elf;
	uint64_t entry_point; /* the program's (AT_ENTRY) */
	struct candidate *cand;
	size_t ncand, capcand;
	/* The never-wrapped names a pattern matched, said once each (a
	 * function comes once from each symbol table that lists it). */
	struct said {
		uint64_t addr;
		const char *name;
	} *said;
	size_t nsaid, capsaid;
	uint64_t rlo[MAX_RANGES], rhi[MAX_RANGES];
	unsigned nranges;
	struct cs_branch_set branches;
	int have_branches;
	int deferred; /* some patches could not be written safely yet */
	uint64_t mark_at; /* a patch written in this pass, 0 if none */
	uint8_t mark[5]; /* its bytes as written */
	uint8_t orig[5]; /* and before */
	int fresh; /* loaded since the last pass: no thread runs its code yet */
};

pthread_mutex_t cs_entry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct done_module done[MAX_MODULES];
static unsigned ndone;
static int patched_total;
/* The loads handled since the last unload, each with 1 + its index in
 * done[] (0: never to be patched): a pass after a dlopen skips them
 * without comparing each with every entry of done[] (shim/loadmemo.c). */
static struct cs_load_memo handled;

/* ---- the module's functions ---- */

static int push_candidate(struct module_pass *mp, const char *name, uint64_t addr, uint64_t size,
			  int pattern, int hidden)
{
	struct candidate *c;

	if (mp->ncand == mp->capcand) {
		size_t cap = mp->capcand ? mp->capcand * 2 : 64;

		c = realloc(mp->cand, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		mp->cand = c;
		mp->capcand = cap;
	}
	c = &mp->cand[mp->ncand++];
	c->addr = addr;
	c->size = size;
	c->next = UINT64_MAX;
	c->never = 0;
	c->folded = 0;
	c->pattern = pattern;
	c->hidden = hidden;
	snprintf(c->name, sizeof(c->name), "%s", name);
	return 0;
}

/* Pattern index matching a function name: the name itself, or for a
 * compiler clone (foo.constprop.0) the name it was made from. */
static int match_name(const char *name)
{
	char base[CS_TARGET_PATTERN_MAX];
	size_t n;
	int pat = cs_settings_match(&cs_g.settings, name);

	if (pat >= 0)
		return pat;
	/* Asked for every symbol of a wanted module (twice for libc's):
	 * most names have no dot, so no clone suffix. */
	if (!strchr(name, '.'))
		return -1;
	n = cs_elf_clone_base_len(name);
	if (!name[n] || n >= sizeof(base))
		return -1;
	memcpy(base, name, n);
	base[n] = '\0';
	return cs_settings_match(&cs_g.settings, base);
}

/* A cold fragment (foo.cold, foo.part.0.cold.1) is a piece of another
 * function, reached by its jumps: never a function entry to patch. */
static int is_fragment(const char *name)
{
	const char *p = name;

	while ((p = strstr(p, ".cold"))) {
		p += 5;
		if (*p == '\0' || *p == '.')
			return 1;
	}
	return 0;
}

/* An IFUNC's symbol is its resolver, which picks one of several
 * implementations (__strlen_avx2, ...) when the loader binds it: the
 * function itself has no symbol here and is reached only through GOT
 * slots, which the GOT pass takes (CACHESHIM_HOOK=got or both).  Counted
 * for the start-up message (init.c) when that pass is off. */
static int collect_ifunc(const char *name, void *arg)
{
	int pat = match_name(name);

	(void)arg;
	if (pat >= 0) {
		struct cs_target_pattern *tp = &cs_g.settings.targets[pat];

		if (!tp->ifuncs++)
			snprintf(tp->ifunc_name, sizeof(tp->ifunc_name), "%s", name);
		cs_settings_taken(&cs_g.settings, pat, name);
	}
	return 0;
}

/* Pattern pat matched a function that is never wrapped.  Said for a name
 * given as such; a glob (rb_*, *) matches such functions as a matter of
 * course, and python3 under '*' said ~30 of these lines in each of its
 * processes: counted, said at start only if they are all it matched. */
static void never_matched(int pat, const char *name)
{
	struct cs_target_pattern *tp = &cs_g.settings.targets[pat];

	cs_settings_matched(&cs_g.settings, pat, name);
	if (tp->never++)
		return;
	snprintf(tp->never_name, sizeof(tp->never_name), "%s", name);
	/* A name said once, however many functions have it (static ones of
	 * several files, in .symtab). */
	if (!cs_settings_is_glob(tp) && !cs_g.settings.quiet)
		cs_log("'%s' returns twice, looks at its caller or is not entered by a call: "
		       "never wrapped",
		       name);
}

/* Names compare up to a symbol version: "memcpy@GLIBC_2.2.5" in .symtab is
 * the "memcpy" of .dynsym. */
static int namecmp(const char *a, const char *b)
{
	for (; *a == *b && *a && *a != '@'; a++, b++)
		;
	return (*a == '@' ? 0 : (unsigned char)*a) - (*b == '@' ? 0 : (unsigned char)*b);
}

/* The first pass over the module's symbols: the functions a pattern
 * matches.  Every symbol of every wanted module comes here (libc's debug
 * file lists ~7,000 functions, and most come twice): the name is matched
 * first, and only a match is looked at further. */
static int collect(const struct cs_elf_func *f, void *arg)
{
	struct module_pass *mp = arg;
	int pat = match_name(f->name);
	unsigned i;

	/* A cold fragment is never a function entry. */
	if (pat < 0 || is_fragment(f->name))
		return 0;
	/* The program's entry point too, whatever its name: the loader jumps
	 * there with the kernel's initial stack (argc where a return address
	 * would be).  (Aliases of such functions that a pattern matches are
	 * marked by bound: only a candidate's address matters.) */
	if (f->addr == mp->entry_point || cs_settings_never_wrap(f->name)) {
		for (i = 0; i < mp->nsaid; i++)
			if (mp->said[i].addr == f->addr && !namecmp(mp->said[i].name, f->name))
				return 0;
		if (mp->nsaid == mp->capsaid) {
			size_t cap = mp->capsaid ? mp->capsaid * 2 : 32;
			struct said *p = realloc(mp->said, cap * sizeof(*p));

			/* (Out of memory: a name may be said twice.) */
			if (p) {
				mp->said = p;
				mp->capsaid = cap;
			}
		}
		if (mp->nsaid < mp->capsaid) {
			mp->said[mp->nsaid].addr = f->addr;
			mp->said[mp->nsaid++].name = f->name;
		}
		never_matched(pat, f->name);
		return 0;
	}
	if (strchr(cs_g.settings.targets[pat].glob, '+'))
		return 0;
	return push_candidate(mp, f->name, f->addr, f->size, pat, f->source != CS_SYM_DYNSYM);
}

/* Candidates by address, and at one address the exported name first (the
 * name users know: close before __libc_close), an address target last (a
 * function's name, sysmalloc, before libc.so.6+0x96b20), then by name:
 * one function's entries in several symbol tables end up side by side. */
static int cmp_candidate(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	int c;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->hidden != y->hidden)
		return x->hidden - y->hidden;
	c = namecmp(x->name, y->name);
	return c ? c : strcmp(x->name, y->name);
}

/* Sorts the candidates and keeps one per (address, name): the first, so
 * .dynsym's (a function listed in .dynsym and the debug file's .symtab is
 * matched from both). */
static void sort_candidates(struct module_pass *mp)
{
	size_t i, j, n = 0;

	qsort(mp->cand, mp->ncand, sizeof(*mp->cand), cmp_candidate);
	for (i = 0; i < mp->ncand; i++) {
		for (j = n; j > 0 && mp->cand[j - 1].addr == mp->cand[i].addr; j--)
			if (!namecmp(mp->cand[j - 1].name, mp->cand[i].name))
				break;
		if (j > 0 && mp->cand[j - 1].addr == mp->cand[i].addr)
			continue; /* the same function and name again */
		mp->cand[n++] = mp->cand[i];
	}
	mp->ncand = n;
}

/* The second pass over the module's symbols, once there are candidates:
 * each candidate's next function start (a patch must not reach past it),
 * never-wrapped functions at a candidate's address under another name
 * (setjmp is also _setjmp...: each such candidate is marked, however many
 * there are), and .dynsym's name of a candidate that is a .symtab name
 * with a version ("realpath@@GLIBC_2.3" is "realpath": one function, the
 * .dynsym name's, as it always was; a pattern matching only the version's
 * text, '*@*' or '*.*', does not make it a target). */
static int bound(const struct cs_elf_func *f, void *arg)
{
	struct module_pass *mp = arg;
	size_t lo = 0, hi = mp->ncand, mid, k;
	int never;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (mp->cand[mid].addr < f->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* cand[lo - 1] is the last candidate below f: f may be its next.
	 * (Only that one: any candidate below it has a start of its own
	 * between, cand[lo - 1]'s, which is a symbol's or, for an address
	 * target, an .eh_frame_hdr start that bound_candidates takes.) */
	if (lo > 0 && f->addr < mp->cand[lo - 1].next)
		mp->cand[lo - 1].next = f->addr;
	if (lo == mp->ncand || mp->cand[lo].addr != f->addr)
		return 0;
	never = f->addr == mp->entry_point || cs_settings_never_wrap(f->name);
	for (k = lo; k < mp->ncand && mp->cand[k].addr == f->addr; k++) {
		struct candidate *c = &mp->cand[k];

		c->never |= never;
		if (f->source == CS_SYM_DYNSYM && c->hidden == 1 && strchr(c->name, '@') &&
		    !namecmp(c->name, f->name))
			c->folded = 1;
	}
	return 0;
}

/* Each candidate's next function start, from the symbols (bound) and the
 * FDEs (sorted), given to every candidate at its address.  Returns 0 or
 * bound's error. */
static int bound_candidates(struct module_pass *mp)
{
	const uint64_t *fde;
	size_t nfde = cs_elf_fde_starts(mp->elf, &fde), i, lo, hi, mid;
	int ret;

	if (mp->entry_point)
		for (i = 0; i < mp->ncand; i++)
			if (mp->cand[i].addr == mp->entry_point)
				mp->cand[i].never = 1;
	ret = cs_elf_each_func(mp->elf, bound, mp);
	if (ret)
		return ret;
	for (i = mp->ncand; i-- > 0;) {
		struct candidate *c = &mp->cand[i];

		if (i + 1 < mp->ncand && mp->cand[i + 1].addr == c->addr)
			c->next = mp->cand[i + 1].next;
		for (lo = 0, hi = nfde; lo < hi;) {
			mid = (lo + hi) / 2;
			if (fde[mid] <= c->addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nfde && fde[lo] < c->next)
			c->next = fde[lo];
	}
	/* The folded names go, now that each kept one has its next. */
	for (i = lo = 0; i < mp->ncand; i++)
		if (!mp->cand[i].folded)
			mp->cand[lo++] = mp->cand[i];
	mp->ncand = lo;
	return 0;
}

/* The "+0x" of glob if it is an address target whose module glob matches
 * this module's file name, else NULL. */
static const char *address_here(const struct module_pass *mp, const char *glob)
{
	const char *plus = strrchr(glob, '+');
	char mod[CS_TARGET_NAME_MAX];

	if (!plus || plus == glob || strncmp(plus, "+0x", 3) ||
	    (size_t)(plus - glob) >= sizeof(mod))
		return NULL;
	memcpy(mod, glob, (size_t)(plus - glob));
	mod[plus - glob] = '\0';
	return fnmatch(mod, mp->base_name, 0) ? NULL : plus;
}

/* Address targets "module+0xOFFSET" naming this module: accepted only at a
 * function start listed in .eh_frame_hdr. */
static void address_targets(struct module_pass *mp)
{
	unsigned i;

	for (i = 0; i < cs_g.settings.ntargets; i++) {
		const char *glob = cs_g.settings.targets[i].glob, *plus = address_here(mp, glob);
		uint64_t off;
		char *end;

		if (!plus)
			continue;
		errno = 0;
		off = strtoull(plus + 3, &end, 16);
		if (errno || *end || end == plus + 3) {
			CS_LOG_ONCE("target '%s': the offset is not a hexadecimal number", glob);
			continue;
		}
		if (!cs_elf_is_fde_start(mp->elf, mp->base + off)) {
			cs_log("target '%s' is not a function start listed in %s's .eh_frame_hdr; "
			       "not wrapped",
			       glob, mp->base_name);
			continue;
		}
		push_candidate(mp, glob, mp->base + off, 0, (int)i, 2);
	}
}

/* End of the executable range holding addr, 0 if none. */
static uint64_t range_end(const struct module_pass *mp, uint64_t addr)
{
	unsigned i;

	for (i = 0; i < mp->nranges; i++) {
		if (addr >= mp->rlo[i] && addr < mp->rhi[i])
			return mp->rhi[i];
	}
	return 0;
}

/* The first function start after c, capped by its range's end. */
static uint64_t next_start(const struct candidate *c, uint64_t end)
{
	return c->next < end ? c->next : end;
}

/* ---- stubs and thunks next to the module ---- */

/* Writes into s the stub of target idx that will run at address at:
 * push $idx; jmp *trampoline (the region's first word). */
static void make_stub(uint8_t *s, uint64_t at, uint64_t region, unsigned idx)
{
	int32_t disp = (int32_t)((int64_t)region - (int64_t)(at + 11));

	s[0] = 0x68; /* push imm32 */
	memcpy(s + 1, &idx, 4);
	s[5] = 0xff; /* jmp *disp32(%rip) */
	s[6] = 0x25;
	memcpy(s + 7, &disp, 4);
	memset(s + 11, 0xcc, STUB_BYTES - 11);
}

/* ---- refusing ---- */

static void refuse(const struct module_pass *mp, int idx, const char *why, uint64_t off)
{
	struct cs_target *t = &cs_g.targets[idx];
	struct cs_refusal_block *b;
	int pat;

	/* A function loaded again (a reused target) and refused for the
	 * same reason: said and recorded once, not at each of thousands of
	 * loads. */
	if (t->refused_why == why && (t->block->how & CS_HOOK_REFUSED))
		return;
	t->refused_why = why;
	t->block->how |= CS_HOOK_REFUSED;
	b = cs_output_reserve(sizeof(*b));
	if (b) {
		b->target = cs_target_id((unsigned)idx);
		b->offset = off;
		snprintf(b->why, sizeof(b->why), "%s", why);
		cs_output_publish(b, CS_BLOCK_REFUSAL);
	}
	/* The pattern that took it: t->name may be cut, and a glob matching
	 * past the cut (*IiSaIiEEE4work*) would not match it again. */
	pat = t->entry_pattern ? t->entry_pattern - 1 : match_name(t->name);
	if (pat >= 0 && cs_settings_is_glob(&cs_g.settings.targets[pat])) {
		/* Said for the pattern at the end of the pass (say_refused):
		 * python3 under '*' said ~4,300 of these lines. */
		struct cs_target_pattern *tp = &cs_g.settings.targets[pat];

		if (!tp->refused++) {
			/* (Both in cs_g: snprintf's restrict would be violated
			 * to the compiler's eye.) */
			size_t n = strnlen(t->name, sizeof(tp->refused_name) - 1);

			memcpy(tp->refused_name, t->name, n);
			tp->refused_name[n] = '\0';
			tp->refused_why = why;
		}
	} else if (!cs_g.settings.quiet) {
		cs_log("entry of '%s' in %s not patched: %s (at +0x%llx)%s", t->name, mp->shown,
		       why, (unsigned long long)off,
		       cs_g.settings.hook & CS_HOOK_GOT ? "; its GOT slots are used instead" : "");
	}
}

/* The refusals of glob patterns' functions in this pass, one line per
 * pattern.  Not under `cacheshim run`, whose summary at the end counts
 * the refused targets of all its processes (report --targets lists them
 * with their reasons). */
static void say_refused(void)
{
	unsigned i;

	for (i = 0; i < cs_g.settings.ntargets; i++) {
		struct cs_target_pattern *tp = &cs_g.settings.targets[i];

		if (tp->refused && !cs_g.settings.quiet && !cs_g.settings.launcher)
			cs_log("target '%s': the entries of %u function%s not patched ('%s': "
			       "%s%s)%s; cacheshim report --targets shows each one's reason",
			       tp->glob, tp->refused, tp->refused == 1 ? "" : "s",
			       tp->refused_name, tp->refused_why, tp->refused > 1 ? "; ..." : "",
			       cs_g.settings.hook & CS_HOOK_GOT ? "; their GOT slots are used instead"
								 : "");
		tp->refused = 0;
	}
}

/* ---- unwind information for stubs and thunks ---- */

/* Registers an .eh_frame for the written stubs and thunks of this pass.
 * Without it the unwinder found no frame information at an address in a
 * thunk and stopped there: an exception thrown from a signal handler for
 * a fault in a relocated instruction (-fnon-call-exceptions) called
 * std::terminate, and a crash handler's backtrace() ended at the thunk.
 * The memory stays registered for good, as the code stays mapped. */
static void register_unwind(const struct cs_code_patch *pend, const unsigned *plen, size_t n)
{
	const uint8_t **code = calloc(n ? n : 1, sizeof(*code));
	uint64_t *addr = calloc(n ? n : 1, sizeof(*addr));
	unsigned *len = calloc(n ? n : 1, sizeof(*len));
	size_t i, k = 0, size;
	uint8_t *blob = NULL;

	if (code && addr && len) {
		for (i = 0; i < n; i++) {
			if (!pend[i].written)
				continue;
			code[k] = (const uint8_t *)(uintptr_t)pend[i].redirect;
			addr[k] = pend[i].redirect;
			len[k++] = plen[i];
		}
		blob = cs_unwind_blob(code, addr, len, k, &size);
	}
	free(code);
	free(addr);
	free(len);
	if (blob)
		cs_unwind_add(blob); /* registered once libgcc_s is loaded */
}

/* ---- one module ---- */

static void patch_candidates(struct module_pass *mp)
{
	struct cs_code_patch *pend;
	unsigned *plen = NULL; /* each pending patch's stub and thunk bytes */
	uint8_t *region, *stage; /* where the stubs run; where they are made */
	size_t size, i, npend = 0, used = STUB_BYTES;
	uint64_t lo = UINT64_MAX, hi = 0;
	const char *failed = NULL, *no_room = NULL;
	unsigned written = 0;
	int alias, ret;

	for (i = 0; i < mp->nranges; i++) {
		lo = mp->rlo[i] < lo ? mp->rlo[i] : lo;
		hi = mp->rhi[i] > hi ? mp->rhi[i] : hi;
	}
	size = (STUB_BYTES + mp->ncand * ENTRY_BYTES + 15) & ~(size_t)15;
	region = cs_code_map_near(lo, hi, size);
	pend = calloc(mp->ncand, sizeof(*pend));
	plen = calloc(mp->ncand, sizeof(*plen));
	stage = calloc(1, size);
	if (!region || !pend || !plen || !stage) {
		CS_LOG_ONCE("no memory within 2 GB of %s for entry stubs; using GOT slots only",
			    mp->shown);
		/* Each candidate is still a target, refused with the reason:
		 * left out, a function called by pointer or from inside its
		 * module went unmeasured with nothing in the report saying so
		 * (after ~1,700 loads of a library, its neighbourhood full of
		 * stub regions). */
		no_room = region ? "out of memory for the entry stubs"
				 : "no memory within 2 GB of the module for entry stubs";
		free(pend);
		free(plen);
		free(stage);
		pend = NULL;
		plen = NULL;
		stage = NULL;
		if (region)
			cs_code_unmap_near(region, size);
		region = NULL;
	} else {
		*(uint64_t *)stage = (uint64_t)(uintptr_t)cs_trampoline;
	}
	for (i = 0; i < mp->ncand; i++) {
		struct candidate *c = &mp->cand[i];
		uint64_t end = range_end(mp, c->addr), func_end, limit;
		struct cs_reloc_plan plan;
		const char *why = NULL;
		uint64_t why_off = 0;
		uint8_t *stub, *thunk;
		int idx, n;
		unsigned k;

		if (!end)
			continue; /* not code (a symbol in a data segment) */
		if (c->never) {
			never_matched(c->pattern, c->name); /* an alias of one */
			continue;
		}
		if (cs_entry_is_patched(c->addr) || (i && mp->cand[i - 1].addr == c->addr)) {
			/* An alias (close, __libc_close) of a function patched
			 * already, or tried under its first name just before
			 * (candidates are sorted by address): one patch. */
			cs_settings_matched(&cs_g.settings, c->pattern, c->name);
			continue;
		}
		idx = cs_target_add(c->name, c->addr, cs_g.settings.targets[c->pattern].argn,
				    c->hidden ? CS_HOOK_HIDDEN : 0);
		if (idx < 0)
			continue;
		cs_g.targets[idx].entry_pattern = c->pattern + 1;
		cs_settings_matched(&cs_g.settings, c->pattern, c->name);
		/* A pass after a deferral tries only the deferred ones again. */
		if (cs_g.targets[idx].entry_done)
			continue;
		cs_g.targets[idx].entry_done = 1;
		if (no_room) {
			refuse(mp, idx, no_room, 0);
			continue;
		}
		limit = next_start(c, end);
		/* No size (an address target, an assembly function without
		 * .size): its FDE says where it ends. */
		func_end = c->size ? c->addr + c->size : cs_elf_fde_end(mp->elf, c->addr);
		if (!func_end)
			func_end = limit;
		if (func_end > end)
			func_end = end;
		if (limit < func_end)
			limit = func_end;
		if (cs_reloc_plan((const uint8_t *)(uintptr_t)c->addr, c->addr, func_end, limit,
				  &plan, &why, &why_off) < 0) {
			refuse(mp, idx, why, why_off);
			continue;
		}
		if (!mp->have_branches) {
			if (cs_branches_scan(mp->elf, mp->base, cs_g.settings.cache,
					     &mp->branches) < 0) {
				refuse(mp, idx, "the module's branches could not be scanned", 0);
				continue;
			}
			mp->have_branches = 1;
		}
		if (cs_branches_inside(&mp->branches, plan.patch, plan.patch + plan.window)) {
			refuse(mp, idx,
			       "a direct branch elsewhere in the module lands inside the patched "
			       "bytes",
			       plan.patch - c->addr);
			continue;
		}
		stub = region + used;
		thunk = stub + STUB_BYTES;
		n = cs_reloc_emit(&plan, (uint64_t)(uintptr_t)thunk, stage + used + STUB_BYTES,
				  CS_THUNK_MAX, &why);
		if (n < 0) {
			refuse(mp, idx, why, 0);
			continue;
		}
		make_stub(stage + used, (uint64_t)(uintptr_t)stub, (uint64_t)(uintptr_t)region,
			  (unsigned)idx);
		used += (STUB_BYTES + (size_t)n + 15) & ~(size_t)15;
		pend[npend].at = plan.patch;
		memcpy(pend[npend].orig, (const void *)(uintptr_t)plan.patch, sizeof(pend[npend].orig));
		pend[npend].redirect = (uint64_t)(uintptr_t)stub;
		pend[npend].cookie = idx;
		pend[npend].n = plan.window;
		pend[npend].bytes[0] = 0xe9; /* jmp rel32 */
		{
			int32_t rel =
				(int32_t)((int64_t)(uintptr_t)stub - (int64_t)(plan.patch + 5));

			memcpy(pend[npend].bytes + 1, &rel, 4);
		}
		/* Nothing branches into the rest of the window: fill it with
		 * int3, so a wrong jump there stops at once. */
		for (k = 5; k < plan.window; k++)
			pend[npend].bytes[k] = 0xcc;
		pend[npend].thunk = (uint64_t)(uintptr_t)thunk;
		plen[npend] = STUB_BYTES + (unsigned)n;
		npend++;
	}
	if (no_room)
		return;
	ret = cs_code_install(region, stage, used);
	free(stage);
	if (ret < 0) {
		CS_LOG_ONCE("cannot make the entry stubs executable: %s; using GOT slots only",
			    strerror(-ret));
		failed = "the entry stubs cannot be made executable";
	} else if (npend) {
		/* Calls through GOT stubs may take the thunks from now on: they
		 * are executable and do what the function's first bytes do. */
		for (i = 0; i < npend; i++)
			cs_g.hot[pend[i].cookie].call = pend[i].thunk;
		if (cs_code_write(pend, npend, mp->fresh, &failed) < 0)
			mp->deferred = 1;
	}
	for (i = 0; i < npend; i++) {
		struct cs_target *t = &cs_g.targets[pend[i].cookie];

		if (!pend[i].written) {
			/* Not written: calls go to the function itself. */
			cs_g.hot[pend[i].cookie].call = t->addr;
			t->entry_done = !mp->deferred;
			/* A deferral is recorded once, not at every retry. */
			if (!(mp->deferred && t->entry_deferred))
				refuse(mp, pend[i].cookie,
				       failed ? failed : "the patch could not be written",
				       pend[i].at - t->addr);
			t->entry_deferred |= mp->deferred;
			continue;
		}
		t->block->how |= CS_HOOK_ENTRY;
		t->block->how &= ~CS_HOOK_REFUSED; /* deferred before, done now */
		t->refused_why = NULL;
		if (!mp->mark_at) {
			mp->mark_at = pend[i].at;
			memcpy(mp->mark, (const void *)(uintptr_t)pend[i].at, sizeof(mp->mark));
			memcpy(mp->orig, pend[i].orig, sizeof(mp->orig));
		}
		patched_total++;
		written++;
		/* Another name's GOT stub (hooked while this was deferred)
		 * must not run the patched entry: that would count twice. */
		for (alias = cs_target_at(t->addr); alias >= 0;
		     alias = cs_g.targets[alias].next_same) {
			if (&cs_g.targets[alias] != t)
				cs_g.hot[alias].call = pend[i].thunk;
		}
	}
	if (written)
		register_unwind(pend, plen, npend);
	free(pend);
	free(plen);
	if (!written)
		cs_code_unmap_near(region, size); /* nothing runs there */
	else
		cs_code_unmap_near(region + used, size - used); /* never used */
}

/* The module's wanted names (cs_elf_open_wanted): the patterns' literal
 * prefixes.  Returns 0 when every module must be read: a pattern without
 * one, or an address target naming this module. */
static int wanted_names(const struct module_pass *mp, struct cs_elf_wanted *w,
			const char **s, size_t *len)
{
	unsigned i;
	int n;

	for (i = 0; i < cs_g.settings.ntargets; i++)
		if (address_here(mp, cs_g.settings.targets[i].glob))
			return 0;
	n = cs_settings_literals(&cs_g.settings, s, len);
	if (n < 0)
		return 0;
	w->s = s;
	w->len = len;
	w->n = (unsigned)n;
	return 1;
}

static void patch_module(struct module_pass *mp, const struct dl_phdr_info *info)
{
	const char *needle[CS_MAX_TARGET_PATTERNS];
	size_t needle_len[CS_MAX_TARGET_PATTERNS];
	struct cs_elf_wanted wanted;
	const char *slash;

	slash = strrchr(*mp->path ? mp->path : cs_g.hdr_program, '/');
	snprintf(mp->base_name, sizeof(mp->base_name), "%s",
		 slash ? slash + 1 : (*mp->path ? mp->path : cs_g.hdr_program));
	if (cs_elf_open_wanted(mp->path, info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum,
			       wanted_names(mp, &wanted, needle, needle_len) ? &wanted : NULL,
			       &mp->elf) != 0)
		return;
	mp->nranges = cs_elf_exec_ranges(mp->elf, mp->rlo, mp->rhi, MAX_RANGES);
	mp->entry_point = getauxval(AT_ENTRY);
	if (cs_elf_each_func(mp->elf, collect, mp) < 0)
		goto out;
	if (!(cs_g.settings.hook & CS_HOOK_GOT))
		cs_elf_each_ifunc(mp->elf, collect_ifunc, NULL);
	address_targets(mp);
	if (!mp->ncand)
		goto out;
	sort_candidates(mp);
	if (bound_candidates(mp) < 0)
		goto out;
	patch_candidates(mp);
out:
	if (mp->have_branches)
		cs_branches_free(&mp->branches);
	free(mp->cand);
	free(mp->said);
	cs_elf_close(mp->elf);
}

/* ---- every module ---- */

struct module_list {
	struct {
		uint64_t base, lo, hi, name_hash;
		int done; /* its entry in done[], -1: new */
		struct dl_phdr_info info;
		char path[4096];
	} * m;
	size_t n, cap;
	int checked; /* the memo of handled loads checked */
};

static uint64_t first_load(const struct dl_phdr_info *info)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		if (info->dlpi_phdr[i].p_type == PT_LOAD)
			return info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
	}
	return info->dlpi_addr;
}

static uint64_t last_end(const struct dl_phdr_info *info)
{
	uint64_t hi = 0;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	return hi;
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	while (s && *s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ull;
	return h;
}

/* Whether n bytes at a lie in an executable segment of the module. */
static int in_code(const struct dl_phdr_info *info, uint64_t a, uint64_t n)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && a >= lo &&
		    a + n <= lo + ph->p_memsz)
			return 1;
	}
	return 0;
}

/* path's device, inode and modification time into id; zeros if unknown. */
static void file_id(const char *path, uint64_t id[3])
{
	struct stat st;

	id[0] = id[1] = id[2] = 0;
	if (*path && stat(path, &st) == 0) {
		id[0] = (uint64_t)st.st_dev;
		id[1] = (uint64_t)st.st_ino;
		id[2] = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	}
}

/* Whether the module listed is the load d was made of: the same file at
 * the same addresses, with the patch written still there (the same file
 * loaded again at the same address has the file's bytes). */
static int same_load(const struct done_module *d, const struct dl_phdr_info *info, uint64_t lo,
		     uint64_t hi, uint64_t hash)
{
	if (d->base != info->dlpi_addr || d->lo != lo || d->hi != hi || d->name_hash != hash)
		return 0;
	/* Nothing written: a new load of the file gets what the old one
	 * got (the same refusals, its deferred patches retried). */
	if (!d->mark_at)
		return 1;
	if (!in_code(info, d->mark_at, sizeof(d->mark)))
		return 0;
	if (!memcmp((const void *)(uintptr_t)d->mark_at, d->mark, sizeof(d->mark)))
		return 1;
	if (!memcmp((const void *)(uintptr_t)d->mark_at, d->orig, sizeof(d->orig)))
		return 0; /* the file's own bytes: loaded anew */
	/* Neither: a rebuilt file loaded anew, or this load with someone
	 * else's bytes written over ours (a debugger's breakpoint, another
	 * hooking library), which must never be patched a second time. */
	{
		uint64_t id[3];

		if (!info->dlpi_name || !*info->dlpi_name)
			return 1; /* the program: never loaded anew */
		file_id(info->dlpi_name, id);
		return id[1] && !memcmp(id, d->file_id, sizeof(id));
	}
}

/* dl_iterate_phdr runs with the loader's lock held: only list modules
 * here, open their files afterwards. */
static int list_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct module_list *l = data;
	uint64_t lo, hi, hash;
	unsigned i, found = ndone;
	uintptr_t seen;

	(void)size;
	/* (The loader's lock is held: no module comes or goes meanwhile.) */
	if (!l->checked) {
		l->checked = 1;
		cs_load_memo_check(&handled, cs_load_subs());
	}
	if (cs_load_memo_find(&handled, info->dlpi_addr, info->dlpi_phdr, &seen) &&
	    (!seen || (seen - 1 < ndone && done[seen - 1].base == info->dlpi_addr &&
		       done[seen - 1].hi && !done[seen - 1].retry)))
		return 0;
	if (cs_modules_untouchable(info)) {
		cs_load_memo_add(&handled, info->dlpi_addr, info->dlpi_phdr, 0);
		return 0;
	}
	lo = first_load(info);
	hi = last_end(info);
	hash = name_hash(info->dlpi_name);
	/* A module handled before overlapping this one and not its load was
	 * unloaded, whether or not its dlclose has been seen yet. */
	for (i = 0; i < ndone; i++) {
		if (!done[i].hi || done[i].hi <= lo || done[i].lo >= hi)
			continue;
		if (same_load(&done[i], info, lo, hi, hash))
			found = i;
		else
			done[i].gone = 1;
	}
	i = found;
	if (i < ndone && !done[i].retry) {
		cs_load_memo_add(&handled, info->dlpi_addr, info->dlpi_phdr, i + 1);
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		void *p = realloc(l->m, cap * sizeof(*l->m));

		if (!p)
			return 1;
		l->m = p;
		l->cap = cap;
	}
	l->m[l->n].base = info->dlpi_addr;
	l->m[l->n].lo = lo;
	l->m[l->n].hi = hi;
	l->m[l->n].name_hash = hash;
	l->m[l->n].info = *info;
	l->m[l->n].done = i < ndone ? (int)i : -1;
	snprintf(l->m[l->n].path, sizeof(l->m[l->n].path), "%s",
		 info->dlpi_name ? info->dlpi_name : "");
	l->n++;
	return 0;
}

int cs_entry_patch_all(int *held)
{
	struct module_list l = {0};
	struct done_module *d;
	size_t i;
	unsigned j;
	int before;

	pthread_mutex_lock(&cs_entry_lock);
	before = patched_total;
	dl_iterate_phdr(list_module, &l);
	/* Every listed module in the module map before its targets are added:
	 * a module another thread's dlopen just loaded, over the range of one
	 * unloaded by a dlclose not seen yet, was otherwise found as that one
	 * (its targets named after the wrong module). */
	cs_modules_scan();
	/* The functions of an unloaded module are not the new one's: left
	 * as they are, the new module's would pass for patched already. */
	for (i = 0; i < ndone; i++) {
		if (done[i].gone) {
			cs_target_forget_range(done[i].lo, done[i].hi, 0);
			memset(&done[i], 0, sizeof(done[i]));
		}
	}
	for (i = 0; i < l.n; i++) {
		struct module_pass mp;
		struct link_map *lm;
		void *h = NULL;

		/* Held loaded while its code is read and patched: once the
		 * loader's lock is released another thread may dlclose it
		 * (SIGSEGV reading its code, with threads loading and
		 * unloading libraries).  One no longer loaded at the address
		 * it was listed with is left alone. */
		if (l.m[i].path[0]) {
			h = dlopen(l.m[i].path, RTLD_LAZY | RTLD_NOLOAD);
			if (!h)
				continue;
			*held = 1;
			if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || lm->l_addr != l.m[i].base) {
				dlclose(h);
				continue;
			}
		}
		memset(&mp, 0, sizeof(mp));
		mp.path = l.m[i].path;
		mp.shown = *mp.path ? mp.path : "the program";
		mp.base = l.m[i].base;
		mp.fresh = l.m[i].done < 0;
		l.m[i].info.dlpi_name = l.m[i].path;
		patch_module(&mp, &l.m[i].info);
		if (h)
			dlclose(h);
		/* A module with deferred patches is tried again at the next
		 * pass (the next dlopen); being old by then, only while the
		 * process has one thread. */
		if (l.m[i].done >= 0) {
			d = &done[l.m[i].done];
		} else {
			/* A free entry (hi == 0), or a new one. */
			for (j = 0; j < ndone && done[j].hi; j++)
				;
			if (j == MAX_MODULES)
				continue;
			if (j == ndone)
				ndone++;
			d = &done[j];
			memset(d, 0, sizeof(*d));
			d->base = l.m[i].base;
			d->lo = l.m[i].lo;
			d->hi = l.m[i].hi;
			d->name_hash = l.m[i].name_hash;
			file_id(l.m[i].path, d->file_id);
		}
		d->retry = mp.deferred;
		if (l.m[i].done < 0)
			cs_load_memo_add(&handled, l.m[i].info.dlpi_addr, l.m[i].info.dlpi_phdr,
					 (uintptr_t)(d - done) + 1);
		if (!d->mark_at && mp.mark_at) {
			d->mark_at = mp.mark_at;
			memcpy(d->mark, mp.mark, sizeof(d->mark));
			memcpy(d->orig, mp.orig, sizeof(d->orig));
		}
	}
	free(l.m);
	say_refused();
	before = patched_total - before;
	pthread_mutex_unlock(&cs_entry_lock);
	return before;
}

int cs_entry_is_patched(uint64_t addr)
{
	int i;

	for (i = cs_target_at(addr); i >= 0; i = cs_g.targets[i].next_same) {
		if (!cs_g.targets[i].unloaded && cs_g.hot[i].call != addr)
			return 1;
	}
	return 0;
}

/* Marks the entries of done[] whose load this module is. */
static int mark_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	uint8_t *loaded = data;
	uint64_t lo = first_load(info), hi = last_end(info), hash = name_hash(info->dlpi_name);
	unsigned i;

	(void)size;
	for (i = 0; i < ndone; i++) {
		if (done[i].hi && same_load(&done[i], info, lo, hi, hash))
			loaded[i] = 1;
	}
	return 0;
}

void cs_entry_memo_abandon(void)
{
	cs_load_memo_abandon(&handled);
}

void cs_entry_forget_unloaded(void)
{
	static uint8_t loaded[MAX_MODULES];
	unsigned i, j;

	/* A module unloaded: its address may be reused by another one (or
	 * is already: another module at its address is not it). */
	pthread_mutex_lock(&cs_entry_lock);
	cs_load_memo_clear(&handled); /* it names entries of done[] by index */
	memset(loaded, 0, sizeof(loaded));
	dl_iterate_phdr(mark_loaded, loaded);
	for (i = j = 0; i < ndone; i++) {
		if (loaded[i]) {
			done[j++] = done[i];
			continue;
		}
		/* Its functions too, with it: the module map may have seen
		 * it loaded still (our dlclose wrapper runs after the real
		 * one), and a module loaded there next would find them. */
		if (done[i].hi)
			cs_target_forget_range(done[i].lo, done[i].hi, 0);
	}
	ndone = j;
	pthread_mutex_unlock(&cs_entry_lock);
}
