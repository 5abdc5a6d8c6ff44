#!/bin/bash
# SPDX-License-Identifier: MIT
# The GOT pass lists the modules under the loader's lock, then patches each
# one under a hold of its own (dlopen RTLD_NOLOAD of its name, at the
# address it was listed at).  Between the two another thread may unload a
# module and load a new file of the same name at its address: the
# relocations the memo kept of the old load (shim/loadmemo.c) are not the
# new one's.  Read in the new file's tables they named other symbols, and
# libp.so's 50 calls of g_fn after the pass went unseen (the pass before
# the memo read the new file's relocations: all 150 counted).  The order
# is forced: libtrigger.so's constructor, in main's dlopen, lets thread C
# go and waits until C waits for the loader's lock; main's pass lists the
# modules (a long scan of libtrigger.so's names) and waits for the lock at
# libp.so's hold, which C holds in libevil.so's constructor: that one
# waits for main to wait, then unloads libp.so, renames the new file over
# it and loads it (the real dlopen and dlclose of libc, so that C makes no
# pass of its own).  GOT slots only (CACHESHIM_HOOK=got): every counted
# call went through a slot a pass patched.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cc=${CC:-cc}
cd "$T"
echo 'long g_fn(long x) { return x + 3; }' >g.c
printf 'long b%d(long x) { return x + %d; }\n' 1 1 2 2 3 3 >bx.c
echo 'long g_fn(long); long p_use(long x) { return g_fn(x) + 1; }' >p1.c
# The new libp.so: more imports before g_fn, so its relocations lie
# elsewhere (of the same size: it lands at the old one's address).
cat >p2.c <<'C'
long g_fn(long);
extern long b1(long), b2(long), b3(long);
long p_use(long x) { return b1(x) + b2(x) + b3(x) + g_fn(x); }
C
# ~1 MB of dynamic names: main's pass, listing the modules, scans them.
awk 'BEGIN {
	print "void trigger_ctor(void);"
	print "__attribute__((constructor)) static void ctor(void) { trigger_ctor(); }"
	long = sprintf("%5000s", ""); gsub(/ /, "x", long)
	for (i = 0; i < 200; i++)
		printf "int t%d_%s(void) { return %d; }\n", i, long, i
}' >trigger.c
echo 'void evil_ctor(void); __attribute__((constructor)) static void ctor(void) { evil_ctor(); }' >evil.c
cat >main.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "tests/robust/waitsys.h"

static void *(*real_dlopen)(const char *, int);
static int (*real_dlclose)(void *);
static sem_t go;
static int main_tid, c_tid, in_trigger, met;
static void *x, *y;

static void *must(void *h)
{
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		exit(1);
	}
	return h;
}

static long call(void *h, long i)
{
	long (*f)(long) = (long (*)(long))dlsym(h, "p_use");

	return f(i);
}

/* In main's dlopen of libtrigger.so, the loader's lock held. */
void trigger_ctor(void)
{
	sem_post(&go);
	while (!__atomic_load_n(&c_tid, __ATOMIC_SEQ_CST))
		usleep(100);
	if (!wait_in_syscall(c_tid, CS_SYS_FUTEX))
		fprintf(stderr, "thread C did not wait for the loader\n");
}

/* In C's dlopen of libevil.so, the loader's lock held. */
void evil_ctor(void)
{
	met = wait_in_syscall(main_tid, CS_SYS_FUTEX) &&
	      __atomic_load_n(&in_trigger, __ATOMIC_SEQ_CST);
	real_dlclose(x);
	if (rename("libp2.so", "libp.so") < 0 ||
	    !(y = real_dlopen("./libp.so", RTLD_NOW | RTLD_LOCAL)))
		exit(3);
}

static void *thread_c(void *arg)
{
	sem_wait(&go);
	__atomic_store_n(&c_tid, (int)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	if (!real_dlopen("./libevil.so", RTLD_NOW))
		exit(4);
	return arg;
}

int main(void)
{
	void *libc = must(dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD));
	struct link_map *lx, *ly;
	ElfW(Addr) x_at;
	long s = 0;
	pthread_t t;
	int i;

	real_dlopen = (void *(*)(const char *, int))dlsym(libc, "dlopen");
	real_dlclose = (int (*)(void *))dlsym(libc, "dlclose");
	sem_init(&go, 0, 0);
	main_tid = (int)syscall(SYS_gettid);
	must(dlopen("./libbx.so", RTLD_NOW | RTLD_GLOBAL));
	must(dlopen("./libg.so", RTLD_NOW | RTLD_GLOBAL));
	x = must(dlopen("./libp.so", RTLD_NOW | RTLD_LOCAL));
	dlinfo(x, RTLD_DI_LINKMAP, &lx);
	x_at = lx->l_addr;
	for (i = 0; i < 100; i++)
		s += call(x, i);
	pthread_create(&t, NULL, thread_c, NULL);
	__atomic_store_n(&in_trigger, 1, __ATOMIC_SEQ_CST);
	must(dlopen("./libtrigger.so", RTLD_NOW));
	__atomic_store_n(&in_trigger, 0, __ATOMIC_SEQ_CST);
	pthread_join(t, NULL);
	dlinfo(y, RTLD_DI_LINKMAP, &ly);
	for (i = 0; i < 50; i++)
		s += call(y, i);
	printf("sum %ld\n", s);
	fprintf(stderr, "met %d, same place %d\n", met, ly->l_addr == x_at);
	return 0;
}
C
$cc -shared -fPIC -o libg.so g.c
$cc -shared -fPIC -o libbx.so bx.c
$cc -shared -fPIC -o libtrigger.so trigger.c
$cc -shared -fPIC -o libevil.so evil.c
$cc -I"$CS_SRCDIR" -rdynamic -o main main.c -ldl -lpthread
make_libp()
{
	$cc -shared -fPIC -o libp.so p1.c -L. -lg -Wl,-rpath,"$T"
	$cc -shared -fPIC -o libp2.so p2.c -L. -lg -lbx -Wl,-rpath,"$T"
}

make_libp
plain_run plain timeout 60 ./main
expect_status plain 0
make_libp
status=0
timeout 60 env CACHESHIM_QUIET=1 CACHESHIM_HOOK=got CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=g_fn \
	CACHESHIM_OUTPUT="$T/rep.csr" LD_PRELOAD="$CS_SHIM" ./main >rep.out 2>rep.err || status=$?
[ "$status" != 124 ] || fail "hung (killed after 60 s)"
expect_status rep 0
same_output plain rep
report_csv rep
# The case meant needs the threads to meet as forced, and the new file at
# the old one's address (it was, in every run on an idle machine here).
# On a loaded machine thread C may come late: main's pass is over before
# the new file is loaded, by the real dlopen, which makes no pass, so its
# 50 calls are not seen whatever the shim does.  Only the old file's 100
# are asked for then, and the run says the case was not exercised.
if grep -q "did not" rep.err || ! grep -q "met 1, same place 1" rep.err; then
	got=$(csv_sum rep "function=g_fn,module=libp.so,event=tsc" calls)
	[ "$got" = 100 ] || [ "$got" = 150 ] ||
		{ show "$T/rep.csv"; show "$T/rep.err"; fail "g_fn: $got calls, want 100 (or 150)"; }
	echo "note: the threads did not meet as meant ($(grep -v '^$' rep.err | tail -n 1)): g_fn $got calls, the case not exercised"
else
	want_count rep "function=g_fn,module=libp.so,event=tsc" calls 150
	echo "libp.so replaced at its address during a GOT pass: g_fn 150 calls (100 from the old, 50 from the new)"
fi
