/* SPDX-License-Identifier: MIT */
/* Units: branch targets of a module (branchscan.c): an exact target set,
 * the build-id cache in memory and on disk, a scan of this program. */
#include <CUnit/Basic.h>
#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shim/internal.h"

/* f1:	call f2; jmp 1f; nop
 * 1:	je f1; lea f2(%rip),%rax
 *	lea f1+0x1000(%rip),%rcx	(outside: not collected)
 *	jmp f1+0x2000			(outside: not collected)
 *	ret; .byte 0xe8			(data: f2 is found only from its start)
 * f2:	loop f2; jrcxz 2f
 * 2:	mov 0(%rip),%eax		(a load, not an address taken)
 *	ret; .byte 0x06			(undecodable: skipped)
 *	jmp f1+1 */
static const uint8_t code[] = {
	0xe8, 0x1a, 0x00, 0x00, 0x00, 0xeb, 0x01, 0x90, 0x74, 0xf6, 0x48, 0x8d, 0x05, 0x0e, 0x00,
	0x00, 0x00, 0x48, 0x8d, 0x0d, 0xe8, 0x0f, 0x00, 0x00, 0xe9, 0xe3, 0x1f, 0x00, 0x00, 0xc3,
	0xe8, 0xe2, 0xfe, 0xe3, 0x00, 0x8b, 0x05, 0x00, 0x00, 0x00, 0x00, 0xc3, 0x06, 0xeb, 0xd4};
#define F2 0x1f
static const uint64_t code_targets[] = {0x0, 0x1, 0x8, 0x1f, 0x23};
/* decoded from f1 only, 0xe8 swallows the start of f2 */
static const uint64_t code_targets_nostart[] = {0x0, 0x1, 0x8, 0x1f};

static const uint8_t build_id[] = {0xde, 0xad, 0xbe, 0xef, 0x01, 0x02};
static char cache_home[64];

/* Scans buf as one range, its function starts at 0 and F2. */
static int scan(const uint8_t *buf, const uint8_t *id, unsigned id_len, int disk, int with_starts,
		struct cs_branch_set *s)
{
	uint64_t b = (uint64_t)(uintptr_t)buf;
	uint64_t lo = b, hi = b + sizeof(code), starts[2] = {b, b + F2};

	return cs_branches_scan_ranges(&lo, &hi, 1, starts, with_starts ? 2 : 0, b, id, id_len,
				       disk, s);
}

