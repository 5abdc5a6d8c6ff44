/* SPDX-License-Identifier: MIT */
/* Units: the report reader on files written by the fixture writer. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/internal.h"
#include "tests/report/fixture.h"

static const struct fx_event two_events[] = {
	{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED},
	{"perf::PAGE-FAULTS", CS_EVENT_PERF, CS_EVENT_COUNTED},
};

static const uint8_t bid[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,	3,  4,	5,  6,
				7,    8,    9,	  10,	11, 12, 13, 14, 15, 16};

/* A small valid file: 2 modules, 2 targets, 3 sites (one site split over
 * two threads), one thread that did not open event 1. */
static struct fx *sample(void)
{
	struct fx *f = fx_new("/usr/bin/prog", 4242, 2, two_events);
	uint32_t m1, m2, t1, t2;
	size_t s;
	uint64_t v[2];
	int i;

	m1 = fx_module(f, "/usr/bin/prog", bid, sizeof(bid), 0x555500000000);
	m2 = fx_module(f, "/lib/libfoo.so", NULL, 0, 0x7f0000000000);
	t1 = fx_target(f, "malloc", m2, 0, CS_HOOK_GOT);
	t2 = fx_target(f, "free", m2, 0, CS_HOOK_GOT);
	fx_thread(f, 100, 0x3);
	fx_thread(f, 101, 0x1);
	s = fx_site(f, t1, 100, m1, 0x1234, CS_KEY_NONE);
	for (i = 1; i <= 10; i++) {
		v[0] = 10 * (uint64_t)i;
		v[1] = (uint64_t)i % 2;
		fx_call(f, s, v);
	}
	/* The same call site in another thread, which has no event 1. */
	s = fx_site(f, t1, 101, m1, 0x1234, CS_KEY_NONE);
	v[0] = 1000;
	v[1] = 99; /* garbage: must not be used */
	fx_call(f, s, v);
	s = fx_site(f, t2, 100, m1, 0x1300, CS_KEY_NONE);
	v[0] = 5;
	v[1] = 0;
	fx_call(f, s, v);
	fx_refusal(f, t2, 0x4, "jump table cannot be bounded");
	return f;
}

static char tmpdir[] = "/tmp/cs-test-reader-XXXXXX";

static const char *tmp_path(const char *name)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s/%s", tmpdir, name);
	return buf;
}

