/* SPDX-License-Identifier: MIT */
/* GOT patching: every JUMP_SLOT (PLT) and GLOB_DAT slot of every loaded
 * module whose symbol matches a target pattern is pointed at the target's
 * entry stub.  GLOB_DAT slots make function pointers taken through the GOT
 * (method tables, callbacks) reach the wrapper too.  So that such a pointer
 * still equals the same function's address stored in data by a symbolic
 * relocation (CPython checks a static type's tp_free against PyObject_Free),
 * those R_X86_64_64 words are pointed at the stub as well.  RELRO pages are
 * made writable around the store (never executable ones: the GOT is data).
 * Runs in the constructor and after every dlopen, under one lock. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shim/internal.h"

struct dyn_info {
	uint64_t base; /* load bias */
	const ElfW(Sym) * symtab;
	const char *strtab;
	size_t strsz;
	const ElfW(Rela) * jmprel, *rela;
	size_t jmprel_size, rela_size;
	const ElfW(Versym) * versym;
	const ElfW(Verneed) * verneed;
	uint64_t relro_lo, relro_hi;
	uint64_t lo, hi; /* mapped range: a slot pointing here is unresolved */
	uint64_t rw_lo[4], rw_hi[4]; /* writable PT_LOAD segments */
	int nrw;
	const char *name;
};

pthread_mutex_t cs_got_lock = PTHREAD_MUTEX_INITIALIZER;
static int patched_total;

/* Dynamic-section pointers are relocated in memory by ld.so on x86-64,
 * except in a few odd modules (vdso): accept both.  Told apart by the
 * module's mapped range, not by comparing with the load bias: a module
 * loaded below its link address has a "negative" (wrapped) bias, above
 * every pointer, and adding it to pointers ld.so had relocated already
 * sent the GOT pass into the void (SIGSEGV). */
static const void *dptr(const struct dyn_info *d, uint64_t v)
{
	return (const void *)(uintptr_t)(v >= d->lo && v < d->hi ? v : v + d->base);
}

static int read_dynamic(const struct dl_phdr_info *info, struct dyn_info *d)
{
	const ElfW(Dyn) *dyn = NULL;
	int i;

	memset(d, 0, sizeof(*d));
	d->base = info->dlpi_addr;
	d->name = info->dlpi_name;
	d->lo = UINT64_MAX;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(uintptr_t)a;
		if (ph->p_type == PT_GNU_RELRO) {
			d->relro_lo = a;
			d->relro_hi = a + ph->p_memsz;
		}
		if (ph->p_type == PT_LOAD) {
			if (a < d->lo)
				d->lo = a;
			if (a + ph->p_memsz > d->hi)
				d->hi = a + ph->p_memsz;
			if ((ph->p_flags & PF_W) && d->nrw < 4) {
				d->rw_lo[d->nrw] = a;
				d->rw_hi[d->nrw++] = a + ph->p_memsz;
			}
		}
	}
	if (!dyn)
		return -ENOENT;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			d->symtab = dptr(d, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			d->strtab = dptr(d, dyn->d_un.d_ptr);
			break;
		case DT_STRSZ:
			d->strsz = dyn->d_un.d_val;
			break;
		case DT_JMPREL:
			d->jmprel = dptr(d, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			d->jmprel_size = dyn->d_un.d_val;
			break;
		case DT_RELA:
			d->rela = dptr(d, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			d->rela_size = dyn->d_un.d_val;
			break;
		case DT_VERSYM:
			d->versym = dptr(d, dyn->d_un.d_ptr);
			break;
		case DT_VERNEED:
			d->verneed = dptr(d, dyn->d_un.d_ptr);
			break;
		}
	}
	return d->symtab && d->strtab ? 0 : -ENOENT;
}

/* Version string a module requires for symbol index sym, or NULL. */
static const char *needed_version(const struct dyn_info *d, uint32_t sym)
{
	const ElfW(Verneed) *vn = d->verneed;
	ElfW(Half) want;

	if (!d->versym || !vn)
		return NULL;
	want = d->versym[sym] & 0x7fff;
	if (want < 2)
		return NULL; /* local or global: no version */
	for (;;) {
		const ElfW(Vernaux) *a = (const ElfW(Vernaux) *)((const char *)vn + vn->vn_aux);
		unsigned i;

		for (i = 0; i < vn->vn_cnt; i++) {
			if (a->vna_other == want)
				return d->strtab + a->vna_name;
			a = (const ElfW(Vernaux) *)((const char *)a + a->vna_next);
		}
		if (!vn->vn_next)
			return NULL;
		vn = (const ElfW(Verneed) *)((const char *)vn + vn->vn_next);
	}
}

