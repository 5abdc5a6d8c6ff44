/* SPDX-License-Identifier: MIT */
/* Function symbols and function starts of a loaded module, for entry
 * patching: read from its ELF file (and separate debug file) mapped
 * read-only, every offset bounds-checked, since the file may be anything. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim/internal.h"

#define CS_BUILD_ID_MAX 64 /* longer ids are not build-ids we know */
#define CS_EXEC_MAX 16
#define CS_PE_OMIT 0xff
#define CS_PE_UDATA4 0x03
#define CS_PE_DATAREL_SDATA4 0x3b

/* One mapped ELF file and its validated header tables. */
struct image {
	const uint8_t *p;
	size_t size;
	const Elf64_Shdr *sh;
	size_t shnum;
	const Elf64_Phdr *ph;
	size_t phnum;
	const char *shstr;
	size_t shstrsz;
};

struct cs_elf_module {
	uint64_t base;
	struct image file, debug;
	uint64_t *starts;
	size_t nstarts;
	uint64_t lo[CS_EXEC_MAX], hi[CS_EXEC_MAX];
	unsigned nexec;
	/* The loaded image's .eh_frame_hdr table and its mapped segments, for
	 * reading FDEs (cs_elf_fde_end); NULL when not read from memory. */
	const uint8_t *ehtab, *ehdr;
	uint32_t ehcount;
	uint64_t seg_lo[CS_EXEC_MAX], seg_hi[CS_EXEC_MAX];
	unsigned nseg;
	uint8_t id[CS_BUILD_ID_MAX];
	unsigned idlen;
	/* .eh_frame_hdr found by read_phdrs, read by eh_frame_hdr */
	const uint8_t *eh;
	uint64_t ehlen, ehaddr;
};

static const char *debug_root = "/usr/lib/debug";

void cs_elf_set_debug_dir(const char *dir)
{
	debug_root = dir ? dir : "/usr/lib/debug";
}

static int in_file(const struct image *im, uint64_t off, uint64_t len)
{
	return off <= im->size && len <= im->size - off;
}

/* Checks what the rest of this file relies on: an ELF64 x86-64 little-endian
 * header, section and program header tables inside the file. */
static int parse_headers(struct image *im)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)im->p;
	uint64_t phnum;

	if (im->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_ident[EI_VERSION] != EV_CURRENT || eh->e_machine != EM_X86_64 ||
	    (eh->e_type != ET_EXEC && eh->e_type != ET_DYN))
		return -ENOEXEC;
	if (eh->e_shoff) {
		uint64_t shnum, shstrndx;

		if (eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff % 8 ||
		    !in_file(im, eh->e_shoff, sizeof(Elf64_Shdr)))
			return -ENOEXEC;
		im->sh = (const Elf64_Shdr *)(im->p + eh->e_shoff);
		/* More than 0xff00 sections: the count is in section 0. */
		shnum = eh->e_shnum ? eh->e_shnum : im->sh[0].sh_size;
		if (shnum > (im->size - eh->e_shoff) / sizeof(Elf64_Shdr))
			return -ENOEXEC;
		im->shnum = shnum;
		shstrndx = eh->e_shstrndx == SHN_XINDEX ? im->sh[0].sh_link : eh->e_shstrndx;
		if (shstrndx && shstrndx < shnum && im->sh[shstrndx].sh_type != SHT_NOBITS &&
		    in_file(im, im->sh[shstrndx].sh_offset, im->sh[shstrndx].sh_size)) {
			im->shstr = (const char *)im->p + im->sh[shstrndx].sh_offset;
			im->shstrsz = im->sh[shstrndx].sh_size;
		}
	}
	phnum = eh->e_phnum;
	if (phnum == PN_XNUM)
		phnum = im->shnum ? im->sh[0].sh_info : 0;
	if (eh->e_phoff && phnum) {
		if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff % 8 ||
		    eh->e_phoff > im->size || phnum > (im->size - eh->e_phoff) / sizeof(Elf64_Phdr))
			return -ENOEXEC;
		im->ph = (const Elf64_Phdr *)(im->p + eh->e_phoff);
		im->phnum = phnum;
	}
	return 0;
}

static void unmap(struct image *im)
{
	if (im->p)
		munmap((void *)im->p, im->size);
	memset(im, 0, sizeof(*im));
}

/* Maps path read-only and validates its headers.  Returns 0 or -errno.
 * With keep_fd, the open file stays open in *keep_fd (on success). */
