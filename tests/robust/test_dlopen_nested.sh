#!/bin/bash
# SPDX-License-Identifier: MIT
# A library's constructor that dlopens a library with a target while
# another thread's patching pass waits for the loader's lock.  The pass
# holds the shim's patching lock and takes holds on modules (dlopen
# RTLD_NOLOAD), which wait for the loader's lock, held by the thread
# running the constructor; that thread's nested dlopen made a pass of its
# own, which waited for the patching lock: both threads hung (without the
# shim the program ends at once).  A dlopen or dlclose inside another one
# on the same thread now only tries the patching lock: the outer dlopen's
# pass patches what the nested one loaded.  The order is forced: the
# other thread's pass waits in open() of a FIFO (libdz.so's debug file,
# named by its .gnu_debuglink) until the constructor opens it, and the
# constructor goes on once that thread sleeps in a futex (the loader's
# lock).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cc=${CC:-cc}
if ! command -v objcopy >/dev/null || ! command -v strip >/dev/null; then
	echo "SKIP: no objcopy or strip"
	exit 77
fi
cd "$T"
cat >dz.c <<'C'
__attribute__((noinline)) int dz_leaf(int x)
{
	volatile int y = x;

	return y + 7;
}
C
cat >dy.c <<'C'
__attribute__((noinline)) int dy_leaf(int x)
{
	volatile int y = x;

	return y * 5;
}
C
cat >dx.c <<'C'
#include <dlfcn.h>
#include <fcntl.h>
#include "tests/robust/waitsys.h"

extern int dl_tid;

/* Under the shim the other thread's pass waits in open() of the FIFO
 * (without it nobody does: no wait then).  Let it go on, wait until it
 * waits for the loader's lock, which this thread holds, then dlopen. */
__attribute__((constructor)) static void ctor(void)
{
	int (*leaf)(int), fd = open("./dz.debug", O_WRONLY | O_NONBLOCK);
	void *h;

	if (fd >= 0) {
		close(fd);
		if (!wait_in_syscall(dl_tid, CS_SYS_FUTEX))
			fprintf(stderr, "the other thread did not wait for the loader\n");
	}
	h = dlopen("./libdy.so", RTLD_NOW);
	leaf = h ? (int (*)(int))dlsym(h, "dy_leaf") : NULL;
	printf("ctor %d\n", leaf ? leaf(1) : -1);
}
C
cat >prog.c <<'C'
#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include "tests/robust/waitsys.h"

int dl_tid;

static void *other(void *arg)
{
	int (*leaf)(int), s = 0, i;
	void *h;

	(void)arg;
	__atomic_store_n(&dl_tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
	h = dlopen("./libdz.so", RTLD_NOW);
	leaf = h ? (int (*)(int))dlsym(h, "dz_leaf") : NULL;
	for (i = 0; leaf && i < 3; i++)
		s += leaf(i);
	return (void *)(long)s;
}

int main(int argc, char **argv)
{
	int (*leaf)(int), s = 0, i;
	pthread_t t;
	void *h, *r;

	pthread_create(&t, NULL, other, NULL);
	while (!__atomic_load_n(&dl_tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	/* Under the shim (any argument): the other thread's pass waits in
	 * open() (257) of the FIFO before this thread dlopens. */
	if (argc > 1 && !wait_in_syscall(dl_tid, CS_SYS_OPENAT))
		fprintf(stderr, "the other thread did not open the FIFO\n");
	if (!dlopen("./libdx.so", RTLD_NOW) || !(h = dlopen("./libdy.so", RTLD_NOW)))
		return 2;
	leaf = (int (*)(int))dlsym(h, "dy_leaf");
	for (i = 0; i < 5; i++)
		s += leaf(i);
	pthread_join(t, &r);
	printf("main %d other %ld\n", s, (long)r);
	return 0;
}
C
$cc -O1 -shared -fPIC -o libdz.so dz.c
$cc -O1 -shared -fPIC -o libdy.so dy.c
$cc -O1 -I"$CS_SRCDIR" -shared -fPIC -o libdx.so dx.c
$cc -O1 -I"$CS_SRCDIR" -rdynamic -o prog prog.c -ldl -lpthread
# libdz.so without .symtab and with a .gnu_debuglink to dz.debug, a FIFO:
# the shim's pass looks for its debug file there and waits in open().
strip --strip-all libdz.so
echo x >dz.debug
objcopy --add-gnu-debuglink=dz.debug libdz.so
rm dz.debug
mkfifo dz.debug

plain_run plain timeout 60 ./prog
expect_status plain 0
printf 'ctor 5\nmain 50 other 24\n' >want.txt
cmp -s want.txt "$T/plain.out" || { show "$T/plain.out"; fail "the program's own output is off"; }
hang_run nd dz_leaf,dy_leaf "a constructor's dlopen against another thread's patching pass" \
	./prog shim
expect_status nd 0
same_output plain nd
if grep -q "did not" "$T/nd.err"; then
	show "$T/nd.err"
	fail "the threads did not meet as the test needs: nothing tested"
fi
report_csv nd --by function
# The constructor's call ran before libdy.so was patched (the nested
# dlopen's pass gave way); main's five after its own pass.
want_count nd "function=dy_leaf,event=tsc" calls 5
want_count nd "function=dz_leaf,event=tsc" calls 3
echo "a constructor's dlopen while another thread's pass waited for the loader: no hang, every call after the passes counted"
