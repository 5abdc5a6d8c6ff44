/* SPDX-License-Identifier: MIT */
/* Units: elfsyms.c on this test program itself, on stripped copies of it
 * with separate debug files, on libc with its debug file (if installed),
 * on truncated and corrupted copies; .eh_frame_hdr starts; clone names. */
#include <CUnit/Basic.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim/internal.h"

#define ADDR(f) ((uint64_t)(uintptr_t) & (f))

/* Probes: what the symbol tables must report, at these addresses. */
uint64_t elf_twin_other(void);
int elf_global_probe(int x);
int ifunc_probe(void);
int main(int argc, char **argv);

static __attribute__((noinline)) int elf_twin(int x)
{
	return x * 5 + 2;
}

static __attribute__((noinline)) int elf_static_probe(int x)
{
	return x ^ 0x5a;
}

__attribute__((noinline)) int elf_global_probe(int x)
{
	return x + 7;
}

static int ifunc_impl(void)
{
	return 42;
}

static int (*resolve_probe(void))(void)
{
	return ifunc_impl;
}

int ifunc_probe(void) __attribute__((ifunc("resolve_probe")));

static struct {
	char self[PATH_MAX]; /* this program's real path */
	uint64_t base, libc_base;
	const void *phdr, *libc_phdr;
	unsigned phnum, libc_phnum;
	char libc[PATH_MAX], ldso[PATH_MAX];
	char dir[64]; /* scratch directory */
	uint8_t *image; /* this program's file */
	size_t size;
} t;

static int find_modules(struct dl_phdr_info *info, size_t size, void *data)
{
	/* The main program comes first, named "". */
	if (!t.phdr) {
		t.base = info->dlpi_addr;
		t.phdr = info->dlpi_phdr;
		t.phnum = info->dlpi_phnum;
	} else if (strstr(info->dlpi_name, "/ld-linux")) {
		snprintf(t.ldso, sizeof(t.ldso), "%s", info->dlpi_name);
	} else if (strstr(info->dlpi_name, "/libc.so.6")) {
		snprintf(t.libc, sizeof(t.libc), "%s", info->dlpi_name);
		t.libc_base = info->dlpi_addr;
		t.libc_phdr = info->dlpi_phdr;
		t.libc_phnum = info->dlpi_phnum;
	}
	return 0;
}

