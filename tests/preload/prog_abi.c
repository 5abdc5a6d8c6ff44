/* SPDX-License-Identifier: MIT */
/* Calls every libcstarget function with distinctive values, checks each
 * result exactly and prints how often each function was called.
 *
 * Usage: prog_abi.  Prints one "ok"/"FAIL" line per check, then one
 * "calls NAME N" line per function (N counts the calls the library makes
 * to its own exported functions too), exits 0 only if every check passed.
 * The checks run twice: in the main thread and in a second thread, because
 * the first wrapped call of a thread takes the shim's slow path. */
#include <complex.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tests/preload/cstarget.h"
#include "tests/preload/prog_abi.h"

static int failures;
static int pass_no;

static struct {
	const char *name;
	long n;
} counts[] = {
	{"cs_touch_pages", 0}, {"cs_args10", 0},      {"cs_mix_dbl", 0},    {"cs_mix_stack", 0},
	{"cs_sum_var", 0},     {"cs_sum_var_dbl", 0}, {"cs_floats", 0},	    {"cs_ret_pair", 0},
	{"cs_ret_vec2", 0},    {"cs_ret_mixed", 0},   {"cs_ret_big", 0},    {"cs_ld", 0},
	{"cs_ret_cld", 0},     {"cs_i128", 0},	      {"cs_i128_stack", 0}, {"cs_byval", 0},
	{"cs_ret_ptr", 0},     {"cs_fail_errno", 0},  {"cs_recurse", 0},    {"cs_recurse_step", 0},
	{"cs_outer", 0},       {"cs_inner", 0},	      {"cs_apply", 0},	    {"cs_avx", 0},
};

void abi_called(const char *name, long n)
{
	size_t i;

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		if (!strcmp(counts[i].name, name)) {
			counts[i].n += n;
			return;
		}
	}
	printf("FAIL internal: no counter for %s\n", name);
	failures++;
}

void abi_result(const char *what, int ok, const char *got, const char *want)
{
	if (ok) {
		printf("[%d] ok   %s\n", pass_no, what);
	} else {
		printf("[%d] FAIL %s: got %s, want %s\n", pass_no, what, got, want);
		failures++;
	}
}

static void check_long(const char *what, long got, long want)
{
	char g[32], w[32];

	snprintf(g, sizeof(g), "%ld", got);
	snprintf(w, sizeof(w), "%ld", want);
	abi_result(what, got == want, g, w);
}

/* %a: exact, so a wrong last bit shows in the message too. */
static void check_dbl(const char *what, double got, double want)
{
	char g[40], w[40];

	snprintf(g, sizeof(g), "%a", got);
	snprintf(w, sizeof(w), "%a", want);
	abi_result(what, got == want, g, w);
}

static void check_ld(const char *what, long double got, long double want)
{
	char g[48], w[48];

	snprintf(g, sizeof(g), "%La", got);
	snprintf(w, sizeof(w), "%La", want);
	abi_result(what, got == want, g, w);
}

static void check_i128(const char *what, __int128 got, __int128 want)
{
	char g[48], w[48];

	snprintf(g, sizeof(g), "0x%016llx%016llx",
		 (unsigned long long)((unsigned __int128)got >> 64), (unsigned long long)got);
	snprintf(w, sizeof(w), "0x%016llx%016llx",
		 (unsigned long long)((unsigned __int128)want >> 64), (unsigned long long)want);
	abi_result(what, got == want, g, w);
}

static void check_errno(const char *what, int got, int want)
{
	abi_result(what, got == want, strerror(got), strerror(want));
}

/* The program's own function, called back from inside a wrapped call; it
 * makes a wrapped call itself. */
static long callback(long x)
{
	return cs_inner(x) + 1;
}

static void test_mix_dbl(void)
{
	double r;

	/* Preset errno: the shim's slow path (counter set-up, which may fail
	 * for hardware events) must not leak its errno into the program. */
	errno = EILSEQ;
	r = cs_mix_dbl(1.5, 7, -2.25, 0.125, -11, 1024.0, -0.0625, 3.75, 13, -8.5, 0.03125);
	check_errno("cs_mix_dbl errno untouched (first call)", errno, EILSEQ);
	abi_called("cs_mix_dbl", 1);
	check_dbl("cs_mix_dbl", r,
		  1.5 + 2 * -2.25 + 3 * 0.125 + 4 * 1024.0 + 5 * -0.0625 + 6 * 3.75 + 7 * -8.5 +
			  8 * 0.03125 + 100.0 * 7 + 1000.0 * -11 + 10000.0 * 13);
}

