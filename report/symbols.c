/* SPDX-License-Identifier: MIT */
/* Offline symbolization of call sites with elfutils libdwfl. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/dwload.h"
#include "report/internal.h"

/*
 * The file stores a call site as (module, offset) where offset is the run
 * time address minus the module's load bias: the link-time address.  So
 * each module is reported to libdwfl on its own, at bias 0, and looked up
 * at the offset as is.  libdwfl picks .symtab when the file (or its
 * separate debuginfo) has one, else .dynsym, and finds line information
 * in the file or in its separate debug file (by build id under the debug
 * directories, or by .gnu_debuglink).
 *
 * A module whose recorded path is gone or holds another build (the
 * program was moved or rebuilt since the run) is looked for by its build
 * id: DEBUG_DIR/.build-id/xx/rest.debug, then the --search-path
 * directories: the file of the same name first, then every ELF file under
 * them (read once, into an index by build id).
 */

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"

static char *debuginfo_path; /* NULL: libdwfl's default search path */

/* A file found under a --search-path directory, by build id. */
struct found {
	char *hexid;
	char *path;
	UT_hash_handle hh;
};

/* 1 when A/B/NAME (A/NAME when B is empty) is a readable file; A and B
 * are the first alen and blen bytes of a and b. */
static int readable(const char *a, int alen, const char *b, int blen, const char *name)
{
	char path[PATH_MAX];
	int n = blen ? snprintf(path, sizeof(path), "%.*s/%.*s/%s", alen, a, blen, b, name)
		     : snprintf(path, sizeof(path), "%.*s/%s", alen, a, name);

	return n > 0 && (size_t)n < sizeof(path) && access(path, R_OK) == 0;
}

/* 1 when a debug file for the module in directory dir (no trailing
 * slash) by name exists where libdwfl's standard search looks: for each
 * debuginfo_path entry, dir itself ("", not for the file's own name:
 * that is the file), dir/ENTRY (relative), or ENTRY/SUFFIX for every
 * suffix of dir down to ENTRY itself (absolute). */
static int candidate_in(const char *dir, const char *name, int own_name)
{
	const char *entry, *end, *suffix;
	int len, dlen = (int)strlen(dir);

	for (entry = debuginfo_path ? debuginfo_path : ":.debug:" DEFAULT_DEBUG_ROOT; *entry;
	     entry = *end ? end + 1 : end) {
		end = strchr(entry, ':');
		if (!end)
			end = entry + strlen(entry);
		len = (int)(end - entry);
		if (!len) {
			if (!own_name && readable(dir, dlen, "", 0, name))
				return 1;
		} else if (*entry != '/') {
			if (readable(dir, dlen, entry, len, name))
				return 1;
		} else {
			for (suffix = dir; suffix; suffix = strchr(suffix + 1, '/')) {
				const char *rest = suffix + (*suffix == '/');

				if (readable(entry, len, rest, (int)strlen(rest), name))
					return 1;
			}
			if (readable(entry, len, "", 0, name))
				return 1;
		}
	}
	return 0;
}

/* 1 when a separate debug file libdwfl's standard search would find by
 * name exists: the .gnu_debuglink name (or, without one, NAME.debug) and
 * the file's own name, next to the file as named and as resolved through
 * symbolic links. */
static int debuglink_candidate(const char *file_name, const char *debuglink_file)
{
	const char *files[2] = {file_name, NULL}, *slash;
	char real[PATH_MAX], dir[PATH_MAX], name[PATH_MAX];
	unsigned i, k;
	int n;

	if (file_name && realpath(file_name, real))
		files[1] = real;
	for (i = 0; i < 2; i++) {
		slash = files[i] ? strrchr(files[i], '/') : NULL;
		if (!slash || (size_t)(slash - files[i]) >= sizeof(dir))
			continue;
		memcpy(dir, files[i], (size_t)(slash - files[i]));
		dir[slash - files[i]] = '\0';
		for (k = 0; k < 2; k++) {
			if (k == 0 && debuglink_file)
				n = snprintf(name, sizeof(name), "%s", debuglink_file);
			else if (k == 0)
				n = snprintf(name, sizeof(name), "%s.debug", slash + 1);
			else
				n = snprintf(name, sizeof(name), "%s", slash + 1);
			if (n > 0 && (size_t)n < sizeof(name) && candidate_in(dir, name, k == 1))
				return 1;
		}
	}
	return 0;
}