static int sh(const char *fmt, ...)
{
	char cmd[3 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void write_file(const char *path, const void *p, size_t len)
{
	FILE *f = fopen(path, "wb");

	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_EQUAL(fwrite(p, 1, len, f), len);
	fclose(f);
}

struct hits {
	const char *name;
	unsigned n, total, stop_at, bad;
	int last_source;
	struct cs_elf_func f[4];
};

static int collect(const struct cs_elf_func *f, void *arg)
{
	struct hits *h = arg;

	/* Table by table: .dynsym, .symtab, the debug file's .symtab. */
	if (f->source < h->last_source || f->source < CS_SYM_DYNSYM || f->source > CS_SYM_DEBUG)
		h->bad = 1;
	h->last_source = f->source;
	h->total++;
	if (!f->name || strlen(f->name) == 0)
		h->bad = 1; /* never: names are nonempty */
	if (h->name && !strcmp(f->name, h->name) && h->n < 4)
		h->f[h->n++] = *f;
	if (h->stop_at && h->total == h->stop_at)
		return 7;
	return 0;
}

static struct hits lookup(struct cs_elf_module *m, const char *name)
{
	struct hits h;

	memset(&h, 0, sizeof(h));
	h.name = name;
	CU_ASSERT_EQUAL(cs_elf_each_func(m, collect, &h), 0);
	CU_ASSERT_FALSE(h.bad);
	return h;
}

struct ifunc_count {
	const char *name;
	unsigned n, all;
};

static int count_ifunc(const char *name, void *arg)
{
	struct ifunc_count *c = arg;

	c->all++;
	c->n += !strcmp(name, c->name);
	return 0;
}

/* How many IFUNCs of m cs_elf_each_ifunc names `name`. */
static unsigned ifuncs_named(struct cs_elf_module *m, const char *name)
{
	struct ifunc_count c = {name, 0, 0};

	CU_ASSERT_EQUAL(cs_elf_each_ifunc(m, count_ifunc, &c), 0);
	return c.n;
}

static void test_self(void)
{
	struct cs_elf_module *m = NULL, *m2 = NULL;
	struct hits h, h2;
	uint64_t a, b;

	CU_ASSERT_EQUAL_FATAL(cs_elf_open("", t.base, t.phdr, t.phnum, &m), 0);
	h = lookup(m, "elf_static_probe");
	CU_ASSERT_EQUAL(h.n, 1);
	CU_ASSERT_EQUAL(h.f[0].addr, ADDR(elf_static_probe));
	CU_ASSERT_EQUAL(h.f[0].local, 1);
	CU_ASSERT_EQUAL(h.f[0].source, CS_SYM_SYMTAB);
	CU_ASSERT_TRUE(h.f[0].size > 0);
	/* -export-dynamic: in .dynsym and .symtab, once from each. */
	h = lookup(m, "elf_global_probe");
	CU_ASSERT_EQUAL(h.n, 2);
	CU_ASSERT_EQUAL(h.f[0].addr, ADDR(elf_global_probe));
	CU_ASSERT_EQUAL(h.f[0].local, 0);
	CU_ASSERT_EQUAL(h.f[0].source, CS_SYM_DYNSYM);
	CU_ASSERT_EQUAL(h.f[1].addr, ADDR(elf_global_probe));
	CU_ASSERT_EQUAL(h.f[1].source, CS_SYM_SYMTAB);
	h = lookup(m, "main");
	CU_ASSERT_EQUAL(h.n, 2);
	CU_ASSERT_EQUAL(h.f[0].source, CS_SYM_DYNSYM);
	/* Two static functions of one name: both. */
	h = lookup(m, "elf_twin");
	a = ADDR(elf_twin) < elf_twin_other() ? ADDR(elf_twin) : elf_twin_other();
	b = ADDR(elf_twin) ^ elf_twin_other() ^ a;
	CU_ASSERT_EQUAL(h.n, 2);
	CU_ASSERT_EQUAL(h.f[0].addr < h.f[1].addr ? h.f[0].addr : h.f[1].addr, a);
	CU_ASSERT_EQUAL(h.f[0].addr < h.f[1].addr ? h.f[1].addr : h.f[0].addr, b);
	CU_ASSERT_TRUE(h.f[0].local && h.f[1].local);
	/* An IFUNC's symbol is its resolver: not reported; the resolver is. */
	CU_ASSERT_EQUAL(lookup(m, "ifunc_probe").n, 0);
	CU_ASSERT_EQUAL(ifuncs_named(m, "ifunc_probe"), 1);
	CU_ASSERT_EQUAL(ifuncs_named(m, "resolve_probe"), 0);
	h = lookup(m, "resolve_probe");
	CU_ASSERT_EQUAL(h.n, 1);
	CU_ASSERT_EQUAL(h.f[0].addr, ADDR(resolve_probe));
	CU_ASSERT_EQUAL(ifunc_probe(), 42);
	/* Undefined functions (from libc) are not reported. */
	CU_ASSERT_EQUAL(lookup(m, "malloc").n, 0);

	/* Stops early, returning fn's value. */
	memset(&h2, 0, sizeof(h2));
	h2.stop_at = 3;
	CU_ASSERT_EQUAL(cs_elf_each_func(m, collect, &h2), 7);
	CU_ASSERT_EQUAL(h2.total, 3);

	/* NULL is the main program too; the real path gives the same. */
	CU_ASSERT_EQUAL_FATAL(cs_elf_open(NULL, t.base, t.phdr, t.phnum, &m2), 0);
	CU_ASSERT_EQUAL(lookup(m2, NULL).total, h.total);
	cs_elf_close(m2);
	CU_ASSERT_EQUAL_FATAL(cs_elf_open(t.self, t.base, t.phdr, t.phnum, &m2), 0);
	CU_ASSERT_EQUAL(lookup(m2, NULL).total, h.total);
	CU_ASSERT_TRUE(h.total > 10);
	cs_elf_close(m2);

	/* Wanted names: a module none of whose symbol names holds one is not
	 * read; one that has it anywhere (.dynsym, .symtab; a suffix of a
	 * longer string too) is read whole. */
	{
		const char *s[] = {"zz_not_a_symbol_here", "twin_oth", "elf_static"};
		size_t len[] = {20, 8, 10};
		struct cs_elf_wanted only_absent = {s, len, 1}, with_twin = {s, len, 2},
				     with_static = {s + 2, len + 2, 1};

		m2 = (struct cs_elf_module *)1;
		CU_ASSERT_EQUAL(cs_elf_open_wanted("", t.base, t.phdr, t.phnum, &only_absent, &m2),
				CS_ELF_UNWANTED);
		CU_ASSERT_PTR_NULL(m2);
		CU_ASSERT_EQUAL_FATAL(
			cs_elf_open_wanted("", t.base, t.phdr, t.phnum, &with_twin, &m2), 0);
		CU_ASSERT_EQUAL(lookup(m2, NULL).total, h.total);
		cs_elf_close(m2);
		CU_ASSERT_EQUAL_FATAL(
			cs_elf_open_wanted("", t.base, t.phdr, t.phnum, &with_static, &m2), 0);
		CU_ASSERT_EQUAL(lookup(m2, "elf_static_probe").n, 1);
		cs_elf_close(m2);
	}
	cs_elf_close(m);
	cs_elf_close(NULL);
}

/* The build-id as readelf prints it. */
static void readelf_build_id(const char *path, char *hex, size_t len)
{
	char cmd[PATH_MAX + 64];
	FILE *p;

	hex[0] = 0;
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' | awk '/Build ID/ {print $3}'", path);
	p = popen(cmd, "r");
	CU_ASSERT_FATAL(p != NULL);
	if (!fgets(hex, (int)len, p))
		hex[0] = 0;
	hex[strcspn(hex, "\n")] = 0;
	pclose(p);
}

static void to_hex(const uint8_t *id, unsigned n, char *out)
{
	unsigned i;

	for (i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = 0;
}

static void test_build_id_and_ranges(void)
{
	struct cs_elf_module *m, *f;
	const uint8_t *id, *fid;
	char want[256], got[256];
	uint64_t lo[16], hi[16];
	const ElfW(Phdr) *ph = t.phdr;
	unsigned n, i, nx = 0, in_main = 0, in_probe = 0;

	CU_ASSERT_EQUAL_FATAL(cs_elf_open("", t.base, t.phdr, t.phnum, &m), 0);
	CU_ASSERT_EQUAL_FATAL(cs_elf_open(t.self, t.base, NULL, 0, &f), 0);
	readelf_build_id(t.self, want, sizeof(want));
	n = cs_elf_build_id(m, &id);
	CU_ASSERT_TRUE_FATAL(n > 0 && n <= 64);
	to_hex(id, n, got);
	CU_ASSERT_STRING_EQUAL(got, want);
	/* From the file's own notes, the same. */
	CU_ASSERT_EQUAL(cs_elf_build_id(f, &fid), n);
	CU_ASSERT_EQUAL(memcmp(id, fid, n), 0);

	for (i = 0; i < t.phnum; i++)
		nx += ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X);
	n = cs_elf_exec_ranges(m, lo, hi, 16);
	CU_ASSERT_EQUAL(n, nx);
	CU_ASSERT_TRUE(n >= 1);
	for (i = 0; i < n; i++) {
		CU_ASSERT_TRUE(lo[i] < hi[i]);
		in_main += ADDR(main) >= lo[i] && ADDR(main) < hi[i];
		in_probe += ADDR(elf_static_probe) >= lo[i] && ADDR(elf_static_probe) < hi[i];
	}
	CU_ASSERT_EQUAL(in_main, 1);
	CU_ASSERT_EQUAL(in_probe, 1);
	/* The file's program headers give the same ranges. */
	CU_ASSERT_EQUAL(cs_elf_exec_ranges(f, lo, hi, 0), 0);
	CU_ASSERT_EQUAL(cs_elf_exec_ranges(f, lo, hi, 16), nx);
	CU_ASSERT_TRUE(ADDR(main) >= lo[0] || nx > 1);
	cs_elf_close(f);
	cs_elf_close(m);
}

static void test_fde_starts(void)
{
	struct cs_elf_module *m, *f;
	const uint64_t *s, *fs;
	size_t n, i, ascending = 1;

	CU_ASSERT_EQUAL_FATAL(cs_elf_open("", t.base, t.phdr, t.phnum, &m), 0);
	n = cs_elf_fde_starts(m, &s);
	CU_ASSERT_TRUE_FATAL(n > 10);
	for (i = 1; i < n; i++)
		ascending &= s[i - 1] < s[i];
	CU_ASSERT_TRUE(ascending);
	CU_ASSERT_TRUE(cs_elf_is_fde_start(m, ADDR(main)));
	CU_ASSERT_TRUE(cs_elf_is_fde_start(m, ADDR(elf_static_probe)));
	CU_ASSERT_TRUE(cs_elf_is_fde_start(m, ADDR(elf_global_probe)));
	CU_ASSERT_TRUE(cs_elf_is_fde_start(m, s[0]));
	CU_ASSERT_TRUE(cs_elf_is_fde_start(m, s[n - 1]));
	CU_ASSERT_FALSE(cs_elf_is_fde_start(m, ADDR(main) + 1));
	CU_ASSERT_FALSE(cs_elf_is_fde_start(m, s[0] - 1));
	CU_ASSERT_FALSE(cs_elf_is_fde_start(m, s[n - 1] + 1));
	CU_ASSERT_FALSE(cs_elf_is_fde_start(m, 0));
	/* A C function's FDE covers exactly its symbol's size. */
	for (i = 0; i < 2; i++) {
		const char *name = i ? "main" : "elf_static_probe";
		struct hits h = lookup(m, name);

		CU_ASSERT_FATAL(h.n >= 1); /* main: from .dynsym and .symtab */
		CU_ASSERT_TRUE(h.f[0].size > 0);
		CU_ASSERT_EQUAL(cs_elf_fde_end(m, h.f[0].addr), h.f[0].addr + h.f[0].size);
		CU_ASSERT_EQUAL(cs_elf_fde_end(m, h.f[0].addr + 1), 0);
	}
	CU_ASSERT_EQUAL(cs_elf_fde_end(m, 0), 0);
	/* Read from the file instead of the loaded image: the same table
	 * (but FDEs are read from the loaded image only). */
	CU_ASSERT_EQUAL_FATAL(cs_elf_open(t.self, t.base, NULL, 0, &f), 0);
	CU_ASSERT_EQUAL_FATAL(cs_elf_fde_starts(f, &fs), n);
	CU_ASSERT_EQUAL(memcmp(s, fs, n * sizeof(*s)), 0);
	CU_ASSERT_EQUAL(cs_elf_fde_end(f, ADDR(main)), 0);
	cs_elf_close(f);
	cs_elf_close(m);
}

/* Opens path (not loaded: its file's program headers) as if it were this
 * program and counts elf_static_probe, checking its address and source. */
static unsigned probe_in(const char *path, int source)
{
	struct cs_elf_module *m;
	struct hits h;
	int ret = cs_elf_open(path, t.base, NULL, 0, &m);

	CU_ASSERT_EQUAL(ret, 0);
	if (ret)
		return 99;
	/* From .dynsym, and again from the table with static functions. */
	h = lookup(m, "elf_global_probe");
	CU_ASSERT_EQUAL(h.n, source ? 2 : 1);
	CU_ASSERT_EQUAL(h.f[0].addr, ADDR(elf_global_probe));
	CU_ASSERT_EQUAL(h.f[0].source, CS_SYM_DYNSYM);
	if (h.n == 2) {
		CU_ASSERT_EQUAL(h.f[1].addr, ADDR(elf_global_probe));
		CU_ASSERT_EQUAL(h.f[1].source, source);
	}
	h = lookup(m, "elf_twin");
	CU_ASSERT_EQUAL(h.n, source ? 2 : 0);
	h = lookup(m, "elf_static_probe");
	if (h.n) {
		CU_ASSERT_EQUAL(h.f[0].addr, ADDR(elf_static_probe));
		CU_ASSERT_EQUAL(h.f[0].local, 1);
		CU_ASSERT_EQUAL(h.f[0].source, source);
	}
	cs_elf_close(m);
	return h.n;
}

static void test_debug_files(void)
{
	char bin[PATH_MAX], *real, path[3 * PATH_MAX], root[PATH_MAX];
	struct cs_elf_module *m;
	const uint8_t *id;
	uint8_t idcopy[64], *dbg;
	char hex[200];
	unsigned n;
	size_t dlen;
	FILE *f;

	CU_ASSERT_EQUAL_FATAL(sh("mkdir -p %s/bin/.debug %s/root && cp '%s' %s/full && "
				 "objcopy --only-keep-debug %s/full %s/prog.debug && "
				 "objcopy --strip-all %s/full %s/bin/prog && "
				 "objcopy --strip-all %s/full %s/bin/nolink && "
				 "objcopy --add-gnu-debuglink=%s/prog.debug %s/bin/prog",
				 t.dir, t.dir, t.self, t.dir, t.dir, t.dir, t.dir, t.dir, t.dir,
				 t.dir, t.dir, t.dir),
			      0);
	snprintf(root, sizeof(root), "%s/root", t.dir);
	cs_elf_set_debug_dir(root);
	snprintf(bin, sizeof(bin), "%s/bin/prog", t.dir);
	/* Stripped, no debug file where it is looked for. */
	CU_ASSERT_EQUAL(probe_in(bin, 0), 0);

	/* Next to the module, in .debug/, under the debug root + its dir. */
	CU_ASSERT_EQUAL(sh("cp %s/prog.debug %s/bin/", t.dir, t.dir), 0);
	CU_ASSERT_EQUAL(probe_in(bin, CS_SYM_DEBUG), 1);
	CU_ASSERT_EQUAL(sh("mv %s/bin/prog.debug %s/bin/.debug/", t.dir, t.dir), 0);
	CU_ASSERT_EQUAL(probe_in(bin, CS_SYM_DEBUG), 1);
	real = realpath(bin, NULL);
	CU_ASSERT_FATAL(real != NULL);
	*strrchr(real, '/') = 0;
	CU_ASSERT_EQUAL(sh("mkdir -p %s%s && mv %s/bin/.debug/prog.debug %s%s/", root, real, t.dir,
			   root, real),
			0);
	CU_ASSERT_EQUAL(probe_in(bin, CS_SYM_DEBUG), 1);
	/* The loaded image's program headers: same build-id, same result. */
	CU_ASSERT_EQUAL_FATAL(cs_elf_open(bin, t.base, t.phdr, t.phnum, &m), 0);
	CU_ASSERT_EQUAL(lookup(m, "elf_static_probe").n, 1);
	cs_elf_close(m);
	/* A name only the debug file's .symtab has is wanted there. */
	{
		const char *s[] = {"no_such_function_at_all", "elf_static_pr"};
		size_t len[] = {23, 13};
		struct cs_elf_wanted w = {s, len, 2}, none = {s, len, 1};

		CU_ASSERT_EQUAL_FATAL(cs_elf_open_wanted(bin, t.base, t.phdr, t.phnum, &w, &m), 0);
		CU_ASSERT_EQUAL(lookup(m, "elf_static_probe").n, 1);
		CU_ASSERT_EQUAL(lookup(m, "elf_static_probe").f[0].source, CS_SYM_DEBUG);
		cs_elf_close(m);
		m = (struct cs_elf_module *)1;
		CU_ASSERT_EQUAL(cs_elf_open_wanted(bin, t.base, t.phdr, t.phnum, &none, &m),
				CS_ELF_UNWANTED);
		CU_ASSERT_PTR_NULL(m);
	}
	/* A debug file whose CRC does not match the link: not used. */
	CU_ASSERT_EQUAL(sh("rm %s%s/prog.debug && cp %s/prog.debug %s/bin/ && "
			   "echo x >> %s/bin/prog.debug",
			   root, real, t.dir, t.dir, t.dir),
			0);
	CU_ASSERT_EQUAL(probe_in(bin, 0), 0);
	CU_ASSERT_EQUAL(sh("rm %s/bin/prog.debug", t.dir), 0);
	free(real);

	/* By build-id, for a stripped file without a link. */
	snprintf(bin, sizeof(bin), "%s/bin/nolink", t.dir);
	CU_ASSERT_EQUAL(probe_in(bin, 0), 0);
	CU_ASSERT_EQUAL_FATAL(cs_elf_open(bin, t.base, NULL, 0, &m), 0);
	n = cs_elf_build_id(m, &id);
	CU_ASSERT_FATAL(n >= 2 && n <= sizeof(idcopy));
	memcpy(idcopy, id, n);
	to_hex(id, n, hex);
	cs_elf_close(m);
	snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", root, hex, hex + 2);
	CU_ASSERT_EQUAL(
		sh("mkdir -p %s/.build-id/%.2s && cp %s/prog.debug %s", root, hex, t.dir, path), 0);
	CU_ASSERT_EQUAL(probe_in(bin, CS_SYM_DEBUG), 1);
	/* The same file with another build-id in its note: not used. */
	f = fopen(path, "rb");
	CU_ASSERT_FATAL(f != NULL);
	fseek(f, 0, SEEK_END);
	dlen = (size_t)ftell(f);
	rewind(f);
	dbg = malloc(dlen);
	CU_ASSERT_FATAL(dbg && fread(dbg, 1, dlen, f) == dlen);
	fclose(f);
	CU_ASSERT_EQUAL(cs_elf_open(path, t.base, NULL, 0, &m), 0);
	cs_elf_close(m);
	{
		uint8_t *p = memmem(dbg, dlen, idcopy, n);

		CU_ASSERT_FATAL(p != NULL);
		p[n - 1] ^= 0xff;
	}
	write_file(path, dbg, dlen);
	free(dbg);
	CU_ASSERT_EQUAL(probe_in(bin, 0), 0);
	cs_elf_set_debug_dir(NULL);
}

/* A file whose build-id differs from the loaded image's: refused. */
static void test_stale(void)
{
	struct cs_elf_module *m = (struct cs_elf_module *)1;

	CU_ASSERT_FATAL(t.libc[0] != 0);
	CU_ASSERT_EQUAL(cs_elf_open(t.libc, t.base, t.phdr, t.phnum, &m), -ESTALE);
	CU_ASSERT_PTR_NULL(m);
	CU_ASSERT_EQUAL(cs_elf_open("/nonexistent/x", 0, NULL, 0, &m), -ENOENT);
	CU_ASSERT_EQUAL(cs_elf_open("/", 0, NULL, 0, &m), -ENOEXEC);
}

/* libc: stripped; with libc6-dbg, its locals come from the debug file. */
static void test_libc(void)
{
	struct cs_elf_module *m;
	const uint8_t *id;
	char hex[200], path[512];
	struct hits h;
	uint64_t addr;
	unsigned n;
	int dbg;
	void *lib;

	CU_ASSERT_FATAL(t.libc[0] != 0);
	CU_ASSERT_EQUAL_FATAL(cs_elf_open(t.libc, t.libc_base, t.libc_phdr, t.libc_phnum, &m), 0);
	/* libc's own malloc, even if something interposes one. */
	lib = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	CU_ASSERT_FATAL(lib != NULL);
	addr = (uint64_t)(uintptr_t)dlsym(lib, "malloc");
	dlclose(lib);
	n = cs_elf_build_id(m, &id);
	CU_ASSERT_FATAL(n >= 2);
	to_hex(id, n, hex);
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	dbg = access(path, R_OK) == 0;
	/* From .dynsym, and from the debug file's .symtab where there is one. */
	h = lookup(m, "malloc");
	CU_ASSERT_EQUAL(h.n, dbg ? 2 : 1);
	CU_ASSERT_EQUAL(h.f[0].addr, addr);
	CU_ASSERT_EQUAL(h.f[0].source, CS_SYM_DYNSYM);
	if (dbg) {
		CU_ASSERT_EQUAL(h.f[1].addr, addr);
		CU_ASSERT_EQUAL(h.f[1].source, CS_SYM_DEBUG);
	}
	CU_ASSERT_TRUE(cs_elf_is_fde_start(m, addr));
	/* Two versions at two addresses: two .dynsym entries (the debug
	 * file names them with their versions). */
	h = lookup(m, "realpath");
	CU_ASSERT_EQUAL(h.n, 2);
	CU_ASSERT_TRUE(h.f[0].addr != h.f[1].addr);
	/* strlen is an IFUNC; memcpy@@GLIBC_2.14 too, memcpy@GLIBC_2.2.5
	 * is a plain function.  The IFUNCs are listed apart. */
	CU_ASSERT_EQUAL(lookup(m, "strlen").n, 0);
	CU_ASSERT_EQUAL(ifuncs_named(m, "strlen"), 1);
	CU_ASSERT_EQUAL(ifuncs_named(m, "memcpy"), 1);
	CU_ASSERT_EQUAL(ifuncs_named(m, "malloc"), 0);
	h = lookup(m, "memcpy");
	CU_ASSERT_EQUAL(h.n, 1);
	CU_ASSERT_EQUAL(h.f[0].source, CS_SYM_DYNSYM);
	h = lookup(m, "_int_malloc");
	if (!dbg) {
		printf("\n  (no %s: libc6-dbg absent, debug part skipped) ", path);
		CU_ASSERT_EQUAL(h.n, 0);
	} else {
		CU_ASSERT_EQUAL(h.n, 1);
		CU_ASSERT_EQUAL(h.f[0].local, 1);
		CU_ASSERT_EQUAL(h.f[0].source, CS_SYM_DEBUG);
		CU_ASSERT_TRUE(cs_elf_is_fde_start(m, h.f[0].addr));
		/* .symtab's names carry the version: "realpath@@GLIBC_2.3" is
		 * .dynsym's "realpath" (entry patching takes them as one). */
		h = lookup(m, "realpath@@GLIBC_2.3");
		CU_ASSERT_EQUAL(h.n, 1);
		CU_ASSERT_EQUAL(h.f[0].source, CS_SYM_DEBUG);
		CU_ASSERT_EQUAL(lookup(m, "realpath@GLIBC_2.2.5").n, 1);
	}
	cs_elf_close(m);
}

static void test_truncated(void)
{
	size_t lens[] = {0,    1,	   16,	       63,	    64,	       65,
			 4096, t.size / 4, t.size / 2, t.size - 64, t.size - 1};
	struct cs_elf_module *m;
	char path[128];
	unsigned i;

	snprintf(path, sizeof(path), "%s/trunc", t.dir);
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		write_file(path, t.image, lens[i]);
		m = (struct cs_elf_module *)1;
		CU_ASSERT_EQUAL(cs_elf_open(path, t.base, NULL, 0, &m), -ENOEXEC);
		CU_ASSERT_PTR_NULL(m);
	}
}

/* Corruption cases edit a copy of this program's file. */
static Elf64_Shdr *shdr(uint8_t *p, uint32_t type, const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)p;
	Elf64_Shdr *s = (Elf64_Shdr *)(p + eh->e_shoff);
	const char *str = (const char *)p + s[eh->e_shstrndx].sh_offset;
	unsigned i;

	for (i = 1; i < eh->e_shnum; i++) {
		if (s[i].sh_type == type && (!name || !strcmp(str + s[i].sh_name, name)))
			return &s[i];
	}
	CU_FAIL_FATAL("section not found");
	return NULL;
}

