/* SPDX-License-Identifier: MIT */
/* Static functions called directly, for entry patching (issue 8).
 * test_corpus.sh compiles this file at test time with gcc and clang at
 * several -O levels, as PIE, non-PIE and as a -fPIC shared library (with
 * -DCORPUS_LIB: corpus_run is then called by corpus_main.c), with and
 * without -fcf-protection and -fpatchable-function-entry.
 *
 * Usage: corpus K [PAGES [--check]]   calls every cp_* function a known
 * number of times, prints results (compared with an unprofiled run) and
 * one "calls NAME N" line per function: the exact number of calls made.
 * With --check it fails unless every cp_touch call made exactly PAGES page
 * faults (getrusage), the premise of the PAGE-FAULTS check.
 *
 * Each cp_* function bumps its own volatile counter, so no compiler may
 * drop or merge a call (the count printed is the count of calls made).
 * noinline keeps them out of line; noclone is left off cp_scale and
 * cp_isra so that gcc makes its .constprop/.isra clones at -O2 (the test
 * looks for them with nm before it relies on them). */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define KEEP __attribute__((noinline, noclone))
#if defined(__clang__)
#undef KEEP
#define KEEP __attribute__((noinline))
#endif
#define CLONABLE __attribute__((noinline))

enum { C_ADD, C_SCALE, C_ISRA, C_REC, C_VA, C_VAD, C_TOUCH, C_SWITCH, C_LOOP, C_TAIL_A, C_TAIL_B,
       C_FP, C_STRUCT, C_MANY, C_VIAPTR, C_COLD, C_WALK, C_N };
static const char *const names[C_N] = {
	"cp_add",  "cp_scale", "cp_isra",   "cp_rec",	 "cp_va",     "cp_vad",	   "cp_touch",
	"cp_switch", "cp_loop", "cp_tail_a", "cp_tail_b", "cp_fp", "cp_struct", "cp_many", "cp_viaptr", "cp_cold",
	"cp_walk",
};
static volatile long counts[C_N];
static volatile long sink;
static long page_size;

KEEP static long cp_add(long a, long b)
{
	counts[C_ADD]++;
	return a + b;
}

/* Always called with k == 3: gcc -O2 makes cp_scale.constprop.0. */
CLONABLE static long cp_scale(long x, long k)
{
	counts[C_SCALE]++;
	return x * k + (x >> 2);
}

struct big {
	long a, b, c, d, e, f;
};
/* Reads one field of the struct it is passed by value: gcc -O2 makes
 * cp_isra.isra.0. */
CLONABLE static long cp_isra(struct big p)
{
	counts[C_ISRA]++;
	return p.c * 5;
}

/* Recursion that stays recursion: the volatile store after the call keeps
 * it out of tail position, so n + 1 calls for n >= 0. */
KEEP static long cp_rec(long n)
{
	long r;

	counts[C_REC]++;
	if (n <= 0)
		return 0;
	r = cp_rec(n - 1);
	sink = r;
	return r + n;
}

KEEP static long cp_va(int n, ...)
{
	va_list ap;
	long s = 0;

	counts[C_VA]++;
	va_start(ap, n);
	while (n-- > 0)
		s = s * 3 + va_arg(ap, int);
	va_end(ap);
	return s;
}

/* Doubles: the caller passes them in xmm registers and al. */
KEEP static double cp_vad(int n, ...)
{
	va_list ap;
	double s = 0;

	counts[C_VAD]++;
	va_start(ap, n);
	while (n-- > 0)
		s = s * 1.5 + va_arg(ap, double);
	va_end(ap);
	return s;
}

/* Exactly k page faults per call: k fresh anonymous pages, each touched
 * once.  Not a target (no cp_ prefix): corpus_run warms it up first. */