/* libdwfl's standard search for a separate debug file ends by asking
 * debuginfod servers, and loading libdebuginfod (with libcurl, GnuTLS,
 * Kerberos: ~30 libraries) for that took 8 of the 14 ms of a report of
 * the ruby demo, even with no server configured.  So the standard search
 * is only used when DEBUGINFOD_URLS names servers (the user asked for
 * them) or when a local file it would find exists; otherwise the local
 * search by build id is all there is to do. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  GElf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	if ((urls && *urls) || debuglink_candidate(file_name, debuglink_file))
		return cs_dw.dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink_file, debuglink_crc,
						    debuginfo_file_name);
	return cs_dw.dwfl_build_id_find_debuginfo(mod, userdata, modname, base, file_name,
					    debuglink_file, debuglink_crc, debuginfo_file_name);
}

/* Its libdw functions are set once libdw is loaded (report_file). */
static Dwfl_Callbacks callbacks = {
	.find_debuginfo = find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

struct modcache {
	char *key; /* path, NUL, hex build id */
	size_t keylen;
	Dwfl *dwfl; /* NULL when the module could not be found */
	Dwfl_Module *mod;
	UT_hash_handle hh;
};

struct cs_symbols {
	char *debug_root;
	struct modcache *cache;
	char **search; /* --search-path directories */
	size_t nsearch;
	struct found *index; /* of the files under them, made when needed */
	int indexed;
	char *dpath; /* what debuginfo_path points to */
};

struct cs_symbols *cs_symbols_new(const char *debug_root)
{
	struct cs_symbols *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->debug_root = strdup(debug_root ? debug_root : DEFAULT_DEBUG_ROOT);
	/* libdwfl's own search for separate debug files (line numbers):
	 * next to the file, in .debug/, in the debug directory, and in the
	 * default one. */
	if (s->debug_root &&
	    asprintf(&s->dpath, ":.debug:%s:%s", s->debug_root, DEFAULT_DEBUG_ROOT) < 0)
		s->dpath = NULL;
	if (!s->debug_root || !s->dpath) {
		free(s->debug_root);
		free(s);
		return NULL;
	}
	debuginfo_path = s->dpath;
	return s;
}

static void hex(const uint8_t *b, uint32_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	uint32_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* Reports file alone in a new Dwfl.  Returns the module, or NULL (and
 * *dw NULL) when the file is not a readable regular ELF file. */
static Dwfl_Module *report_file(const char *file, Dwfl **dw)
{
	Dwfl_Module *mod;
	struct stat st;

	*dw = NULL;
	/* Only regular files: a FIFO or a device named in a damaged report
	 * file must not block or be read. */
	if (stat(file, &st) != 0 || !S_ISREG(st.st_mode) || cs_dw_load() != 0)
		return NULL;
	callbacks.find_elf = cs_dw.dwfl_build_id_find_elf;
	callbacks.section_address = cs_dw.dwfl_offline_section_address;
	*dw = cs_dw.dwfl_begin(&callbacks);
	if (!*dw)
		return NULL;
	cs_dw.dwfl_report_begin(*dw);
	mod = cs_dw.dwfl_report_elf(*dw, cs_util_basename(file), file, -1, 0, true);
	cs_dw.dwfl_report_end(*dw, NULL, NULL);
	if (!mod) {
		cs_dw.dwfl_end(*dw);
		*dw = NULL;
	}
	return mod;
}

/* 1 when mod has the recorded build id, or when none was recorded (then
 * there is nothing to check against). */
static int build_id_matches(Dwfl_Module *mod, const uint8_t *bid, uint32_t len)
{
	const unsigned char *bits = NULL;
	GElf_Addr vaddr;
	int n;

	if (len == 0)
		return 1;
	n = cs_dw.dwfl_module_build_id(mod, &bits, &vaddr);
	return n == (int)len && bits && memcmp(bits, bid, len) == 0;
}

/* Reads the GNU build id of the ELF file at path into hexid (2 * 32 + 1
 * bytes).  Returns 1 when it has one. */
static int file_build_id(const char *path, char *hexid)
{
	const void *bits;
	struct stat st;
	char magic[4];
	Elf *elf;
	int fd, n = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || pread(fd, magic, 4, 0) != 4 ||
	    memcmp(magic, "\177ELF", 4) != 0 || cs_dw_load() != 0) {
		close(fd);
		return 0;
	}
	cs_dw.elf_version(EV_CURRENT); /* libelf refuses to work before this */
	elf = cs_dw.elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		n = (int)cs_dw.dwelf_elf_gnu_build_id(elf, &bits);
		if (n > 0 && n <= 32)
			hex(bits, (uint32_t)n, hexid);
		cs_dw.elf_end(elf);
	}
	close(fd);
	return n > 0 && n <= 32;
}

/* The symbolizer whose index index_file fills (nftw has no context). */
static struct cs_symbols *indexing;

