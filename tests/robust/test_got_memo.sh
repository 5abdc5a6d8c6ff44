#!/bin/bash
# SPDX-License-Identifier: MIT
# The GOT pass keeps, for each loaded module, which of its relocations
# name a target (shim/loadmemo.c), and a later pass (the next dlopen) looks
# at those only.  GOT slots only (CACHESHIM_HOOK=got), so that every
# counted call went through a slot a pass patched:
# - a library whose PLT slot of g_late is still unbound (RTLD_LAZY, g_late
#   not loaded yet) when the first pass sees it: once a later dlopen
#   brings g_late, the known slot is patched and its calls are counted;
# - a library unloaded and another one loaded at its address, with other
#   relocations at other places: what was kept of the first must not stand
#   for the second (the memo is dropped when dl_iterate_phdr's count of
#   loads less the modules listed moves), or the second's calls of g_fn
#   went uncounted;
# - the same with a dlmopen namespace of two modules made between the last
#   pass and the unload (main_ns): glibc's dlpi_subs takes each other
#   namespace's count of modules from its count of loads once per module
#   there, so it fell by 2 and the unload of liba and libg raised it by 2.
#   The memos went by it: libb's calls of g_fn went uncounted, with GOT
#   slots (liba's relocations stood for libb's) and with entry patches
#   alone (libg, loaded again at its address, passed for the one patched,
#   and the unload was not forgotten).
# Exact call counts in every case; the program's output is the same.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cd "$T"
cc=${CC:-cc}
cat >g.c <<'C'
long g_fn(long x) { return x + 3; }
C
cat >late.c <<'C'
long g_late(long x) { return x * 5; }
C
# a_use: calls g_fn and g_late through its PLT; g_late is not loaded yet.
cat >a.c <<'C'
long g_fn(long);
long g_late(long);
long a_use(long x) { return g_fn(x) + 1; }
long a_late(long x) { return g_late(x) + 1; }
C
# b_use: more imports before g_fn, so its relocations lie elsewhere.
cat >b.c <<'C'
long g_fn(long);
extern long b1(long), b2(long), b3(long);
long b_use(long x) { return b1(x) + b2(x) + b3(x) + g_fn(x); }
C
cat >bx.c <<'C'
long b1(long x) { return x; }
long b2(long x) { return x; }
long b3(long x) { return x; }
C
echo 'int u_other(int x) { return x; }' >u.c
# The programs' helpers: a dlopen that must succeed, a call by name.
cat >dlcall.h <<'C'
static void *must(void *h)
{
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		exit(1);
	}
	return h;
}

static long call(void *h, const char *name, long x)
{
	long (*f)(long) = (long (*)(long))dlsym(h, name);

	return f ? f(x) : -1000000;
}
C
cat >main.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "dlcall.h"

int main(void)
{
	long s = 0;
	void *a, *u, *late, *b;
	void *a_at, *b_at;
	int i;

	a = must(dlopen("./liba.so", RTLD_LAZY | RTLD_LOCAL));
	a_at = dlsym(a, "a_use");
	for (i = 0; i < 100; i++)
		s += call(a, "a_use", i);
	/* A pass that finds liba known. */
	u = must(dlopen("./libu.so", RTLD_NOW | RTLD_LOCAL));
	for (i = 0; i < 100; i++)
		s += call(a, "a_use", i);
	/* g_late arrives: liba's unbound slot of it is patched by this pass. */
	late = must(dlopen("./liblate.so", RTLD_NOW | RTLD_GLOBAL));
	for (i = 0; i < 70; i++)
		s += call(a, "a_late", i);
	dlclose(a);
	/* libb in liba's place (same size class: most often the same address). */
	b = must(dlopen("./libb.so", RTLD_NOW | RTLD_LOCAL));
	b_at = dlsym(b, "b_use");
	for (i = 0; i < 50; i++)
		s += call(b, "b_use", i);
	printf("sum %ld\n", s);
	fprintf(stderr, "same place %d\n", ((unsigned long)a_at >> 12) == ((unsigned long)b_at >> 12));
	dlclose(b);
	dlclose(late);
	dlclose(u);
	return 0;
}
C
# main_ns: liba, a namespace of libns1 and libns2 (no libc: two modules),
# liba and libg unloaded, libb loaded (most often at liba's address).
echo 'int ns2(int x) { return x; }' >ns2.c
echo 'int ns2(int); int ns1(int x) { return ns2(x); }' >ns1.c
cat >main_ns.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "dlcall.h"

