/* SPDX-License-Identifier: MIT */
/* What a pass over the loaded modules learned about each one, for the next
 * passes.  Passes run at start and after every dlopen, and each looks at
 * every module; a program loading 200 libraries one by one made every
 * pass compare each module with every other one (the module map, the
 * entry and GOT passes' bookkeeping): ~150 us per dlopen at 200 modules,
 * most of a start-up that took 4x as long as without the shim.
 *
 * A module is known by its load address and program headers.  Another
 * file may be loaded at an unloaded one's address, so a memo is dropped
 * whenever a module listed may have been unloaded (cs_load_subs).  A pass
 * lists the modules in the same order each time (the link map's), so a
 * lookup starts after the last one found.  Each memo is its user's, under
 * its user's lock. */
#include <errno.h>
#include <link.h>
#include <stdlib.h>

#include "shim/internal.h"

void cs_load_memo_clear(struct cs_load_memo *m)
{
	size_t i;

	if (m->drop)
		for (i = 0; i < m->n; i++)
			m->drop(m->e[i].data);
	free(m->e);
	m->e = NULL;
	m->n = m->cap = m->next = 0;
}

void cs_load_memo_abandon(struct cs_load_memo *m)
{
	m->e = NULL;
	m->n = m->cap = m->next = 0;
	m->valid = 0;
}

int cs_load_memo_check(struct cs_load_memo *m, unsigned long long subs)
{
	if (subs != m->subs || !m->valid)
		cs_load_memo_clear(m);
	m->subs = subs;
	m->valid = subs != CS_NO_SUBS;
	return m->valid;
}

int cs_load_memo_find(struct cs_load_memo *m, uint64_t base, const void *phdr, uintptr_t *data)
{
	size_t k, i;

	for (k = 0; m->valid && k < m->n; k++) {
		i = m->next + k < m->n ? m->next + k : m->next + k - m->n;
		if (m->e[i].base == base && m->e[i].phdr == phdr) {
			*data = m->e[i].data;
			m->next = i + 1 < m->n ? i + 1 : 0;
			return 1;
		}
	}
	return 0;
}

int cs_load_memo_add(struct cs_load_memo *m, uint64_t base, const void *phdr, uintptr_t data)
{
	if (!m->valid)
		return -ENOSYS;
	if (m->n == m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 32;
		void *p = realloc(m->e, cap * sizeof(*m->e));

		if (!p)
			return -ENOMEM;
		m->e = p;
		m->cap = cap;
	}
	m->e[m->n].base = base;
	m->e[m->n].phdr = phdr;
	m->e[m->n].data = data;
	m->n++;
	return 0;
}

/* dl_iterate_phdr's dlpi_subs, meant for such caches, is no count of
 * unloads once another namespace has modules (dlmopen, LD_AUDIT): glibc
 * takes from its count of loads each other namespace's count of modules
 * once per module there (2.36: adds - n0 - k * k for k modules), so a
 * dlmopen of 2 modules made it fall by 2, and with an unload of 2 modules
 * here it stayed where it was: what the memos kept of the unloaded ones
 * stood for the modules loaded at their addresses (test_got_memo.sh).
 * The count of loads (dlpi_adds, any namespace's) less the modules listed
 * moves at every unload of one listed, whatever the other namespaces do
 * (and at every load in another namespace: only a memo lost). */
struct listed {
	unsigned long long adds, n;
	int have_adds, by_calls;
};

static int count_listed(struct dl_phdr_info *info, size_t size, void *data)
{
	struct listed *l = data;
	const struct link_map *m;

	if (l->by_calls) {
		l->n++;
		return 0;
	}
	l->have_adds = size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds);
	l->adds = l->have_adds ? info->dlpi_adds : 0;
	/* The list dl_iterate_phdr walks for the shim (the base
	 * namespace's: it is preloaded), as the debugger interface shows
	 * it, walked under the lock held here: a
	 * callback per module cost ~30 ns each, ~4 ms over 200 dlopens,
	 * counted several times a pass. */
	if (!_r_debug.r_map) {
		l->by_calls = 1;
		l->n = 1;
		return 0;
	}
	for (m = _r_debug.r_map; m; m = m->l_next)
		l->n++;
	return 1;
}

unsigned long long cs_load_subs(void)
{
	struct listed l = {0};

	/* From a pass's callback too: the loader's lock, held there, is
	 * taken again (it is recursive), and the list counted is the one
	 * the pass is looking at. */
	dl_iterate_phdr(count_listed, &l);
	return l.have_adds && l.adds >= l.n ? l.adds - l.n : CS_NO_SUBS;
}

static int read_adds(struct dl_phdr_info *info, size_t size, void *data)
{
	*(unsigned long long *)data =
		size >= offsetof(struct dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds)
			? info->dlpi_adds
			: CS_NO_SUBS;
	return 1;
}

unsigned long long cs_load_adds(void)
{
	unsigned long long adds = CS_NO_SUBS;

	dl_iterate_phdr(read_adds, &adds);
	return adds;
}