static void test_ints(void)
{
	long r;

	r = cs_args10(101, -202, 303, -404, 505, -606, 707, -808, 909, -1010);
	abi_called("cs_args10", 1);
	check_long("cs_args10 (4 stack args)", r,
		   101 + 2 * -202 + 3 * 303 + 4 * -404 + 5 * 505 + 6 * -606 + 7 * 707 + 8 * -808 +
			   9 * 909 + 10 * -1010);

	r = cs_sum_var(0);
	check_long("cs_sum_var n=0", r, 0);
	r = cs_sum_var(3, 11L, -22L, 33L);
	check_long("cs_sum_var n=3", r, 11 + 2 * -22 + 3 * 33);
	r = cs_sum_var(20, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L, 16L,
		       17L, 18L, 19L, 20L);
	check_long("cs_sum_var n=20 (15 stack args)", r, 2870);
	r = cs_sum_var(32, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L, 14L, 15L, 16L,
		       17L, 18L, 19L, 20L, 21L, 22L, 23L, 24L, 25L, 26L, 27L, 28L, 29L, 30L, 31L,
		       -32L);
	/* sum i^2 for i = 1..31, then 32 * -32 */
	check_long("cs_sum_var n=32 (27 stack args, 216 bytes)", r, 10416 - 1024);
	abi_called("cs_sum_var", 4);
}

static void test_floats(void)
{
	struct cs_vec2 v;
	struct cs_mixed m;
	double d;
	float f;

	d = cs_mix_stack(0.5, 1, 1.5, -2, 2.5, 3, 3.5, -4, 4.5, 5, 5.5, -6, 6.5, 7.5, 8.5, 7, -9.5);
	abi_called("cs_mix_stack", 1);
	check_dbl("cs_mix_stack (3 stack args)", d,
		  0.5 + 2 * 1.5 + 3 * 2.5 + 4 * 3.5 + 5 * 4.5 + 6 * 5.5 + 7 * 6.5 + 8 * 7.5 +
			  9 * 8.5 + 10 * -9.5 +
			  (double)(1 + 3 * -2 + 5 * 3 + 7 * -4 + 11 * 5 + 13 * -6 + 17 * 7));

	d = cs_sum_var_dbl(3, 0.25, -1.75, 64.0);
	check_dbl("cs_sum_var_dbl n=3", d, 0.25 + 2 * -1.75 + 3 * 64.0);
	d = cs_sum_var_dbl(10, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, -10.5);
	check_dbl("cs_sum_var_dbl n=10 (2 stack args)", d, 285.0 - 10 * 10.5);
	abi_called("cs_sum_var_dbl", 2);

	f = cs_floats(1.25f, -3.5f, 0.0625, 100.5f);
	abi_called("cs_floats", 1);
	check_dbl("cs_floats", f, (float)(1.25f + 2 * -3.5f + 4 * 0.0625 + 8 * 100.5f));

	v = cs_ret_vec2(3.25, -6.5);
	abi_called("cs_ret_vec2", 1);
	check_dbl("cs_ret_vec2 .x (xmm0)", v.x, 6.5);
	check_dbl("cs_ret_vec2 .y (xmm1)", v.y, -7.5);

	m = cs_ret_mixed(-41, 0.75);
	abi_called("cs_ret_mixed", 1);
	check_long("cs_ret_mixed .i (rax)", m.i, -40);
	check_dbl("cs_ret_mixed .d (xmm0)", m.d, 3.0);
}

