/* SPDX-License-Identifier: MIT */
/* The module map: every loaded module gets a module block (path,
 * build-id, load bias, address range) so that the report can symbolize
 * call sites offline.  Used on slow paths only. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim/internal.h"

struct module {
	uint64_t lo, hi, base; /* lo == hi: unloaded, the slot free */
	uint32_t id;
	uint64_t file; /* hash of its path and build-id: the same file loaded again */
	char name_head[64]; /* to tell a reused range from the old module */
	struct cs_module_block *block; /* in the report file */
};

/* Slots of unloaded modules are taken again once all are used (a program
 * loading and unloading a library thousands of times); ids only grow. */
static struct module modules[CS_MAX_MODULES];
static unsigned nmodules;
static uint32_t last_id;
pthread_mutex_t cs_modules_lock = PTHREAD_MUTEX_INITIALIZER;

static void module_range(const struct dl_phdr_info *info, uint64_t *lo, uint64_t *hi)
{
	int i;

	*lo = UINT64_MAX;
	*hi = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < *lo)
			*lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > *hi)
			*hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
}

/* Copies the NT_GNU_BUILD_ID of the module into out.  Returns its length. */
static uint32_t build_id(const struct dl_phdr_info *info, uint8_t *out, size_t outlen)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *desc = p + sizeof(*n) + ((n->n_namesz + 3) & ~3u);

			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(p + sizeof(*n), "GNU", 4)) {
				size_t len = n->n_descsz < outlen ? n->n_descsz : outlen;

				memcpy(out, desc, len);
				return (uint32_t)len;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

static const char *module_path(const struct dl_phdr_info *info)
{
	/* The main program has an empty name in the link map. */
	return info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : cs_g.hdr_program;
}

/* Whether the module at [lo, hi) from path is recorded: an entry of that
 * range and path that no module recorded later overlaps.  Otherwise the
 * entry is an unloaded module's that a dlclose not seen yet left: this
 * library was unloaded, another loaded over its range, unloaded too, and
 * this one loaded there again.  Taken for known, lookups found the one in
 * between (the newest) and its targets and call sites went to it. */
static int known(uint64_t lo, uint64_t hi, const char *path)
{
	uint32_t same = 0, later = 0;
	unsigned i;

	for (i = 0; i < nmodules; i++) {
		const struct module *m = &modules[i];

		if (m->lo == m->hi)
			continue;
		if (m->lo == lo && m->hi == hi &&
		    !strncmp(m->name_head, path, sizeof(m->name_head) - 1)) {
			if (m->id > same)
				same = m->id;
		} else if (m->lo < hi && lo < m->hi && m->id > later) {
			later = m->id;
		}
	}
	return same > later;
}

/* A free slot: a new one, else one whose module was unloaded. */
static struct module *free_slot(void)
{
	unsigned i;

	if (nmodules < CS_MAX_MODULES)
		return &modules[nmodules];
	for (i = 0; i < nmodules; i++)
		if (modules[i].lo == modules[i].hi)
			return &modules[i];
	return NULL;
}

static uint64_t file_hash(const char *path, const uint8_t *id, uint32_t idlen)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	uint32_t i;

	for (; *path; path++)
		h = (h ^ (uint8_t)*path) * 0x100000001b3ull;
	for (i = 0; i < idlen; i++)
		h = (h ^ id[i]) * 0x100000001b3ull;
	return h;
}

/* The loads recorded (or found recorded) since the last unload: a scan
 * after a dlopen looks only at the new module (known() compares with every
 * module: at 200 modules, each scan was ~200 x 200 comparisons, and each
 * dlopen made three). */
static struct cs_load_memo scan_memo;
/* cs_load_subs when every recorded module was last seen loaded, and whether
 * it was (cs_modules_forget_unloaded). */
static unsigned long long alive_subs;
static int alive_checked;

