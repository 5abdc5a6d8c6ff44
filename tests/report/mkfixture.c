/* SPDX-License-Identifier: MIT */
/* Writes the report files of the report tests, with known contents. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fnmatch.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/report/fixture.h"

/*
 * mkfixture DIR          writes every fixture of the report tests into DIR
 * mkfixture --fake-shim STATUS
 *                        plays the shim of a program under `cacheshim run`:
 *                        writes a report file where CACHESHIM_OUTPUT says,
 *                        with CACHESHIM_SESSION, then exits with STATUS, or
 *                        kills itself with signal -STATUS; with
 *                        CS_FAKE_SNAPSHOT, a copy of the file as it was
 *                        after its first call there (running, no block
 *                        reserved since).
 */

static const struct fx_event ev2[] = {
	{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
	{"perf::PAGE-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
};

static char dir[4096];

static const char *out(const char *name)
{
	static char buf[4200];

	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

static void call2(struct fx *f, size_t site, uint64_t a, uint64_t b)
{
	uint64_t v[2] = {a, b};

	fx_call(f, site, v);
}

/* basic.rpt: two modules, three targets (one with a comma and a quote in
 * its name), a call site measured by two threads, a call that did not
 * return and a dropped one. */
static struct fx *basic_aligned(int align)
{
	struct fx *f = fx_new("/usr/bin/prog", 100, 2, ev2);
	uint32_t prog, foo, tm, tf, to;
	size_t s;

	f->align_sites = align;
	prog = fx_module(f, "/nonexistent/prog", NULL, 0, 0x555555554000);
	foo = fx_module(f, "/nonexistent/libfoo.so", NULL, 0, 0x7ffff7000000);
	tm = fx_target(f, "malloc", foo, 0, CS_HOOK_GOT);
	tf = fx_target(f, "free", foo, 0, CS_HOOK_GOT);
	to = fx_target(f, "odd,\"name", 0, 0, CS_HOOK_GOT);
	fx_thread(f, 100, 3);
	fx_thread(f, 101, 3);

	s = fx_site(f, tm, 100, prog, 0x1234, CS_KEY_NONE);
	call2(f, s, 10, 0);
	call2(f, s, 20, 0);
	call2(f, s, 30, 1);
	call2(f, s, 40, 0);
	s = fx_site(f, tm, 101, prog, 0x1234, CS_KEY_NONE);
	call2(f, s, 50, 2);

	s = fx_site(f, tm, 100, foo, 0x20, CS_KEY_NONE);
	call2(f, s, 1000, 0);
	call2(f, s, 1000, 0);
	call2(f, s, 1000, 0);
	((struct cs_site_block *)fx_at(f, s))->entered++;
	((struct cs_site_block *)fx_at(f, s))->dropped++;

	s = fx_site(f, tf, 100, prog, 0x1300, CS_KEY_NONE);
	call2(f, s, 7, 0);
	call2(f, s, 9, 0);
	((struct cs_site_block *)fx_at(f, s))->entered++; /* still inside */

	s = fx_site(f, to, 100, 0, 0xabc, CS_KEY_NONE);
	call2(f, s, 3, 1);
	return f;
}

static struct fx *basic(void)
{
	return basic_aligned(0);
}

/* basic_snap.rpt: basic.rpt as copied while its process ran (the same
 * process: its pid, parent, session and start time): state running, the
 * last site block (odd,"name's one call) not reserved yet. */
static int snapshot(uint64_t start_ns)
{
	struct fx *f = basic();
	size_t off, last = 0;
	int ret;

	for (off = CS_HEADER_SIZE; off < f->len; off += ((struct cs_block *)fx_at(f, off))->size)
		if (((struct cs_block *)fx_at(f, off))->type == CS_BLOCK_SITE)
			last = off;
	f->used = last;
	fx_header(f)->start_ns = start_ns;
	ret = fx_write(f, out("basic_snap.rpt"), 0, 0);
	fx_free(f);
	return ret;
}

/* basic_early.rpt and basic_live.rpt: basic.rpt's process still running,
 * copied twice with no block reserved in between (its calls went on in the
 * blocks it had, as a long run's do for seconds): the same header, but
 * the second had entered one call more (at the first site). */
static int live_pair(uint64_t start_ns)
{
	static const char *const name[] = {"basic_early.rpt", "basic_live.rpt"};
	struct fx *f;
	size_t off;
	int i, ret = 0;

	for (i = 0; i < 2; i++) {
		f = basic();
		fx_header(f)->start_ns = start_ns;
		for (off = CS_HEADER_SIZE; i && off < f->len;
		     off += ((struct cs_block *)fx_at(f, off))->size) {
			if (((struct cs_block *)fx_at(f, off))->type == CS_BLOCK_SITE) {
				call2(f, off, 30, 0);
				break;
			}
		}
		ret |= fx_write(f, out(name[i]), 0, 0);
		fx_free(f);
	}
	return ret;
}

/* aligned.rpt: basic.rpt with its site blocks on 64-byte lines behind
 * padding blocks, as the shim writes them; v1.rpt: basic.rpt in format
 * version 1 (calls and entered before dropped and nested).  Both read as
 * basic.rpt does. */
/* Turns f into format version 1: the header's version, and the site
 * blocks' counts in version 1's order (calls, entered, dropped, nested
 * from offset 48).  Series windows must have been made with v1_windows. */
static struct fx *to_v1(struct fx *f)
{
	size_t off;

	fx_header(f)->version = 1;
	for (off = CS_HEADER_SIZE; off < f->len; off += ((struct cs_block *)fx_at(f, off))->size) {
		struct cs_site_block *s = fx_at(f, off);
		uint64_t calls = s->calls, entered = s->entered;

		if (s->hdr.type == CS_BLOCK_SITE)
			memcpy((char *)s + 48, (uint64_t[]){calls, entered, s->dropped, s->nested},
			       32);
	}
	return f;
}

static int versions(void)
{
	struct fx *f = basic_aligned(1);
	int ret = fx_write(f, out("aligned.rpt"), 1, 0);

	fx_free(f);
	f = to_v1(basic());
	ret |= fx_write(f, out("v1.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* samename.rpt: two functions named touch, in two libraries (an
 * interposer's and the real one), called from one call site of the
 * program: 3 calls of 2 page faults into liba.so's, 2 of 5 into libb.so's. */
static int same_name(void)
{
	struct fx *f = fx_new("/usr/bin/prog", 300, 2, ev2);
	uint32_t prog, a, b;
	size_t s;
	int i, ret;

	prog = fx_module(f, "/nonexistent/prog", NULL, 0, 0x555555554000);
	a = fx_module(f, "/nonexistent/liba.so", NULL, 0, 0x7ffff7a00000);
	b = fx_module(f, "/nonexistent/libb.so", NULL, 0, 0x7ffff7c00000);
	s = fx_site(f, fx_target_at(f, "touch", a, 0x7ffff7a01100, CS_HOOK_ENTRY, 0), 300, prog,
		    0x40, CS_KEY_NONE);
	for (i = 0; i < 3; i++)
		call2(f, s, 100, 2);
	s = fx_site(f, fx_target_at(f, "touch", b, 0x7ffff7c01100, CS_HOOK_ENTRY, 0), 300, prog,
		    0x40, CS_KEY_NONE);
	for (i = 0; i < 2; i++)
		call2(f, s, 200, 5);
	ret = fx_write(f, out("samename.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* samename_b.rpt: samename.rpt's program without the interposer: only
 * libb.so's touch, 2 calls of 5 page faults; moved.rpt: the same with
 * libb.so installed under another directory (review helper 89). */
static int same_name_one(const char *name, const char *lib)
{
	struct fx *f = fx_new("/usr/bin/prog", 301, 2, ev2);
	uint32_t prog, b;
	size_t s;
	int i, ret;

	prog = fx_module(f, "/nonexistent/prog", NULL, 0, 0x555555554000);
	b = fx_module(f, lib, NULL, 0, 0x7ffff7c00000);
	s = fx_site(f, fx_target_at(f, "touch", b, 0x7ffff7c01100, CS_HOOK_ENTRY, 0), 301, prog,
		    0x40, CS_KEY_NONE);
	for (i = 0; i < 2; i++)
		call2(f, s, 200, 5);
	ret = fx_write(f, out(name), 1, 0);
	fx_free(f);
	return ret;
}

/* disjoint_a.rpt and disjoint_b.rpt: two runs of one program, as many
 * calls each, with another second event each (the first under another
 * spelling): the events' means are over different calls (review helper
 * 89). */
static int disjoint(void)
{
	static const struct fx_event eva[] = {
		{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
		{"perf::page-faults", CS_EVENT_PERF, CS_EVENT_COUNTED},
	};
	static const struct fx_event evb[] = {
		{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
		{"perf::MINOR-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
	};
	struct fx *a = fx_new("/usr/bin/prog", 210, 2, eva);
	struct fx *b = fx_new("/usr/bin/prog", 211, 2, evb);
	uint32_t m;
	size_t s;
	int ret;

	m = fx_module(a, "/nonexistent/prog", NULL, 0, 0x555555554000);
	s = fx_site(a, fx_target(a, "work", m, 0, CS_HOOK_GOT), 210, m, 0x40, CS_KEY_NONE);
	call2(a, s, 10, 4);
	call2(a, s, 20, 4);
	m = fx_module(b, "/nonexistent/prog", NULL, 0, 0x555555554000);
	s = fx_site(b, fx_target(b, "work", m, 0, CS_HOOK_GOT), 211, m, 0x40, CS_KEY_NONE);
	call2(b, s, 10, 1);
	call2(b, s, 20, 1);
	ret = fx_write(a, out("disjoint_a.rpt"), 1, 0) | fx_write(b, out("disjoint_b.rpt"), 1, 0);
	fx_free(a);
	fx_free(b);
	return ret;
}

/* merge_a.rpt and merge_b.rpt: two processes of one program, the same
 * module under different ids, the events in another order, an event only
 * the second one has. */
static int merge_files(void)
{
	static const struct fx_event evb[] = {
		{"perf::PAGE-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
		{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
		{"perf::MINOR-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
	};
	struct fx *a = fx_new("/usr/bin/prog", 200, 2, ev2);
	struct fx *b = fx_new("/usr/bin/prog", 201, 3, evb);
	uint32_t m, t;
	uint64_t v[3];
	size_t s;
	int ret;

	m = fx_module(a, "/nonexistent/prog", NULL, 0, 0x555555554000);
	t = fx_target(a, "work", m, 0, CS_HOOK_GOT);
	s = fx_site(a, t, 200, m, 0x40, CS_KEY_NONE);
	call2(a, s, 10, 1);
	call2(a, s, 20, 1);
	s = fx_site(a, fx_target(a, "only_a", m, 0, CS_HOOK_GOT), 200, m, 0x50, CS_KEY_NONE);
	call2(a, s, 5, 0);

	fx_module(b, "/nonexistent/other.so", NULL, 0, 0x7ffff7000000);
	m = fx_module(b, "/nonexistent/prog", NULL, 0, 0x555555560000);
	t = fx_target(b, "work", m, 0, CS_HOOK_GOT);
	s = fx_site(b, t, 201, m, 0x40, CS_KEY_NONE);
	v[0] = 5; /* faults */
	v[1] = 30; /* tsc */
	v[2] = 4; /* minor faults */
	fx_call(b, s, v);

	ret = fx_write(a, out("merge_a.rpt"), 1, 0) | fx_write(b, out("merge_b.rpt"), 1, 0);
	fx_free(a);
	fx_free(b);
	return ret;
}

/* running.rpt: a process that was killed: state running, not trimmed, a
 * reservation whose size was never written, calls still inside. */
static int running(void)
{
	struct fx *f = fx_new("/usr/bin/prog", 300, 2, ev2);
	uint32_t m = fx_module(f, "/nonexistent/prog", NULL, 0, 0);
	uint32_t t = fx_target(f, "spin", m, 0, CS_HOOK_GOT);
	size_t s = fx_site(f, t, 300, m, 0x60, CS_KEY_NONE), z;
	int ret;

	call2(f, s, 11, 0);
	call2(f, s, 13, 0);
	call2(f, s, 15, 0);
	((struct cs_site_block *)fx_at(f, s))->entered += 2;
	z = fx_block(f, 0, 64);
	((struct cs_block *)fx_at(f, z))->size = 0;
	f->used = f->len + 4096;
	ret = fx_write(f, out("running.rpt"), 0, 1 << 16);
	fx_free(f);
	return ret;
}

/* failed.rpt: an event that could not be opened. */
static int failed(void)
{
	static const struct fx_event ev[] = {
		{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
		{"cycles", CS_EVENT_PERF, CS_EVENT_FAILED},
		{"perf::PAGE-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
	};
	struct fx *f = fx_new("/usr/bin/prog", 400, 3, ev);
	uint32_t m = fx_module(f, "/nonexistent/prog", NULL, 0, 0);
	uint32_t t = fx_target(f, "fn", m, 0, CS_HOOK_GOT);
	size_t s;
	int ret;

	fx_thread(f, 400, 0x5);
	s = fx_site(f, t, 400, m, 0x10, CS_KEY_NONE);
	fx_value(f, s, 0, 5);
	fx_value(f, s, 2, 1);
	((struct cs_site_block *)fx_at(f, s))->calls = 1;
	((struct cs_site_block *)fx_at(f, s))->entered = 1;
	ret = fx_write(f, out("failed.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* keyed.rpt: a target keyed by its third argument, and the shim's
 * calibration target (not a row: the overhead line of the table). */
static int keyed(void)
{
	struct fx *f = fx_new("/usr/bin/prog", 500, 2, ev2);
	uint32_t m = fx_module(f, "/nonexistent/prog", NULL, 0, 0);
	uint32_t t = fx_target(f, "memcpy", m, 3, CS_HOOK_GOT);
	uint32_t c = fx_target(f, "cacheshim:empty", 0, 0, CS_HOOK_CALIBRATION);
	size_t s;
	int ret;

	s = fx_site(f, t, 500, m, 0x70, 128);
	call2(f, s, 30, 0);
	s = fx_site(f, t, 500, m, 0x70, 64);
	call2(f, s, 20, 0);
	call2(f, s, 22, 0);
	s = fx_site(f, c, 500, 0, 0x9000, CS_KEY_NONE);
	call2(f, s, 4, 0);
	call2(f, s, 5, 0);
	call2(f, s, 6, 0);
	ret = fx_write(f, out("keyed.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* fifo.rpt: a module whose path the test turns into a FIFO, which the
 * symbolizer must not open (it would block). */
static int fifo(void)
{
	struct fx *f = fx_new("/usr/bin/prog", 700, 2, ev2);
	uint32_t m = fx_module(f, out("fifo"), NULL, 0, 0);
	uint32_t t = fx_target(f, "fn", m, 0, CS_HOOK_GOT);
	size_t s = fx_site(f, t, 700, m, 0x10, CS_KEY_NONE);
	int ret;

	call2(f, s, 1, 0);
	ret = fx_write(f, out("fifo.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* Corrupted files: what the reader must reject or report as damaged. */
static int corrupted(void)
{
	struct fx *f = basic();
	struct cs_file_header *h = fx_header(f);
	size_t len = f->len, third;
	struct cs_block *b;
	int ret = 0;
	FILE *fp;

	h->used = len | CS_USED_SEALED;
	h->capacity = len;
#define PUT(name, n)                                                        \
	do {                                                                \
		fp = fopen(out(name), "wb");                                \
		if (!fp || fwrite(f->buf, 1, (n), fp) != (n) || fclose(fp)) \
			ret = -1;                                           \
	} while (0)
	PUT("empty.rpt", 0u);
	PUT("short.rpt", 100u);
	PUT("truncated.rpt", len - 9000);
	memcpy(h->magic, "CSHIMRPX", 8);
	PUT("badmagic.rpt", len);
	memcpy(h->magic, CS_MAGIC, 8);
	h->version = 3;
	PUT("version.rpt", len);
	h->version = CS_FORMAT_VERSION;
	h->nevents = 1000;
	PUT("nevents.rpt", len);
	h->nevents = 2;
	/* The site blocks start after 2 modules, 3 targets, 2 threads:
	 * damage the third site (malloc in libfoo.so). */
	third = CS_HEADER_SIZE;
	for (int i = 0; i < 2 + 3 + 2 + 2; i++)
		third += ((struct cs_block *)fx_at(f, third))->size;
	b = fx_at(f, third);
	b->size = 12;
	PUT("blocksize.rpt", len);
	b->size = (uint32_t)cs_site_block_size(2);
	((struct cs_site_block *)b)->target = 42;
	PUT("dangling.rpt", len);
#undef PUT
	fx_free(f);
	return ret;
}

/* Reads the GNU build id from the notes of a loaded object. */
static int build_id_of(const struct dl_phdr_info *info, uint8_t *out, uint32_t *len)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)p;
			const unsigned char *name = p + sizeof(*n);
			const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);

			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && n->n_descsz <= 32) {
				memcpy(out, desc, n->n_descsz);
				*len = n->n_descsz;
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

struct find {
	uintptr_t addr;
	char path[4096];
	uintptr_t bias;
	uint8_t bid[32];
	uint32_t bid_len;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *fd = arg;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || fd->addr < lo || fd->addr >= lo + ph->p_memsz)
			continue;
		fd->bias = info->dlpi_addr;
		if (info->dlpi_name && info->dlpi_name[0])
			snprintf(fd->path, sizeof(fd->path), "%s", info->dlpi_name);
		else if (!realpath("/proc/self/exe", fd->path))
			return 0;
		build_id_of(info, fd->bid, &fd->bid_len);
		return 1;
	}
	return 0;
}

/* A function whose name the symbols test expects. */
__attribute__((noinline)) int fx_known_function(int x)
{
	return x * 3 + (x > 5 ? x / 7 : 1);
}

/* self.rpt: call sites in this very program and in libc, symbolized for
 * real; selfbad.rpt: this program with a build id that is not its own. */
static int symbols(void)
{
	struct find me = {0}, libc = {0};
	struct fx *f, *g;
	uint32_t m1, m2, t;
	size_t s;
	FILE *exp;
	int ret;

	me.addr = (uintptr_t)fx_known_function;
	libc.addr = (uintptr_t)dlsym(RTLD_DEFAULT, "fnmatch");
	if (!libc.addr || !dl_iterate_phdr(find_cb, &me) || !dl_iterate_phdr(find_cb, &libc)) {
		fputs("mkfixture: cannot find myself or libc\n", stderr);
		return -1;
	}
	f = fx_new(me.path, 600, 1, ev2);
	m1 = fx_module(f, me.path, me.bid, me.bid_len, me.bias);
	m2 = fx_module(f, libc.path, libc.bid, libc.bid_len, libc.bias);
	t = fx_target(f, "sym_target", 0, 0, CS_HOOK_GOT);
	s = fx_site(f, t, 600, m1, me.addr - me.bias + 5, CS_KEY_NONE);
	call2(f, s, 1, 0);
	s = fx_site(f, t, 600, m2, libc.addr - libc.bias + 2, CS_KEY_NONE);
	call2(f, s, 2, 0);
	ret = fx_write(f, out("self.rpt"), 1, 0);
	fx_free(f);

	g = fx_new(me.path, 601, 1, ev2);
	me.bid[0] ^= 0xff;
	if (me.bid_len == 0)
		me.bid_len = 20;
	m1 = fx_module(g, me.path, me.bid, me.bid_len, me.bias);
	t = fx_target(g, "sym_target", 0, 0, CS_HOOK_GOT);
	s = fx_site(g, t, 601, m1, me.addr - me.bias + 5, CS_KEY_NONE);
	call2(g, s, 1, 0);
	ret |= fx_write(g, out("selfbad.rpt"), 1, 0);
	fx_free(g);

	/* selfmoved.rpt: this program under a path that does not exist,
	 * with its real build id: only a debug file can name its symbols. */
	me.bid[0] ^= 0xff;
	g = fx_new("/nonexistent/mkfixture-moved", 602, 1, ev2);
	m1 = fx_module(g, "/nonexistent/mkfixture-moved", me.bid, me.bid_len, me.bias);
	t = fx_target(g, "sym_target", 0, 0, CS_HOOK_GOT);
	s = fx_site(g, t, 602, m1, me.addr - me.bias + 5, CS_KEY_NONE);
	call2(g, s, 1, 0);
	ret |= fx_write(g, out("selfmoved.rpt"), 1, 0);
	fx_free(g);

	/* What the test must see, one call site a line; then where the
	 * debug file of this program would be, and the program. */
	exp = fopen(out("self.expected"), "w");
	if (!exp)
		return -1;
	fprintf(exp, "fx_known_function+0x5\nfnmatch+0x2\n%s+0x%llx\n", strrchr(me.path, '/') + 1,
		(unsigned long long)(me.addr - me.bias + 5));
	fprintf(exp, "mkfixture-moved+0x%llx\n", (unsigned long long)(me.addr - me.bias + 5));
	fprintf(exp, ".build-id/%02x/", me.bid[0]);
	for (uint32_t i = 1; i < me.bid_len; i++)
		fprintf(exp, "%02x", me.bid[i]);
	fprintf(exp, ".debug\n%s\n", me.path);
	return ret | fclose(exp);
}

/* nested.rpt: "outer" calls "inner" during two of its five calls.
 *   outer, plain calls:   tsc 100, 110, 1100   faults 0, 0, 1
 *   outer, nested calls:  tsc 1000 (self 400, 1 inner call),
 *                         tsc 1200 (self 500, 2 inner calls)
 *                         faults 5 (self 1), 3 (self 0)
 *   inner:                tsc 600, 350, 350    faults 4, 1, 2
 * Inclusive tsc of outer: mean 702; exclusive 100 110 1100 400 500: mean
 * 442.  The calibration calls cost 10 ticks (for -s). */
static int nested(void)
{
	struct fx *f = fx_new("/usr/bin/prog", 800, 2, ev2);
	uint32_t m = fx_module(f, "/nonexistent/prog", NULL, 0, 0);
	uint32_t to = fx_target(f, "outer", m, 0, CS_HOOK_GOT);
	uint32_t ti = fx_target(f, "inner", m, 0, CS_HOOK_GOT);
	uint32_t tc = fx_target(f, "cacheshim:empty", 0, 0, CS_HOOK_CALIBRATION);
	uint64_t i1[2] = {1000, 5}, x1[2] = {400, 1}, i2[2] = {1200, 3}, x2[2] = {500, 0};
	size_t s, n;
	int ret;

	fx_thread(f, 800, 3);
	s = fx_site(f, to, 800, m, 0x100, CS_KEY_NONE);
	call2(f, s, 100, 0);
	n = fx_nested(f, s);
	fx_nested_call(f, s, n, i1, x1, 1);
	call2(f, s, 110, 0);
	fx_nested_call(f, s, n, i2, x2, 2);
	call2(f, s, 1100, 1);
	s = fx_site(f, ti, 800, m, 0x200, CS_KEY_NONE);
	call2(f, s, 600, 4);
	call2(f, s, 350, 1);
	call2(f, s, 350, 2);
	s = fx_site(f, tc, 800, 0, 0x9000, CS_KEY_NONE);
	call2(f, s, 10, 0);
	ret = fx_write(f, out("nested.rpt"), 1, 0);
	/* nestcal.rpt: the same with the nested calibration of a writer
	 * that has one: a function calling the empty one costs 60 ticks, so
	 * each nested call costs the call around it 60 - 10 = 50 (inclusive
	 * view), 50 - 10 = 40 beyond its own value (exclusive view). */
	s = fx_site(f, fx_target(f, "cacheshim:nested", 0, 0,
				 CS_HOOK_CALIBRATION | CS_HOOK_CALIBRATION_NESTED),
		    800, 0, 0x9100, CS_KEY_NONE);
	call2(f, s, 60, 0);
	ret |= fx_write(f, out("nestcal.rpt"), 1, 0);
	/* selfsum.rpt: the exclusive tsc values are the inclusive ones, and
	 * their sum one more (each call's exclusive value is at most its
	 * inclusive one): every statistic fits its own histogram, only the
	 * two sums do not nest. */
	{
		struct cs_nested_block *nb = fx_at(f, n);

		nb->stat[2] = nb->stat[0];
		nb->stat[2].sum++;
	}
	ret |= fx_write(f, out("selfsum.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* series.rpt: "lookup" in two threads with 4 calls per window, "grow" in
 * two threads whose windows differ (1 and 2 calls), "long" with 3072
 * calls whose windows merged as often as CS_SERIES_WINDOWS needs:
 * series.expected says "SHIFT WINDOWS" for it.
 *   lookup, thread 900: tsc 10 (calls 1-8), 50 (9-16), 90 (17-19);
 *                       faults 1 in calls 9-16, else 0
 *   lookup, thread 901: tsc 30 (calls 1-4); faults 2
 *   grow, thread 900:   tsc 5, 6, 7 (shift 0)
 *   grow, thread 901:   tsc 8, 8, 9, 9 (shift 1)
 *   long, thread 900:   tsc 100 (calls 1-1024), 200 (1025-2048),
 *                       300 (2049-3072); faults 0 */
static size_t long_series; /* offset of "long"'s series block */

static struct fx *series_fixture(int v1, unsigned nevents)
{
	struct fx *f = fx_new("/usr/bin/prog", 900, nevents, ev2);
	uint32_t m = fx_module(f, "/nonexistent/prog", NULL, 0, 0);
	uint32_t tl = fx_target(f, "lookup", m, 0, CS_HOOK_GOT);
	uint32_t tg = fx_target(f, "grow", m, 0, CS_HOOK_GOT);
	uint32_t tn = fx_target(f, "long", m, 0, CS_HOOK_GOT);
	uint64_t v[2];
	size_t s, q;
	int i;

	f->v1_windows = v1;
	fx_thread(f, 900, 3);
	fx_thread(f, 901, 3);
	s = fx_site(f, tl, 900, m, 0x300, CS_KEY_NONE);
	q = fx_series(f, tl, 900, 2);
	for (i = 1; i <= 19; i++) {
		v[0] = i <= 8 ? 10 : i <= 16 ? 50 : 90;
		v[1] = i >= 9 && i <= 16;
		fx_call(f, s, v);
		fx_series_call(f, q, v);
	}
	s = fx_site(f, tl, 901, m, 0x300, CS_KEY_NONE);
	q = fx_series(f, tl, 901, 2);
	for (i = 1; i <= 4; i++) {
		v[0] = 30;
		v[1] = 2;
		fx_call(f, s, v);
		fx_series_call(f, q, v);
	}
	s = fx_site(f, tg, 900, m, 0x310, CS_KEY_NONE);
	q = fx_series(f, tg, 900, 0);
	for (i = 5; i <= 7; i++) {
		v[0] = (uint64_t)i;
		v[1] = 0;
		fx_call(f, s, v);
		fx_series_call(f, q, v);
	}
	s = fx_site(f, tg, 901, m, 0x310, CS_KEY_NONE);
	q = fx_series(f, tg, 901, 1);
	for (i = 0; i < 4; i++) {
		v[0] = 8 + (uint64_t)i / 2;
		v[1] = 0;
		fx_call(f, s, v);
		fx_series_call(f, q, v);
	}
	s = fx_site(f, tn, 900, m, 0x320, CS_KEY_NONE);
	q = fx_series(f, tn, 900, 0);
	long_series = q;
	for (i = 0; i < 3072; i++) {
		v[0] = 100 + (uint64_t)i / 1024 * 100;
		v[1] = 0;
		fx_call(f, s, v);
		fx_series_call(f, q, v);
	}
	return v1 ? to_v1(f) : f;
}

/* series.rpt, and v1series.rpt: the same in format version 1; and both
 * with the first event only (series1.rpt, v1series1.rpt), whose windows
 * (1,256 bytes) version 2 rounds up to 1,280. */
static int series(void)
{
	struct fx *f = series_fixture(0, 2);
	unsigned shift = 0;
	int ret;
	FILE *exp;

	ret = fx_write(f, out("series.rpt"), 1, 0);
	fx_free(f);
	f = series_fixture(1, 2);
	ret |= fx_write(f, out("v1series.rpt"), 1, 0);
	fx_free(f);
	f = series_fixture(0, 1);
	ret |= fx_write(f, out("series1.rpt"), 1, 0);
	fx_free(f);
	f = series_fixture(1, 1);
	ret |= fx_write(f, out("v1series1.rpt"), 1, 0);
	fx_free(f);
	/* merging.rpt: the program ended while "long"'s windows merged. */
	f = series_fixture(0, 2);
	((struct cs_series_block *)fx_at(f, long_series))->shift |= CS_SERIES_MERGING;
	ret |= fx_write(f, out("merging.rpt"), 1, 0);
	fx_free(f);
	while ((CS_SERIES_WINDOWS << shift) < 3072)
		shift++;
	exp = fopen(out("series.expected"), "w");
	if (!exp)
		return -1;
	fprintf(exp, "%u %u\n", shift, (3072u + (1u << shift) - 1) >> shift);
	return ret | fclose(exp);
}

/* bigseries.rpt: "lookup" in threads 900 and 901, 2 calls of 9e18 ticks
 * each (4 calls per window): each thread's window sum fits 64 bits, the
 * two threads' together do not (the merged line's mean read 1). */
static int bigseries(void)
{
	struct fx *f = fx_new("/usr/bin/prog", 900, 2, ev2);
	uint32_t m = fx_module(f, "/nonexistent/prog", NULL, 0, 0);
	uint32_t tl = fx_target(f, "lookup", m, 0, CS_HOOK_GOT);
	uint64_t v[2] = {9000000000000000000ull, 1};
	uint32_t tid;
	size_t s, q;
	int i, ret;

	for (tid = 900; tid <= 901; tid++) {
		fx_thread(f, tid, 3);
		s = fx_site(f, tl, tid, m, 0x300, CS_KEY_NONE);
		q = fx_series(f, tl, tid, 2);
		for (i = 0; i < 2; i++) {
			fx_call(f, s, v);
			fx_series_call(f, q, v);
		}
	}
	ret = fx_write(f, out("bigseries.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* badmax.rpt: 3 calls of 1000 ticks whose site says its maximum is
 * 2^64 - 1 (the tables printed it, and p90/p99 moved with it). */
static int badmax(void)
{
	struct fx *f = fx_new("/usr/bin/prog", 100, 2, ev2);
	uint32_t m = fx_module(f, "/nonexistent/prog", NULL, 0, 0);
	uint32_t t = fx_target(f, "malloc", m, 0, CS_HOOK_GOT);
	size_t s;
	int ret;

	fx_thread(f, 100, 3);
	s = fx_site(f, t, 100, m, 0x20, CS_KEY_NONE);
	call2(f, s, 1000, 0);
	call2(f, s, 1000, 0);
	call2(f, s, 1000, 0);
	((struct cs_site_block *)fx_at(f, s))->stat[0].max = UINT64_MAX;
	ret = fx_write(f, out("badmax.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* halfcall.rpt: a busy exit: site 0x20 and the series of "malloc" each
 * end with a call of 5,000,000 ticks cut between adding its value to the
 * sums and storing it as the maximum (entered, and numbered in the
 * series, but not counted).  Not damage: the program ended there.
 * nohalf.rpt: the same sums with nothing in flight, which is. */
static int halfcall(int in_flight, const char *name)
{
	struct fx *f = fx_new("/usr/bin/prog", 100, 2, ev2);
	uint32_t m = fx_module(f, "/nonexistent/prog", NULL, 0, 0);
	uint32_t t = fx_target(f, "malloc", m, 0, CS_HOOK_GOT);
	uint64_t v[2] = {1000, 0}, cut = 5000000;
	struct cs_series_block *sb;
	struct cs_wstat *ws;
	struct cs_site_block *sp;
	size_t s, q;
	int i, ret;

	fx_thread(f, 100, 3);
	s = fx_site(f, t, 100, m, 0x20, CS_KEY_NONE);
	q = fx_series(f, t, 100, 2);
	for (i = 0; i < 3; i++) {
		fx_call(f, s, v);
		fx_series_call(f, q, v);
	}
	sp = fx_at(f, s);
	sp->stat[0].sum += cut;
	sp->stat[0].sumsq_lo += cut * cut;
	sb = fx_at(f, q);
	ws = (struct cs_wstat *)((struct cs_window *)((unsigned char *)(sb + 1) +
						      (size_t)(3 >> sb->shift) * sb->window_size) +
				 1);
	ws[0].sum += cut;
	if (in_flight) {
		sp->entered++;
		sb->calls++;
	}
	ret = fx_write(f, out(name), 1, 0);
	fx_free(f);
	return ret;
}

/* classes.rpt: "touch" keyed by its first argument, called from two call
 * sites with arguments in the classes 0, 1, 2-3 and 4-7. */
static int classes(void)
{
	struct fx *f = fx_new("/usr/bin/prog", 950, 2, ev2);
	uint32_t m = fx_module(f, "/nonexistent/prog", NULL, 0, 0);
	uint32_t t = fx_target(f, "touch", m, 1, CS_HOOK_GOT);
	size_t s;
	int ret;

	s = fx_site(f, t, 950, m, 0x400, 0);
	call2(f, s, 20, 0);
	s = fx_site(f, t, 950, m, 0x400, 1);
	call2(f, s, 30, 1);
	s = fx_site(f, t, 950, m, 0x400, 2);
	call2(f, s, 40, 2);
	call2(f, s, 44, 3);
	s = fx_site(f, t, 950, m, 0x480, 2);
	call2(f, s, 42, 3);
	s = fx_site(f, t, 950, m, 0x400, 4);
	call2(f, s, 60, 5);
	call2(f, s, 60, 5);
	ret = fx_write(f, out("classes.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* escape.rpt: names that JSON and HTML must escape: markup, a byte that
 * is not UTF-8, a control character, UTF-8 that is. */
static int escape(void)
{
	struct fx *f = fx_new("/usr/bin/a<b>&\xff\001c", 960, 2, ev2);
	uint32_t m = fx_module(f, "/nonexistent/\xc3\xa9t\xc3\xa9", NULL, 0, 0);
	uint32_t t = fx_target(f, "</script><b>x\"y\\", m, 0, CS_HOOK_GOT);
	size_t s = fx_site(f, t, 960, m, 0x10, CS_KEY_NONE);
	int ret;

	call2(f, s, 7, 0);
	ret = fx_write(f, out("escape.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* ctl.rpt: control characters in the names (a newline, an escape
 * sequence, a tab), which the text outputs must not print raw: in the
 * functions, the module, an event, a series (of "new\nline"), and a
 * target without calls whose entry patching was refused (its address
 * in the module, and the reason).  ctlbad.rpt: a target with a control
 * character in its name refers to a module that does not exist (the
 * damage message quotes the name). */
/* What a fixture of unprintable names holds (ctl.rpt, c1.rpt). */
struct odd_names {
	const char *file, *bad_file; /* the report, and the damaged one */
	uint32_t pid;
	const char *program, *event, *module;
	const char *fn[3]; /* with calls (7, 9, 5); fn[2] may be NULL */
	const char *refused, *why; /* a refused target, at refused_at */
	uint64_t refused_at;
	const char *bad_name; /* in the damaged file: of a module that does not exist */
};

static int odd_names(const struct odd_names *n)
{
	const struct fx_event evc[] = {
		{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
		{n->event, CS_EVENT_PERF, CS_EVENT_COUNTED},
	};
	static const uint64_t calls[3] = {7, 9, 5};
	struct fx *f = fx_new(n->program, n->pid, 2, evc);
	uint32_t m = fx_module(f, n->module, NULL, 0, 0), t[3] = {0}, r;
	uint64_t v[2] = {7, 0};
	unsigned i;
	size_t q;
	int ret;

	for (i = 0; i < 3 && n->fn[i]; i++)
		t[i] = fx_target(f, n->fn[i], m, 0, CS_HOOK_GOT);
	r = fx_target_at(f, n->refused, m, n->refused_at, CS_HOOK_GOT | CS_HOOK_REFUSED, 1);
	fx_thread(f, n->pid, 3);
	for (i = 0; i < 3 && n->fn[i]; i++)
		call2(f, fx_site(f, t[i], n->pid, m, 0x10 * (i + 1), CS_KEY_NONE), calls[i], 0);
	q = fx_series(f, t[0], n->pid, 0);
	fx_series_call(f, q, v);
	fx_refusal(f, r, 0x2, n->why);
	ret = fx_write(f, out(n->file), 1, 0);
	fx_free(f);

	f = fx_new("/usr/bin/p", n->pid + 1, 2, ev2);
	fx_target(f, n->bad_name, 42, 0, CS_HOOK_GOT);
	ret |= fx_write(f, out(n->bad_file), 1, 0);
	fx_free(f);
	return ret;
}

static int ctl(void)
{
	static const struct odd_names n = {
		"ctl.rpt", "ctlbad.rpt", 961, "/usr/bin/p\x1b[2Jq", "page\x1b[7mfaults",
		"/nonexistent/li\tb.so", {"new\nline", "\x1b[31mred\x7f", NULL},
		"ti\x1b]0;x\x07tle", "a\rb\x1b[Kc", 0x30, "bad\nname",
	};

	return odd_names(&n);
}

/* names.rpt: names longer than the table's 60 columns, to be cut there:
 * an escape (of \001) across column 57, UTF-8 characters across it, and
 * 40 two-byte characters (80 bytes, 40 columns: not cut); the module's
 * name is UTF-8 too (its columns line up by characters, not bytes). */
static int names(void)
{
	char esc[80], utf[100], wide[100];
	struct fx *f = fx_new("/usr/bin/names", 963, 2, ev2);
	uint32_t m = fx_module(f, "/nonexistent/m\303\266d.so", NULL, 0, 0);
	uint32_t t1, t2, t3;
	int i, ret;

	memset(esc, 'a', 56);
	memcpy(esc + 56, "\001bcdef", 7);
	memset(utf, 'a', 50);
	for (i = 0; i < 20; i++)
		memcpy(utf + 50 + 2 * i, "\xc3\xa9", 3);
	for (i = 0; i < 40; i++)
		memcpy(wide + 2 * i, "\xc3\xa9", 3);
	t1 = fx_target(f, esc, m, 0, CS_HOOK_GOT);
	t2 = fx_target(f, utf, m, 0, CS_HOOK_GOT);
	t3 = fx_target(f, wide, m, 0, CS_HOOK_GOT);
	fx_thread(f, 963, 3);
	call2(f, fx_site(f, t1, 963, m, 0x10, CS_KEY_NONE), 30, 0);
	call2(f, fx_site(f, t2, 963, m, 0x20, CS_KEY_NONE), 20, 0);
	call2(f, fx_site(f, t3, 963, m, 0x30, CS_KEY_NONE), 10, 0);
	ret = fx_write(f, out("names.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* c1.rpt: ctl.rpt's cases with C1 controls (U+0080..U+009F: \302\233 is
 * CSI, \302\205 NEL) and bytes that are not UTF-8 (\377, a lone \303 at
 * the end), which the text outputs must not print raw either: in the
 * program, an event, the module, the functions, a series and a refused
 * target's name and reason; caf\303\251 is valid UTF-8 and stays.
 * c1bad.rpt: a target with a C1 control in its name refers to a module
 * that does not exist (the damage message quotes the name). */
static int c1(void)
{
	static const struct odd_names n = {
		"c1.rpt", "c1bad.rpt", 964, "/usr/bin/p\302\2332Jq", "page\302\2337mfaults",
		"/nonexistent/li\302\205b\377.so", {"c1\302\23331mred", "bad\377utf\303", "caf\303\251"},
		"ti\302\235tle", "a\302\233Kb\377", 0x40, "bad\302\205name",
	};

	return odd_names(&n);
}

/* The targets of one process of /usr/bin/prog, one of each kind of
 * catching: prog is loaded at prog_base, libfoo.so.1 at foo_base.  Second
 * (process b, second != 0): another load address, the same functions,
 * and repeats of a's reasons (merged away) but for one new one. */
static struct fx *targets_file(uint32_t pid, uint64_t prog_base, uint64_t foo_base, int second)
{
	struct fx *f = fx_new("/usr/bin/prog", pid, 2, ev2);
	uint32_t prog, foo, t;
	size_t s;

	prog = fx_module(f, "/nonexistent/prog", NULL, 0, prog_base);
	foo = fx_module(f, "/nonexistent/libfoo.so.1", NULL, 0, foo_base);
	fx_thread(f, pid, 3);
	/* Calibration: never a listed target. */
	t = fx_target_at(f, "cs_calibrate", 0, 0x1000, CS_HOOK_CALIBRATION | CS_HOOK_GOT, 1);
	call2(f, fx_site(f, t, pid, prog, 0x10, CS_KEY_NONE), 20, 0);

	t = fx_target_at(f, "hash_aref", foo, foo_base + 0x1130, CS_HOOK_ENTRY, 0);
	s = fx_site(f, t, pid, prog, 0x2000, CS_KEY_NONE);
	call2(f, s, 100, 0);
	call2(f, s, 120, 0);
	call2(f, s, 140, 0);
	s = fx_site(f, t, pid, foo, 0x5000, CS_KEY_NONE);
	call2(f, s, 90, 0);
	call2(f, s, 95, 0);

	t = fx_target_at(f, "malloc", foo, foo_base + 0x2000, CS_HOOK_GOT, 3);
	s = fx_site(f, t, pid, prog, 0x2100, CS_KEY_NONE);
	for (int i = 0; i < 4; i++)
		call2(f, s, 50, 0);

	t = fx_target_at(f, "st_lookup", foo, foo_base + 0x3000, CS_HOOK_GOT | CS_HOOK_REFUSED, 2);
	fx_refusal(f, t, 0x3, "a direct branch lands inside the patched bytes");
	s = fx_site(f, t, pid, prog, 0x2200, CS_KEY_NONE);
	call2(f, s, 70, 1);

	t = fx_target_at(f, "tiny", prog, prog_base + 0x1500, CS_HOOK_REFUSED | CS_HOOK_HIDDEN, 0);
	fx_refusal(f, t, 0, "shorter than the patch (3 bytes)");
	if (second) {
		/* Another reason, given twice, and the same reason at more
		 * places than the set's first allocation holds. */
		fx_refusal(f, t, 0x1, "loop instruction in the patched bytes");
		fx_refusal(f, t, 0x1, "loop instruction in the patched bytes");
		for (uint64_t at = 0x20; at <= 0x50; at += 0x10)
			fx_refusal(f, t, at, "loop instruction in the patched bytes");
	}

	/* Two static functions of one name in prog. */
	t = fx_target_at(f, "helper", prog, prog_base + 0x1600, CS_HOOK_ENTRY | CS_HOOK_HIDDEN, 0);
	s = fx_site(f, t, pid, prog, 0x2300, CS_KEY_NONE);
	call2(f, s, 10, 0);
	call2(f, s, 12, 0);
	t = fx_target_at(f, "helper", prog, prog_base + 0x1700, CS_HOOK_ENTRY | CS_HOOK_HIDDEN, 0);
	s = fx_site(f, t, pid, prog, 0x2300 + (second ? 0 : 0x10), CS_KEY_NONE);
	for (int i = 0; i < 5; i++)
		call2(f, s, 30, 0);

	if (second) {
		/* Series of both helpers: two lines, not one. */
		for (t = 6; t <= 7; t++) {
			s = fx_series(f, t, pid, 0);
			for (int i = 0; i < 3; i++) {
				uint64_t v[2] = {10 * t + (uint64_t)i, 0};

				fx_series_call(f, s, v);
			}
		}
	}
	if (!second) {
		fx_target_at(f, "unhooked", 0, 0x400070, 0, 0);
		/* Should not happen, shown as it is. */
		t = fx_target_at(f, "both", foo, foo_base + 0x4000, CS_HOOK_ENTRY | CS_HOOK_GOT, 1);
		call2(f, fx_site(f, t, pid, prog, 0x2400, CS_KEY_NONE), 8, 0);
	}
	return f;
}

/* targets.rpt, targets_b.rpt (a second process), and the refusal blocks
 * the reader must count as damage: a reason without its NUL, a block of
 * the wrong size, a refusal of a target that does not exist. */
static int targets(void)
{
	struct fx *f;
	struct cs_refusal_block *rb;
	size_t off;
	int ret;

	f = targets_file(300, 0x555555554000, 0x7ffff7000000, 0);
	ret = fx_write(f, out("targets.rpt"), 1, 0);
	fx_free(f);
	f = targets_file(301, 0x555555580000, 0x7ffff6000000, 1);
	ret |= fx_write(f, out("targets_b.rpt"), 1, 0);
	fx_free(f);

	f = targets_file(302, 0x555555554000, 0x7ffff7000000, 0);
	off = fx_refusal(f, 2, 0, "");
	rb = fx_at(f, off);
	memset(rb->why, 'x', sizeof(rb->why));
	ret |= fx_write(f, out("refusal_nul.rpt"), 1, 0);
	fx_free(f);

	f = targets_file(303, 0x555555554000, 0x7ffff7000000, 0);
	off = fx_block(f, CS_BLOCK_REFUSAL, sizeof(*rb) + 8);
	rb = fx_at(f, off);
	rb->target = 2;
	snprintf(rb->why, sizeof(rb->why), "too big");
	ret |= fx_write(f, out("refusal_size.rpt"), 1, 0);
	fx_free(f);

	f = targets_file(304, 0x555555554000, 0x7ffff7000000, 0);
	fx_refusal(f, 42, 0, "of nobody");
	ret |= fx_write(f, out("refusal_orphan.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* Expands the shim's %p, %e and %% in pattern into buf. */
static void expand(const char *pattern, char *buf, size_t len)
{
	size_t n = 0;
	const char *p;

	for (p = pattern; *p && n + 32 < len; p++) {
		if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(buf + n, len - n, "%d", (int)getpid());
			p++;
		} else if (p[0] == '%' && p[1] == 'e') {
			/* As the shim: the base name of /proc/self/exe. */
			char exe[4096];
			ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
			const char *base;

			exe[k > 0 ? k : 0] = '\0';
			base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
			n += (size_t)snprintf(buf + n, len - n, "%s", base);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			buf[n++] = '%';
			p++;
		} else {
			buf[n++] = *p;
		}
	}
	buf[n] = '\0';
}

static int fake_shim(int status)
{
	const char *pattern = getenv("CACHESHIM_OUTPUT");
	const char *session = getenv("CACHESHIM_SESSION");
	const char *snap = getenv("CS_FAKE_SNAPSHOT");
	char path[4096];
	struct fx *f;
	uint32_t m, t;
	size_t s;

	expand(pattern && pattern[0] ? pattern : "cacheshim.out.%p", path, sizeof(path));
	/* A name taken: .1, .2, ... appended, as the shim does. */
	for (int i = 1; access(path, F_OK) == 0 && i < 100; i++) {
		size_t n = strlen(path);

		if (i > 1)
			n = (size_t)(strrchr(path, '.') - path);
		snprintf(path + n, sizeof(path) - n, ".%d", i);
	}
	f = fx_new("/usr/bin/fake", (uint32_t)getpid(), 2, ev2);
	fx_header(f)->session = session ? strtoull(session, NULL, 10) : 0;
	m = fx_module(f, "/nonexistent/fake", NULL, 0, 0);
	t = fx_target(f, "fake_fn", m, 0, CS_HOOK_GOT);
	s = fx_site(f, t, (uint32_t)getpid(), m, 0x10, CS_KEY_NONE);
	call2(f, s, 12, 1);
	if (snap && snap[0] && fx_write(f, snap, 0, 0))
		return 100;
	call2(f, s, 14, 1);
	if (fx_write(f, path, status >= 0, 0))
		return 100;
	fx_free(f);
	if (status < 0) {
		signal(-status, SIG_DFL);
		kill(getpid(), -status);
		return 101;
	}
	return status;
}

/* setup.rpt: the shim's set-up time, in a thread block as written now
 * (1234 ticks) and in one of an earlier writer's size (no such field). */
static int setup(void)
{
	struct fx *f = fx_new("/usr/bin/prog", 100, 2, ev2);
	uint32_t prog = fx_module(f, "/nonexistent/prog", NULL, 0, 0x555555554000);
	uint32_t tm = fx_target(f, "malloc", prog, 0, CS_HOOK_GOT);
	size_t s;
	int ret;

	fx_thread_setup(f, 100, 3, 1234, sizeof(struct cs_thread_block));
	fx_thread_setup(f, 101, 3, 999, CS_THREAD_BLOCK_MIN_SIZE);
	s = fx_site(f, tm, 100, prog, 0x1234, CS_KEY_NONE);
	call2(f, s, 10, 0);
	s = fx_site(f, tm, 101, prog, 0x1234, CS_KEY_NONE);
	call2(f, s, 20, 0);
	ret = fx_write(f, out("setup.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* huge.rpt: counts of 2^63 (calls entered, calls not recorded, set-up
 * ticks; 2^62 measured calls, all of them 0): read twice, each sum is
 * 2^64, one more than 64 bits hold; read four times, the calls too. */
static int huge(void)
{
	struct fx *f = fx_new("/usr/bin/prog", 100, 2, ev2);
	uint32_t prog = fx_module(f, "/nonexistent/prog", NULL, 0, 0x555555554000);
	uint32_t tm = fx_target(f, "malloc", prog, 0, CS_HOOK_GOT);
	struct cs_site_block *sb;
	size_t s;
	int ret;

	fx_thread_setup(f, 100, 3, 1ull << 63, sizeof(struct cs_thread_block));
	s = fx_site(f, tm, 100, prog, 0x1234, CS_KEY_NONE);
	call2(f, s, 0, 0);
	sb = fx_at(f, s);
	sb->calls = 1ull << 62;
	sb->entered = 1ull << 63;
	sb->stat[0].hist[0] = sb->stat[1].hist[0] = 1ull << 62;
	fx_header(f)->lost_calls = 1ull << 63;
	ret = fx_write(f, out("huge.rpt"), 1, 0);
	fx_free(f);

	/* huge2.rpt: two call sites of 2^63 calls each: each row fits, the
	 * function does not. */
	f = fx_new("/usr/bin/prog", 100, 2, ev2);
	prog = fx_module(f, "/nonexistent/prog", NULL, 0, 0x555555554000);
	tm = fx_target(f, "malloc", prog, 0, CS_HOOK_GOT);
	fx_thread(f, 100, 3);
	for (uint64_t at = 0x1234; at <= 0x1334; at += 0x100) {
		s = fx_site(f, tm, 100, prog, at, CS_KEY_NONE);
		call2(f, s, 0, 0);
		sb = fx_at(f, s);
		sb->calls = sb->entered = 1ull << 63;
		sb->stat[0].hist[0] = sb->stat[1].hist[0] = 1ull << 63;
	}
	ret |= fx_write(f, out("huge2.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

/* rare.rpt: an event that is rarely not 0: one page fault in 2500 calls
 * (mean 0.0004, not "0" beside a total of 1). */
static int rare(void)
{
	struct fx *f = fx_new("/usr/bin/prog", 1300, 2, ev2);
	uint32_t m = fx_module(f, "/nonexistent/prog", NULL, 0, 0);
	uint32_t t = fx_target(f, "fn", m, 0, CS_HOOK_GOT);
	size_t s;
	int i, ret;

	s = fx_site(f, t, 1300, m, 0x40, CS_KEY_NONE);
	for (i = 0; i < 2500; i++)
		call2(f, s, 10, i == 1250);
	ret = fx_write(f, out("rare.rpt"), 1, 0);
	fx_free(f);
	return ret;
}

int main(int argc, char **argv)
{
	struct fx *f;
	int ret;

	if (argc == 3 && strcmp(argv[1], "--fake-shim") == 0)
		return fake_shim(atoi(argv[2]));
	if (argc != 2) {
		fputs("usage: mkfixture DIR | mkfixture --fake-shim STATUS\n", stderr);
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	f = basic();
	ret = fx_write(f, out("basic.rpt"), 1, 0);
	ret |= snapshot(fx_header(f)->start_ns);
	ret |= live_pair(fx_header(f)->start_ns);
	fx_free(f);
	ret |= versions();
	ret |= huge();
	ret |= merge_files();
	ret |= same_name();
	ret |= same_name_one("samename_b.rpt", "/nonexistent/libb.so");
	ret |= same_name_one("moved.rpt", "/elsewhere/libb.so");
	ret |= disjoint();
	ret |= running();
	ret |= failed();
	ret |= keyed();
	ret |= corrupted();
	ret |= fifo();
	ret |= symbols();
	ret |= nested();
	ret |= series();
	ret |= bigseries();
	ret |= badmax();
	ret |= halfcall(1, "halfcall.rpt");
	ret |= halfcall(0, "nohalf.rpt");
	ret |= classes();
	ret |= escape();
	ret |= ctl();
	ret |= names();
	ret |= c1();
	ret |= targets();
	ret |= setup();
	ret |= rare();
	/* Keep the compiler from folding the function away. */
	if (fx_known_function(argc) == 12345)
		puts("?");
	return ret ? 1 : 0;
}