static uint8_t *eh_hdr(uint8_t *p)
{
	return p + shdr(p, SHT_PROGBITS, ".eh_frame_hdr")->sh_offset;
}

static void set_machine(uint8_t *p)
{
	((Elf64_Ehdr *)p)->e_machine = EM_386;
}
static void set_class(uint8_t *p)
{
	p[EI_CLASS] = ELFCLASS32;
}
static void set_endian(uint8_t *p)
{
	p[EI_DATA] = ELFDATA2MSB;
}
static void set_type(uint8_t *p)
{
	((Elf64_Ehdr *)p)->e_type = ET_REL;
}
static void shoff_end(uint8_t *p)
{
	((Elf64_Ehdr *)p)->e_shoff = t.size;
}
static void shoff_huge(uint8_t *p)
{
	((Elf64_Ehdr *)p)->e_shoff = UINT64_MAX - 7;
}
static void shnum_huge(uint8_t *p)
{
	((Elf64_Ehdr *)p)->e_shnum = 0xfeff;
}
static void shentsize(uint8_t *p)
{
	((Elf64_Ehdr *)p)->e_shentsize = 32;
}
static void phoff_huge(uint8_t *p)
{
	((Elf64_Ehdr *)p)->e_phoff = UINT64_MAX - 7;
}
static void phnum_huge(uint8_t *p)
{
	((Elf64_Ehdr *)p)->e_phnum = 0xfff0;
}
static void symtab_off(uint8_t *p)
{
	shdr(p, SHT_SYMTAB, NULL)->sh_offset = UINT64_MAX - 100;
}
static void symtab_size(uint8_t *p)
{
	shdr(p, SHT_SYMTAB, NULL)->sh_size = t.size;
}
static void symtab_link(uint8_t *p)
{
	shdr(p, SHT_SYMTAB, NULL)->sh_link = 60000;
}
static void symtab_entsize(uint8_t *p)
{
	shdr(p, SHT_SYMTAB, NULL)->sh_entsize = 0;
}
static void dynstr_off(uint8_t *p)
{
	Elf64_Shdr *all = (Elf64_Shdr *)(p + ((Elf64_Ehdr *)p)->e_shoff);

	all[shdr(p, SHT_DYNSYM, NULL)->sh_link].sh_offset = t.size;
}
static void names_huge(uint8_t *p)
{
	Elf64_Shdr *s = shdr(p, SHT_SYMTAB, NULL);
	Elf64_Sym *sym = (Elf64_Sym *)(p + s->sh_offset);
	size_t i;

	for (i = 0; i < s->sh_size / sizeof(*sym); i++)
		sym[i].st_name = 0xfffffff0u;
}
static void strtab_unterminated(uint8_t *p)
{
	Elf64_Shdr *s = shdr(p, SHT_STRTAB, ".strtab");

	memset(p + s->sh_offset, 'x', s->sh_size);
}
/* elf_static_probe's entry in .symtab. */
static Elf64_Sym *probe_sym(uint8_t *p)
{
	Elf64_Shdr *s = shdr(p, SHT_SYMTAB, NULL);
	Elf64_Shdr *all = (Elf64_Shdr *)(p + ((Elf64_Ehdr *)p)->e_shoff);
	Elf64_Sym *sym = (Elf64_Sym *)(p + s->sh_offset);
	const char *str = (const char *)p + all[s->sh_link].sh_offset;
	size_t i;

	for (i = 0; i < s->sh_size / sizeof(*sym); i++) {
		if (!strcmp(str + sym[i].st_name, "elf_static_probe"))
			return &sym[i];
	}
	CU_FAIL_FATAL("elf_static_probe not in .symtab");
	return NULL;
}
static void probe_abs(uint8_t *p)
{
	probe_sym(p)->st_shndx = SHN_ABS;
}
static void probe_undef(uint8_t *p)
{
	probe_sym(p)->st_shndx = SHN_UNDEF;
}
static void probe_zero(uint8_t *p)
{
	probe_sym(p)->st_value = 0;
}
static void probe_outside(uint8_t *p)
{
	probe_sym(p)->st_value = 1ull << 46;
}
static void probe_object(uint8_t *p)
{
	probe_sym(p)->st_info = ELF64_ST_INFO(STB_LOCAL, STT_OBJECT);
}
static void shstrndx_bad(uint8_t *p)
{
	((Elf64_Ehdr *)p)->e_shstrndx = 60000;
}
static void eh_version(uint8_t *p)
{
	eh_hdr(p)[0] = 2;
}
static void eh_table_enc(uint8_t *p)
{
	eh_hdr(p)[3] = 0x1b; /* pcrel|sdata4 */
}
static void eh_count_enc(uint8_t *p)
{
	eh_hdr(p)[2] = 0x0b;
}
static void eh_ptr_leb(uint8_t *p)
{
	eh_hdr(p)[1] = 0x01;
}
static void eh_count_huge(uint8_t *p)
{
	memcpy(eh_hdr(p) + 8, "\xff\xff\xff\x0f", 4);
}
static void eh_unsorted(uint8_t *p)
{
	uint8_t *e = eh_hdr(p) + 12, tmp[8];

	/* Swap the first and the last entries. */
	uint32_t n;

	memcpy(&n, e - 4, 4);
	memcpy(tmp, e, 8);
	memcpy(e, e + 8ull * (n - 1), 8);
	memcpy(e + 8ull * (n - 1), tmp, 8);
}
static void note_huge(uint8_t *p)
{
	Elf64_Shdr *s = shdr(p, SHT_NOTE, ".note.gnu.build-id");

	((Elf64_Nhdr *)(p + s->sh_offset))->n_descsz = 0xfffffff0u;
}

