/* SPDX-License-Identifier: MIT */
/* Runs the fuzz target (fuzz_reader.c) on files, one input each, without
 * libFuzzer: the reader is exercised by the normal build even when clang
 * is not installed.
 *
 * Usage: fuzz_driver [-m N] FILE...  With -m N, each file is also fed
 * mutated N times (bit flips, truncations, overwritten header and block
 * fields, chosen by a fixed pseudo-random sequence, so runs repeat).
 * Exits 0 when every input went through; a crash is the failure. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	/* xorshift64*: fixed seed, so every run feeds the same inputs. */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

/* Values that sit on the edges the reader checks. */
static uint64_t edge(void)
{
	/* clang-format off */
	static const uint64_t v[] = {
		0, 1, 7, 8, 9, 4095, 4096, 4097, 0xffffffffull, 0x100000000ull,
		UINT64_MAX, UINT64_MAX - 7, CS_USED_SEALED, CS_USED_SEALED | 4096,
		CS_MAX_EVENTS, CS_MAX_EVENTS + 1, 80, 9344,
	};
	/* clang-format on */

	return v[next() % (sizeof(v) / sizeof(v[0]))];
}

/* One mutation of in (size n) into out; returns the new size. */
static size_t mutate(const uint8_t *in, size_t n, uint8_t *out)
{
	size_t m = n, off, i, k;
	uint64_t v;

	memcpy(out, in, n);
	for (k = 1 + next() % 4; k > 0; k--) {
		switch (next() % 6) {
		case 0: /* flip a few bits anywhere */
			for (i = 0; i < 1 + next() % 8 && m; i++)
				out[next() % m] ^= (uint8_t)(1u << (next() % 8));
			break;
		case 1: /* cut the file short */
			if (m)
				m = next() % m;
			break;
		case 2: /* an edge value over a header field */
			off = 8 + 4 * (next() % 22);
			v = edge();
			if (off + 8 <= m)
				memcpy(out + off, &v, (next() & 1) ? 8 : 4);
			break;
		case 3: /* an edge value over a block's type or size */
			if (m > CS_HEADER_SIZE + 8) {
				off = CS_HEADER_SIZE + 8 * (next() % ((m - CS_HEADER_SIZE) / 8));
				v = edge();
				memcpy(out + off, &v, 4);
			}
			break;
		case 4: /* an edge value anywhere, 8-aligned */
			if (m >= 8) {
				off = 8 * (next() % (m / 8));
				v = edge();
				memcpy(out + off, &v, 8);
			}
			break;
		default: /* a run of zeroes or ones */
			if (m) {
				off = next() % m;
				i = next() % 256;
				memset(out + off, (next() & 1) ? 0xff : 0,
				       i < m - off ? i : m - off);
			}
			break;
		}
	}
	return m;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL, *nb;
	size_t cap = 0, got;

	*n = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*n == cap) {
			cap = cap ? 2 * cap : 65536;
			nb = realloc(buf, cap);
			if (!nb)
				break;
			buf = nb;
		}
		got = fread(buf + *n, 1, cap - *n, f);
		*n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	long mutations = 0, j, inputs = 0;
	uint8_t *in, *out;
	size_t n, m;
	int i = 1;

	if (argc > 2 && !strcmp(argv[1], "-m")) {
		mutations = atol(argv[2]);
		i = 3;
	}
	if (i >= argc) {
		fprintf(stderr, "usage: %s [-m N] FILE...\n", argv[0]);
		return 2;
	}
	for (; i < argc; i++) {
		in = slurp(argv[i], &n);
		if (!in) {
			perror(argv[i]);
			return 1;
		}
		LLVMFuzzerTestOneInput(in, n);
		inputs++;
		out = malloc(n ? n : 1);
		for (j = 0; out && j < mutations; j++) {
			m = mutate(in, n, out);
			LLVMFuzzerTestOneInput(out, m);
			inputs++;
		}
		free(out);
		free(in);
	}
	printf("%ld inputs\n", inputs);
	return 0;
}