static void test_memory(void)
{
	struct cs_blob96 blob;
	struct cs_big big;
	struct cs_pair p;
	long r, want;
	char buf[16];
	int i;

	p = cs_ret_pair(0x1234567, -0x7654321);
	abi_called("cs_ret_pair", 1);
	check_long("cs_ret_pair .a (rax)", p.a, 0x1234567 * 3);
	check_long("cs_ret_pair .b (rdx)", p.b, -0x7654321 - 7);

	big = cs_ret_big(1000003);
	abi_called("cs_ret_big", 1);
	for (i = 0, r = 0; i < 9; i++)
		r += big.v[i] != 1000003L * (i + 1) + i;
	check_long("cs_ret_big (72 bytes via hidden pointer), elements wrong", r, 0);

	for (i = 0, want = 1000 * -77; i < 12; i++) {
		blob.v[i] = (i % 2 ? -1 : 1) * (i + 1) * 1111L;
		want += (i + 1) * blob.v[i];
	}
	r = cs_byval(blob, -77);
	abi_called("cs_byval", 1);
	check_long("cs_byval (96-byte struct on the stack)", r, want);

	r = (long)(cs_ret_ptr(buf, 5) - buf);
	abi_called("cs_ret_ptr", 1);
	check_long("cs_ret_ptr offset", r, 5);

	r = cs_touch_pages(2);
	abi_called("cs_touch_pages", 1);
	check_long("cs_touch_pages", r, 2);
}

static void test_wide(void)
{
	const long double a = 1.0L + 0x1p-60L; /* not representable in double */
	_Complex long double z;
	__int128 x, y;

	check_ld("cs_ld (stack args, st0)", cs_ld(a, -0.5L, 3), 2.5L + 3 * 0x1p-60L);
	abi_called("cs_ld", 1);

	z = cs_ret_cld(a, -0x1p-62L);
	abi_called("cs_ret_cld", 1);
	check_ld("cs_ret_cld real (st0)", creall(z), 2.0L + 0x1p-59L);
	check_ld("cs_ret_cld imag (st1)", cimagl(z), -1.0L - 0x1p-62L);

	x = ((__int128)0x0123456789abcdefLL << 64) | 0x0fedcba987654321ULL;
	y = -((__int128)0x1111111111111111LL << 64) + 5;
	check_i128("cs_i128 (rdi:rsi, rdx:rcx, rax:rdx)", cs_i128(x, y), x * 3 + y);
	abi_called("cs_i128", 1);

	check_i128("cs_i128_stack (aligned stack slot)", cs_i128_stack(1, -2, 3, -4, 5, -6, 7, x),
		   x + (1 - 4 + 9 - 16 + 25 - 36 + 49));
	abi_called("cs_i128_stack", 1);
}

static void test_control(void)
{
	long r;

	errno = 0;
	r = cs_fail_errno(ERANGE);
	check_errno("cs_fail_errno sets errno", errno, ERANGE);
	abi_called("cs_fail_errno", 1);
	check_long("cs_fail_errno returns", r, -1);

	errno = EXDEV;
	r = cs_inner(-12);
	check_errno("errno untouched across cs_inner", errno, EXDEV);
	abi_called("cs_inner", 1);
	check_long("cs_inner", r, 144);

	r = cs_recurse(5);
	abi_called("cs_recurse", 6);
	abi_called("cs_recurse_step", 5);
	check_long("cs_recurse 5 (11 nested wrapped calls)", r, 15);

	r = cs_outer(7);
	abi_called("cs_outer", 1);
	abi_called("cs_inner", 2);
	check_long("cs_outer (nested wrapped calls)", r, 49 + 64);

	r = cs_apply(callback, 10, 3);
	abi_called("cs_apply", 1);
	abi_called("cs_inner", 3);
	check_long("cs_apply (callback making wrapped calls)", r, 101 + 122 + 145);
}

static void run_all(int avx_first)
{
	int avx = __builtin_cpu_supports("avx");

	pass_no++;
	if (avx && avx_first)
		abi_check_avx();
	test_mix_dbl();
	test_ints();
	test_floats();
	test_memory();
	test_wide();
	test_control();
	if (avx && !avx_first)
		abi_check_avx();
}

static void *thread_main(void *arg)
{
	run_all(1);
	return NULL;
}

int main(void)
{
	pthread_t th;
	size_t i;
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	run_all(0);
	err = pthread_create(&th, NULL, thread_main, NULL);
	if (err) {
		printf("FAIL pthread_create: %s\n", strerror(err));
		return 1;
	}
	pthread_join(th, NULL);

	for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		printf("calls %s %ld\n", counts[i].name, counts[i].n);
	printf("%s: %d failed\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