struct corrupt_case {
	int line;
	void (*edit)(uint8_t *p);
	int ret;
	int starts; /* -1: any, 0: none, 1: the same as the intact file's */
	int probe; /* elf_static_probe found: 0/1, -1 any */
	int id; /* build-id: 1 intact, 0 none */
};

static const struct corrupt_case corrupt_cases[] = {
	{__LINE__, set_machine, -ENOEXEC, -1, -1, -1},
	{__LINE__, set_class, -ENOEXEC, -1, -1, -1},
	{__LINE__, set_endian, -ENOEXEC, -1, -1, -1},
	{__LINE__, set_type, -ENOEXEC, -1, -1, -1},
	{__LINE__, shoff_end, -ENOEXEC, -1, -1, -1},
	{__LINE__, shoff_huge, -ENOEXEC, -1, -1, -1},
	{__LINE__, shnum_huge, -ENOEXEC, -1, -1, -1},
	{__LINE__, shentsize, -ENOEXEC, -1, -1, -1},
	{__LINE__, phoff_huge, -ENOEXEC, -1, -1, -1},
	{__LINE__, phnum_huge, -ENOEXEC, -1, -1, -1},
	{__LINE__, symtab_off, -ENOEXEC, -1, -1, -1},
	{__LINE__, symtab_size, -ENOEXEC, -1, -1, -1},
	{__LINE__, symtab_link, -ENOEXEC, -1, -1, -1},
	{__LINE__, symtab_entsize, -ENOEXEC, -1, -1, -1},
	{__LINE__, dynstr_off, -ENOEXEC, -1, -1, -1},
	{__LINE__, names_huge, 0, 1, 0, 1},
	{__LINE__, strtab_unterminated, 0, 1, 0, 1},
	{__LINE__, probe_abs, 0, 1, 0, 1},
	{__LINE__, probe_undef, 0, 1, 0, 1},
	{__LINE__, probe_zero, 0, 1, 0, 1},
	{__LINE__, probe_object, 0, 1, 0, 1},
	{__LINE__, probe_outside, 0, 1, 0, 1},
	{__LINE__, shstrndx_bad, 0, 1, 1, 1},
	{__LINE__, eh_version, 0, 0, 1, 1},
	{__LINE__, eh_table_enc, 0, 0, 1, 1},
	{__LINE__, eh_count_enc, 0, 0, 1, 1},
	{__LINE__, eh_ptr_leb, 0, 0, 1, 1},
	{__LINE__, eh_count_huge, 0, 0, 1, 1},
	{__LINE__, eh_unsorted, 0, 1, 1, 1},
	{__LINE__, note_huge, 0, 1, 1, 0},
};