static int same(const struct cs_branch_set *s, const uint8_t *buf, const uint64_t *want, size_t n)
{
	size_t i;

	if (s->n != n)
		return 0;
	for (i = 0; i < n; i++)
		if ((s->base + s->off[i]) != (uint64_t)(uintptr_t)buf + want[i])
			return 0;
	return 1;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_targets(void)
{
	struct cs_branch_set s;

	CU_ASSERT_EQUAL_FATAL(scan(code, NULL, 0, 0, 1, &s), 0);
	CU_ASSERT_TRUE(same(&s, code, code_targets, N(code_targets)));
	cs_branches_free(&s);
	CU_ASSERT_PTR_NULL(s.off);
	CU_ASSERT_EQUAL_FATAL(scan(code, NULL, 0, 0, 0, &s), 0);
	CU_ASSERT_TRUE(same(&s, code, code_targets_nostart, N(code_targets_nostart)));
	cs_branches_free(&s);
}

static void test_inside(void)
{
	uint64_t a[] = {10, 20, 30};
	struct cs_branch_set s = {.off = a, .n = 3};
	struct cs_branch_set none = {.off = NULL, .n = 0};
	/* Offsets from a load bias: address = base + offset. */
	struct cs_branch_set based = {.off = a, .n = 3, .base = 0x400000};

	CU_ASSERT_FALSE(cs_branches_inside(&s, 10, 20)); /* ends excluded */
	CU_ASSERT_TRUE(cs_branches_inside(&s, 10, 21));
	CU_ASSERT_TRUE(cs_branches_inside(&s, 9, 11));
	CU_ASSERT_FALSE(cs_branches_inside(&s, 0, 10));
	CU_ASSERT_TRUE(cs_branches_inside(&based, 0x400000 + 19, 0x400000 + 21));
	CU_ASSERT_FALSE(cs_branches_inside(&based, 19, 21));
	CU_ASSERT_FALSE(cs_branches_inside(&based, 0x400000 + 20, 0x400000 + 30));
	/* Loaded below its link address: the bias wraps ("negative"), the
	 * offsets are link-time addresses; the sums still land right. */
	{
		uint64_t link[] = {0x800000001010ull, 0x800000001020ull};
		struct cs_branch_set below = {.off = link, .n = 2, .base = (uint64_t)-0x7f0000000000ll};
		uint64_t at = 0x800000001010ull + below.base; /* 0x10000001010 */

		CU_ASSERT_EQUAL(at, 0x10000001010ull);
		CU_ASSERT_TRUE(cs_branches_inside(&below, at - 1, at + 1));
		CU_ASSERT_TRUE(cs_branches_inside(&below, at + 9, at + 0x11));
		CU_ASSERT_FALSE(cs_branches_inside(&below, at, at + 0x10));
		CU_ASSERT_FALSE(cs_branches_inside(&below, at + 0x10, at + 0x100));
	}
	CU_ASSERT_FALSE(cs_branches_inside(&s, 30, 100));
	CU_ASSERT_TRUE(cs_branches_inside(&s, 29, 100));
	CU_ASSERT_FALSE(cs_branches_inside(&s, 21, 29));
	CU_ASSERT_FALSE(cs_branches_inside(&none, 0, 100));
}

static void cache_file(char *path, size_t len)
{
	snprintf(path, len, "%s/cacheshim/branches-deadbeef0102.bin", cache_home);
}

/* Changes the code: jmp f1+1 becomes jmp f1+2. */
static void mutate(uint8_t *buf)
{
	buf[sizeof(code) - 1] = 0xd5;
}

static const uint64_t mutated_targets[] = {0x0, 0x2, 0x8, 0x1f, 0x23};

static void test_cache(void)
{
	uint8_t *a = malloc(sizeof(code)), *b = malloc(sizeof(code));
	struct cs_branch_set s;
	char path[128];
	struct stat st;
	FILE *f;

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	cache_file(path, sizeof(path));
	memcpy(a, code, sizeof(code));
	memcpy(b, code, sizeof(code));

	/* no disk: nothing written, but kept in memory */
	CU_ASSERT_EQUAL(scan(a, build_id, sizeof(build_id), 0, 1, &s), 0);
	cs_branches_free(&s);
	CU_ASSERT_EQUAL(stat(path, &st), -1);
	mutate(a);
	CU_ASSERT_EQUAL(scan(a, build_id, sizeof(build_id), 0, 1, &s), 0);
	CU_ASSERT_TRUE(same(&s, a, code_targets, N(code_targets)));
	cs_branches_free(&s);
	cs_branches_forget();

	/* written: 0600 in a 0700 directory */
	CU_ASSERT_EQUAL(scan(b, build_id, sizeof(build_id), 1, 1, &s), 0);
	CU_ASSERT_TRUE(same(&s, b, code_targets, N(code_targets)));
	cs_branches_free(&s);
	CU_ASSERT_EQUAL_FATAL(stat(path, &st), 0);
	CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
	CU_ASSERT_EQUAL(st.st_size, 8 + 4 + 4 + 64 + 8 + 8 + 8 * N(code_targets));
	{
		char dir[96];

		snprintf(dir, sizeof(dir), "%s/cacheshim", cache_home);
		CU_ASSERT_EQUAL(stat(dir, &st), 0);
		CU_ASSERT_EQUAL(st.st_mode & 0777, 0700);
	}

	/* read back from disk, at another load address: a holds other code
	 * now, so an equal result can only come from the cache */
	cs_branches_forget();
	CU_ASSERT_EQUAL(scan(a, build_id, sizeof(build_id), 1, 1, &s), 0);
	CU_ASSERT_TRUE(same(&s, a, code_targets, N(code_targets)));
	CU_ASSERT_PTR_NOT_NULL(s.map);
	cs_branches_free(&s);
	CU_ASSERT_PTR_NULL(s.map);

	/* what came from disk is not kept in memory (its mapping is gone with
	 * the set): the file, cut short now, is read again, found bad, and a
	 * scanned again */
	CU_ASSERT_EQUAL(truncate(path, 20), 0);
	CU_ASSERT_EQUAL(scan(a, build_id, sizeof(build_id), 1, 1, &s), 0);
	CU_ASSERT_TRUE(same(&s, a, mutated_targets, N(mutated_targets)));
	cs_branches_free(&s);

	/* a damaged body is ignored: scanned again (and rewritten) */
	f = fopen(path, "r+b");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fseek(f, -3, SEEK_END);
	fputc(0x55, f);
	fclose(f);
	cs_branches_forget();
	CU_ASSERT_EQUAL(scan(a, build_id, sizeof(build_id), 1, 1, &s), 0);
	CU_ASSERT_TRUE(same(&s, a, mutated_targets, N(mutated_targets)));
	cs_branches_free(&s);

	/* the rewritten file holds the new result */
	cs_branches_forget();
	CU_ASSERT_EQUAL(scan(b, build_id, sizeof(build_id), 1, 1, &s), 0);
	CU_ASSERT_TRUE(same(&s, b, mutated_targets, N(mutated_targets)));
	cs_branches_free(&s);

	/* truncated, bad magic: ignored */
	CU_ASSERT_EQUAL(truncate(path, 20), 0);
	cs_branches_forget();
	CU_ASSERT_EQUAL(scan(b, build_id, sizeof(build_id), 1, 1, &s), 0);
	CU_ASSERT_TRUE(same(&s, b, code_targets, N(code_targets)));
	cs_branches_free(&s);
	f = fopen(path, "r+b");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputc('X', f);
	fclose(f);
	cs_branches_forget();
	CU_ASSERT_EQUAL(scan(a, build_id, sizeof(build_id), 1, 1, &s), 0);
	CU_ASSERT_TRUE(same(&s, a, mutated_targets, N(mutated_targets)));
	cs_branches_free(&s);

	/* an unwritable cache directory: silently scanned */
	cs_branches_forget();
	CU_ASSERT_EQUAL(unlink(path), 0);
	{
		char dir[96];

		snprintf(dir, sizeof(dir), "%s/cacheshim", cache_home);
		CU_ASSERT_EQUAL(rmdir(dir), 0);
		CU_ASSERT_EQUAL(symlink("/nonexistent", dir), 0);
		CU_ASSERT_EQUAL(scan(b, build_id, sizeof(build_id), 1, 1, &s), 0);
		CU_ASSERT_TRUE(same(&s, b, code_targets, N(code_targets)));
		cs_branches_free(&s);
		CU_ASSERT_EQUAL(unlink(dir), 0);
	}
	cs_branches_forget();
	free(a);
	free(b);
}

/* Random bytes, two ranges, random starts (some outside the ranges):
 * the result is sorted, unique and inside the ranges. */
static void test_random(void)
{
	static uint8_t buf[65536];
	uint64_t seed = 0x243f6a8885a308d3ull, b = (uint64_t)(uintptr_t)buf;
	uint64_t lo[2] = {b, b + 40000}, hi[2] = {b + 30000, b + sizeof(buf)}, starts[64];
	struct cs_branch_set s;
	size_t i, j, bad = 0;

	for (i = 0; i < sizeof(buf); i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		buf[i] = (uint8_t)(seed >> 56);
	}
	for (i = 0; i < 64; i++)
		starts[i] = b + i * 1100 - 500;
	CU_ASSERT_EQUAL_FATAL(cs_branches_scan_ranges(lo, hi, 2, starts, 64, b, NULL, 0, 0, &s), 0);
	CU_ASSERT(s.n > 0);
	for (i = 0; i < s.n; i++) {
		int in = 0;

		for (j = 0; j < 2; j++)
			in |= (s.base + s.off[i]) >= lo[j] && (s.base + s.off[i]) < hi[j];
		bad += !in || (i && (s.base + s.off[i]) <= (s.base + s.off[i - 1]));
	}
	CU_ASSERT_EQUAL(bad, 0);
	cs_branches_free(&s);
}

/* Called directly from test_module, so its start is a branch target. */
static __attribute__((noinline)) int known_callee(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 3 + 1;
}

struct exec_ranges {
	uint64_t lo[8], hi[8];
	unsigned n;
};

static int main_program(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct exec_ranges *r = arg;
	int i;

	/* the first module is the program */
	for (i = 0; i < info->dlpi_phnum && r->n < 8; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			r->lo[r->n] = info->dlpi_addr + ph->p_vaddr;
			r->hi[r->n++] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		}
	}
	return 1;
}