KEEP static long touch_pages(long k)
{
	volatile char *p;
	long i;

	if (k <= 0)
		return 0;
	p = mmap(NULL, (size_t)(k * page_size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED)
		return -1;
	for (i = 0; i < k; i++)
		p[i * page_size] = 1;
	munmap((void *)p, (size_t)(k * page_size));
	return k;
}

KEEP static long cp_touch(long k)
{
	counts[C_TOUCH]++;
	return touch_pages(k);
}

/* Touches 64 KiB of stack now, so that no measured call faults in a new
 * stack page. */
KEEP static void pretouch_stack(void)
{
	volatile char buf[64 * 1024];
	size_t i;

	for (i = 0; i < sizeof(buf); i += 256)
		buf[i] = 0;
}

/* Dense cases: a jump table at -O1 and up (bounded: must not be refused). */
KEEP static int cp_switch(int x)
{
	counts[C_SWITCH]++;
	switch (x & 15) {
	case 0: return 11;
	case 1: return x * 3;
	case 2: return x - 7;
	case 3: return x ^ 0x55;
	case 4: return 40;
	case 5: return x << 3;
	case 6: return -x;
	case 7: return x / 3;
	case 8: return 17;
	case 9: return x % 7;
	case 10: return x | 0x100;
	default: return 1;
	}
}

KEEP static unsigned cp_loop(const unsigned char *s, int n)
{
	unsigned h = 5381;
	int i;

	counts[C_LOOP]++;
	for (i = 0; i < n; i++)
		h = h * 33 + s[i];
	return h;
}

struct node {
	struct node *next;
};
static struct node chain[8];
static struct node *volatile walked, *volatile walk_from;

/* A loop whose head is the entry: gcc and clang -O2 make it `mov; mov;
 * test; jne <cp_walk>`.  Counted by its caller (a count bumped here
 * would come before the loop); the store keeps clang from hoisting the
 * call out of the caller's loop. */
KEEP static void cp_walk(struct node *n)
{
	while (n->next)
		n = n->next;
	walked = n;
}

KEEP static long cp_tail_b(long x)
{
	counts[C_TAIL_B]++;
	return x * 7 + 1;
}

/* A tail call at -O2 (jmp cp_tail_b). */
KEEP static long cp_tail_a(long x)
{
	counts[C_TAIL_A]++;
	return cp_tail_b(x + 2);
}

KEEP static double cp_fp(double a, float b, double c)
{
	counts[C_FP]++;
	return a * b + c / 4.0;
}

struct triple {
	long x, y, z;
};
/* Returned in memory: the hidden pointer in rdi comes back in rax. */
KEEP static struct triple cp_struct(long a)
{
	struct triple t = {a, a * 2, a * 3};

	counts[C_STRUCT]++;
	return t;
}

/* Stack arguments. */
KEEP static long cp_many(long a, long b, long c, long d, long e, long f, long g, long h, double x,
			 long i)
{
	counts[C_MANY]++;
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + (long)(x * 9) + 10 * i;
}

/* Called through a pointer: its address is taken, so -fcf-protection
 * gives it an endbr64. */
KEEP static long cp_viaptr(long x)
{
	counts[C_VIAPTR]++;
	return x ^ 0x5a5a;
}
static long (*volatile viaptr)(long) = cp_viaptr;

/* A cold path: gcc -O2 moves the block calling rare_path to a fragment
 * cp_cold.cold, reached by a jump from cp_cold and jumping back: no
 * function of its own, never to be caught as one (test_corpus.sh). */
__attribute__((cold, noinline)) static long rare_path(long x)
{
	sink = x;
	return x / 7 + 1;
}

KEEP static long cp_cold(long x)
{
	counts[C_COLD]++;
	if (x % 7 == 0)
		return rare_path(x) * 3 + sink;
	return x + 2;
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt + ru.ru_majflt;
}

#ifdef CORPUS_LIB
__attribute__((visibility("default")))
#endif
int corpus_run(int argc, char **argv)
{
	static const unsigned char text[] = "the quick brown fox";
	struct big b = {1, 2, 3, 4, 5, 6};
	long k, pages = 2, i, sum = 0, bad = 0, f;
	double dsum = 0;
	int c, check = argc == 4 && !strcmp(argv[3], "--check");

	if (argc < 2 || argc > 4 || (argc == 4 && !check)) {
		fprintf(stderr, "usage: %s K [PAGES [--check]]\n", argv[0]);
		return 2;
	}
	k = atol(argv[1]);
	if (argc >= 3)
		pages = atol(argv[2]);
	page_size = sysconf(_SC_PAGESIZE);
	/* Warm-up: the first mmap/munmap fault in text pages of their own. */
	pretouch_stack();
	touch_pages(1);
	for (i = 0; i + 1 < (long)(sizeof(chain) / sizeof(chain[0])); i++)
		chain[i].next = &chain[i + 1];
	walk_from = chain; /* read at each call: no constant to propagate */
	for (i = 0; i < k; i++) {
		struct triple t = cp_struct(i);

		b.c = i;
		sum += cp_add(i, 3);
		sum += cp_scale(i, 3);
		sum += cp_isra(b);
		sum += cp_rec(20);
		sum += cp_va(3, (int)i, 5, 6);
		dsum += cp_vad(2, 0.5 * (double)i, 0.25);
		f = minflt();
		sum += cp_touch(pages);
		if (minflt() - f != pages)
			bad++;
		sum += cp_switch((int)i);
		sum += cp_loop(text, (int)(i % 19));
		sum += cp_tail_a(i);
		sum += cp_tail_b(i);
		dsum += cp_fp((double)i, 0.5f, 3.0);
		sum += t.x + t.y + t.z;
		sum += cp_many(1, 2, 3, 4, 5, 6, 7, 8, 0.5 * (double)i, i);
		sum += viaptr(i);
		sum += cp_cold(i);
		counts[C_WALK]++;
		cp_walk(walk_from);
		sum += walked - chain;
	}
	printf("sum %ld dsum %.6f\n", sum, dsum);
	for (c = 0; c < C_N; c++)
		printf("calls %s %ld\n", names[c], counts[c]);
	if (check && bad) {
		printf("%ld of %ld cp_touch calls did not fault exactly %ld pages\n", bad, k, pages);
		return 1;
	}
	return 0;
}

#ifndef CORPUS_LIB
int main(int argc, char **argv)
{
	return corpus_run(argc, argv);
}
#endif
