/* SPDX-License-Identifier: MIT */
/* Drives the awkward entries of awkward.S by direct calls and checks what
 * each returns.
 *
 * Usage: prog_awkward K [DEPTH]   calls every aw_* function a known number
 *          of times (K, or K per branch), prints one "calls NAME N" line per
 *          function with that exact number, and "FAIL ..." lines plus exit
 *          status 1 on a wrong result or a clobbered register.
 *        prog_awkward --peek NAME...   prints the first 9 bytes of each
 *          named function as it is in memory now (an entry patch shows).
 *        prog_awkward --selftest   the register check must see what
 *          awh_clobber changes: prints the failures, exits 0 if all 5 seen.
 *        prog_awkward --tailrec N   one call of aw_tailrec(N): N jumps to
 *          its own entry.
 */
#include <cpuid.h>
#include <execinfo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* awkward.S; hidden, so every call below is a direct call. */
#define HIDDEN __attribute__((visibility("hidden")))
HIDDEN int aw_riprel(void);
HIDDEN void aw_len1(void);
HIDDEN int aw_len2(int x);
HIDDEN int aw_len3(int x);
HIDDEN int aw_len4(int x);
HIDDEN int aw_short2(int x);
HIDDEN int aw_after_short(int x);
HIDDEN int aw_jcc(int x);
HIDDEN int aw_victim(int x);
HIDDEN int aw_intruder(int x);
HIDDEN int aw_endbr(int x);
HIDDEN int aw_tail_a(int x);
HIDDEN int aw_tail_b(int x);
HIDDEN long aw_tailrec(long n);
HIDDEN int aw_rec(int n);
HIDDEN long aw_va(int a, ...);
HIDDEN void *aw_callfirst(void);
HIDDEN int aw_callbt(void);
HIDDEN int aw_jrcxz(int x);
HIDDEN int aw_loop(int x);
HIDDEN int aw_xbegin(void);
HIDDEN int aw_indjmp(int x);
HIDDEN long aw_ident(long x);
HIDDEN long aw_ident_endbr(long x);
HIDDEN long aw_riprel_ro(void);
HIDDEN void awh_sentinel(void *fn, int avx);
HIDDEN void awh_clobber(void);
extern HIDDEN int aw_counter;
extern HIDDEN long aw_constant;

struct aw_state {
	uint64_t gpr[16]; /* rax rbx rcx rdx rsi rdi rbp rsp r8..r15 */
	uint8_t vec[16][32]; /* ymm0-15 (xmm: the low 16 bytes) */
	uint32_t mxcsr;
	uint16_t fcw;
	uint16_t pad;
	uint64_t rflags;
	uint64_t rsp; /* rsp just before the call */
};
_Static_assert(sizeof(struct aw_state) == 664, "layout of awkward.S");
extern HIDDEN struct aw_state awh_in, awh_out;

static int failures;

/* The sentinel of general register i (rax = 0 ... r15 = 15). */
static uint64_t gpr_sentinel(int i)
{
	return 0x5a00000000000000ull | (uint64_t)(i + 1) << 40 | (uint64_t)(0xc0de + i) << 8 |
	       (uint64_t)i;
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL %s:%d: ", __func__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			putchar('\n');                                                             \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* AVX usable: CPUID says so and the OS saves ymm (XCR0 bits 1 and 2). */
static int have_avx(void)
{
	unsigned a, b, c, d, lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_AVX) || !(c & bit_OSXSAVE))
		return 0;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return (lo & 6) == 6;
}

static const char *const gpr_names[16] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi",
					  "rbp", "rsp", "r8",  "r9",  "r10", "r11",
					  "r12", "r13", "r14", "r15"};

/* Calls fn through awh_sentinel with every register set to a distinct
 * value and checks that the call changed rax only (to want_rax), and no
 * vector register (ymm upper halves included with AVX), MXCSR, the x87
 * control word, nor DF.  Arithmetic flags are not checked: every call may
 * clobber them. */