static void test_module(void)
{
	struct exec_ranges r = {{0}, {0}, 0};
	struct cs_branch_set s;
	uint64_t known = (uint64_t)(uintptr_t)known_callee;
	volatile int arg = 4; /* no constant to clone the callee for */
	volatile int v = known_callee(arg);
	size_t i;
	int found = 0;

	CU_ASSERT_EQUAL(v, 13);
	dl_iterate_phdr(main_program, &r);
	CU_ASSERT_FATAL(r.n >= 1);
	CU_ASSERT_EQUAL_FATAL(cs_branches_scan_ranges(r.lo, r.hi, r.n, NULL, 0, 0, NULL, 0, 0, &s),
			      0);
	CU_ASSERT(s.n > 100);
	for (i = 0; i < s.n; i++) {
		found += (s.base + s.off[i]) == known;
		CU_ASSERT(i == 0 || (s.base + s.off[i]) > (s.base + s.off[i - 1]));
	}
	CU_ASSERT_EQUAL(found, 1);
	CU_ASSERT_TRUE(cs_branches_inside(&s, known - 1, known + 1));
	cs_branches_free(&s);
}

static int setup(void)
{
	snprintf(cache_home, sizeof(cache_home), "/tmp/cs-branchscan.XXXXXX");
	if (!mkdtemp(cache_home))
		return 1;
	return setenv("XDG_CACHE_HOME", cache_home, 1);
}

static int teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cache_home);
	return system(cmd) ? 1 : 0;
}

int main(void)
{
	CU_pSuite suite;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite("branchscan", setup, teardown);
	CU_add_test(suite, "exact targets", test_targets);
	CU_add_test(suite, "inside", test_inside);
	CU_add_test(suite, "build-id cache", test_cache);
	CU_add_test(suite, "random bytes", test_random);
	CU_add_test(suite, "this program", test_module);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