static void test_corrupt(void)
{
	struct cs_elf_module *m, *ok;
	const uint64_t *s, *okstarts;
	const uint8_t *id;
	size_t nok, n;
	uint8_t *copy = malloc(t.size);
	char path[128];
	unsigned i;
	int ret;

	CU_ASSERT_FATAL(copy != NULL);
	CU_ASSERT_EQUAL_FATAL(cs_elf_open(t.self, t.base, NULL, 0, &ok), 0);
	nok = cs_elf_fde_starts(ok, &okstarts);
	snprintf(path, sizeof(path), "%s/corrupt", t.dir);
	for (i = 0; i < sizeof(corrupt_cases) / sizeof(corrupt_cases[0]); i++) {
		const struct corrupt_case *c = &corrupt_cases[i];

		memcpy(copy, t.image, t.size);
		c->edit(copy);
		write_file(path, copy, t.size);
		m = NULL;
		ret = cs_elf_open(path, t.base, NULL, 0, &m);
		if (ret != c->ret)
			printf("\n  case at line %d: %d, expected %d ", c->line, ret, c->ret);
		CU_ASSERT_EQUAL(ret, c->ret);
		if (ret || !m)
			continue;
		n = cs_elf_fde_starts(m, &s);
		if (c->starts == 0)
			CU_ASSERT_EQUAL(n, 0);
		if (c->starts == 1) {
			CU_ASSERT_EQUAL(n, nok);
			CU_ASSERT_TRUE(n == nok && !memcmp(s, okstarts, n * sizeof(*s)));
		}
		if (c->probe >= 0) {
			struct hits h = lookup(m, "elf_static_probe");

			if (h.n != (unsigned)c->probe)
				printf("\n  case at line %d: probe %u ", c->line, h.n);
			CU_ASSERT_EQUAL(h.n, (unsigned)c->probe);
		}
		if (c->id >= 0)
			CU_ASSERT_EQUAL(cs_elf_build_id(m, &id) > 0, c->id);
		cs_elf_close(m);
	}
	cs_elf_close(ok);
	free(copy);
}