static int map(const char *path, struct image *im, int *keep_fd)
{
	struct stat st;
	void *p;
	int fd, ret;

	memset(im, 0, sizeof(*im));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(Elf64_Ehdr)) {
		close(fd);
		return -ENOEXEC;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ret = p == MAP_FAILED ? -errno : 0;
	if (ret) {
		close(fd);
		return ret;
	}
	im->p = p;
	im->size = (size_t)st.st_size;
	ret = parse_headers(im);
	if (ret)
		unmap(im);
	if (ret || !keep_fd)
		close(fd);
	else
		*keep_fd = fd;
	return ret;
}

/* Contents of section s, or NULL if it has none in the file. */
static const uint8_t *sec_data(const struct image *im, const Elf64_Shdr *s)
{
	if (s->sh_type == SHT_NOBITS || !in_file(im, s->sh_offset, s->sh_size))
		return NULL;
	return im->p + s->sh_offset;
}

/* The NUL-terminated string at off in tab[0, size), or NULL. */
static const char *str_at(const char *tab, uint64_t size, uint64_t off)
{
	if (!tab || off >= size || !memchr(tab + off, 0, size - off))
		return NULL;
	return tab + off;
}

static const Elf64_Shdr *sec_by_type(const struct image *im, uint32_t type)
{
	size_t i;

	for (i = 1; i < im->shnum; i++) {
		if (im->sh[i].sh_type == type)
			return &im->sh[i];
	}
	return NULL;
}

static const Elf64_Shdr *sec_by_name(const struct image *im, const char *name)
{
	size_t i;

	for (i = 1; i < im->shnum; i++) {
		const char *s = str_at(im->shstr, im->shstrsz, im->sh[i].sh_name);

		if (s && !strcmp(s, name))
			return &im->sh[i];
	}
	return NULL;
}

/* Finds an NT_GNU_BUILD_ID note in the notes at p[0, len), padded to align
 * (4 or 8).  Returns its length, copied to out, or 0. */
static unsigned note_build_id(const uint8_t *p, uint64_t len, uint64_t align, uint8_t *out)
{
	uint64_t a = align == 8 ? 8 : 4, off = 0;

	while (len - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr n;
		uint64_t name, desc;

		memcpy(&n, p + off, sizeof(n));
		name = off + sizeof(n);
		desc = name + ((n.n_namesz + a - 1) & ~(a - 1));
		if (desc > len || n.n_descsz > len - desc)
			return 0;
		if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && !memcmp(p + name, "GNU", 4) &&
		    n.n_descsz && n.n_descsz <= CS_BUILD_ID_MAX) {
			memcpy(out, p + desc, n.n_descsz);
			return n.n_descsz;
		}
		off = desc + ((n.n_descsz + a - 1) & ~(a - 1));
		if (off > len)
			return 0;
	}
	return 0;
}

/* The build-id of a file from its note sections (section headers survive
 * in debug files, whose program headers may point at nothing). */
static unsigned file_build_id(const struct image *im, uint8_t *out)
{
	unsigned len = 0;
	size_t i;

	for (i = 1; i < im->shnum && !len; i++) {
		const Elf64_Shdr *s = &im->sh[i];
		const uint8_t *d = s->sh_type == SHT_NOTE ? sec_data(im, s) : NULL;

		if (d)
			len = note_build_id(d, s->sh_size, s->sh_addralign, out);
	}
	for (i = 0; i < im->phnum && !len; i++) {
		const Elf64_Phdr *ph = &im->ph[i];

		if (ph->p_type == PT_NOTE && in_file(im, ph->p_offset, ph->p_filesz))
			len = note_build_id(im->p + ph->p_offset, ph->p_filesz, ph->p_align, out);
	}
	return len;
}

/* True if addr lies in an executable segment: a symbol elsewhere (a bad
 * file) must not become an address to patch. */
static int in_exec(const struct cs_elf_module *m, uint64_t addr)
{
	unsigned i;

	for (i = 0; i < m->nexec; i++) {
		if (addr >= m->lo[i] && addr < m->hi[i])
			return 1;
	}
	return 0;
}

/* im's symbol table of the given type and its strings.  Returns 0, 1 if
 * there is no such table, or -ENOEXEC if it or its strings lie outside
 * the file. */
