/* SPDX-License-Identifier: MIT */
/* What the GOT pass learned about each loaded module, kept for its next
 * passes: whether the module's names can hold a target at all, and which
 * of its relocations name one.  A pass runs at start and after every
 * dlopen, and read every relocation of every module each time (libruby's
 * 4,100, matched by name, ~0.1 ms a pass: a Ruby program requiring
 * extensions paid it once per extension); with the memo a later pass
 * visits only the few that name a target.  What it keeps depends only on
 * the module's own tables and on the patterns, which never change.
 *
 * A module is known by its load address and program headers; a load at
 * the same address after an unload may be another file, so the whole memo
 * is dropped whenever dl_iterate_phdr's count of unloads (dlpi_subs,
 * meant for such caches) has moved.  Every function runs under
 * cs_got_lock. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "shim/internal.h"

struct memo {
	uint64_t base;
	const void *phdr;
	int imports; /* a pattern's literal is among its dynamic names */
	size_t n;
	const Elf64_Rela **rel; /* the relocations that name a target */
};

static struct memo *memo;
static size_t nmemo, capmemo, next_look; /* passes list modules in the same order */
static unsigned long long memo_subs;

void cs_got_memo_clear(void)
{
	size_t i;

	for (i = 0; i < nmemo; i++)
		free(memo[i].rel);
	free(memo);
	memo = NULL;
	nmemo = capmemo = next_look = 0;
}

void cs_got_memo_check(unsigned long long subs)
{
	if (subs != memo_subs)
		cs_got_memo_clear();
	memo_subs = subs;
}

int cs_got_memo_find(uint64_t base, const void *phdr, int *imports, const Elf64_Rela *const **rel,
		     size_t *n)
{
	size_t k, i;

	for (k = 0; k < nmemo; k++) {
		i = (next_look + k) % nmemo;
		if (memo[i].base == base && memo[i].phdr == phdr) {
			*imports = memo[i].imports;
			*rel = memo[i].rel;
			*n = memo[i].n;
			next_look = i + 1;
			return 1;
		}
	}
	return 0;
}

int cs_got_memo_add(uint64_t base, const void *phdr, int imports, const Elf64_Rela **rel, size_t n)
{
	if (nmemo == capmemo) {
		size_t cap = capmemo ? 2 * capmemo : 32;
		struct memo *p = realloc(memo, cap * sizeof(*memo));

		if (!p)
			return -ENOMEM;
		memo = p;
		capmemo = cap;
	}
	memo[nmemo].base = base;
	memo[nmemo].phdr = phdr;
	memo[nmemo].imports = imports;
	memo[nmemo].rel = rel;
	memo[nmemo].n = n;
	nmemo++;
	return 0;
}