static void test_round_trip(void)
{
	struct fx *x = sample();
	struct cs_file *f = NULL;
	struct cs_report *r;
	struct cs_row **rows;
	struct cs_summary s;
	const struct cs_agg *a;
	char err[512] = "", fn[256];
	const char *path = tmp_path("rt.rpt");
	size_t n;

	CU_ASSERT_FATAL(fx_write(x, path, 1, 0) == 0);
	CU_ASSERT_EQUAL_FATAL(cs_reader_load(path, &f, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(f->damage, "");
	CU_ASSERT_FALSE(f->incomplete);
	CU_ASSERT_EQUAL(f->hdr->pid, 4242);
	CU_ASSERT_STRING_EQUAL(f->hdr->program, "/usr/bin/prog");
	CU_ASSERT_EQUAL(f->nmodules, 2);
	CU_ASSERT_EQUAL(f->ntargets, 2);
	CU_ASSERT_EQUAL(f->nsites, 3);
	CU_ASSERT_EQUAL(f->nthreads, 2);
	CU_ASSERT_EQUAL(f->end, x->len);
	CU_ASSERT_STRING_EQUAL(cs_reader_module(f, 2)->path, "/lib/libfoo.so");
	CU_ASSERT_EQUAL(cs_reader_module(f, 1)->build_id_len, sizeof(bid));
	CU_ASSERT_PTR_NULL(cs_reader_module(f, 3));
	CU_ASSERT_STRING_EQUAL(cs_reader_target(f, 2)->name, "free");
	CU_ASSERT_PTR_NULL(cs_reader_target(f, 0));
	CU_ASSERT_TRUE(cs_reader_event_usable(f, f->sites[0], 1));
	CU_ASSERT_FALSE(cs_reader_event_usable(f, f->sites[1], 1));
	CU_ASSERT_TRUE(cs_reader_event_usable(f, f->sites[1], 0));
	CU_ASSERT_FALSE(cs_reader_event_usable(f, f->sites[1], 2));

	/* Merged: malloc's two threads become one row; event 1 of thread
	 * 101 is left out. */
	r = cs_merge_new(CS_BY_CALLSITE);
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT_EQUAL(cs_merge_add(r, f), 0);
	rows = cs_merge_sorted(r, &n);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_STRING_EQUAL(cs_merge_function(rows[0], fn, sizeof(fn)), "free");
	CU_ASSERT_STRING_EQUAL(cs_merge_function(rows[1], fn, sizeof(fn)), "malloc");
	CU_ASSERT_EQUAL(rows[1]->calls, 11);
	a = cs_merge_agg(rows[1], 0);
	CU_ASSERT_FATAL(a != NULL);
	CU_ASSERT_EQUAL(cs_stats_summarize(a, &s), 0);
	CU_ASSERT_EQUAL(s.n, 11);
	CU_ASSERT(s.total == 1550);
	CU_ASSERT_EQUAL(s.min, 10);
	CU_ASSERT_EQUAL(s.max, 1000);
	a = cs_merge_agg(rows[1], 1);
	CU_ASSERT_FATAL(a != NULL);
	CU_ASSERT_EQUAL(a->n, 10);
	CU_ASSERT(a->sum == 5);
	/* free's site only recorded a 0 page fault: still a value. */
	a = cs_merge_agg(rows[0], 1);
	CU_ASSERT(a && a->n == 1 && a->max == 0);
	free(rows);
	cs_merge_free(r);
	cs_reader_free(f);

	/* The same bytes through cs_reader_parse, from an odd address. */
	{
		unsigned char *copy = malloc(x->len + 1);

		CU_ASSERT_FATAL(copy != NULL);
		memcpy(copy + 1, x->buf, x->len);
		CU_ASSERT_EQUAL(cs_reader_parse(copy + 1, x->len, "mem", &f, err, sizeof(err)), 0);
		CU_ASSERT(f && f->nsites == 3);
		cs_reader_free(f);
		free(copy);
	}
	fx_free(x);
}

/* A mutation of the sample file, then what the reader must say. */
struct bad_case {
	int line;
	void (*mutate)(struct fx *x, size_t *len);
	int reject; /* 1: rejected; 0: loaded with damage */
	const char *msg; /* substring of the error or damage text */
};

static struct cs_block *block_at(struct fx *x, unsigned nth)
{
	size_t off = CS_HEADER_SIZE;
	struct cs_block *b = NULL;

	while (nth-- > 0 && off < x->len) {
		b = fx_at(x, off);
		off += b->size;
	}
	return fx_at(x, off);
}

/* Blocks of the sample: 0,1 modules; 2,3 targets; 4,5 threads; 6,7,8 sites */
static struct cs_site_block *site_at(struct fx *x, unsigned nth)
{
	return (struct cs_site_block *)block_at(x, 6 + nth);
}

static void m_magic(struct fx *x, size_t *len)
{
	fx_header(x)->magic[0] = 'X';
}
static void m_short(struct fx *x, size_t *len)
{
	*len = 100;
}
static void m_short_hdr(struct fx *x, size_t *len)
{
	*len = 4000;
}
static void m_empty(struct fx *x, size_t *len)
{
	*len = 0;
}
static void m_version(struct fx *x, size_t *len)
{
	fx_header(x)->version = 3;
}
static void m_hdrsize(struct fx *x, size_t *len)
{
	fx_header(x)->header_size = 8192;
}
static void m_nevents(struct fx *x, size_t *len)
{
	fx_header(x)->nevents = 1000;
}
static void m_nevents17(struct fx *x, size_t *len)
{
	fx_header(x)->nevents = 17;
}
static void m_used_small(struct fx *x, size_t *len)
{
	fx_header(x)->used = 100;
}
static void m_state(struct fx *x, size_t *len)
{
	fx_header(x)->state = 7;
}
static void m_program(struct fx *x, size_t *len)
{
	memset(fx_header(x)->program, 'a', CS_PROGRAM_MAX);
}
static void m_evname(struct fx *x, size_t *len)
{
	memset(fx_header(x)->events[1].name, 'e', CS_EVENT_NAME_MAX);
}
static void m_evempty(struct fx *x, size_t *len)
{
	fx_header(x)->events[0].name[0] = 0;
}
static void m_bsize12(struct fx *x, size_t *len)
{
	block_at(x, 2)->size = 12;
}
static void m_bsize4(struct fx *x, size_t *len)
{
	block_at(x, 0)->size = 4;
}
static void m_bsize_huge(struct fx *x, size_t *len)
{
	block_at(x, 3)->size = 0xfffffff8u;
}
static void m_site_nev(struct fx *x, size_t *len)
{
	site_at(x, 0)->nevents = 3;
}
static void m_site_small(struct fx *x, size_t *len)
{
	/* Shrink the last site and move the end with it. */
	struct cs_site_block *s = site_at(x, 2);

	s->hdr.size = 80;
	fx_header(x)->used =
		(CS_HEADER_SIZE + (uint64_t)((unsigned char *)s - (x->buf + CS_HEADER_SIZE)) + 80) |
		CS_USED_SEALED;
	*len = fx_header(x)->used & ~CS_USED_SEALED;
}
static void m_module_path(struct fx *x, size_t *len)
{
	struct cs_module_block *m = (void *)block_at(x, 1);

	memset(m->path, 'p', m->hdr.size - sizeof(*m));
}
static void m_module_id0(struct fx *x, size_t *len)
{
	((struct cs_module_block *)block_at(x, 1))->id = 0;
}
static void m_build_id_len(struct fx *x, size_t *len)
{
	((struct cs_module_block *)block_at(x, 0))->build_id_len = 33;
}
static void m_dup_target(struct fx *x, size_t *len)
{
	((struct cs_target_block *)block_at(x, 3))->id = 1;
}
static void m_target_name(struct fx *x, size_t *len)
{
	memset(((struct cs_target_block *)block_at(x, 2))->name, 'n', CS_TARGET_NAME_MAX);
}
static void m_dangling_target(struct fx *x, size_t *len)
{
	site_at(x, 1)->target = 99;
}
static void m_dangling_module(struct fx *x, size_t *len)
{
	site_at(x, 1)->module = 77;
}
static void m_target_module(struct fx *x, size_t *len)
{
	((struct cs_target_block *)block_at(x, 2))->module = 55;
}
static void m_truncated(struct fx *x, size_t *len)
{
	*len -= 5000;
}
static void m_capacity(struct fx *x, size_t *len)
{
	fx_header(x)->capacity = 9000;
}
static void m_used_unaligned(struct fx *x, size_t *len)
{
	/* The end 4 bytes into the last block's header. */
	struct cs_site_block *s = site_at(x, 2);
	uint64_t off = (uint64_t)((unsigned char *)s - x->buf);

	s->hdr.size = 0xfff0;
	fx_header(x)->used = off + 4;
}
/* Not damage: */
static void m_zero_end(struct fx *x, size_t *len)
{
	site_at(x, 2)->hdr.size = 0;
}
static void m_unknown_type(struct fx *x, size_t *len)
{
	block_at(x, 4)->type = 77;
}
static void m_unpublished(struct fx *x, size_t *len)
{
	block_at(x, 5)->type = 0;
}
static void m_running(struct fx *x, size_t *len)
{
	fx_header(x)->state = CS_STATE_RUNNING;
	fx_header(x)->used &= ~CS_USED_SEALED;
}
/* A running file shorter than header.used: a reservation whose growth is
 * under way, or found the file system full (then for good). */
static void m_running_short(struct fx *x, size_t *len)
{
	m_running(x, len);
	*len -= 5000;
}

static const struct bad_case bad_cases[] = {
	{__LINE__, m_magic, 1, "not a cacheshim report (bad magic)"},
	{__LINE__, m_short, 1, "truncated header (100 bytes, 4096 expected)"},
	{__LINE__, m_short_hdr, 1, "truncated header"},
	{__LINE__, m_empty, 1, "bad magic"},
	{__LINE__, m_version, 1, "unsupported format version 3"},
	{__LINE__, m_hdrsize, 1, "bad header size 8192"},
	{__LINE__, m_nevents, 1, "1000 events in the header (at most 16)"},
	{__LINE__, m_nevents17, 1, "17 events"},
	{__LINE__, m_used_small, 1, "used size 100 is smaller than the header"},
	{__LINE__, m_state, 1, "unknown state 7"},
	{__LINE__, m_program, 1, "program name is not NUL-terminated"},
	{__LINE__, m_evname, 1, "event 1: name is not NUL-terminated"},
	{__LINE__, m_evempty, 1, "event 0: empty name"},
	{__LINE__, m_bsize12, 0, "bad size 12"},
	{__LINE__, m_bsize4, 0, "block at offset 4096: bad size 4"},
	{__LINE__, m_bsize_huge, 0, "runs past the end"},
	{__LINE__, m_site_nev, 0, "3 events, the header has 2"},
	{__LINE__, m_site_small, 0, "site block at offset"},
	{__LINE__, m_module_path, 0, "path is not NUL-terminated"},
	{__LINE__, m_module_id0, 0, "id 0"},
	{__LINE__, m_build_id_len, 0, "build id of 33 bytes"},
	{__LINE__, m_dup_target, 0, "two targets with id 1"},
	{__LINE__, m_target_name, 0, "name is not NUL-terminated"},
	{__LINE__, m_dangling_target, 0, "refers to target 99, which does not exist"},
	{__LINE__, m_dangling_module, 0, "refers to module 77, which does not exist"},
	{__LINE__, m_target_module, 0, "refers to module 55"},
	{__LINE__, m_truncated, 0, "truncated: the header says"},
	{__LINE__, m_capacity, 0, "exceeds the capacity 9000"},
	{__LINE__, m_used_unaligned, 0, "truncated block header"},
	{__LINE__, m_zero_end, 0, NULL},
	{__LINE__, m_unknown_type, 0, NULL},
	{__LINE__, m_unpublished, 0, NULL},
	{__LINE__, m_running, 0, NULL},
	{__LINE__, m_running_short, 0, NULL},
};

static void test_rejections(void)
{
	struct fx *x;
	struct cs_file *f;
	char err[512];
	size_t i, len;
	int ret, ok;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		const char *path = tmp_path("bad.rpt");
		FILE *fp;

		x = sample();
		/* Room for the file's capacity, so that only the mutation
		 * makes it short. */
		fx_header(x)->capacity = x->len;
		fx_header(x)->used = x->len | CS_USED_SEALED;
		len = x->len;
		c->mutate(x, &len);
		fp = fopen(path, "wb");
		CU_ASSERT_FATAL(fp != NULL);
		CU_ASSERT(fwrite(x->buf, 1, len, fp) == len);
		fclose(fp);

		err[0] = '\0';
		f = NULL;
		ret = cs_reader_load(path, &f, err, sizeof(err));
		if (c->reject) {
			ok = ret < 0 && f == NULL && strstr(err, c->msg) &&
			     strncmp(err, path, strlen(path)) == 0;
		} else if (c->msg) {
			ok = ret == 0 && f && strstr(f->damage, c->msg);
		} else {
			ok = ret == 0 && f && f->damage[0] == '\0';
		}
		CU_ASSERT(ok);
		if (!ok)
			printf("\nline %d: ret %d, err '%s', damage '%s'\n", c->line, ret, err,
			       f ? f->damage : "");
		/* The same through cs_reader_parse. */
		cs_reader_free(f);
		f = NULL;
		ret = cs_reader_parse(x->buf, len, "mem", &f, err, sizeof(err));
		CU_ASSERT(c->reject ? ret < 0 : ret == 0);
		cs_reader_free(f);
		fx_free(x);
	}
}

static void test_running_crashed(void)
{
	struct fx *x = sample();
	struct cs_file *f = NULL;
	char err[512];
	size_t z;

	/* A crash: a reserved block whose size was never written, and used
	 * past it; the file still has its full capacity. */
	z = fx_block(x, CS_BLOCK_SITE, 64);
	((struct cs_block *)fx_at(x, z))->size = 0;
	((struct cs_block *)fx_at(x, z))->type = 0;
	x->used = x->len + 4096; /* beyond the written bytes */
	CU_ASSERT_FATAL(fx_write(x, tmp_path("crash.rpt"), 0, 1 << 20) == 0);
	CU_ASSERT_EQUAL_FATAL(cs_reader_load(tmp_path("crash.rpt"), &f, err, sizeof(err)), 0);
	CU_ASSERT_TRUE(f->incomplete);
	CU_ASSERT_STRING_EQUAL(f->damage, "");
	CU_ASSERT_EQUAL(f->nsites, 3);
	CU_ASSERT_EQUAL(f->end, z);
	cs_reader_free(f);
	fx_free(x);
}

static void test_not_regular(void)
{
	struct cs_file *f;
	char err[512];

	CU_ASSERT_EQUAL(cs_reader_load("/tmp", &f, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/tmp: not a regular file"));
	CU_ASSERT(cs_reader_load("/nonexistent/x", &f, err, sizeof(err)) == -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/x: cannot open"));
	CU_ASSERT(cs_reader_load("/dev/null", &f, err, sizeof(err)) < 0);
}

/* Every truncation and many random byte changes: the reader either
 * rejects or returns a file whose pointers hold (ASan and the fuzz
 * harness in tests/robust check the bytes; this checks the logic). */
static void test_mutations(void)
{
	struct fx *x = sample();
	unsigned char *buf = malloc(x->len);
	uint64_t rng = 12345, acc = 0;
	struct cs_file *f;
	char err[512];
	size_t len, i, k;

	CU_ASSERT_FATAL(buf != NULL);
	fx_header(x)->capacity = x->len;
	fx_header(x)->used = x->len | CS_USED_SEALED;
	for (len = 0; len <= x->len; len += 8) {
		if (cs_reader_parse(x->buf, len, "cut", &f, err, sizeof(err)) == 0) {
			CU_ASSERT(f->end <= len);
			CU_ASSERT(len >= x->len || f->damage[0] != '\0');
			cs_reader_free(f);
		}
	}
	for (i = 0; i < 3000; i++) {
		memcpy(buf, x->buf, x->len);
		for (k = 0; k < 1 + i % 8; k++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			/* Mostly the header and block headers: where it matters. */
			buf[(k & 1) ? rng % 256 + (rng >> 32) % 3 * 4096 : (rng >> 8) % x->len] =
				(unsigned char)(rng >> 40);
		}
		if (cs_reader_parse(buf, x->len, "mut", &f, err, sizeof(err)) == 0) {
			for (k = 0; k < f->nsites; k++)
				acc += cs_reader_target(f, f->sites[k]->target)->id;
			cs_reader_free(f);
		}
	}
	CU_ASSERT(acc > 0);
	free(buf);
	fx_free(x);
}

/* ---- nested and series blocks ---- */

/* Offsets in the file of nested_sample(). */
static size_t nx_site, nx_plain, nx_nested, nx_series, nx_target;

/* A file with a nested block and a series block; last (1: the nested
 * block, 2: the series block) is written at the end, so that its size
 * can be cut.  outer's calls: 100 and 110 plain; 1000 (self 400) and
 * 1200 (self 500) with something nested.  The series has 2 calls per
 * window and 5 calls: windows of 2, 2, 1. */
static struct fx *nested_sample(int last)
{
	struct fx *f = fx_new("/usr/bin/prog", 77, 2, two_events);
	uint64_t i1[2] = {1000, 5}, x1[2] = {400, 1}, i2[2] = {1200, 3}, x2[2] = {500, 0};
	uint64_t v[2];
	uint32_t m, to, ti;
	int i;

	m = fx_module(f, "/usr/bin/prog", NULL, 0, 0x555500000000);
	nx_target = f->len;
	to = fx_target(f, "outer", m, 0, CS_HOOK_GOT);
	ti = fx_target(f, "inner", m, 0, CS_HOOK_GOT);
	fx_thread(f, 77, 0x3);
	nx_site = fx_site(f, to, 77, m, 0x10, CS_KEY_NONE);
	v[0] = 100;
	v[1] = 0;
	fx_call(f, nx_site, v);
	v[0] = 110;
	fx_call(f, nx_site, v);
	nx_plain = fx_site(f, ti, 77, m, 0x20, CS_KEY_NONE);
	v[0] = 600;
	v[1] = 4;
	fx_call(f, nx_plain, v);
	if (last != 1) {
		nx_nested = fx_nested(f, nx_site);
		fx_nested_call(f, nx_site, nx_nested, i1, x1, 1);
		fx_nested_call(f, nx_site, nx_nested, i2, x2, 1);
	}
	nx_series = fx_series(f, to, 77, 1);
	for (i = 0; i < 5; i++) {
		v[0] = 10 * (uint64_t)(i + 1);
		v[1] = (uint64_t)i;
		fx_series_call(f, nx_series, v);
	}
	if (last == 1) {
		nx_nested = fx_nested(f, nx_site);
		fx_nested_call(f, nx_site, nx_nested, i1, x1, 1);
		fx_nested_call(f, nx_site, nx_nested, i2, x2, 1);
	}
	if (last == 2) {
		/* Move the series to the end: a copy after the nested block,
		 * the first one turned into an unknown block. */
		size_t len = cs_series_block_size(2),
		       off = fx_block(f, CS_BLOCK_SERIES, (uint32_t)len);

		memcpy(fx_at(f, off), fx_at(f, nx_series), len);
		((struct cs_block *)fx_at(f, nx_series))->type = 99;
		nx_series = off;
	}
	return f;
}

static struct cs_nested_block *nx_nb(struct fx *x)
{
	return fx_at(x, nx_nested);
}

static struct cs_series_block *nx_sb(struct fx *x)
{
	return fx_at(x, nx_series);
}

static struct cs_window *nx_window(struct fx *x, unsigned i)
{
	struct cs_series_block *sb = nx_sb(x);

	return (struct cs_window *)((unsigned char *)(sb + 1) + i * sb->window_size);
}

/* Window i's aggregate of event e. */
static struct cs_wstat *wstat_at(struct fx *x, unsigned i, unsigned e)
{
	return (struct cs_wstat *)(nx_window(x, i) + 1) + e;
}

/* Cuts the last block by 8 bytes, and the file with it. */
static void cut_last(struct fx *x, size_t off, size_t *len)
{
	struct cs_block *b = fx_at(x, off);

	b->size -= 8;
	*len = off + b->size;
	fx_header(x)->used = *len | CS_USED_SEALED;
}

static void n_site_off(struct fx *x, size_t *len)
{
	nx_nb(x)->site = nx_target;
}
static void n_site_mid(struct fx *x, size_t *len)
{
	nx_nb(x)->site = nx_site + 8;
}
static void n_nevents(struct fx *x, size_t *len)
{
	nx_nb(x)->nevents = 3;
}
static void n_size(struct fx *x, size_t *len)
{
	cut_last(x, nx_nested, len);
}
static void n_backlink(struct fx *x, size_t *len)
{
	((struct cs_site_block *)fx_at(x, nx_site))->nested = nx_series;
}
static void n_missing(struct fx *x, size_t *len)
{
	((struct cs_site_block *)fx_at(x, nx_plain))->nested = nx_series;
}
static void n_misfit(struct fx *x, size_t *len)
{
	nx_nb(x)->stat[0].hist[cs_hist_index(5000)]++;
}
static void n_uneven(struct fx *x, size_t *len)
{
	nx_nb(x)->stat[3].hist[0]++; /* an exclusive value without its call */
}
/* A thread stopped at exit half-way through a nested call: tsc 700 in
 * the site and in the inclusive values, not yet in the exclusive ones
 * nor in the calls.  Two such inclusive values are one too many (the
 * site holds a second 700 so that only that is wrong). */
static void n_half(struct fx *x, size_t *len)
{
	struct cs_site_block *s = fx_at(x, nx_site);

	s->stat[0].hist[cs_hist_index(700)]++;
	s->stat[0].sum += 700;
	s->stat[0].sumsq_lo += 700 * 700;
	nx_nb(x)->stat[0].hist[cs_hist_index(700)]++;
	nx_nb(x)->stat[0].sum += 700;
	nx_nb(x)->stat[0].sumsq_lo += 700 * 700;
}
static void n_half2(struct fx *x, size_t *len)
{
	uint64_t v[2] = {700, 0};

	n_half(x, len);
	fx_call(x, nx_site, v);
	nx_nb(x)->stat[0].hist[cs_hist_index(700)]++;
	nx_nb(x)->stat[0].sum += 700;
	nx_nb(x)->stat[0].sumsq_lo += 700 * 700;
}
/* The same two half-recorded calls, left so by a signal handler's
 * siglongjmp: two calls in flight at the site allow them. */
static void n_abandoned(struct fx *x, size_t *len)
{
	n_half2(x, len);
	((struct cs_site_block *)fx_at(x, nx_site))->entered += 2;
}
static void n_misfit_running(struct fx *x, size_t *len)
{
	n_misfit(x, len);
	fx_header(x)->state = CS_STATE_RUNNING;
	fx_header(x)->used &= ~CS_USED_SEALED;
}
static void n_duplicate(struct fx *x, size_t *len)
{
	/* The series block becomes a second nested block of the site. */
	struct cs_nested_block *n = fx_at(x, nx_series);

	n->hdr.type = CS_BLOCK_NESTED;
	n->hdr.size = (uint32_t)cs_nested_block_size(2);
	memcpy(&n->site, &nx_nb(x)->site, cs_nested_block_size(2) - sizeof(n->hdr));
	/* The rest of the old series block: an unknown block. */
	((struct cs_block *)((unsigned char *)n + n->hdr.size))->type = 98;
	((struct cs_block *)((unsigned char *)n + n->hdr.size))->size =
		(uint32_t)(cs_series_block_size(2) - cs_nested_block_size(2));
}
static void s_nevents(struct fx *x, size_t *len)
{
	nx_sb(x)->nevents = 3;
}
static void s_window_size(struct fx *x, size_t *len)
{
	nx_sb(x)->window_size += 8;
}
static void s_size(struct fx *x, size_t *len)
{
	cut_last(x, nx_series, len);
}
static void s_shift(struct fx *x, size_t *len)
{
	nx_sb(x)->shift = 64;
}
/* The program ended while the windows merged: skipped, not damage. */
static void s_merging(struct fx *x, size_t *len)
{
	nx_sb(x)->shift |= CS_SERIES_MERGING;
	nx_window(x, 0)->calls = 3; /* half merged */
}
static void s_full(struct fx *x, size_t *len)
{
	nx_window(x, 0)->calls = 3; /* 2 per window */
	nx_window(x, 2)->calls = 0;
}
static void s_calls(struct fx *x, size_t *len)
{
	nx_sb(x)->calls = 4;
}
/* A thread stopped at exit after taking its call's number. */
static void s_taken(struct fx *x, size_t *len)
{
	nx_sb(x)->calls = 6;
}
static void s_taken2(struct fx *x, size_t *len)
{
	nx_sb(x)->calls = 7;
}
/* Two numbers claimed by calls a signal handler's siglongjmp left while
 * they were being recorded: two calls in flight at the thread's site of
 * the target allow them, not three. */
static void s_abandoned(struct fx *x, size_t *len)
{
	nx_sb(x)->calls = 7;
	((struct cs_site_block *)fx_at(x, nx_site))->entered += 2;
}
static void s_abandoned_over(struct fx *x, size_t *len)
{
	nx_sb(x)->calls = 8;
	((struct cs_site_block *)fx_at(x, nx_site))->entered += 2;
}
static void s_beyond(struct fx *x, size_t *len)
{
	nx_window(x, 2)->calls = 0;
	nx_window(x, 7)->calls = 1;
}
static void s_target(struct fx *x, size_t *len)
{
	nx_sb(x)->target = 99;
}
static void s_calls_running(struct fx *x, size_t *len)
{
	s_calls(x, len);
	fx_header(x)->state = CS_STATE_RUNNING;
	fx_header(x)->used &= ~CS_USED_SEALED;
}
static void s_none(struct fx *x, size_t *len)
{
}
static void n_exsum(struct fx *x, size_t *len)
{
	nx_nb(x)->stat[2].sum += 1ull << 62; /* exclusive tsc */
}
static void n_insum(struct fx *x, size_t *len)
{
	nx_nb(x)->stat[0].sum = 1000;
}
static void s_whist(struct fx *x, size_t *len)
{
	wstat_at(x, 0, 0)->hist[0] += 3;
}
/* One number claimed and not counted: one window may count its value,
 * not two. */
static void s_whist_two(struct fx *x, size_t *len)
{
	nx_sb(x)->calls++;
	wstat_at(x, 0, 0)->hist[0]++;
	wstat_at(x, 1, 0)->hist[0]++;
}
static void s_whist_one(struct fx *x, size_t *len)
{
	nx_sb(x)->calls++;
	wstat_at(x, 1, 0)->hist[0]++;
}
static void s_wsum(struct fx *x, size_t *len)
{
	wstat_at(x, 1, 0)->sum = 1ull << 61;
}
static void s_wmin(struct fx *x, size_t *len)
{
	wstat_at(x, 2, 1)->min = 9;
}

static const struct nx_case {
	int line;
	int last; /* nested_sample(last) */
	void (*mutate)(struct fx *x, size_t *len);
	const char *msg; /* substring of the damage, NULL: none */
	int nested; /* outer keeps its nested block */
	int series; /* the series block is kept */
} nx_cases[] = {
	{__LINE__, 0, s_none, NULL, 1, 1},
	{__LINE__, 0, n_site_off, "is not a site block", 0, 1},
	{__LINE__, 0, n_site_mid, "is not a site block", 0, 1},
	{__LINE__, 0, n_nevents, "nested block at offset", 0, 1},
	{__LINE__, 1, n_size, "expected for 2 events", 0, 1},
	{__LINE__, 0, n_backlink, "names", 0, 1},
	{__LINE__, 0, n_missing, "is missing", 1, 1},
	{__LINE__, 0, n_misfit, "event 0 has values that are not among its site's", 0, 1},
	{__LINE__, 0, n_uneven, "event 1 has values", 0, 1},
	{__LINE__, 0, n_half, NULL, 1, 1},
	{__LINE__, 0, n_half2, "event 0 has values", 0, 1},
	{__LINE__, 0, n_abandoned, NULL, 1, 1},
	{__LINE__, 0, n_misfit_running, NULL, 0, 1},
	{__LINE__, 0, n_duplicate, "two nested blocks for the site", 1, 0},
	{__LINE__, 0, s_nevents, "3 events, the header has 2", 1, 0},
	{__LINE__, 0, s_window_size, "bytes, windows of 2504 bytes (", 1, 0},
	{__LINE__, 2, s_size, "bytes, windows of 2496 bytes (", 1, 0},
	{__LINE__, 0, s_shift, "shift 64 (at most 63)", 1, 0},
	{__LINE__, 0, s_merging, NULL, 1, 0},
	{__LINE__, 0, s_full, "window 0 has 3 calls", 1, 0},
	{__LINE__, 0, s_calls, "window 2 has 1 calls (4 calls in all", 1, 0},
	{__LINE__, 0, s_taken, NULL, 1, 1},
	{__LINE__, 0, s_taken2, "its windows hold 5 calls, not 7", 1, 0},
	{__LINE__, 0, s_abandoned, NULL, 1, 1},
	{__LINE__, 0, s_abandoned_over, "its windows hold 5 calls, not 8 (2 calls in flight)", 1, 0},
	{__LINE__, 0, s_beyond, "window 7 has 1 calls", 1, 0},
	{__LINE__, 0, s_target, "refers to target 99", 1, 0},
	{__LINE__, 0, s_calls_running, NULL, 1, 1},
	{__LINE__, 0, n_exsum, "event 0 has values that are not among its site's", 0, 1},
	{__LINE__, 0, n_insum, "event 0 has values that are not among its site's", 0, 1},
	{__LINE__, 0, s_whist, "event 0: its windows' histograms count 3 values beyond their calls", 1,
	 0},
	{__LINE__, 0, s_whist_two, "event 0: its windows' histograms count 2 values beyond", 1, 0},
	{__LINE__, 0, s_whist_one, NULL, 1, 1},
	{__LINE__, 0, s_wsum, "window 1, event 0: its sum is not that of its histogram's", 1, 0},
	{__LINE__, 0, s_wmin, NULL, 1, 1}, /* the first-call race, as ag_min_max */
};

static void test_nested_series_damage(void)
{
	size_t i, len;

	for (i = 0; i < sizeof(nx_cases) / sizeof(nx_cases[0]); i++) {
		const struct nx_case *c = &nx_cases[i];
		struct fx *x = nested_sample(c->last);
		struct cs_file *f = NULL;
		const struct cs_site_block *outer = NULL;
		char err[512] = "";
		int ok, ret;
		size_t k;

		fx_header(x)->capacity = x->len;
		fx_header(x)->used = x->len | CS_USED_SEALED;
		len = x->len;
		c->mutate(x, &len);
		ret = cs_reader_parse(x->buf, len, "nx", &f, err, sizeof(err));
		ok = ret == 0 && f;
		if (ok) {
			for (k = 0; k < f->nsites; k++)
				if (cs_reader_target(f, f->sites[k]->target)->id == 1)
					outer = f->sites[k];
			ok = outer &&
			     (c->msg ? strstr(f->damage, c->msg) != NULL : !f->damage[0]) &&
			     !cs_reader_nested(f, outer) == !c->nested &&
			     f->nseries == (size_t)c->series &&
			     f->nmerging == (c->mutate == s_merging);
		}
		CU_ASSERT(ok);
		if (!ok)
			printf("\nline %d: ret %d '%s', damage '%s', nested %d, series %zu\n",
			       c->line, ret, err, f ? f->damage : "",
			       f && outer ? cs_reader_nested(f, outer) != NULL : -1,
			       f ? f->nseries : 0);
		cs_reader_free(f);
		fx_free(x);
	}
}

static void test_nested_series_read(void)
{
	struct fx *x = nested_sample(0);
	struct cs_file *f = NULL;
	const struct cs_nested_block *nb;
	const struct cs_series_block *sb;
	struct cs_stat *ex = calloc(1, sizeof(*ex));
	char err[512];
	unsigned b;
	uint64_t n = 0;

	CU_ASSERT_FATAL(ex != NULL);
	fx_header(x)->capacity = x->len;
	fx_header(x)->used = x->len | CS_USED_SEALED;
	CU_ASSERT_FATAL(cs_reader_parse(x->buf, x->len, "nx", &f, err, sizeof(err)) == 0);
	CU_ASSERT_STRING_EQUAL(f->damage, "");
	CU_ASSERT_EQUAL(f->nnested, 1);
	CU_ASSERT_EQUAL_FATAL(f->nsites, 2);
	nb = cs_reader_nested(f, f->sites[0]);
	CU_ASSERT_FATAL(nb != NULL);
	CU_ASSERT_PTR_NULL(cs_reader_nested(f, f->sites[1]));
	CU_ASSERT_EQUAL(nb->calls, 2);
	CU_ASSERT_EQUAL(nb->children, 2);

	/* Exclusive: 100 110 400 500. */
	cs_merge_split(&f->sites[0]->stat[0], &nb->stat[0], &nb->stat[2], cs_merge_at_first(f, nb),
		       ex);
	CU_ASSERT_EQUAL(ex->sum, 1110);
	CU_ASSERT_EQUAL(ex->sumsq_lo, 100 * 100 + 110 * 110 + 400 * 400 + 500 * 500);
	CU_ASSERT_EQUAL(ex->sumsq_hi, 0);
	CU_ASSERT_EQUAL(ex->min, 100);
	CU_ASSERT_EQUAL(ex->max, 500); /* plain calls: 110's bucket ends at 111 */
	CU_ASSERT_EQUAL(ex->first, 100);
	for (b = 0; b < CS_HIST_BUCKETS; b++)
		n += ex->hist[b];
	CU_ASSERT_EQUAL(n, 4);
	CU_ASSERT_EQUAL(ex->hist[cs_hist_index(400)], 1);
	CU_ASSERT_EQUAL(ex->hist[cs_hist_index(1000)], 0);
	/* Faults 0 0 1 0; the site's max (5) was nested, its bucket is
	 * exact: the plain calls' max is 0. */
	cs_merge_split(&f->sites[0]->stat[1], &nb->stat[1], &nb->stat[3], cs_merge_at_first(f, nb),
		       ex);
	CU_ASSERT_EQUAL(ex->sum, 1);
	CU_ASSERT_EQUAL(ex->min, 0);
	CU_ASSERT_EQUAL(ex->max, 1);

	/* Series: 5 calls, 2 per window. */
	CU_ASSERT_EQUAL_FATAL(f->nseries, 1);
	sb = f->series[0];
	CU_ASSERT_EQUAL(sb->shift, 1);
	CU_ASSERT_EQUAL(cs_reader_windows_used(sb), 3);
	CU_ASSERT_EQUAL(cs_reader_window(sb, 0)->calls, 2);
	CU_ASSERT_EQUAL(cs_reader_window(sb, 2)->calls, 1);
	CU_ASSERT_EQUAL(cs_reader_window(sb, 1)->first_tsc, 1003);
	CU_ASSERT_EQUAL(cs_reader_wstat(sb, 1, 0)->sum, 70);
	CU_ASSERT_EQUAL(cs_reader_wstat(sb, 2, 1)->max, 4);
	CU_ASSERT_TRUE(cs_reader_tid_usable(f, 77, 1));
	CU_ASSERT_FALSE(cs_reader_tid_usable(f, 78, 1) &&
			!(two_events[1].flags & CS_EVENT_COUNTED));
	cs_reader_free(f);
	fx_free(x);
	free(ex);
}

/* ---- aggregates that cannot be their calls' ---- */

/* Offsets of agg_sample()'s sites: plain (target 1, unkeyed, 5 calls of
 * tsc 100, 400, 700, 1000, 1200 and faults 0..4) and keyed (target 2,
 * argument 1, key 64, one call). */
static size_t ag_plain, ag_keyed;

static struct fx *agg_sample(void)
{
	struct fx *f = fx_new("/usr/bin/prog", 9, 2, two_events);
	static const uint64_t tsc[5] = {100, 400, 700, 1000, 1200};
	uint64_t v[2];
	uint32_t m, t1, t2;
	int i;

	m = fx_module(f, "/usr/bin/prog", NULL, 0, 0x555500000000);
	t1 = fx_target(f, "plain", m, 0, CS_HOOK_GOT);
	t2 = fx_target(f, "keyed", m, 1, CS_HOOK_GOT);
	fx_thread(f, 9, 0x3);
	ag_plain = fx_site(f, t1, 9, m, 0x10, CS_KEY_NONE);
	for (i = 0; i < 5; i++) {
		v[0] = tsc[i];
		v[1] = (uint64_t)i;
		fx_call(f, ag_plain, v);
	}
	ag_keyed = fx_site(f, t2, 9, m, 0x20, 64);
	v[0] = 50;
	v[1] = 1;
	fx_call(f, ag_keyed, v);
	fx_header(f)->capacity = f->len;
	fx_header(f)->used = f->len | CS_USED_SEALED;
	return f;
}

static struct cs_site_block *ag_site(struct fx *x, size_t off)
{
	return fx_at(x, off);
}

static void ag_none(struct fx *x)
{
}
/* A thread killed at exit half-way through a call: its bucket counted,
 * calls not yet; or its sum added (at most max), its bucket not yet. */
static void ag_inflight_bucket(struct fx *x)
{
	ag_site(x, ag_plain)->stat[0].hist[cs_hist_index(300)]++;
	ag_site(x, ag_plain)->stat[0].sum += 300;
	ag_site(x, ag_plain)->stat[0].sumsq_lo += 300 * 300;
}
static void ag_inflight_sum(struct fx *x)
{
	ag_site(x, ag_plain)->stat[0].sum += 1200;
	ag_site(x, ag_plain)->stat[0].sumsq_lo += 1200 * 1200;
}
/* A handler's call during the site's first call: min and max describe
 * the handler's call alone. */
static void ag_first_race(struct fx *x)
{
	ag_site(x, ag_plain)->stat[0].min = 400;
	ag_site(x, ag_plain)->stat[0].max = 400;
}
static void ag_calls_above(struct fx *x)
{
	ag_site(x, ag_plain)->calls = 1000000;
}
static void ag_calls_below(struct fx *x)
{
	ag_site(x, ag_plain)->calls = 3;
	ag_site(x, ag_plain)->entered = 3;
}
/* Two calls a signal handler's siglongjmp left half-recorded (counted
 * in the histogram, not in calls): two calls in flight allow it. */
static void ag_abandoned(struct fx *x)
{
	ag_site(x, ag_plain)->calls = 3;
	ag_site(x, ag_plain)->entered = 5;
}
/* Three calls over, with two in flight: not. */
static void ag_abandoned_over(struct fx *x)
{
	ag_site(x, ag_plain)->calls = 2;
	ag_site(x, ag_plain)->entered = 4;
}
static void ag_hist_wrap(struct fx *x)
{
	/* 2^64 - 1 + 5 + 1 values wrap to 5 in 64 bits. */
	ag_site(x, ag_plain)->stat[0].hist[0] = ~0ull;
	ag_site(x, ag_plain)->stat[0].hist[1] = 1;
}
static void ag_sum_big(struct fx *x)
{
	ag_site(x, ag_plain)->stat[0].sum = 18442240474082182430ull;
}
static void ag_sum_small(struct fx *x)
{
	ag_site(x, ag_plain)->stat[0].sum = 499;
}
static void ag_sumsq_big(struct fx *x)
{
	ag_site(x, ag_plain)->stat[0].sumsq_hi = 1;
}
static void ag_sumsq_small(struct fx *x)
{
	ag_site(x, ag_plain)->stat[0].sumsq_lo = 3400 * 3400 / 5;
}
/* A handler's call during the site's first call, between its stores of
 * min and max: the handler's min (5), the first call's max (4). */
static void ag_min_max(struct fx *x)
{
	ag_site(x, ag_plain)->stat[1].min = 5;
}
static void ag_key_class(struct fx *x)
{
	ag_site(x, ag_keyed)->key = 100;
}
static void ag_key_unkeyed(struct fx *x)
{
	ag_site(x, ag_plain)->key = 64;
}
static void ag_running(struct fx *x)
{
	ag_sum_big(x);
	ag_calls_above(x);
	fx_header(x)->state = CS_STATE_RUNNING;
	fx_header(x)->used &= ~CS_USED_SEALED;
}

static void test_aggregates(void)
{
	static const struct {
		int line;
		void (*mutate)(struct fx *x);
		const char *damage; /* "": none */
		size_t sites; /* kept */
	} cases[] = {
		{__LINE__, ag_none, "", 2},
		{__LINE__, ag_inflight_bucket, "", 2},
		{__LINE__, ag_inflight_sum, "", 2},
		{__LINE__, ag_first_race, "", 2},
		{__LINE__, ag_calls_above, "event 0: its histogram does not count its calls (1000000", 1},
		{__LINE__, ag_calls_below, "event 0: its histogram does not count its calls (3", 1},
		{__LINE__, ag_abandoned, "", 2},
		{__LINE__, ag_abandoned_over, "event 0: its histogram does not count its calls (2", 1},
		{__LINE__, ag_hist_wrap, "event 0: its histogram does not count its calls (5", 1},
		{__LINE__, ag_sum_big, "event 0: its sum is not that of its histogram's values", 1},
		{__LINE__, ag_sum_small, "event 0: its sum is not that of its histogram's values", 1},
		{__LINE__, ag_sumsq_big, "event 0: its sum of squares is not", 1},
		{__LINE__, ag_sumsq_small, "event 0: its sum of squares is not", 1},
		{__LINE__, ag_min_max, "", 2},
		{__LINE__, ag_key_class, "key 100 is not a size class of target 2's argument", 1},
		{__LINE__, ag_key_unkeyed, "key 64 is not a size class of target 1's argument", 1},
		{__LINE__, ag_running, "", 2},
	};
	struct cs_file *f;
	char err[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *x = agg_sample();
		int ok;

		cases[i].mutate(x);
		f = NULL;
		ok = cs_reader_parse(x->buf, x->len, "agg", &f, err, sizeof(err)) == 0 &&
		     (cases[i].damage[0] ? strstr(f->damage, cases[i].damage) != NULL
					 : f->damage[0] == '\0') &&
		     f->nsites == cases[i].sites;
		CU_ASSERT(ok);
		if (!ok)
			printf("\nline %d: damage '%s', %zu sites\n", cases[i].line,
			       f ? f->damage : err, f ? f->nsites : 0);
		cs_reader_free(f);
		fx_free(x);
	}
}

/* Window percentiles: exact below 16, else within the bucket (1/8). */
/* The layout docs/report-format.md gives. */
_Static_assert(sizeof(struct cs_refusal_block) == 136, "refusal block size");
_Static_assert(offsetof(struct cs_refusal_block, target) == 8, "refusal target");
_Static_assert(offsetof(struct cs_refusal_block, offset) == 16, "refusal offset");
_Static_assert(offsetof(struct cs_refusal_block, why) == 24, "refusal why");

/* Seals fixture x, parses it and checks its damage: the text damage (of
 * the case at line) among it, or none when damage is "". */
static struct cs_file *parse_sealed(struct fx *x, int line, const char *damage)
{
	struct cs_file *f = NULL;
	char err[512];

	fx_header(x)->capacity = x->len;
	fx_header(x)->used = x->len | CS_USED_SEALED;
	CU_ASSERT_FATAL(cs_reader_parse(x->buf, x->len, "r", &f, err, sizeof(err)) == 0);
	if (!strstr(f->damage, damage) || (!damage[0] && f->damage[0]))
		fprintf(stderr, "case at line %d: damage '%s'\n", line, f->damage);
	CU_ASSERT_PTR_NOT_NULL(strstr(f->damage, damage));
	CU_ASSERT(damage[0] || !f->damage[0]);
	return f;
}

/* Refusal blocks: kept (several per target, in file order, sorted by
 * target), or dropped as damage when too small, too big, without the
 * reason's NUL, or of a target that does not exist. */
static void test_refusals(void)
{
	static const struct {
		int line;
		int how; /* 0 fine, 1 size - 8, 2 size + 8, 3 no NUL, 4 target 99 */
		const char *damage;
	} cases[] = {
		{__LINE__, 0, ""},
		{__LINE__, 1, "bytes, 136 expected"},
		{__LINE__, 2, "bytes, 136 expected"},
		{__LINE__, 3, "reason is not NUL-terminated"},
		{__LINE__, 4, "refers to target 99, which does not exist"},
	};
	struct cs_refusal_block *rb;
	struct cs_file *f;
	size_t i, off;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *x = sample(); /* a refusal of target 2 */
		uint32_t t = 1;

		if (cases[i].how == 4)
			t = 99;
		if (cases[i].how == 1 || cases[i].how == 2) {
			off = fx_block(x, CS_BLOCK_REFUSAL,
				       (uint32_t)(sizeof(*rb) + (cases[i].how == 1 ? -8 : 8)));
			rb = fx_at(x, off);
			rb->target = 1;
		} else {
			off = fx_refusal(x, t, 0, "second");
			rb = fx_at(x, off);
			if (cases[i].how == 3)
				memset(rb->why, 'y', sizeof(rb->why));
		}
		fx_refusal(x, 1, 0x10, "third");
		f = parse_sealed(x, cases[i].line, cases[i].damage);
		/* Sorted by target, then in file order: 1 second, 1 third, 2. */
		if (cases[i].how == 0) {
			CU_ASSERT_FATAL(f->nrefusals == 3);
			CU_ASSERT(f->refusals[0]->target == 1 &&
				  strcmp(f->refusals[0]->why, "second") == 0);
			CU_ASSERT(f->refusals[1]->target == 1 &&
				  strcmp(f->refusals[1]->why, "third") == 0 &&
				  f->refusals[1]->offset == 0x10);
			CU_ASSERT(f->refusals[2]->target == 2 && f->refusals[2]->offset == 0x4);
		} else {
			/* The bad one is dropped, the others kept. */
			CU_ASSERT(f->nrefusals == 2);
		}
		cs_reader_free(f);
		fx_free(x);
	}
}

_Static_assert(sizeof(struct cs_note_block) == 512, "note block size");
_Static_assert(offsetof(struct cs_note_block, text) == 8, "note text");

/* Note blocks: kept in file order, or dropped as damage when of another
 * size or without the text's NUL; merged, each text once per file, with
 * the number of files that hold it. */
static void test_notes(void)
{
	static const struct {
		int line;
		int how; /* 0 fine, 1 size - 8, 2 no NUL */
		const char *damage;
	} cases[] = {
		{__LINE__, 0, ""},
		{__LINE__, 1, "bytes, 512 expected"},
		{__LINE__, 2, "text is not NUL-terminated"},
	};
	struct cs_note_info **v;
	struct cs_note_block *nb;
	struct cs_report *r;
	struct cs_file *f, *g;
	size_t i, n, off;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx *x = sample();

		if (cases[i].how == 1) {
			off = fx_block(x, CS_BLOCK_NOTE, (uint32_t)(sizeof(*nb) - 8));
			nb = fx_at(x, off);
			snprintf(nb->text, 16, "short");
		} else {
			off = fx_note(x, "first");
			nb = fx_at(x, off);
			if (cases[i].how == 2)
				memset(nb->text, 'y', sizeof(nb->text));
		}
		fx_note(x, "second");
		fx_note(x, "first"); /* said again by a forked child's generation */
		f = parse_sealed(x, cases[i].line, cases[i].damage);
		CU_ASSERT_FATAL(f->nnotes == (cases[i].how ? 2u : 3u));
		CU_ASSERT_STRING_EQUAL(f->notes[f->nnotes - 2]->text, "second");
		if (cases[i].how == 0) {
			/* Two files, the second without "second": first 2, second 1. */
			struct fx *y = sample();

			fx_note(y, "first");
			g = parse_sealed(y, __LINE__, "");
			r = cs_merge_new(CS_BY_CALLSITE);
			CU_ASSERT_FATAL(r != NULL);
			CU_ASSERT_EQUAL(cs_merge_add(r, f), 0);
			CU_ASSERT_EQUAL(cs_merge_add(r, g), 0);
			v = cs_merge_notes(r, &n);
			CU_ASSERT_FATAL(v != NULL && n == 2);
			CU_ASSERT(strcmp(v[0]->text, "first") == 0 && v[0]->nfiles == 2);
			CU_ASSERT(strcmp(v[1]->text, "second") == 0 && v[1]->nfiles == 1);
			free(v);
			cs_merge_free(r);
			cs_reader_free(g);
			fx_free(y);
		}
		cs_reader_free(f);
		fx_free(x);
	}
}

static void test_series_percentile(void)
{
	uint64_t h[CS_WHIST_BUCKETS] = {0};
	uint64_t v;

	CU_ASSERT_EQUAL(cs_series_percentile(h, 0, 0.5, 0, 0), 0);
	h[3] = 2;
	h[cs_whist_index(1000)] = 2;
	CU_ASSERT_EQUAL(cs_series_percentile(h, 4, 0.5, 3, 1000), 3);
	v = cs_series_percentile(h, 4, 0.99, 3, 1010);
	CU_ASSERT(v >= cs_whist_lower(cs_whist_index(1000)) && v <= 1010);
	CU_ASSERT_EQUAL(cs_series_percentile(h, 4, 0.99, 3, 1000), 1000); /* clamped */
	CU_ASSERT_EQUAL(cs_whist_index(15), 15);
	CU_ASSERT_EQUAL(cs_whist_lower(cs_whist_index(16)), 16);
	CU_ASSERT_EQUAL(cs_whist_lower(cs_whist_index(1000)), 960);
}

/* Files of one process among others' (cs_reader_copies): each is read
 * for the one that got furthest (more blocks, then finished), the first
 * of those alike; files of other processes and unread headers stay. */
static void test_copies(void)
{
	static const struct {
		int line;
		uint32_t pid;
		uint64_t used;
		uint32_t state;
		const char *program;
		size_t keep;
	} cases[] = {
		{__LINE__, 7, 100, CS_STATE_RUNNING, "/bin/a", 4}, /* snapshot */
		{__LINE__, 8, 100, CS_STATE_COMPLETE, "/bin/a", 1}, /* another pid */
		{__LINE__, 7, 100, CS_STATE_RUNNING, "/bin/b", 2}, /* another program */
		{__LINE__, 7, 100, CS_STATE_RUNNING, NULL, 3}, /* not read */
		{__LINE__, 7, 100 | CS_USED_SEALED, CS_STATE_COMPLETE, "/bin/a", 4},
		{__LINE__, 7, 100, CS_STATE_COMPLETE, "/bin/a", 4}, /* cp of 4 */
		{__LINE__, 7, 60, CS_STATE_COMPLETE, "/bin/a", 4}, /* older */
		{__LINE__, 8, 100, CS_STATE_COMPLETE, "/bin/a", 1}, /* cp of 1 */
	};
	enum { N = sizeof(cases) / sizeof(cases[0]) };
	struct cs_file_header h[N];
	const struct cs_file_header *hp[N];
	size_t keep[N], i;

	memset(h, 0, sizeof(h));
	for (i = 0; i < N; i++) {
		h[i].pid = cases[i].pid;
		h[i].ppid = 1;
		h[i].start_ns = 1000;
		h[i].session = 5;
		h[i].used = cases[i].used;
		h[i].state = cases[i].state;
		snprintf(h[i].program, sizeof(h[i].program), "%s",
			 cases[i].program ? cases[i].program : "");
		hp[i] = cases[i].program ? &h[i] : NULL;
	}
	CU_ASSERT_EQUAL_FATAL(cs_reader_copies(hp, NULL, N, keep), 0);
	for (i = 0; i < N; i++) {
		if (keep[i] != cases[i].keep)
			printf("\nline %d: keep %zu, want %zu\n", cases[i].line, keep[i],
			       cases[i].keep);
		CU_ASSERT_EQUAL(keep[i], cases[i].keep);
	}
	/* a start time of 0 (none): never a copy */
	h[1] = h[0];
	h[0].start_ns = h[1].start_ns = 0;
	CU_ASSERT_EQUAL_FATAL(cs_reader_copies(hp, NULL, 2, keep), 0);
	CU_ASSERT_EQUAL(keep[0], 0);
	CU_ASSERT_EQUAL(keep[1], 1);
	CU_ASSERT_EQUAL(cs_reader_copies(hp, NULL, 0, keep), 0);
}

int main(void)
{
	CU_pSuite s;
	unsigned fails;
	char cmd[128];

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	s = CU_add_suite("report_reader", NULL, NULL);
	CU_add_test(s, "round trip", test_round_trip);
	CU_add_test(s, "rejections and damage", test_rejections);
	CU_add_test(s, "crashed file", test_running_crashed);
	CU_add_test(s, "not a regular file", test_not_regular);
	CU_add_test(s, "truncations and mutations", test_mutations);
	CU_add_test(s, "nested and series blocks", test_nested_series_read);
	CU_add_test(s, "damaged nested and series blocks", test_nested_series_damage);
	CU_add_test(s, "window percentiles", test_series_percentile);
	CU_add_test(s, "refusal blocks", test_refusals);
	CU_add_test(s, "note blocks", test_notes);
	CU_add_test(s, "aggregates that cannot be their calls'", test_aggregates);
	CU_add_test(s, "copies of one process's file", test_copies);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fails++;
	return fails ? 1 : 0;
}
