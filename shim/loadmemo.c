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
 * whenever dl_iterate_phdr's count of unloads (dlpi_subs, meant for such
 * caches) has moved.  A pass lists the modules in the same order each
 * time (the link map's), so a lookup starts after the last one found.
 * Each memo is its user's, under its user's lock. */
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

unsigned long long cs_load_subs_of(const struct dl_phdr_info *info, size_t size)
{
	return size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)
		       ? info->dlpi_subs
		       : CS_NO_SUBS;
}

static int read_subs(struct dl_phdr_info *info, size_t size, void *data)
{
	*(unsigned long long *)data = cs_load_subs_of(info, size);
	return 1;
}

unsigned long long cs_load_subs(void)
{
	unsigned long long subs = CS_NO_SUBS;

	dl_iterate_phdr(read_subs, &subs);
	return subs;
}