static int index_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char hexid[2 * 32 + 1];
	struct found *f;

	if (type != FTW_F || !S_ISREG(st->st_mode) || !file_build_id(path, hexid))
		return 0;
	HASH_FIND_STR(indexing->index, hexid, f);
	if (f)
		return 0; /* the first one found stays */
	f = calloc(1, sizeof(*f));
	if (!f)
		return 0;
	f->hexid = strdup(hexid);
	f->path = strdup(path);
	if (!f->hexid || !f->path) {
		free(f->hexid);
		free(f->path);
		free(f);
		return 0;
	}
	HASH_ADD_KEYPTR(hh, indexing->index, f->hexid, strlen(f->hexid), f);
	return 0;
}

/* Opens file as module c when it has the build id bid (any file when no
 * build id was recorded).  Returns 1 when it did. */
static int try_file(struct modcache *c, const char *file, const uint8_t *bid, uint32_t len)
{
	c->mod = report_file(file, &c->dwfl);
	if (c->mod && build_id_matches(c->mod, bid, len))
		return 1;
	if (c->dwfl)
		cs_dw.dwfl_end(c->dwfl);
	c->dwfl = NULL;
	c->mod = NULL;
	return 0;
}

/* Looks for the module under the --search-path directories. */
static void search(struct cs_symbols *s, struct modcache *c, const char *path, const uint8_t *bid,
		   uint32_t len, const char *hexid)
{
	struct found *f;
	char *cand;
	size_t i;

	/* Moved as it was: the same name in one of the directories. */
	for (i = 0; i < s->nsearch; i++) {
		if (asprintf(&cand, "%s/%s", s->search[i], cs_util_basename(path)) < 0)
			return;
		if (try_file(c, cand, bid, len)) {
			free(cand);
			return;
		}
		free(cand);
	}
	/* Renamed too: only a build id tells that it is the same file. */
	if (len < 2)
		return;
	if (!s->indexed) {
		s->indexed = 1;
		indexing = s;
		for (i = 0; i < s->nsearch; i++)
			nftw(s->search[i], index_file, 16, FTW_PHYS);
		indexing = NULL;
	}
	HASH_FIND_STR(s->index, hexid, f);
	if (f)
		try_file(c, f->path, bid, len);
}

static void open_module(struct cs_symbols *s, struct modcache *c, const char *path,
			const uint8_t *bid, uint32_t len)
{
	char hexid[2 * 32 + 1], *dbg;
	size_t dlen;

	c->mod = report_file(path, &c->dwfl);
	if (c->mod && build_id_matches(c->mod, bid, len))
		return;
	if (c->dwfl)
		cs_dw.dwfl_end(c->dwfl);
	c->dwfl = NULL;
	c->mod = NULL;
	/* The file is gone or was rebuilt since the run: the debug file of
	 * the recorded build, if installed, still has its symbols. */
	hexid[0] = '\0';
	if (len < 2) {
		if (s->nsearch)
			search(s, c, path, bid, len, hexid);
		return;
	}
	hex(bid, len, hexid);
	dlen = strlen(s->debug_root) + sizeof("/.build-id/xx/.debug") + 2 * len;
	dbg = malloc(dlen);
	if (!dbg)
		return;
	snprintf(dbg, dlen, "%s/.build-id/%.2s/%s.debug", s->debug_root, hexid, hexid + 2);
	c->mod = report_file(dbg, &c->dwfl);
	free(dbg);
	if (c->mod && !build_id_matches(c->mod, bid, len)) {
		cs_dw.dwfl_end(c->dwfl);
		c->dwfl = NULL;
		c->mod = NULL;
	}
	if (!c->mod && s->nsearch)
		search(s, c, path, bid, len, hexid);
}

static struct modcache *lookup(struct cs_symbols *s, const char *path, const uint8_t *bid,
			       uint32_t len)
{
	struct modcache *c;
	size_t plen = strlen(path), klen;
	char *key;

	if (len > 32)
		len = 32;
	klen = plen + 1 + 2 * len;
	key = malloc(klen + 1);
	if (!key)
		return NULL;
	memcpy(key, path, plen + 1);
	hex(bid, len, key + plen + 1);
	HASH_FIND(hh, s->cache, key, klen, c);
	if (c) {
		free(key);
		return c;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		free(key);
		return NULL;
	}
	c->key = key;
	c->keylen = klen;
	open_module(s, c, path, bid, len);
	HASH_ADD_KEYPTR(hh, s->cache, c->key, c->keylen, c);
	return c;
}

