#!/bin/bash
# SPDX-License-Identifier: MIT
# A C program's first backtrace() while another thread's dlopen runs a
# library constructor that dlopens a library with a target.  The
# exported backtrace took unwindreg.c's lock and then dlopened
# libgcc_s.so.1, which waits for the loader's lock, held by the thread
# running the constructor; that thread's nested dlopen made a patching
# pass whose new thunk's frame information (cs_unwind_add) waited for
# unwindreg.c's lock: both threads hung (without the shim, backtrace()
# waits for the constructor and goes on).  unwindreg.c no longer calls
# dlopen with its lock held.  The constructor goes on only once the other
# thread sleeps in a futex (the loader's lock), so the order is forced.
# (bd_main, entry-patched at start, has frame information waiting for
# libgcc_s: the first backtrace() loads it.)
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cc=${CC:-cc}
cd "$T"
cat >inner.c <<'C'
__attribute__((noinline)) int bd_leaf(int x)
{
	volatile int y = x;

	return y * 3 + 1;
}
C
cat >outer.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tests/robust/waitsys.h"

__attribute__((constructor)) static void ctor(void)
{
	int *tid = (int *)dlsym(RTLD_DEFAULT, "bd_tid");
	int (*leaf)(int);
	void *h;

	__atomic_store_n(tid + 1, 1, __ATOMIC_SEQ_CST); /* bd_go */
	while (!__atomic_load_n(tid, __ATOMIC_SEQ_CST))
		usleep(1000);
	wait_in_syscall(*tid, CS_SYS_FUTEX);
	h = dlopen("./libbdinner.so", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		exit(2);
	}
	leaf = (int (*)(int))dlsym(h, "bd_leaf");
	printf("leaf %d\n", leaf(2));
}
C
cat >prog.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int bd_tid[2]; /* the tracing thread's id; [1]: the constructor runs */

__attribute__((noinline)) int bd_main(int x)
{
	volatile int y = x;

	return y + 1;
}

static void *trace(void *arg)
{
	void *buf[32];

	while (!__atomic_load_n(&bd_tid[1], __ATOMIC_SEQ_CST))
		usleep(1000);
	__atomic_store_n(&bd_tid[0], gettid(), __ATOMIC_SEQ_CST);
	return backtrace(buf, 32) > 0 ? arg : NULL;
}

int main(void)
{
	pthread_t th;
	void *r;

	printf("main %d\n", bd_main(1));
	pthread_create(&th, NULL, trace, &th);
	if (!dlopen("./libbdouter.so", RTLD_NOW))
		return 2;
	pthread_join(th, &r);
	printf("backtrace %s\n", r ? "ok" : "empty");
	return 0;
}
C
$cc -O2 -shared -fPIC -o libbdinner.so inner.c
$cc -O2 -I"$CS_SRCDIR" -shared -fPIC -o libbdouter.so outer.c -ldl
$cc -O2 -rdynamic -o prog prog.c -ldl -lpthread

plain_run plain timeout 60 ./prog
expect_status plain 0
printf 'main 2\nleaf 7\nbacktrace ok\n' >want.txt
cmp -s want.txt "$T/plain.out" || { show "$T/plain.out"; fail "the program's own output is off"; }
hang_run bt 'bd_*' "backtrace() against a constructor's nested dlopen" ./prog
expect_status bt 0
same_output plain bt
report_csv bt --by function
want_count bt "function=bd_main,event=tsc" calls 1
want_count bt "function=bd_leaf,event=tsc" calls 1
"$CS_CMD" report --targets "$T/bt.csr" >targets.txt 2>&1
# bd_main's thunk waits for libgcc_s (the first backtrace() loads it),
# bd_leaf's is made in the constructor's dlopen.
[ "$(grep -c '^ *bd_[a-z]* .* entry ' targets.txt)" = 2 ] ||
	{ show targets.txt; fail "bd_main, bd_leaf not entry-patched: nothing tested"; }
echo "a first backtrace() during a constructor's nested dlopen: no hang"