static void sentinel(const char *name, void *fn, uint64_t rdi, uint64_t want_rax, int avx)
{
	int i, j;

	memset(&awh_in, 0, sizeof(awh_in));
	for (i = 0; i < 16; i++)
		awh_in.gpr[i] = gpr_sentinel(i);
	awh_in.gpr[5] = rdi;
	for (i = 0; i < 16; i++)
		for (j = 0; j < 32; j++)
			awh_in.vec[i][j] = (uint8_t)(i * 37 + j * 11 + 1);
	awh_in.mxcsr = 0xbfc0; /* round down, FTZ, DAZ (default 0x1f80) */
	awh_in.fcw = 0x0a7f; /* round up, 53-bit precision (default 0x037f) */
	memset(&awh_out, 0, sizeof(awh_out));
	awh_sentinel(fn, avx);

	CHECK(awh_out.gpr[0] == want_rax, "%s: rax %#llx, want %#llx", name,
	      (unsigned long long)awh_out.gpr[0], (unsigned long long)want_rax);
	CHECK(awh_out.gpr[7] == awh_in.rsp, "%s: rsp %#llx after the call, %#llx before", name,
	      (unsigned long long)awh_out.gpr[7], (unsigned long long)awh_in.rsp);
	for (i = 1; i < 16; i++)
		if (i != 7)
			CHECK(awh_out.gpr[i] == awh_in.gpr[i], "%s: %s %#llx, want %#llx", name,
			      gpr_names[i], (unsigned long long)awh_out.gpr[i],
			      (unsigned long long)awh_in.gpr[i]);
	for (i = 0; i < 16; i++)
		CHECK(!memcmp(awh_out.vec[i], awh_in.vec[i], avx ? 32 : 16), "%s: %smm%d changed",
		      name, avx ? "y" : "x", i);
	CHECK(awh_out.mxcsr == awh_in.mxcsr, "%s: MXCSR %#x, want %#x", name, awh_out.mxcsr,
	      awh_in.mxcsr);
	CHECK(awh_out.fcw == awh_in.fcw, "%s: x87 control word %#x, want %#x", name, awh_out.fcw,
	      awh_in.fcw);
	CHECK(!(awh_out.rflags & 0x400), "%s: DF set after the call", name);
}

/* Called by aw_callbt (from its window): the unwinder must walk from here
 * through aw_callbt's original code (return address aw_callbt + 9) to
 * awh_bt_root, through whatever the shim put between them. */
__attribute__((noinline)) int awh_bt_root(void);
HIDDEN int awh_bt(void)
{
	void *f[64];
	int n = backtrace(f, 64), i, seen_callbt = -1, seen_root = -1;

	for (i = 0; i < n; i++) {
		if (f[i] == (char *)aw_callbt + 9 && seen_callbt < 0)
			seen_callbt = i;
		if ((char *)f[i] > (char *)awh_bt_root && (char *)f[i] < (char *)awh_bt_root + 64 &&
		    seen_root < 0)
			seen_root = i;
	}
	return seen_callbt > 0 && seen_root > seen_callbt;
}

__attribute__((noinline)) int awh_bt_root(void)
{
	int r = aw_callbt();

	__asm__ volatile("" ::: "memory"); /* no tail call: a frame of its own */
	return r;
}

static int peek(int argc, char **argv)
{
	static const struct {
		const char *name;
		const void *addr;
	} fns[] = {
#define F(n) {#n, (const void *)n}
		F(aw_riprel),	 F(aw_len1),	   F(aw_len2),	     F(aw_len3),     F(aw_len4),
		F(aw_short2),	 F(aw_after_short), F(aw_jcc),	     F(aw_victim),   F(aw_intruder),
		F(aw_endbr),	 F(aw_tail_a),	   F(aw_tail_b),     F(aw_tailrec),  F(aw_rec),
		F(aw_va),	 F(aw_callfirst),  F(aw_jrcxz),	     F(aw_indjmp),   F(aw_ident),
		F(aw_ident_endbr), F(aw_riprel_ro), F(aw_loop), F(aw_xbegin), F(aw_callbt),
#undef F
	};
	int i, k;
	size_t j;

	for (i = 2; i < argc; i++) {
		for (j = 0; j < sizeof(fns) / sizeof(fns[0]); j++)
			if (!strcmp(argv[i], fns[j].name))
				break;
		if (j == sizeof(fns) / sizeof(fns[0])) {
			fprintf(stderr, "no function %s\n", argv[i]);
			return 2;
		}
		printf("%s", argv[i]);
		for (k = 0; k < 9; k++)
			printf(" %02x", ((const unsigned char *)fns[j].addr)[k]);
		putchar('\n');
	}
	return 0;
}