static int sym_table(const struct image *im, uint32_t type, const Elf64_Sym **sym, size_t *n,
		     const char **str, uint64_t *strsize)
{
	const Elf64_Shdr *s = sec_by_type(im, type), *strs;

	if (!s)
		return 1;
	*sym = (const Elf64_Sym *)sec_data(im, s);
	if (!*sym || s->sh_entsize != sizeof(**sym) || s->sh_offset % 8 || s->sh_link == 0 ||
	    s->sh_link >= im->shnum)
		return -ENOEXEC;
	strs = &im->sh[s->sh_link];
	*str = (const char *)sec_data(im, strs);
	if (!*str)
		return -ENOEXEC;
	*strsize = strs->sh_size;
	*n = s->sh_size / sizeof(**sym);
	return 0;
}

/* Calls fn for each defined function of im's symbol table of the given
 * type, in the table's order.  Returns 0 (also when there is no such
 * table), -ENOEXEC if the table or its strings lie outside the file (not
 * when checked at open: open_file), or fn's first nonzero return. */
static int each_sym(const struct cs_elf_module *m, const struct image *im, uint32_t type,
		    int source, int (*fn)(const struct cs_elf_func *f, void *arg), void *arg)
{
	const Elf64_Sym *sym;
	const char *str;
	uint64_t strsize;
	size_t i, n;
	int ret = sym_table(im, type, &sym, &n, &str, &strsize), ended;

	if (ret)
		return ret > 0 ? 0 : ret;
	/* Strings that end in a NUL need no search for one per name. */
	ended = strsize && !str[strsize - 1];
	for (i = 1; i < n; i++) {
		struct cs_elf_func f;

		if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC || sym[i].st_shndx == SHN_UNDEF ||
		    sym[i].st_shndx == SHN_ABS || !sym[i].st_value)
			continue;
		if (ended)
			f.name = sym[i].st_name < strsize ? str + sym[i].st_name : NULL;
		else
			f.name = str_at(str, strsize, sym[i].st_name);
		if (!f.name || !f.name[0])
			continue;
		f.addr = m->base + sym[i].st_value;
		if (!in_exec(m, f.addr))
			continue;
		f.size = sym[i].st_size;
		f.local = ELF64_ST_BIND(sym[i].st_info) == STB_LOCAL;
		f.source = source;
		ret = fn(&f, arg);
		if (ret)
			return ret;
	}
	return 0;
}

/* Whether im's symbol table of the given type (if any) and its strings lie
 * inside the file: each_sym need not say so later. */
static int syms_readable(const struct image *im, uint32_t type)
{
	const Elf64_Sym *sym;
	const char *str;
	uint64_t strsize;
	size_t n;

	return sym_table(im, type, &sym, &n, &str, &strsize) >= 0;
}

/* True if the strings of im's symbol table of the given type hold one of
 * the wanted substrings (a malformed table counts as holding them: the
 * open then says what is wrong). */
static int table_holds(const struct image *im, uint32_t type, const struct cs_elf_wanted *w)
{
	const Elf64_Sym *sym;
	const char *str;
	uint64_t strsize;
	size_t n;
	unsigned i;
	int ret = sym_table(im, type, &sym, &n, &str, &strsize);

	if (ret)
		return ret < 0;
	for (i = 0; i < w->n; i++) {
		if (memmem(str, strsize, w->s[i], w->len[i]))
			return 1;
	}
	return 0;
}