/* Random bytes over the headers, section table, symbols and eh_frame_hdr:
 * an error or a usable module, never a crash. */
static void test_fuzz(void)
{
	uint8_t *copy = malloc(t.size);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)t.image;
	uint64_t regions[4][2];
	struct cs_elf_module *m;
	const uint64_t *s;
	char path[128];
	unsigned i, k, opened = 0, refused = 0;
	Elf64_Shdr *sec;
	size_t n, j;
	int ret;

	CU_ASSERT_FATAL(copy != NULL);
	memcpy(copy, t.image, t.size);
	regions[0][0] = 0;
	regions[0][1] = 4096;
	regions[1][0] = eh->e_shoff;
	regions[1][1] = (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr);
	sec = shdr(copy, SHT_SYMTAB, NULL);
	regions[2][0] = sec->sh_offset;
	regions[2][1] = sec->sh_size;
	sec = shdr(copy, SHT_PROGBITS, ".eh_frame_hdr");
	regions[3][0] = sec->sh_offset;
	regions[3][1] = sec->sh_size < 64 ? sec->sh_size : 64;
	snprintf(path, sizeof(path), "%s/fuzz", t.dir);
	srand(12345);
	for (i = 0; i < 400; i++) {
		memcpy(copy, t.image, t.size);
		for (k = 0; k < 1 + i % 16; k++) {
			const uint64_t *r = regions[(unsigned)rand() % 4];

			copy[r[0] + (uint64_t)rand() % r[1]] = (uint8_t)rand();
		}
		write_file(path, copy, t.size);
		ret = cs_elf_open(path, t.base, NULL, 0, &m);
		CU_ASSERT_TRUE(ret == 0 || ret == -ENOEXEC || ret == -ESTALE);
		if (ret) {
			refused++;
			continue;
		}
		opened++;
		CU_ASSERT_FALSE(lookup(m, NULL).bad);
		n = cs_elf_fde_starts(m, &s);
		for (j = 1; j < n; j++) {
			if (s[j - 1] >= s[j])
				break;
		}
		CU_ASSERT_TRUE(n == 0 || j == n);
		cs_elf_close(m);
	}
	printf("\n  %u opened, %u refused ", opened, refused);
	CU_ASSERT_TRUE(opened > 0 && refused > 0);
	free(copy);
}