int cs_symbols_callsite(struct cs_symbols *s, const char *path, const uint8_t *build_id,
			uint32_t build_id_len, uint64_t offset, char *buf, size_t len)
{
	struct modcache *c = s ? lookup(s, path, build_id, build_id_len) : NULL;
	const char *name = NULL;
	GElf_Off off = 0;
	GElf_Sym sym;
	uint64_t addr;

	if (c && c->mod) {
		/* A call site is a return address: it may already be the
		 * first byte of the next function when the call was the
		 * last instruction (noreturn callee).  Look up the byte
		 * before it, which belongs to the call instruction. */
		addr = offset ? offset - 1 : 0;
		name = cs_dw.dwfl_module_addrinfo(c->mod, addr, &off, &sym, NULL, NULL, NULL);
	}
	if (name && name[0]) {
		/* .dynsym names carry their version ("fnmatch@@GLIBC_2.2.5"):
		 * the name alone is what a reader looks for. */
		snprintf(buf, len, "%.*s+0x%llx", (int)strcspn(name, "@"), name,
			 (unsigned long long)(off + (offset ? 1 : 0)));
		return 1;
	}
	snprintf(buf, len, "%s+0x%llx", cs_util_basename(path), (unsigned long long)offset);
	return 0;
}

char *cs_symbols_name_at(struct cs_symbols *s, const char *path, const uint8_t *build_id,
			 uint32_t build_id_len, uint64_t offset, const char *prefix)
{
	struct modcache *c = s ? lookup(s, path, build_id, build_id_len) : NULL;
	size_t plen = strlen(prefix);
	const char *name;
	GElf_Addr addr;
	GElf_Sym sym;
	int i, n;

	if (!c || !c->mod)
		return NULL;
	/* Each symbol, not dwfl_module_addrinfo: a function may have
	 * several names (aliases, a C++ class's D1 and D2 destructors), and
	 * only the one the prefix starts is the target's. */
	n = cs_dw.dwfl_module_getsymtab(c->mod);
	for (i = 1; i < n; i++) {
		name = cs_dw.dwfl_module_getsym_info(c->mod, i, &sym, &addr, NULL, NULL, NULL);
		if (name && addr == offset && GELF_ST_TYPE(sym.st_info) != STT_SECTION &&
		    !strncmp(name, prefix, plen))
			return strndup(name, plen + strcspn(name + plen, "@"));
	}
	return NULL;
}

int cs_symbols_source(struct cs_symbols *s, const char *path, const uint8_t *build_id,
		      uint32_t build_id_len, uint64_t offset, int full, char *buf, size_t len)
{
	struct modcache *c = s ? lookup(s, path, build_id, build_id_len) : NULL;
	const char *file, *comp;
	Dwfl_Line *line;
	int lineno = 0;

	if (len)
		buf[0] = '\0';
	if (!c || !c->mod)
		return 0;
	/* The byte before the return address is in the call instruction,
	 * whose line is the line of the call. */
	line = cs_dw.dwfl_module_getsrc(c->mod, offset ? offset - 1 : 0);
	if (!line)
		return 0;
	file = cs_dw.dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	if (!file || !file[0] || lineno <= 0)
		return 0;
	if (!full) {
		snprintf(buf, len, "%s:%d", cs_util_basename(file), lineno);
		return 1;
	}
	/* A name relative to the compilation directory gets it in front:
	 * the path the source had when it was built. */
	while (file[0] == '.' && file[1] == '/')
		file += 2;
	comp = file[0] != '/' ? cs_dw.dwfl_line_comp_dir(line) : NULL;
	if (comp && comp[0])
		snprintf(buf, len, "%s%s%s:%d", comp, comp[strlen(comp) - 1] == '/' ? "" : "/",
			 file, lineno);
	else
		snprintf(buf, len, "%s:%d", file, lineno);
	return 1;
}

int cs_symbols_search_path(struct cs_symbols *s, const char *dir)
{
	char **ns;

	ns = realloc(s->search, (s->nsearch + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	s->search = ns;
	s->search[s->nsearch] = strdup(dir);
	if (!s->search[s->nsearch])
		return -ENOMEM;
	s->nsearch++;
	s->indexed = 0;
	return 0;
}

void cs_symbols_free(struct cs_symbols *s)
{
	struct found *f, *ft;
	size_t i;

	struct modcache *c, *tmp;

	if (!s)
		return;
	HASH_ITER(hh, s->cache, c, tmp)
	{
		HASH_DEL(s->cache, c);
		if (c->dwfl)
			cs_dw.dwfl_end(c->dwfl);
		free(c->key);
		free(c);
	}
	HASH_ITER(hh, s->index, f, ft)
	{
		HASH_DEL(s->index, f);
		free(f->hexid);
		free(f->path);
		free(f);
	}
	for (i = 0; i < s->nsearch; i++)
		free(s->search[i]);
	free(s->search);
	if (debuginfo_path == s->dpath)
		debuginfo_path = NULL;
	free(s->dpath);
	free(s->debug_root);
	free(s);
}