/* The standard CRC-32 (reflected 0xedb88320), as .gnu_debuglink uses. */
static uint32_t crc32_of(const uint8_t *p, size_t len)
{
	uint32_t tab[256], c = 0xffffffffu;
	unsigned i, k;

	for (i = 0; i < 256; i++) {
		uint32_t v = i;

		for (k = 0; k < 8; k++)
			v = v & 1 ? 0xedb88320u ^ (v >> 1) : v >> 1;
		tab[i] = v;
	}
	while (len--)
		c = tab[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

/* Joins three strings into out[PATH_MAX].  Returns 0, or -1 if too long. */
static int join(char *out, const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);

	if (la + lb + lc >= PATH_MAX)
		return -1;
	memcpy(out, a, la);
	memcpy(out + la, b, lb);
	memcpy(out + la + lb, c, lc + 1);
	return 0;
}

/* Uses path as m's debug file if it has a well-formed .symtab and matches
 * the module: by CRC (check_crc) and by build-id when both have one.  Its
 * symbols are added later (open_file).  Returns 0 when it became m->debug,
 * else -errno (m unchanged). */
static int try_debug(struct cs_elf_module *m, const char *path, int check_crc, uint32_t crc)
{
	uint8_t id[CS_BUILD_ID_MAX];
	const Elf64_Sym *sym;
	const char *str;
	uint64_t strsize;
	struct image im;
	unsigned idlen;
	size_t n;
	int ret;

	ret = map(path, &im, NULL);
	if (ret)
		return ret;
	ret = sym_table(&im, SHT_SYMTAB, &sym, &n, &str, &strsize);
	if (ret > 0)
		ret = -ENOENT;
	if (ret)
		goto fail;
	ret = -ESTALE;
	if (check_crc && crc32_of(im.p, im.size) != crc)
		goto fail;
	idlen = file_build_id(&im, id);
	if (idlen && m->idlen && (idlen != m->idlen || memcmp(id, m->id, idlen)))
		goto fail;
	m->debug = im;
	return 0;
fail:
	unmap(&im);
	return ret;
}

static int debug_by_build_id(struct cs_elf_module *m)
{
	static const char hex[] = "0123456789abcdef";
	char name[2 * CS_BUILD_ID_MAX + 24], *path;
	unsigned i;
	char *q = name;
	int ret = -ENAMETOOLONG;

	if (m->idlen < 2)
		return -ENOENT;
	memcpy(q, "/.build-id/", 11);
	q += 11;
	for (i = 0; i < m->idlen; i++) {
		*q++ = hex[m->id[i] >> 4];
		*q++ = hex[m->id[i] & 15];
		if (i == 0)
			*q++ = '/';
	}
	memcpy(q, ".debug", 7);
	/* Paths live on the heap: the caller may run on a small thread stack. */
	path = malloc(PATH_MAX);
	if (!path)
		return -ENOMEM;
	if (!join(path, debug_root, name, ""))
		ret = try_debug(m, path, 0, 0);
	free(path);
	return ret;
}

/* The real path (symbolic links resolved, malloc'd) of the module file
 * open as fd: one readlink of /proc/self/fd/N, where realpath(3) makes one
 * system call per component of the path (six for /lib/x86_64-linux-gnu/
 * libz.so.1, ~2.5 us each on the development VMs, for every module without
 * a .symtab at start and at each dlopen).  realpath's answer without
 * /proc, or for a file deleted since it was loaded. */
static char *real_path(const char *path, int fd)
{
	static const char deleted[] = " (deleted)";
	char link[32], *out = fd >= 0 ? malloc(PATH_MAX) : NULL;
	ssize_t n;

	if (out) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, out, PATH_MAX - 1);
		if (n > 0 && n < PATH_MAX - 1 && out[0] == '/' &&
		    ((size_t)n < sizeof(deleted) - 1 ||
		     memcmp(out + n - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1))) {
			out[n] = 0;
			return out;
		}
		free(out);
	}
	return realpath(path, NULL);
}

/* .gnu_debuglink: a file name, NUL, padding to 4, the file's CRC-32.
 * Looked for next to the module's real path, in .debug/ there, and under
 * the debug root.  fd: the module file, open (or -1). */
static int debug_by_link(struct cs_elf_module *m, const char *module_path, int fd)
{
	const Elf64_Shdr *s = sec_by_name(&m->file, ".gnu_debuglink");
	const uint8_t *d = s ? sec_data(&m->file, s) : NULL;
	const char *link, *slash;
	char *real, *dir, *sub, *path;
	uint64_t off;
	uint32_t crc;
	int ret = -ENOENT;

	if (!d)
		return -ENOENT;
	link = str_at((const char *)d, s->sh_size, 0);
	if (!link || !link[0] || strchr(link, '/'))
		return -ENOENT;
	off = (strlen(link) + 4) & ~3ul;
	if (off > s->sh_size || s->sh_size - off < 4)
		return -ENOENT;
	memcpy(&crc, d + off, 4);
	real = real_path(module_path, fd);
	if (!real)
		return -ENOENT;
	dir = malloc(3 * PATH_MAX);
	if (!dir) {
		free(real);
		return -ENOMEM;
	}
	sub = dir + PATH_MAX;
	path = sub + PATH_MAX;
	slash = strrchr(real, '/');
	if (slash && (size_t)(slash - real) < PATH_MAX) {
		memcpy(dir, real, (size_t)(slash - real));
		dir[slash - real] = 0;
		if (!join(path, dir, "/", link))
			ret = try_debug(m, path, 1, crc);
		if (ret && !join(path, dir, "/.debug/", link))
			ret = try_debug(m, path, 1, crc);
		if (ret && !join(sub, dir, "/", link) && !join(path, debug_root, sub, ""))
			ret = try_debug(m, path, 1, crc);
	}
	free(dir);
	free(real);
	return ret;
}

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* Size of a DW_EH_PE-encoded fixed-size value, 0 if omitted, -1 if it has
 * no fixed size (LEB128) or is unknown. */