struct clone_case {
	int line;
	const char *name;
	size_t len;
};

static const struct clone_case clone_cases[] = {
	{__LINE__, "foo", 3},
	{__LINE__, "", 0},
	{__LINE__, "foo.constprop.0", 3},
	{__LINE__, "foo.isra.0", 3},
	{__LINE__, "foo.part.0", 3},
	{__LINE__, "foo.part.12", 3},
	{__LINE__, "foo.cold", 3},
	{__LINE__, "foo.cold.3", 3},
	{__LINE__, "foo.lto_priv.0", 3},
	{__LINE__, "foo.localalias", 3},
	{__LINE__, "foo.isra.0.constprop.0", 3},
	{__LINE__, "foo.part.0.cold", 3},
	{__LINE__, "foo.constprop.0.isra.0.part.1.cold.2", 3},
	{__LINE__, "foo.cold.constprop.0", 3},
	{__LINE__, "_ZL3barv.isra.0", 8},
	{__LINE__, "foo.bar", 7},
	{__LINE__, "foo.bar.isra.0", 7},
	{__LINE__, "foo.isra", 8},
	{__LINE__, "foo.isra.", 9},
	{__LINE__, "foo.isra.x", 10},
	{__LINE__, "foo.isra.0x", 11},
	{__LINE__, "foo.coldx", 9},
	{__LINE__, "foo.cold.", 9},
	{__LINE__, "foo.colder.0", 12},
	{__LINE__, "foo.constprop.0.1", 17},
	{__LINE__, "foo.localalias.0", 16},
	{__LINE__, "foo.", 4},
	{__LINE__, ".cold", 5},
	{__LINE__, ".isra.0", 7},
	{__LINE__, "foo..isra.0", 4},
	{__LINE__, "a.b.c.part.0.cold", 5},
};