static int record(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *path = module_path(info);
	struct cs_module_block *b;
	struct module *m;
	uint64_t lo, hi;
	size_t len = strlen(path) + 1;
	uint32_t bsize;
	uintptr_t seen;
	int *checked = data;

	(void)size;
	/* (The loader's lock is held: no module comes or goes meanwhile.) */
	if (!*checked) {
		*checked = 1;
		cs_load_memo_check(&scan_memo, cs_load_subs());
	}
	if (cs_load_memo_find(&scan_memo, info->dlpi_addr, info->dlpi_phdr, &seen))
		return 0;
	cs_unwind_saw(path);
	module_range(info, &lo, &hi);
	if (lo >= hi || known(lo, hi, path)) {
		cs_load_memo_add(&scan_memo, info->dlpi_addr, info->dlpi_phdr, 1);
		return 0;
	}
	if (!cs_g.hdr || !(m = free_slot()))
		return 0;
	bsize = (uint32_t)((sizeof(*b) + len + 7) & ~7ul);
	b = cs_output_reserve(bsize);
	if (!b)
		return 0;
	b->id = ++last_id;
	b->base = info->dlpi_addr;
	b->lo = lo;
	b->hi = hi;
	b->build_id_len = build_id(info, b->build_id, sizeof(b->build_id));
	memcpy(b->path, path, len);
	cs_output_publish(b, CS_BLOCK_MODULE);
	/* Lookups read the table without the lock: a free slot matches no
	 * address (hi == lo == 0) until its hi is stored, last. */
	m->base = info->dlpi_addr;
	m->id = b->id;
	m->block = b;
	m->file = file_hash(path, b->build_id, b->build_id_len);
	snprintf(m->name_head, sizeof(m->name_head), "%s", path);
	__atomic_store_n(&m->lo, lo, __ATOMIC_RELEASE);
	__atomic_store_n(&m->hi, hi, __ATOMIC_RELEASE);
	if (m == &modules[nmodules])
		__atomic_store_n(&nmodules, nmodules + 1, __ATOMIC_RELEASE);
	cs_load_memo_add(&scan_memo, info->dlpi_addr, info->dlpi_phdr, 1);
	return 0;
}

void cs_modules_scan(void)
{
	int checked = 0;

	pthread_mutex_lock(&cs_modules_lock);
	dl_iterate_phdr(record, &checked);
	pthread_mutex_unlock(&cs_modules_lock);
}

/* A forked child's module blocks: the parent's, copied out of the
 * parent's file before the child lets go of it (cs_modules_save) and
 * written into the child's own (cs_modules_restore).  Not a new scan: a
 * thread of the parent may have held the loader's lock at the fork, and
 * it stays held in the child (dl_iterate_phdr would wait forever); and the
 * modules keep their ids, by which target blocks name them. */
static char *saved;
static size_t saved_size;

void cs_modules_save(void)
{
	size_t size = 0, at = 0;
	unsigned i;

	free(saved);
	saved = NULL;
	for (i = 0; i < nmodules; i++)
		if (modules[i].lo != modules[i].hi && modules[i].block)
			size += modules[i].block->hdr.size;
	saved = malloc(size ? size : 1);
	saved_size = saved ? size : 0;
	for (i = 0; i < nmodules; i++) {
		struct module *m = &modules[i];

		if (saved && m->lo != m->hi && m->block) {
			memcpy(saved + at, m->block, m->block->hdr.size);
			at += m->block->hdr.size;
		}
		m->block = NULL; /* the parent's file: not ours any more */
	}
}

void cs_modules_restore(void)
{
	size_t at = 0;
	unsigned i;

	for (i = 0; i < nmodules && at < saved_size; i++) {
		const struct cs_module_block *old = (const struct cs_module_block *)(saved + at);
		struct module *m = &modules[i];
		struct cs_module_block *b;

		if (m->lo == m->hi || m->id != old->id)
			continue;
		at += old->hdr.size;
		b = cs_output_reserve(old->hdr.size);
		if (!b)
			break;
		memcpy((char *)b + sizeof(b->hdr), (const char *)old + sizeof(old->hdr),
		       old->hdr.size - sizeof(old->hdr));
		m->block = b;
		cs_output_publish(b, CS_BLOCK_MODULE);
	}
	free(saved);
	saved = NULL;
	saved_size = 0;
}

static int still_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	uint8_t *alive = data;
	uint64_t lo, hi;
	unsigned i;

	module_range(info, &lo, &hi);
	for (i = 0; i < nmodules; i++) {
		if (modules[i].lo == lo && modules[i].hi == hi &&
		    !strncmp(modules[i].name_head, module_path(info),
			     sizeof(modules[i].name_head) - 1))
			alive[i] = 1;
	}
	return 0;
}

int cs_modules_forget_unloaded(void)
{
	static uint8_t alive[CS_MAX_MODULES];
	unsigned long long subs;
	unsigned i;
	int gone = 0;

	pthread_mutex_lock(&cs_modules_lock);
	/* Nothing unloaded since every recorded module was seen loaded (a
	 * module recorded since was loaded then): nothing to forget.  Every
	 * pass that held modules asks, and the full look compares each
	 * module with every other one. */
	subs = cs_load_subs();
	if (alive_checked && subs == alive_subs && subs != CS_NO_SUBS) {
		pthread_mutex_unlock(&cs_modules_lock);
		return 0;
	}
	memset(alive, 0, sizeof(alive));
	dl_iterate_phdr(still_loaded, alive);
	for (i = 0; i < nmodules; i++) {
		struct module *m = &modules[i];

		if (alive[i] || m->lo == m->hi)
			continue;
		/* Targets defined there are gone too: a new module at the same
		 * address gets targets (and a module id) of its own.  Not the
		 * new module's: another thread's dlopen may have mapped one
		 * there and patched it before this dlclose is seen; marked
		 * unloaded, its entry-patched functions would look unpatched
		 * and the next GOT pass hook their slots too (counted twice). */
		cs_target_forget_range(m->lo, m->hi, m->id);
		__atomic_store_n(&m->hi, 0, __ATOMIC_RELEASE); /* matches nothing from here */
		m->lo = 0;
		gone++;
	}
	/* (subs read before the look: an unload during it is looked at again.) */
	alive_subs = subs;
	alive_checked = 1;
	pthread_mutex_unlock(&cs_modules_lock);
	return gone;
}

