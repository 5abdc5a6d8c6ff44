#!/bin/bash
# SPDX-License-Identifier: MIT
# What a target sees of the stack the wrapper calls it on (review helper
# 88):
# - its stack arguments at their address modulo 64: the ABI aligns a
#   __m256 or __m512 argument passed in memory (or a by-value structure of
#   such alignment) to 32 or 64 bytes, and the compiler loads it with an
#   aligned instruction (vmovapd).  The copy was aligned to 16 only: the
#   program died of SIGSEGV, and a target printing its argument's address
#   modulo 64 printed 48 instead of 0;
# - a frame-pointer chain whose return address slots hold return
#   addresses: a walk by frame pointers from inside a target (profilers,
#   ASan's fast unwinder) found the stub's target index (0) where the
#   caller's return address belongs, so the walk lost the caller or
#   stopped there.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

CC=${CC_FOR_TESTS:-gcc}
N=50
cat >"$T/frame.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __AVX__
#include <immintrin.h>
#endif

struct a64 { _Alignas(64) long v[8]; };
struct a32 { _Alignas(32) long v[4]; };

__attribute__((noipa)) unsigned long low_bits(const void *p, unsigned long m)
{
	return (uintptr_t)p & m;
}
/* Each with a stack filler so that calls come at every 16-byte offset. */
__attribute__((noipa)) long st_a64(long a, struct a64 s)
{
	return low_bits(&s, 63) * 1000 + a + s.v[7];
}
__attribute__((noipa)) long st_a32(long a, struct a32 s)
{
	return low_bits(&s, 31) * 1000 + a + s.v[3];
}
#ifdef __AVX__
struct v4 { _Alignas(32) double d[4]; };
struct v4 sink;
__attribute__((noipa)) double st_m256(__m256d a, __m256d b, __m256d c, __m256d d, __m256d e,
				      __m256d f, __m256d g, __m256d h, __m256d i)
{
	sink = *(struct v4 *)&i; /* gcc -O2: vmovapd from i's stack slot */
	return sink.d[1];
}
#endif

/* The functions a walk by frame pointers finds from here by their return
 * addresses: st_target, st_mid (st_target's caller), main. */
__attribute__((noipa)) void walk(char *out, size_t len)
{
	uintptr_t *fp = __builtin_frame_address(0);
	int n;

	out[0] = '\0';
	/* The program's functions only: the wrapper adds a frame of its own. */
	for (n = 0; n < 5 && fp; n++) {
		Dl_info i = {0};
		uintptr_t ret = fp[1];

		if (ret >= 4096 && dladdr((void *)ret, &i) && i.dli_sname &&
		    (!strncmp(i.dli_sname, "st_", 3) || !strcmp(i.dli_sname, "main"))) {
			strncat(out, " ", len - strlen(out) - 1);
			strncat(out, i.dli_sname, len - strlen(out) - 1);
			if (!strcmp(i.dli_sname, "main"))
				break; /* libc's frames above have no frame pointer */
		}
		fp = (uintptr_t *)fp[0];
	}
}
__attribute__((noipa)) int st_target(char *out, size_t len)
{
	walk(out, len);
	return 1;
}
__attribute__((noipa)) int st_mid(char *out, size_t len)
{
	return st_target(out, len) + 1;
}

__attribute__((noipa)) long depth(int k, long acc)
{
	volatile char pad[16];
	struct a64 s64 = {{1, 2, 3, 4, 5, 6, 7, 8}};
	struct a32 s32 = {{1, 2, 3, 4}};

	pad[0] = (char)k;
	if (k > 0)
		return depth(k - 1, acc) + pad[0] - k;
	acc += st_a64(k, s64) + st_a32(k, s32);
#ifdef __AVX__
	{
		__m256d x = _mm256_set1_pd(1.0);

		acc += (long)st_m256(x, x, x, x, x, x, x, x, _mm256_set_pd(5, 6, 7, 8));
	}
#endif
	return acc;
}

int main(int argc, char **argv)
{
	int n = atoi(argv[1]), k;
	long acc = 0;
	char w[256];

	for (k = 0; k < n; k++)
		acc += depth(k % 8, 0);
	printf("%ld\n", acc);
	st_mid(w, sizeof w);
	printf("walk:%s\n", w);
	return 0;
}
C
flags=
grep -qw avx /proc/cpuinfo 2>/dev/null && flags=-mavx
$CC -O2 $flags -fno-omit-frame-pointer -rdynamic -o "$T/frame" "$T/frame.c" -ldl 2>"$T/cc.err" ||
	{ show "$T/cc.err"; fail "cannot build frame.c"; }
plain_run plain "$T/frame" $N
[ "$status" -eq 0 ] || fail "frame fails without the shim"
grep -qx 'walk: st_target st_mid main' "$T/plain.out" || { show "$T/plain.out"; fail "frame-pointer walk without the shim"; }
for hook in entry both; do
	hook_run $hook $hook tsc 'st_*' "$T/frame" $N
	[ "$status" -eq 0 ] || { show "$T/$hook.err"; fail "$hook: frame exits $status"; }
	same_output plain $hook
	report_csv $hook --by function
	for fn in st_a64 st_a32 st_target; do
		got=$(calls_of $hook $fn)
		want=$N
		[ $fn != st_target ] || want=1
		[ "$got" = $want ] || { show "$T/$hook.csv"; fail "$hook: $fn: $got calls, want $want"; }
	done
	echo "$hook: stack arguments aligned as the caller aligned them${flags:+ (__m256 too)}; a frame-pointer walk finds the caller"
done