static int enc_size(uint8_t enc)
{
	if (enc == CS_PE_OMIT)
		return 0;
	switch (enc & 0x0f) {
	case 0x00: /* absptr */
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		return 8;
	case 0x02: /* udata2 */
	case 0x0a: /* sdata2 */
		return 2;
	case 0x03: /* udata4 */
	case 0x0b: /* sdata4 */
		return 4;
	}
	return -1;
}

/* Reads the binary-search table of the .eh_frame_hdr at h[0, len), whose
 * run-time address is addr.  Only the encodings every toolchain we know
 * emits are read (count udata4, table datarel|sdata4); any other table
 * yields no starts, which the caller must treat as "unknown".  Returns 0 or
 * -ENOMEM. */
static int eh_frame_hdr(struct cs_elf_module *m, const uint8_t *h, uint64_t len, uint64_t addr)
{
	uint32_t count, i, sorted = 1;
	uint64_t off;
	int32_t loc;
	int psz;

	if (len < 4 || h[0] != 1 || h[2] != CS_PE_UDATA4 || h[3] != CS_PE_DATAREL_SDATA4)
		return 0;
	psz = enc_size(h[1]);
	if (psz < 0)
		return 0;
	off = 4 + (uint64_t)psz;
	if (len < off + 4)
		return 0;
	memcpy(&count, h + off, 4);
	off += 4;
	if (!count || count > (len - off) / 8)
		return 0;
	if ((uint64_t)(uintptr_t)h == addr) {
		/* The loaded image: its FDEs can be read too. */
		m->ehdr = h;
		m->ehtab = h + off;
		m->ehcount = count;
	}
	m->starts = malloc(count * sizeof(*m->starts));
	if (!m->starts)
		return -ENOMEM;
	for (i = 0; i < count; i++) {
		memcpy(&loc, h + off + 8ull * i, 4);
		m->starts[i] = addr + (uint64_t)(int64_t)loc;
		if (i && m->starts[i] < m->starts[i - 1])
			sorted = 0;
	}
	if (!sorted)
		qsort(m->starts, count, sizeof(*m->starts), u64_cmp);
	m->nstarts = 1;
	for (i = 1; i < count; i++) {
		if (m->starts[i] != m->starts[m->nstarts - 1])
			m->starts[m->nstarts++] = m->starts[i];
	}
	return 0;
}

/* Exec ranges, build-id and .eh_frame_hdr from the program headers: the
 * loaded image's (mem) or else the file's. */
static int read_phdrs(struct cs_elf_module *m, const Elf64_Phdr *ph, size_t phnum, int mem)
{
	const uint8_t *eh = NULL;
	uint64_t ehlen = 0, ehaddr = 0;
	size_t i;

	for (i = 0; i < phnum; i++) {
		const uint8_t *d = NULL;
		uint64_t len = mem ? ph[i].p_memsz : ph[i].p_filesz;

		if (mem)
			d = (const uint8_t *)(uintptr_t)(m->base + ph[i].p_vaddr);
		else if (in_file(&m->file, ph[i].p_offset, ph[i].p_filesz))
			d = m->file.p + ph[i].p_offset;
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && m->nexec < CS_EXEC_MAX) {
			m->lo[m->nexec] = m->base + ph[i].p_vaddr;
			m->hi[m->nexec++] = m->base + ph[i].p_vaddr + ph[i].p_memsz;
		}
		if (ph[i].p_type == PT_LOAD && mem && m->nseg < CS_EXEC_MAX) {
			m->seg_lo[m->nseg] = m->base + ph[i].p_vaddr;
			m->seg_hi[m->nseg++] = m->base + ph[i].p_vaddr + ph[i].p_memsz;
		}
		if (ph[i].p_type == PT_NOTE && d && !m->idlen)
			m->idlen = note_build_id(d, len, ph[i].p_align, m->id);
		if (ph[i].p_type == PT_GNU_EH_FRAME && d) {
			eh = d;
			ehlen = len;
			ehaddr = m->base + ph[i].p_vaddr;
		}
	}
	/* Its table is read later, and only for a wanted module (open_file):
	 * libc's lists thousands of functions. */
	m->eh = eh;
	m->ehlen = ehlen;
	m->ehaddr = ehaddr;
	return 0;
}

