/* SPDX-License-Identifier: MIT */
/* Offline symbolization of call sites with elfutils libdwfl. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <elfutils/libdwfl.h>

#include "report/internal.h"

/*
 * The file stores a call site as (module, offset) where offset is the run
 * time address minus the module's load bias: the link-time address.  So
 * each module is reported to libdwfl on its own, at bias 0, and looked up
 * at the offset as is.  libdwfl picks .symtab when the file (or its
 * separate debuginfo) has one, else .dynsym.
 */

#define DEFAULT_DEBUG_ROOT "/usr/lib/debug"

static char *debuginfo_path; /* NULL: libdwfl's default search path */

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
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
};

struct cs_symbols *cs_symbols_new(const char *debug_root)
{
	struct cs_symbols *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->debug_root = strdup(debug_root ? debug_root : DEFAULT_DEBUG_ROOT);
	if (!s->debug_root) {
		free(s);
		return NULL;
	}
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
	if (stat(file, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	*dw = dwfl_begin(&callbacks);
	if (!*dw)
		return NULL;
	dwfl_report_begin(*dw);
	mod = dwfl_report_elf(*dw, cs_util_basename(file), file, -1, 0, true);
	dwfl_report_end(*dw, NULL, NULL);
	if (!mod) {
		dwfl_end(*dw);
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
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	return n == (int)len && bits && memcmp(bits, bid, len) == 0;
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
		dwfl_end(c->dwfl);
	c->dwfl = NULL;
	c->mod = NULL;
	/* The file is gone or was rebuilt since the run: the debug file of
	 * the recorded build, if installed, still has its symbols. */
	if (len < 2)
		return;
	hex(bid, len, hexid);
	dlen = strlen(s->debug_root) + sizeof("/.build-id/xx/.debug") + 2 * len;
	dbg = malloc(dlen);
	if (!dbg)
		return;
	snprintf(dbg, dlen, "%s/.build-id/%.2s/%s.debug", s->debug_root, hexid, hexid + 2);
	c->mod = report_file(dbg, &c->dwfl);
	free(dbg);
	if (c->mod && !build_id_matches(c->mod, bid, len)) {
		dwfl_end(c->dwfl);
		c->dwfl = NULL;
		c->mod = NULL;
	}
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
		name = dwfl_module_addrinfo(c->mod, addr, &off, &sym, NULL, NULL, NULL);
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

void cs_symbols_free(struct cs_symbols *s)
{
	struct modcache *c, *tmp;

	if (!s)
		return;
	HASH_ITER(hh, s->cache, c, tmp)
	{
		HASH_DEL(s->cache, c);
		if (c->dwfl)
			dwfl_end(c->dwfl);
		free(c->key);
		free(c);
	}
	free(s->debug_root);
	free(s);
}
