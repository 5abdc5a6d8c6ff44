#!/bin/bash
# SPDX-License-Identifier: MIT
# Someone else writes into a function the shim patched (a debugger's
# breakpoint, another hooking library), and a dlopen's patching pass runs
# meanwhile.  The pass tells a module loaded anew at the same addresses
# from the one it patched by the bytes it wrote there: with other bytes
# there it took the module for a new load and patched the function again,
# over the breakpoint; the debugger's restoring its byte then broke the
# new jump (SIGSEGV).  Bytes that are neither the shim's nor the file's
# now mean this load (the file unchanged on disk): left alone, and every
# call is counted once.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cd "$T"
cat >a.c <<'C'
long a_fn(long x) { return 3 * x + 1; }
C
cat >b.c <<'C'
long b_fn(long x) { return x; }
C
cat >main.c <<'C'
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	long n = atol(argv[1]), s = 0, i;
	void *ha = dlopen("./liba.so", RTLD_NOW), *hb;
	long (*a)(long) = (long (*)(long))dlsym(ha, "a_fn");
	unsigned char *p = (unsigned char *)a, saved;
	uintptr_t page = (uintptr_t)p & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);

	/* "A breakpoint": a byte of the function's first five changed. */
	if (mprotect((void *)page, 2 * sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE | PROT_EXEC))
		return 1;
	/* The patch goes after an endbr64. */
	if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
		p += 4;
	saved = p[2];
	p[2] = 0xcc;
	hb = dlopen("./libb.so", RTLD_NOW); /* a patching pass */
	p[2] = saved; /* "the breakpoint removed" */
	mprotect((void *)page, 2 * sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC);
	for (i = 0; i < n; i++)
		s += a(i);
	printf("sum %ld %s\n", s, hb ? "ok" : "no libb");
	return 0;
}
C
cc=${CC:-cc}
$cc -shared -fPIC -o liba.so a.c
$cc -shared -fPIC -o libb.so b.c
$cc -o main main.c -ldl -Wl,-rpath,"$T"

N=1000
plain_run plain ./main $N
expect_status plain 0
for hook in entry both; do
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_HOOK=$hook CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=a_fn \
		CACHESHIM_OUTPUT="$T/$hook.csr" LD_PRELOAD=$CS_SHIM ./main $N \
		>"$T/$hook.out" 2>"$T/$hook.err" || status=$?
	expect_status $hook 0
	same_output plain $hook
	report_csv $hook --by function
	want_count $hook "function=a_fn,event=tsc" calls $N
	want_count $hook "function=a_fn,event=tsc" entered $N
	echo "hook=$hook: $N calls, each counted once"
done