int main(void)
{
	long s = 0;
	void *a, *b, *ns;
	void *a_at, *b_at;
	int i;

	a = must(dlopen("./liba.so", RTLD_LAZY | RTLD_LOCAL));
	a_at = dlsym(a, "a_use");
	for (i = 0; i < 100; i++)
		s += call(a, "a_use", i);
	ns = must(dlmopen(LM_ID_NEWLM, "./libns1.so", RTLD_NOW));
	dlclose(a);
	b = must(dlopen("./libb.so", RTLD_NOW | RTLD_LOCAL));
	b_at = dlsym(b, "b_use");
	for (i = 0; i < 50; i++)
		s += call(b, "b_use", i);
	printf("sum %ld\n", s);
	fprintf(stderr, "same place %d\n", ((unsigned long)a_at >> 12) == ((unsigned long)b_at >> 12));
	dlclose(b);
	dlclose(ns);
	return 0;
}
C
$cc -shared -fPIC -o libg.so g.c
$cc -shared -fPIC -o liblate.so late.c
$cc -shared -fPIC -o libbx.so bx.c
$cc -shared -fPIC -o liba.so a.c -L. -lg -Wl,-rpath,"$T"
$cc -shared -fPIC -o libb.so b.c -L. -lg -lbx -Wl,-rpath,"$T"
$cc -shared -fPIC -o libu.so u.c
$cc -shared -fPIC -nostdlib -o libns2.so ns2.c
$cc -shared -fPIC -nostdlib -o libns1.so ns1.c -L. -lns2 -Wl,-rpath,"$T"
$cc -o main main.c -ldl
$cc -o main_ns main_ns.c -ldl

plain_run plain ./main
expect_status plain 0
status=0
CACHESHIM_QUIET=1 CACHESHIM_HOOK=got CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=g_fn,g_late \
	CACHESHIM_OUTPUT=$T/memo.csr LD_PRELOAD=$CS_SHIM ./main >memo.out 2>memo.err || status=$?
expect_status memo 0
same_output plain memo
report_csv memo
want_count memo "function=g_fn,event=tsc" calls 250
want_count memo "function=g_late,event=tsc" calls 70
# Where libb did land at liba's address, the case above was the one meant.
grep -q 'same place 1' memo.err && echo "libb was loaded at liba's address" ||
	echo "libb was loaded elsewhere this time (the count still holds)"
echo "g_fn 250 calls from two libraries, g_late 70 through a slot bound after the first pass"

plain_run plain_ns ./main_ns
expect_status plain_ns 0
for hook in got entry; do
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_HOOK=$hook CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=g_fn \
		CACHESHIM_OUTPUT=$T/ns_$hook.csr LD_PRELOAD=$CS_SHIM ./main_ns \
		>ns_$hook.out 2>ns_$hook.err || status=$?
	expect_status ns_$hook 0
	same_output plain_ns ns_$hook
	report_csv ns_$hook
	want_count ns_$hook "function=g_fn,module=liba.so,event=tsc" calls 100
	want_count ns_$hook "function=g_fn,module=libb.so,event=tsc" calls 50
	grep -q 'same place 1' ns_$hook.err && echo "$hook: libb was loaded at liba's address" ||
		echo "$hook: libb was loaded elsewhere this time (the count still holds)"
done
echo "with a dlmopen namespace: g_fn 100 calls from liba, 50 from libb in its place"