static int open_file(const char *path, uint64_t base, const void *phdr, unsigned phnum,
		     const struct cs_elf_wanted *wanted, struct cs_elf_module **out)
{
	struct cs_elf_module *m;
	uint8_t id[CS_BUILD_ID_MAX];
	unsigned idlen;
	int ret, fd = -1;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->base = base;
	ret = map(path, &m->file, &fd);
	if (ret)
		goto fail;
	if (phdr)
		ret = read_phdrs(m, phdr, phnum, 1);
	else
		ret = read_phdrs(m, m->file.ph, m->file.phnum, 0);
	if (ret)
		goto fail;
	/* A file replaced since it was loaded, or /proc/self/exe naming ld.so
	 * (a program started as "ld.so prog"), would give wrong addresses. */
	idlen = file_build_id(&m->file, id);
	ret = -ESTALE;
	if (idlen && m->idlen && (idlen != m->idlen || memcmp(id, m->id, idlen)))
		goto fail;
	if (!m->idlen) {
		memcpy(m->id, id, idlen);
		m->idlen = idlen;
	}
	if (!sec_by_type(&m->file, SHT_SYMTAB) && debug_by_build_id(m) == -ENOMEM)
		goto nomem;
	if (!sec_by_type(&m->file, SHT_SYMTAB) && !m->debug.p &&
	    debug_by_link(m, path, fd) == -ENOMEM)
		goto nomem;
	close(fd);
	fd = -1;
	/* No name of the module can be wanted: its symbols are not read or
	 * matched at all (most of a start-up's cost in modules like libc
	 * with its debug file's 7,000 functions). */
	ret = CS_ELF_UNWANTED;
	if (wanted && !table_holds(&m->file, SHT_DYNSYM, wanted) &&
	    !table_holds(&m->file, SHT_SYMTAB, wanted) &&
	    !(m->debug.p && table_holds(&m->debug, SHT_SYMTAB, wanted)))
		goto fail;
	ret = m->eh ? eh_frame_hdr(m, m->eh, m->ehlen, m->ehaddr) : 0;
	if (!ret && (!syms_readable(&m->file, SHT_DYNSYM) || !syms_readable(&m->file, SHT_SYMTAB)))
		ret = -ENOEXEC;
	if (ret)
		goto fail;
	/* A debug file's table that does not fit: without it. */
	if (m->debug.p && !syms_readable(&m->debug, SHT_SYMTAB))
		unmap(&m->debug);
	*out = m;
	return 0;
nomem:
	ret = -ENOMEM;
fail:
	if (fd >= 0)
		close(fd);
	cs_elf_close(m);
	return ret;
}

/* The path of the file mapped at addr, from /proc/self/maps, into
 * out[PATH_MAX].  Returns 0 or -errno. */
static int mapped_file(uint64_t addr, char *out)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap + 1), *line, *end, *p;
	int fd, ret = -ENOENT;

	if (!buf)
		return -ENOMEM;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return -ENOENT;
	}
	for (;;) {
		if (len == cap) {
			p = realloc(buf, 2 * cap + 1);
			if (!p)
				break;
			buf = p;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = 0;
	/* "start-end perms offset dev inode   path" */
	for (line = buf; line < buf + len; line = end + 1) {
		unsigned field;

		end = memchr(line, '\n', (size_t)(buf + len - line));
		if (!end)
			end = buf + len;
		if (strtoull(line, NULL, 16) != addr)
			continue;
		for (p = line, field = 0; field < 5; field++) {
			while (p < end && *p != ' ')
				p++;
			while (p < end && *p == ' ')
				p++;
		}
		if (p < end && *p == '/' && (size_t)(end - p) < PATH_MAX) {
			memcpy(out, p, (size_t)(end - p));
			out[end - p] = 0;
			ret = 0;
		}
		break;
	}
	free(buf);
	return ret;
}

int cs_elf_open_wanted(const char *path, uint64_t base, const void *phdr, unsigned phnum,
		       const struct cs_elf_wanted *wanted, struct cs_elf_module **out)
{
	const Elf64_Phdr *ph = phdr;
	uint64_t lo = UINT64_MAX;
	unsigned i;
	char *real;
	int ret;

	*out = NULL;
	if (path && path[0])
		return open_file(path, base, phdr, phnum, wanted, out);
	ret = open_file("/proc/self/exe", base, phdr, phnum, wanted, out);
	if (ret != -ESTALE)
		return ret;
	/* Started as "ld.so prog": /proc/self/exe is ld.so, and the link map
	 * names the program "".  The file mapped at its first segment is it. */
	for (i = 0; i < phnum; i++) {
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < lo)
			lo = ph[i].p_vaddr;
	}
	real = malloc(PATH_MAX);
	if (!real)
		return -ENOMEM;
	if (lo != UINT64_MAX &&
	    !mapped_file((base + lo) & ~((uint64_t)sysconf(_SC_PAGESIZE) - 1), real))
		ret = open_file(real, base, phdr, phnum, wanted, out);
	free(real);
	return ret;
}