static uint32_t find(uint64_t addr, uint64_t *base)
{
	unsigned i, n = __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE);
	uint32_t id = 0;

	/* The newest (highest id) wins: a module loaded over an unloaded
	 * one's range before the unload was seen. */
	for (i = 0; i < n; i++) {
		const struct module *m = &modules[i];

		if (addr < __atomic_load_n(&m->hi, __ATOMIC_ACQUIRE) && addr >= m->lo &&
		    m->id > id) {
			*base = m->base;
			id = m->id;
		}
	}
	return id;
}

static void sift_down(uint32_t *a, unsigned root, unsigned n)
{
	unsigned child;

	for (; (child = 2 * root + 1) < n; root = child) {
		uint32_t tmp;

		if (child + 1 < n && a[child + 1] > a[child])
			child++;
		if (a[root] >= a[child])
			return;
		tmp = a[root];
		a[root] = a[child];
		a[child] = tmp;
	}
}

unsigned cs_modules_live(uint32_t *ids, unsigned max)
{
	unsigned i, k, n = 0, total = __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE);

	for (i = 0; i < total && n < max; i++)
		if (__atomic_load_n(&modules[i].hi, __ATOMIC_ACQUIRE))
			ids[n++] = modules[i].id;
	/* Heapsort: no malloc (this may run in a signal handler's slow
	 * path), and reused slots leave the ids in no order. */
	for (k = n / 2; k-- > 0;)
		sift_down(ids, k, n);
	for (k = n; k-- > 1;) {
		uint32_t tmp = ids[0];

		ids[0] = ids[k];
		ids[k] = tmp;
		sift_down(ids, 0, k);
	}
	return n;
}

/* The slot of module id, NULL if its slot was taken by another since. */
static const struct module *slot_of(uint32_t id)
{
	unsigned i, n = __atomic_load_n(&nmodules, __ATOMIC_ACQUIRE);

	for (i = 0; id && i < n; i++)
		if (modules[i].id == id)
			return &modules[i];
	return NULL;
}

int cs_modules_in_file(uint32_t id)
{
	const struct module *m = slot_of(id);

	return m && m->lo != m->hi && m->block;
}

uint64_t cs_modules_file_any(uint32_t id)
{
	const struct module *m = slot_of(id);

	return m ? m->file : 0;
}

uint64_t cs_modules_file(uint32_t id)
{
	const struct module *m = slot_of(id);

	return m && m->lo != m->hi ? m->file : 0;
}

/* Set in a forked child until the loader's lock is known to be free: a
 * thread of the parent may have held it at the fork, and then it is held
 * for good in the child, where dl_iterate_phdr waits for it forever. */
static int loader_maybe_locked;

void cs_modules_after_fork(void)
{
	loader_maybe_locked = 1;
}

void cs_modules_memo_abandon(void)
{
	cs_load_memo_abandon(&scan_memo);
	alive_checked = 0;
}

void cs_modules_loader_usable(void)
{
	loader_maybe_locked = 0;
}

uint32_t cs_modules_lookup(uint64_t addr, uint64_t *base)
{
	uint32_t id;

	*base = 0;
	id = find(addr, base);
	/* An address in no module we know (generated code, or a module
	 * loaded behind dlopen's back): scan, unless that could hang. */
	if (!id && !__atomic_load_n(&loader_maybe_locked, __ATOMIC_RELAXED)) {
		cs_modules_scan();
		id = find(addr, base);
	}
	return id;
}

/* The linker's symbol for our own ELF header: where this library is loaded
 * (its first segment starts at address 0).  Not dladdr: this runs inside
 * dl_iterate_phdr, and dladdr takes the loader's lock (see got.c). */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));

int cs_modules_untouchable(const struct dl_phdr_info *info)
{
	const uint64_t self_base = (uint64_t)(uintptr_t)__ehdr_start; /* our own load bias */
	const char *n = info->dlpi_name ? info->dlpi_name : "";
	/* Ourselves (our own libc calls must not come back to us), the vdso
	 * and the dynamic loader (its code and GOT serve the resolver). */
	return info->dlpi_addr == self_base || !strncmp(n, "linux-vdso", 10) ||
	       strstr(n, "/ld-linux") != NULL || !info->dlpi_phnum;
}