int main(int argc, char **argv)
{
	long k, i, depth = 50;
	int avx = have_avx();

	if (argc >= 2 && !strcmp(argv[1], "--peek"))
		return peek(argc, argv);
	if (argc == 2 && !strcmp(argv[1], "--selftest")) {
		/* rbx, xmm9, MXCSR, control word, DF: 5 failures, no more. */
		sentinel("awh_clobber", (void *)awh_clobber, 3, gpr_sentinel(0), 0);
		printf("selftest: %d failures, want 5\n", failures);
		return failures != 5;
	}
	if (argc == 3 && !strcmp(argv[1], "--tailrec")) {
		long r = aw_tailrec(atol(argv[2]));

		printf("aw_tailrec %ld\n", r);
		return r != 0;
	}
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s K [DEPTH]\n", argv[0]);
		return 2;
	}
	k = atol(argv[1]);
	if (argc == 3)
		depth = atol(argv[2]);

	for (i = 0; i < k; i++) {
		int before = aw_counter;

		CHECK(aw_riprel() == before + 1, "aw_riprel: counter %d", aw_counter);
		aw_len1();
		CHECK(aw_len2((int)i) == i, "aw_len2(%ld)", i);
		CHECK(aw_len3((int)i) == i, "aw_len3(%ld)", i);
		CHECK(aw_len4((int)i) == i + 1, "aw_len4(%ld)", i);
		CHECK(aw_short2((int)i) == i, "aw_short2(%ld)", i);
		CHECK(aw_after_short((int)i) == i + 2, "aw_after_short(%ld)", i);
		/* Both ways out of the jcc: k calls each. */
		CHECK(aw_jcc((int)i) == i + 1, "aw_jcc(%ld)", i);
		CHECK(aw_jcc((int)-i - 1) == -1, "aw_jcc(%ld)", -i - 1);
		CHECK(aw_victim((int)i) == i + 3, "aw_victim(%ld)", i);
		CHECK(aw_intruder((int)i) == i + 3, "aw_intruder(%ld)", i);
		CHECK(aw_endbr((int)i) == i + 5, "aw_endbr(%ld)", i);
		CHECK(aw_tail_a((int)i) == i + 11, "aw_tail_a(%ld)", i);
		CHECK(aw_tail_b((int)i) == i + 10, "aw_tail_b(%ld)", i);
		CHECK(aw_tailrec(3) == 0, "aw_tailrec(3)");
		CHECK(aw_rec((int)depth) == depth, "aw_rec(%ld)", depth);
		/* gcc and clang set al to the number of vector registers used. */
		CHECK(aw_va(1, 2, 3, 4, 5, (int)i, 1.5, 2.5) == 2 * 65536 + 15 + i, "aw_va al=2");
		CHECK(aw_va(1, 2, 3, 4, 5, 6) == 21, "aw_va al=0");
		CHECK(aw_callfirst() == (char *)aw_callfirst + 5, "aw_callfirst: return address %p",
		      aw_callfirst());
		CHECK(awh_bt_root() == 1, "aw_callbt: backtrace(3) does not pass aw_callbt + 9 "
					  "and then awh_bt_root");
		CHECK(aw_jrcxz((int)i) == (i != 0), "aw_jrcxz(%ld)", i);
		CHECK(aw_indjmp((int)i) == i, "aw_indjmp(%ld)", i);
		CHECK(aw_loop((int)i) == i, "aw_loop(%ld)", i);
		sentinel("aw_ident", (void *)aw_ident, 0x1d1d1d1d1d1d1d1dull, 0x1d1d1d1d1d1d1d1dull,
			 0);
		sentinel("aw_ident_endbr", (void *)aw_ident_endbr, 0x2e2e2e2e2e2e2e2eull,
			 0x2e2e2e2e2e2e2e2eull, 0);
		sentinel("aw_riprel_ro", (void *)aw_riprel_ro, 7, (uint64_t)aw_constant, 0);
		/* Relocated jcc and call in the window: rax only changes. */
		sentinel("aw_jcc", (void *)aw_jcc, 7, 8, 0);
		sentinel("aw_callfirst", (void *)aw_callfirst, 9,
			 (uint64_t)(uintptr_t)((char *)aw_callfirst + 5), 0);
		/* aw_len1 touches nothing: rax keeps its sentinel too. */
		sentinel("aw_len1", (void *)aw_len1, 8, gpr_sentinel(0), 0);
		if (avx) {
			sentinel("aw_ident/avx", (void *)aw_ident, 9, 9, 1);
			sentinel("aw_len1/avx", (void *)aw_len1, 10, gpr_sentinel(0), 1);
		}
	}
	/* The calls, by function (aw_callfirst is called twice when its check
	 * fails: only a passing run's counts matter). */
	printf("calls aw_riprel %ld\n", k);
	printf("calls aw_len1 %ld\n", k * (avx ? 3 : 2));
	printf("calls aw_len2 %ld\n", k);
	printf("calls aw_len3 %ld\n", k);
	printf("calls aw_len4 %ld\n", k);
	printf("calls aw_short2 %ld\n", k);
	printf("calls aw_after_short %ld\n", k);
	printf("calls aw_jcc %ld\n", 3 * k);
	printf("calls aw_victim %ld\n", k);
	printf("calls aw_intruder %ld\n", k);
	printf("calls aw_endbr %ld\n", k);
	printf("calls aw_tail_a %ld\n", k);
	printf("calls aw_tail_b %ld\n", 2 * k);
	printf("calls aw_tailrec %ld\n", 4 * k);
	printf("calls aw_rec %ld\n", (depth + 1) * k);
	printf("calls aw_va %ld\n", 2 * k);
	printf("calls aw_callfirst %ld\n", 2 * k);
	printf("calls aw_callbt %ld\n", k);
	printf("calls aw_jrcxz %ld\n", k);
	printf("calls aw_indjmp %ld\n", k);
	printf("calls aw_loop %ld\n", k);
	printf("calls aw_xbegin 0\n"); /* a target never called */
	printf("calls aw_ident %ld\n", k * (avx ? 2 : 1));
	printf("calls aw_ident_endbr %ld\n", k);
	printf("calls aw_riprel_ro %ld\n", k);
	printf("avx %d\n", avx);
	if (failures)
		printf("%d failures\n", failures);
	return failures ? 1 : 0;
}