int cs_elf_open(const char *path, uint64_t base, const void *phdr, unsigned phnum,
		struct cs_elf_module **out)
{
	return cs_elf_open_wanted(path, base, phdr, phnum, NULL, out);
}

void cs_elf_close(struct cs_elf_module *m)
{
	if (!m)
		return;
	unmap(&m->file);
	unmap(&m->debug);
	free(m->starts);
	free(m);
}

/* Read from the table when asked, not kept: only entry patching without
 * the GOT pass asks (to say why an IFUNC target is not wrapped), and
 * libc's ~100 IFUNCs kept in a list cost every start-up (the list's
 * growth crossed a doubling: +46 page faults, ~0.3 ms). */
int cs_elf_each_ifunc(struct cs_elf_module *m, int (*fn)(const char *name, void *arg), void *arg)
{
	const Elf64_Sym *sym;
	const char *str, *name;
	uint64_t strsize;
	size_t i, n;
	int ret = sym_table(&m->file, SHT_DYNSYM, &sym, &n, &str, &strsize);

	if (ret)
		return 0;
	for (i = 1; i < n; i++) {
		if (ELF64_ST_TYPE(sym[i].st_info) != STT_GNU_IFUNC ||
		    sym[i].st_shndx == SHN_UNDEF || !(name = str_at(str, strsize, sym[i].st_name)) ||
		    !name[0])
			continue;
		ret = fn(name, arg);
		if (ret)
			return ret;
	}
	return 0;
}

/* Read from the tables each time, never kept or sorted: sorting libc's
 * ~10,000 functions (its debug file's) by address with their names, to
 * fold one function's entries in several tables into one, took a third of
 * a start-up with a libc target, and entry patching needs neither. */
int cs_elf_each_func(struct cs_elf_module *m, int (*fn)(const struct cs_elf_func *f, void *arg),
		     void *arg)
{
	int ret = each_sym(m, &m->file, SHT_DYNSYM, CS_SYM_DYNSYM, fn, arg);

	if (!ret)
		ret = each_sym(m, &m->file, SHT_SYMTAB, CS_SYM_SYMTAB, fn, arg);
	if (!ret && m->debug.p)
		ret = each_sym(m, &m->debug, SHT_SYMTAB, CS_SYM_DEBUG, fn, arg);
	return ret;
}

size_t cs_elf_fde_starts(struct cs_elf_module *m, const uint64_t **starts)
{
	*starts = m->starts;
	return m->nstarts;
}

/* True if [a, a + n) lies inside one mapped segment of the loaded image. */
static int mapped(const struct cs_elf_module *m, uint64_t a, uint64_t n)
{
	unsigned i;

	for (i = 0; i < m->nseg; i++) {
		if (a >= m->seg_lo[i] && a <= m->seg_hi[i] && n <= m->seg_hi[i] - a)
			return 1;
	}
	return 0;
}