/* Whether the code at a is a PLT entry: an indirect jump through a GOT
 * slot, after the endbr64 and bnd prefix IBT builds put there.  A non-PIE
 * program's address of a function it imports (its canonical address) is
 * its own PLT entry: GLOB_DAT slots, data relocations and dlsym give that.
 * Wrapped as "the function", the wrapper would call the entry, which jumps
 * through the program's patched slot to the wrapper again, for ever. */
static int is_plt_entry(uint64_t a)
{
	const unsigned char *p = (const unsigned char *)(uintptr_t)a;

	if (!a)
		return 0;
	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
		p += 4;
	if (p[0] == 0xf2)
		p++;
	return p[0] == 0xff && p[1] == 0x25;
}

/* Whether the definition at p (found by dladdr1) has no version: its
 * module has no version table, or gives it the global index. */
static int unversioned(const void *p)
{
	const ElfW(Sym) *sym = NULL;
	const ElfW(Sym) *symtab = NULL;
	const ElfW(Half) *versym = NULL;
	struct link_map *lm = NULL;
	const ElfW(Dyn) *dyn;
	Dl_info info;

	if (!dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    !dladdr1(p, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm || !lm->l_ld)
		return 0;
	for (dyn = lm->l_ld; dyn->d_tag != DT_NULL; dyn++) {
		/* Relocated in memory by ld.so, but in odd modules (vdso). */
		uint64_t v = dyn->d_un.d_ptr;
		const void *a = (const void *)(uintptr_t)(v >= (uint64_t)(uintptr_t)info.dli_fbase
								  ? v
								  : v + lm->l_addr);

		if (dyn->d_tag == DT_SYMTAB)
			symtab = a;
		else if (dyn->d_tag == DT_VERSYM)
			versym = a;
	}
	return !versym || (symtab && sym >= symtab && (versym[sym - symtab] & 0x7fff) < 2);
}

/* The global scope, for the shim's own lookups: the main program's
 * handle searches it as RTLD_DEFAULT does, but records no dependency of
 * the asker.  Asked with RTLD_DEFAULT from here, glibc marked every
 * library that defined a looked-up name undeletable (a dependency of
 * libcacheshim, which is never unloaded): a plugin whose PLT called a
 * target stayed loaded after its dlclose. */
static void *global_scope(void)
{
	static void *main_handle;

	if (!main_handle)
		main_handle = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
	return main_handle ? main_handle : RTLD_DEFAULT;
}

/* What ld.so binds a reference to name@ver to: the first module in the
 * global scope defining name@ver, or name without a version (an
 * interposer preloaded by the program, built without versions, which
 * the loader accepts for a versioned reference and dlvsym does not). */
static void *versioned_lookup(const char *name, const char *ver)
{
	void *a = dlvsym(global_scope(), name, ver), *b = dlsym(global_scope(), name);
	struct link_map *la = NULL, *lb = NULL;
	Dl_info info;

	if (!b || a == b || !unversioned(b))
		return a;
	if (!a)
		return b;
	if (!dladdr1(a, &info, (void **)&la, RTLD_DL_LINKMAP) ||
	    !dladdr1(b, &info, (void **)&lb, RTLD_DL_LINKMAP))
		return a;
	for (; la; la = la->l_prev) { /* load order: the initial search order */
		if (la == lb)
			return b;
	}
	return a;
}

/* The address the loader gives symbol index sym of module d (what its
 * GLOB_DAT and data relocations hold): the global scope's definition, else
 * the module's own scope (a module loaded RTLD_LOCAL); 0 if none. */
static uint64_t loaded_address(const struct dyn_info *d, uint32_t sym, const char *name)
{
	const char *ver = needed_version(d, sym);
	void *p = ver ? versioned_lookup(name, ver) : dlsym(global_scope(), name);

	if (!p && d->name && *d->name) {
		void *h = dlopen(d->name, RTLD_LAZY | RTLD_NOLOAD);

		if (h) {
			p = ver ? dlvsym(h, name, ver) : dlsym(h, name);
			dlclose(h);
		}
	}
	return (uint64_t)(uintptr_t)p;
}

/* The function a slot leads to.  A lazily bound PLT slot still points into
 * its own module's PLT (glibc's own malloc@plt, for one): resolve the
 * symbol as ld.so would.  GLOB_DAT slots are always bound at load. */
static uint64_t real_address(const struct dyn_info *d, uint32_t type, uint32_t sym,
			     const char *name, uint64_t cur)
{
	const char *ver;
	uint64_t p;

	if (cur && (type == R_X86_64_GLOB_DAT || cur < d->lo || cur >= d->hi))
		return cur;
	p = loaded_address(d, sym, name);
	/* A non-PIE program's canonical address: the definition is found
	 * after the program (and after us) in the search order. */
	if (is_plt_entry(p)) {
		ver = needed_version(d, sym);
		p = (uint64_t)(uintptr_t)(ver ? dlvsym(RTLD_NEXT, name, ver) : dlsym(RTLD_NEXT, name));
	}
	return p;
}

/* Targets by address, so that adding one and the entry pass's "patched
 * already?" are not a scan of every target (quadratic: ~5 ms at start-up
 * with 1,450 targets).  Open addressing over twice CS_MAX_TARGETS slots,
 * each the index + 1 of the newest target at an address (0 = empty);
 * targets are never removed, only marked unloaded. */
#define ADDR_SLOTS (2 * CS_MAX_TARGETS)
_Static_assert((ADDR_SLOTS & (ADDR_SLOTS - 1)) == 0, "a power of two");
static uint32_t by_addr[ADDR_SLOTS];

static uint32_t *addr_slot(uint64_t addr)
{
	uint64_t h = (addr ^ (addr >> 17)) * 0x9e3779b97f4a7c15ull;

	for (h >>= 40;; h++) {
		uint32_t *s = &by_addr[h & (ADDR_SLOTS - 1)];

		if (!*s || cs_g.targets[*s - 1].addr == addr)
			return s;
	}
}

int cs_target_at(uint64_t addr)
{
	return (int)*addr_slot(addr) - 1;
}

/* Builds the address table again from the targets (newest first in each
 * chain), after a target's address changed. */
static void rebuild_by_addr(void)
{
	unsigned i;

	memset(by_addr, 0, sizeof(by_addr));
	for (i = 0; i < cs_g.ntargets; i++) {
		uint32_t *slot = addr_slot(cs_g.targets[i].addr);

		cs_g.targets[i].next_same = (int)*slot - 1;
		*slot = i + 1;
	}
}

/* A target of an unloaded module with this name, defined by the same file
 * (path and build-id) as the module now loaded: the function loaded
 * again.  Its index, file block, call sites and series go on, so that a
 * library loaded and unloaded thousands of times is one row in the
 * report and does not use up the CS_MAX_TARGETS indexes.  -1 if none. */
static unsigned nretired; /* targets marked unloaded so far */

static int retired_same(const char *name, uint64_t file)
{
	unsigned i;

	/* (Most programs never unload a target: no scan at each add.) */
	for (i = 0; file && nretired && i < cs_g.ntargets; i++) {
		const struct cs_target *t = &cs_g.targets[i];

		if (t->unloaded && t->file == file && t->block && !strcmp(t->name, name))
			return (int)i;
	}
	return -1;
}

/* Takes retired target i for the same function at its new address. */
static int reuse(int i, uint64_t addr, uint32_t module, uint32_t how)
{
	struct cs_target *t = &cs_g.targets[i];

	/* Nothing runs the old function any more (its module is gone), so
	 * its stub may call the new one from now on. */
	__atomic_store_n(&cs_g.hot[i].call, addr, __ATOMIC_RELEASE);
	t->module = module;
	t->entry_done = 0;
	t->entry_deferred = 0;
	t->unloaded = 0;
	t->block->how |= how;
	if (t->addr != addr) {
		t->addr = addr;
		rebuild_by_addr();
	}
	return i;
}

int cs_target_add(const char *name, uint64_t addr, unsigned argn, uint32_t how)
{
	uint32_t *slot = addr_slot(addr), module;
	struct cs_target *t;
	struct cs_target_block *b;
	uint64_t base, file;
	int i;

	for (i = (int)*slot - 1; i >= 0; i = cs_g.targets[i].next_same) {
		if (!cs_g.targets[i].unloaded && !strcmp(cs_g.targets[i].name, name)) {
			if (cs_g.targets[i].block)
				cs_g.targets[i].block->how |= how;
			return i;
		}
	}
	module = cs_modules_lookup(addr, &base);
	file = cs_modules_file(module);
	i = retired_same(name, file);
	if (i >= 0)
		return reuse(i, addr, module, how);
	if (cs_g.ntargets == CS_MAX_TARGETS) {
		CS_LOG_ONCE("more than %d functions matched; '%s' and later are not wrapped",
			    CS_MAX_TARGETS, name);
		return -1;
	}
	b = cs_output_reserve(sizeof(*b));
	if (!b) {
		if (cs_g.hdr)
			__atomic_fetch_or(&cs_g.hdr->lost_why, CS_LOST_TARGETS | cs_tls_refusal,
					  __ATOMIC_RELAXED);
		CS_LOG_ONCE("report file full (%s); '%s' and later are not wrapped",
			    cs_output_no_room() ? "no room left on the file system"
						: "CACHESHIM_CAPACITY_MB",
			    name);
		return -1;
	}
	i = (int)cs_g.ntargets;
	t = &cs_g.targets[i];
	t->addr = addr;
	t->next_same = (int)*slot - 1;
	*slot = (uint32_t)i + 1;
	cs_g.hot[cs_g.ntargets].call = addr;
	cs_g.hot[cs_g.ntargets].argn = argn;
	t->stub = cs_stub_addr(cs_g.ntargets);
	t->block = b;
	strncpy(t->name, name, sizeof(t->name) - 1);
	b->id = cs_target_id(cs_g.ntargets);
	b->how = how;
	b->argn = argn;
	b->addr = addr;
	b->module = module;
	t->module = module;
	t->file = file;
	memcpy(b->name, t->name, sizeof(b->name));
	cs_output_publish(b, CS_BLOCK_TARGET);
	/* The trampoline indexes targets[] by what the stub pushes: make the
	 * entry complete before any slot points at its stub. */
	__atomic_store_n(&cs_g.ntargets, cs_g.ntargets + 1, __ATOMIC_RELEASE);
	return i;
}

void cs_target_forget_range(uint64_t lo, uint64_t hi, uint32_t module)
{
	unsigned i;

	for (i = 0; i < cs_g.ntargets; i++) {
		const struct cs_target *t = &cs_g.targets[i];

		if (t->addr >= lo && t->addr < hi && (!module || !t->module || t->module == module) &&
		    !t->unloaded) {
			cs_g.targets[i].unloaded = 1;
			nretired++;
		}
	}
}

/* Points slot at v if it still holds old: the program (or ld.so binding a
 * lazy slot) may write it between our read and this store, and what it
 * wrote then is its own.  -EAGAIN if it did. */
static int write_slot(const struct dyn_info *d, uint64_t *slot, uint64_t old, uint64_t v)
{
	uint64_t page = (uint64_t)(uintptr_t)slot & ~(uint64_t)(getpagesize() - 1);
	int relro =
		(uint64_t)(uintptr_t)slot >= d->relro_lo && (uint64_t)(uintptr_t)slot < d->relro_hi;
	int swapped;

	if (relro &&
	    mprotect((void *)(uintptr_t)page, (size_t)getpagesize(), PROT_READ | PROT_WRITE) < 0)
		return -errno;
	swapped = __atomic_compare_exchange_n(slot, &old, v, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	if (relro)
		mprotect((void *)(uintptr_t)page, (size_t)getpagesize(), PROT_READ);
	return swapped ? 0 : -EAGAIN;
}

/* Whether the 8 bytes at p lie in a writable segment of the module (the
 * RELRO part included: write_slot opens it).  A data relocation may sit in
 * text (DT_TEXTREL), which is not written. */
static int writable(const struct dyn_info *d, uint64_t p)
{
	int i;

	for (i = 0; i < d->nrw; i++)
		if (p >= d->rw_lo[i] && p + 8 <= d->rw_hi[i])
			return 1;
	return 0;
}

/* A function's address stored in data by a symbolic relocation: the word
 * holds what the loader resolved, to be kept equal to the GOT's. */
static int function_pointer(const struct dyn_info *d, const ElfW(Rela) * r)
{
	return ELF64_R_TYPE(r->r_info) == R_X86_64_64 && r->r_addend == 0 &&
	       writable(d, d->base + r->r_offset);
}

/* The pattern a relocation names, if it is one the pass may patch: a PLT
 * or GLOB_DAT slot, or a function pointer word, of a function symbol whose
 * name matches (-1 if not).  Depends only on the module's tables, so its
 * verdicts are kept (shim/loadmemo.c). */
static int names_target(const struct dyn_info *d, const ElfW(Rela) * r)
{
	uint32_t type = ELF64_R_TYPE(r->r_info), sym = ELF64_R_SYM(r->r_info);
	const ElfW(Sym) * s;
	const char *name;
	int pat, st;

	if (!sym)
		return -1;
	if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT && !function_pointer(d, r))
		return -1;
	s = &d->symtab[sym];
	st = ELF64_ST_TYPE(s->st_info);
	/* Data objects reached through GLOB_DAT must stay untouched. */
	if (st != STT_FUNC && st != STT_GNU_IFUNC &&
	    !(st == STT_NOTYPE && type == R_X86_64_JUMP_SLOT))
		return -1;
	name = d->strtab + s->st_name;
	pat = cs_settings_match(&cs_g.settings, name);
	return pat < 0 || cs_settings_never_wrap(name) ? -1 : pat;
}

/* Points relocation r's word, naming pattern pat, at the target's stub,
 * unless it is hooked already or must stay. */
static void patch_reloc(const struct dyn_info *d, const ElfW(Rela) * r, int pat)
{
	uint32_t type = ELF64_R_TYPE(r->r_info), sym = ELF64_R_SYM(r->r_info);
	uint64_t *slot = (uint64_t *)(uintptr_t)(d->base + r->r_offset);
	const char *name = d->strtab + d->symtab[sym].st_name;
	int data = type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT, idx, st;
	uint64_t cur = *slot, real;

	if (cs_stub_is(cur) || (data && !cur))
		return;
	/* A data word the program has since set to something else is
	 * the program's, whatever it holds. */
	if (data && cur != loaded_address(d, sym, name))
		return;
	real = data ? cur : real_address(d, type, sym, name, cur);
	if (!real || cs_entry_is_patched(real))
		return; /* its patched entry catches these calls */
	/* A pointer to a PLT entry (a canonical address) stays: calls
	 * through it reach the wrapper by that entry's own slot, and
	 * it stays equal to the address the program's code uses. */
	if (is_plt_entry(real))
		return;
	idx = cs_target_add(name, real, cs_g.settings.targets[pat].argn, CS_HOOK_GOT);
	if (idx < 0)
		return;
	st = write_slot(d, slot, cur, (uint64_t)(uintptr_t)cs_g.targets[idx].stub);
	if (st == -EAGAIN)
		return; /* the program's own word meanwhile */
	if (st < 0) {
		CS_LOG_ONCE("cannot write a GOT slot of '%s' in %s; some calls are not seen", name,
			    d->name && *d->name ? d->name : "the program");
		return;
	}
	cs_settings_matched(&cs_g.settings, pat, name);
	if (!data)
		cs_g.targets[idx].block->got_slots++;
	else
		cs_g.targets[idx].block->data_words++;
	patched_total++;
}

/* The relocations of a module that name a target, as a pass found them. */
struct found {
	const ElfW(Rela) * *rel;
	size_t n, cap;
	int lost; /* out of memory: not all are listed */
};

/* Every relocation in [r, r + bytes) that names a target: patched, and
 * added to f. */
static void patch_relocs(const struct dyn_info *d, const ElfW(Rela) * r, size_t bytes,
			 struct found *f)
{
	const ElfW(Rela) *end = (const ElfW(Rela) *)((const char *)r + bytes);
	int pat;

	for (; r && r < end; r++) {
		if ((pat = names_target(d, r)) < 0)
			continue;
		if (!f->lost && f->n == f->cap) {
			size_t cap = f->cap ? 2 * f->cap : 8;
			const ElfW(Rela) **p = realloc(f->rel, cap * sizeof(*p));

			if (p) {
				f->rel = p;
				f->cap = cap;
			} else {
				f->lost = 1;
			}
		}
		if (!f->lost)
			f->rel[f->n++] = r;
		patch_reloc(d, r, pat);
	}
}

/* Copy relocations: a program that uses a library's variable directly has
 * a copy of its own, which the loader made from the library's variable,
 * function pointers and all, before the shim ran.  A word the pass pointed
 * at a stub in the library's (now unused) original is pointed there in the
 * copy too, while the copy still holds the function's address: otherwise
 * the program's hook == foo, true without the shim, is false. */
static void patch_copies(const struct dyn_info *d)
{
	const ElfW(Rela) *r = d->rela, *end = (const ElfW(Rela) *)((const char *)r + d->rela_size);

	for (; r && r < end; r++) {
		const ElfW(Sym) *s = &d->symtab[ELF64_R_SYM(r->r_info)];
		uint64_t dst = d->base + r->r_offset, off, *w, o;
		const unsigned char *src;
		int idx;

		if (ELF64_R_TYPE(r->r_info) != R_X86_64_COPY || !ELF64_R_SYM(r->r_info))
			continue;
		/* The original: the definition after the program's (and ours). */
		src = dlsym(RTLD_NEXT, d->strtab + s->st_name);
		if (!src || (uint64_t)(uintptr_t)src == dst)
			continue;
		for (off = 0; off + 8 <= s->st_size; off += 8) {
			w = (uint64_t *)(uintptr_t)(dst + off);
			memcpy(&o, src + off, sizeof(o));
			idx = cs_stub_index(o);
			if (idx >= 0 && *w == cs_g.targets[idx].addr && writable(d, dst + off))
				write_slot(d, w, cs_g.targets[idx].addr, o);
		}
	}
}

/* True if some name in the module's dynamic string table can match a
 * pattern: it holds a pattern's literal prefix somewhere.  Most modules
 * import none of the targets, and matching each of their relocations'
 * names was most of this pass. */
static int may_import(const struct dyn_info *d)
{
	const char *s[CS_MAX_TARGET_PATTERNS];
	size_t len[CS_MAX_TARGET_PATTERNS];
	int i, n = cs_settings_literals(&cs_g.settings, s, len);

	if (n < 0 || !d->strsz)
		return 1;
	for (i = 0; i < n; i++)
		if (memmem(d->strtab, d->strsz, s[i], len[i]))
			return 1;
	return 0;
}

/* What the pass keeps of a module that may import a target (the data of
 * its memo entry; none for one that cannot): the relocations naming a
 * target.  What they name depends only on the module's own tables and on
 * the patterns, which never change, so a later pass (the next dlopen)
 * looks at these only, where it read every relocation of every module
 * (libruby's 4,100, matched by name, ~0.1 ms a pass: once per Ruby
 * extension loaded). */
struct got_known {
	size_t n;
	const ElfW(Rela) * rel[];
};

static void drop_known(uintptr_t data)
{
	free((void *)data);
}

static struct cs_load_memo memo = {.drop = drop_known};

void cs_got_memo_abandon(void)
{
	cs_load_memo_abandon(&memo);
}

/* A module whose GOT may need patching, as dl_iterate_phdr showed it. */
struct got_module {
	struct dl_phdr_info info;
	char path[PATH_MAX];
	const struct got_known *known; /* seen by an earlier pass */
};

struct got_list {
	struct got_module *m;
	size_t n, cap;
	unsigned long long subs, adds; /* cs_load_subs, cs_load_adds as listed */
	int checked, memo;
};

/* dl_iterate_phdr runs with the loader's lock held, and dlsym, dlopen and
 * dladdr take the loader's other lock: called in here (resolving a lazy
 * slot) they waited for a dlopen in another thread that was waiting for
 * this lock, and both threads hung.  So modules are only listed here
 * (those that may import a target), and patched afterwards. */
static int list_module(struct dl_phdr_info *info, size_t size, void *data)
{
	struct got_list *l = data;
	const struct got_known *known = NULL;
	struct dyn_info d;
	uintptr_t kept;
	int seen;

	(void)size;
	/* (The loader's lock is held: no module comes or goes meanwhile.) */
	if (!l->checked) {
		l->checked = 1;
		l->subs = cs_load_subs();
		l->adds = cs_load_adds();
		l->memo = cs_load_memo_check(&memo, l->subs);
	}
	seen = cs_load_memo_find(&memo, info->dlpi_addr, info->dlpi_phdr, &kept);
	known = seen ? (const struct got_known *)kept : NULL;
	if (!seen && cs_modules_untouchable(info)) {
		if (l->memo)
			cs_load_memo_add(&memo, info->dlpi_addr, info->dlpi_phdr, 0);
		return 0;
	}
	/* The program is looked at while it may import a target, for its
	 * copies of library variables (patch_copies). */
	if (seen ? !known || (!known->n && info->dlpi_name && *info->dlpi_name)
		 : read_dynamic(info, &d) < 0 || !may_import(&d)) {
		if (!seen && l->memo)
			cs_load_memo_add(&memo, info->dlpi_addr, info->dlpi_phdr, 0);
		return 0;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		void *p = realloc(l->m, cap * sizeof(*l->m));

		if (!p)
			return 1;
		l->m = p;
		l->cap = cap;
	}
	l->m[l->n].info = *info;
	snprintf(l->m[l->n].path, sizeof(l->m[l->n].path), "%s",
		 info->dlpi_name ? info->dlpi_name : "");
	l->m[l->n].known = seen ? known : NULL;
	l->n++;
	return 0;
}

/* Patches a listed module, holding it loaded meanwhile: once the loader's
 * lock is released another thread may dlclose it, and its GOT would be
 * unmapped under our stores.  A module no longer loaded at the address it
 * was listed with is left alone (there is nothing left to patch), and so is
 * one the default namespace cannot name (dlmopen).  A module new to the
 * pass has every relocation read, and those naming a target are kept (with
 * memo set).  adds: cs_load_adds as the module was listed.  Returns 1 if
 * the module was held (dropping the hold may have unloaded it), else 0. */
static int patch_listed(struct got_module *m, int memo_on, unsigned long long adds)
{
	struct found f = {0};
	struct got_known *k;
	struct link_map *lm;
	struct dyn_info d;
	void *h = NULL;
	size_t i;
	int pat;

	if (m->path[0]) {
		h = dlopen(m->path, RTLD_LAZY | RTLD_NOLOAD);
		if (!h)
			return 0;
		if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || lm->l_addr != m->info.dlpi_addr) {
			dlclose(h);
			return 1;
		}
	}
	/* The relocations kept are the listed load's.  Before the hold,
	 * another thread may have unloaded it and loaded a new file of the
	 * same name at its address (the kept list, read in the new one's
	 * tables, named other symbols: its calls went unseen, and garbage
	 * read as relocations could name any word).  No load since the
	 * listing: the module held is the one listed. */
	if (m->known && cs_load_adds() != adds) {
		m->known = NULL;
		memo_on = 0; /* the memo has this address's old load */
	}
	m->info.dlpi_name = m->path;
	if (read_dynamic(&m->info, &d) == 0) {
		if (m->known) {
			for (i = 0; i < m->known->n; i++)
				if ((pat = names_target(&d, m->known->rel[i])) >= 0)
					patch_reloc(&d, m->known->rel[i], pat);
		} else {
			patch_relocs(&d, d.jmprel, d.jmprel_size, &f);
			patch_relocs(&d, d.rela, d.rela_size, &f);
			k = memo_on && !f.lost ? malloc(sizeof(*k) + f.n * sizeof(k->rel[0])) : NULL;
			if (k) {
				k->n = f.n;
				for (i = 0; i < f.n; i++)
					k->rel[i] = f.rel[i];
				if (cs_load_memo_add(&memo, m->info.dlpi_addr, m->info.dlpi_phdr,
						     (uintptr_t)k) < 0)
					free(k);
			}
		}
	}
	free(f.rel);
	if (!h)
		return 0;
	dlclose(h);
	return 1;
}

int cs_got_patch_all(int *held)
{
	struct got_list l = {0};
	size_t i;
	int before;

	pthread_mutex_lock(&cs_got_lock);
	before = patched_total;
	*held = 0;
	dl_iterate_phdr(list_module, &l);
	cs_modules_scan(); /* as in cs_entry_patch_all */
	for (i = 0; i < l.n; i++)
		*held |= patch_listed(&l.m[i], l.memo, l.adds);
	/* Copies in the program of library variables, once every library's
	 * originals are patched (the program, never unloaded, has no path). */
	for (i = 0; i < l.n; i++) {
		struct dyn_info d;

		if (!l.m[i].path[0] && read_dynamic(&l.m[i].info, &d) == 0)
			patch_copies(&d);
	}
	/* A module unloaded during the pass (by another thread, or by
	 * dropping a hold): what was learned of one loaded at its address
	 * since may be wrong.  (The next pass's check would drop it too: the
	 * count never goes back.  Dropped now, it holds no memory meanwhile.) */
	if (l.checked && cs_load_subs() != l.subs)
		cs_load_memo_clear(&memo);
	free(l.m);
	before = patched_total - before;
	pthread_mutex_unlock(&cs_got_lock);
	return before;
}
