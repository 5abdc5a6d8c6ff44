/* SPDX-License-Identifier: MIT */
/* Writes a report whose call sites are its own calls, at known lines. */
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/report/fixture.h"

/*
 * prog_lines REPORT EXPECTED
 *
 * Built with -g -O0 (tests/report/Makefile.inc): each call of record()
 * below is a call site with line information.  The report names this
 * very program (path, build id, load bias), as the shim would; EXPECTED
 * gets one line per call site: "prog_lines.c:LINE".  The symbols test
 * then moves the program and checks that --search-path finds it again.
 */

#define NCALLS 3

static uintptr_t ret_addr[NCALLS];
static int line_of[NCALLS];

__attribute__((noinline)) static void record(int i, int line)
{
	ret_addr[i] = (uintptr_t)__builtin_return_address(0);
	line_of[i] = line;
}

struct self {
	uintptr_t bias;
	uint8_t bid[32];
	uint32_t bid_len;
};

/* The main program is the first object dl_iterate_phdr reports. */
static int self_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self *me = arg;
	int i;

	me->bias = info->dlpi_addr;
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
				memcpy(me->bid, desc, n->n_descsz);
				me->bid_len = n->n_descsz;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
	return 1;
}

static const struct fx_event ev[] = {{"tsc", CS_EVENT_TSC, CS_EVENT_COUNTED}};

int main(int argc, char **argv)
{
	struct self me = {0};
	char path[4096];
	uint32_t m, t;
	uint64_t v;
	struct fx *f;
	FILE *exp;
	ssize_t n;
	size_t s;
	int i, ret;

	if (argc != 3) {
		fputs("usage: prog_lines REPORT EXPECTED\n", stderr);
		return 2;
	}
	/* One statement per line: the line of the call is this line. */
	record(0, __LINE__);
	record(1, __LINE__);
	record(2, __LINE__);

	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n <= 0)
		return 1;
	path[n] = '\0';
	dl_iterate_phdr(self_cb, &me);
	f = fx_new(path, (uint32_t)getpid(), 1, ev);
	m = fx_module(f, path, me.bid, me.bid_len, me.bias);
	t = fx_target(f, "lines_target", 0, 0, CS_HOOK_GOT);
	exp = fopen(argv[2], "w");
	if (!exp)
		return 1;
	for (i = 0; i < NCALLS; i++) {
		s = fx_site(f, t, 1, m, ret_addr[i] - me.bias, CS_KEY_NONE);
		v = 10 * (uint64_t)(i + 1);
		fx_call(f, s, &v);
		fprintf(exp, "prog_lines.c:%d\n", line_of[i]);
	}
	ret = fx_write(f, argv[1], 1, 0);
	fx_free(f);
	return ret || fclose(exp) ? 1 : 0;
}