/* Reads a ULEB128 at *p (bounded by end).  Returns 0 or -1. */
static int uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (*p < end && shift < 64) {
		uint8_t b = *(*p)++;

		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

/* The pointer encoding of an FDE's pc_begin, from its CIE's augmentation
 * ('R'), or -1 when the CIE cannot be read with certainty. */
static int cie_fde_encoding(const struct cs_elf_module *m, uint64_t cie)
{
	const uint8_t *p, *end, *aug;
	uint32_t len, id;
	uint64_t v;
	uint8_t version;

	if (!mapped(m, cie, 8))
		return -1;
	memcpy(&len, (const void *)(uintptr_t)cie, 4);
	memcpy(&id, (const void *)(uintptr_t)(cie + 4), 4);
	if (len == 0xffffffffu || id != 0 || len < 5 || !mapped(m, cie + 4, len))
		return -1;
	p = (const uint8_t *)(uintptr_t)(cie + 8);
	end = (const uint8_t *)(uintptr_t)(cie + 4 + len);
	version = *p++;
	aug = p;
	while (p < end && *p)
		p++;
	if (p++ >= end)
		return -1;
	if (uleb(&p, end, &v) < 0 || uleb(&p, end, &v) < 0) /* code, data align */
		return -1;
	if (version == 1)
		p++;
	else if (uleb(&p, end, &v) < 0)
		return -1;
	if (aug[0] != 'z')
		return 0x00; /* absptr */
	if (uleb(&p, end, &v) < 0)
		return -1;
	for (aug++; *aug && p < end; aug++) {
		int sz;

		switch (*aug) {
		case 'R':
			return *p;
		case 'L':
			p++;
			break;
		case 'P':
			sz = enc_size(*p & 0x0f);
			if (sz < 0 || (*p & 0x70) == 0x50) /* aligned: not seen */
				return -1;
			p += 1 + sz;
			break;
		case 'S':
		case 'B':
			break;
		default:
			return -1;
		}
	}
	return 0x00;
}

/* Reads a value of encoding enc (format bits only, no relative base). */
static int read_enc(const uint8_t *p, int enc, int64_t *v)
{
	int16_t s16;
	int32_t s32;
	uint16_t u16;
	uint32_t u32;

	switch (enc & 0x0f) {
	case 0x00: /* absptr */
	case 0x04:
	case 0x0c:
		memcpy(v, p, 8);
		return 8;
	case 0x02:
		memcpy(&u16, p, 2);
		*v = u16;
		return 2;
	case 0x0a:
		memcpy(&s16, p, 2);
		*v = s16;
		return 2;
	case 0x03:
		memcpy(&u32, p, 4);
		*v = u32;
		return 4;
	case 0x0b:
		memcpy(&s32, p, 4);
		*v = s32;
		return 4;
	}
	return -1;
}

uint64_t cs_elf_fde_end(struct cs_elf_module *m, uint64_t addr)
{
	uint32_t lo = 0, hi = m->ehcount, len;
	int32_t loc, fde_off, cie_ptr;
	uint64_t fde, begin;
	int64_t v, range;
	int enc, n;

	if (!m->ehtab)
		return 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		memcpy(&loc, m->ehtab + 8ull * mid, 4);
		if ((uint64_t)(uintptr_t)m->ehdr + (uint64_t)(int64_t)loc < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->ehcount)
		return 0;
	memcpy(&loc, m->ehtab + 8ull * lo, 4);
	if ((uint64_t)(uintptr_t)m->ehdr + (uint64_t)(int64_t)loc != addr)
		return 0;
	memcpy(&fde_off, m->ehtab + 8ull * lo + 4, 4);
	fde = (uint64_t)(uintptr_t)m->ehdr + (uint64_t)(int64_t)fde_off;
	if (!mapped(m, fde, 8))
		return 0;
	memcpy(&len, (const void *)(uintptr_t)fde, 4);
	memcpy(&cie_ptr, (const void *)(uintptr_t)(fde + 4), 4);
	if (len == 0xffffffffu || len < 12 || !mapped(m, fde + 4, len) || cie_ptr <= 0)
		return 0;
	enc = cie_fde_encoding(m, fde + 4 - (uint64_t)cie_ptr);
	if (enc < 0 || (enc & 0x70) > 0x10) /* only absolute or pc-relative */
		return 0;
	n = read_enc((const uint8_t *)(uintptr_t)(fde + 8), enc, &v);
	if (n < 0 || (uint64_t)n * 2 > len - 4)
		return 0;
	begin = (uint64_t)v + ((enc & 0x70) == 0x10 ? fde + 8 : 0);
	if (begin != addr ||
	    read_enc((const uint8_t *)(uintptr_t)(fde + 8 + (uint64_t)n), enc, &range) < 0 ||
	    range <= 0)
		return 0;
	return addr + (uint64_t)range;
}

int cs_elf_is_fde_start(struct cs_elf_module *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nstarts;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->starts[mid] == addr)
			return 1;
		if (m->starts[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

unsigned cs_elf_exec_ranges(struct cs_elf_module *m, uint64_t *lo, uint64_t *hi, unsigned max)
{
	unsigned i;

	for (i = 0; i < m->nexec && i < max; i++) {
		lo[i] = m->lo[i];
		hi[i] = m->hi[i];
	}
	return i;
}

unsigned cs_elf_build_id(struct cs_elf_module *m, const uint8_t **id)
{
	*id = m->idlen ? m->id : NULL;
	return m->idlen;
}

size_t cs_elf_clone_base_len(const char *name)
{
	return cs_target_clone_base_len(name);
}