static void test_clone_names(void)
{
	unsigned i;

	for (i = 0; i < sizeof(clone_cases) / sizeof(clone_cases[0]); i++) {
		const struct clone_case *c = &clone_cases[i];
		size_t got = cs_elf_clone_base_len(c->name);

		if (got != c->len)
			printf("\n  line %d: \"%s\" -> %zu, expected %zu ", c->line, c->name, got,
			       c->len);
		CU_ASSERT_EQUAL(got, c->len);
	}
}

static int load_self(void)
{
	FILE *f;
	long len;

	if (!realpath("/proc/self/exe", t.self))
		return -1;
	f = fopen(t.self, "rb");
	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	t.size = (size_t)len;
	t.image = malloc(t.size);
	if (!t.image || fread(t.image, 1, t.size, f) != t.size) {
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

/* Started as "ld.so test_elfsyms --via-ldso": /proc/self/exe is ld.so,
 * whose build-id is not the main program's, and the link map names the
 * program "".  Exit status 0 if the program is found all the same, and
 * ld.so given as the program is refused. */
static int via_ldso(void)
{
	struct cs_elf_module *m;
	struct hits h;

	if (cs_elf_open("/proc/self/exe", t.base, t.phdr, t.phnum, &m) != -ESTALE)
		return 10;
	if (cs_elf_open("", t.base, t.phdr, t.phnum, &m))
		return 11;
	memset(&h, 0, sizeof(h));
	h.name = "elf_static_probe";
	cs_elf_each_func(m, collect, &h);
	cs_elf_close(m);
	return h.n == 1 && h.f[0].addr == ADDR(elf_static_probe) ? 0 : 12;
}

static void test_ldso_started(void)
{
	CU_ASSERT_FATAL(t.ldso[0] != 0);
	CU_ASSERT_EQUAL(sh("'%s' '%s' --via-ldso", t.ldso, t.self), 0);
}

int main(int argc, char **argv)
{
	CU_pSuite suite;
	unsigned failed;

	if (argc == 2 && !strcmp(argv[1], "--via-ldso")) {
		dl_iterate_phdr(find_modules, NULL);
		return via_ldso();
	}

	if (sh("command -v objcopy >/dev/null && command -v readelf >/dev/null")) {
		fprintf(stderr, "objcopy or readelf absent: skipped\n");
		return 77;
	}
	dl_iterate_phdr(find_modules, NULL);
	snprintf(t.dir, sizeof(t.dir), "/tmp/cs-elfsyms.XXXXXX");
	if (!t.phdr || load_self() || !mkdtemp(t.dir)) {
		fprintf(stderr, "cannot set up: %s\n", strerror(errno));
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite("elfsyms", NULL, NULL);
	CU_add_test(suite, "the program itself", test_self);
	CU_add_test(suite, "build-id and exec ranges", test_build_id_and_ranges);
	CU_add_test(suite, "eh_frame_hdr starts", test_fde_starts);
	CU_add_test(suite, "separate debug files", test_debug_files);
	CU_add_test(suite, "stale and missing files", test_stale);
	CU_add_test(suite, "libc", test_libc);
	CU_add_test(suite, "a program started by ld.so", test_ldso_started);
	CU_add_test(suite, "truncated files", test_truncated);
	CU_add_test(suite, "corrupted files", test_corrupt);
	CU_add_test(suite, "fuzzed files", test_fuzz);
	CU_add_test(suite, "clone base names", test_clone_names);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed() + CU_get_number_of_failures();
	CU_cleanup_registry();
	sh("rm -rf %s", t.dir);
	free(t.image);
	return failed ? 1 : 0;
}
