#!/bin/bash
# SPDX-License-Identifier: MIT
# Threads loading, calling and unloading libraries in a loop, each its own
# copy, whose constructor looks a target up with dlsym.  The entry pass
# read a module's code after listing it without holding it loaded: another
# thread's dlclose unmapped it under the pass (SIGSEGV in 4 of 12 runs;
# the build before the dlsym change hung instead).  The pass now holds
# each module while it reads and patches it, as the GOT pass does.
# (The calls of such copies are not all counted yet: see the note of
# issue 6; this test checks that the program runs as without the shim.)
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cd "$T"
cat >q.c <<'C'
long q_fn(long x) { return x - 1; }
C
cat >c.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
long q_fn(long);
long c_use(long x) { return q_fn(x); } /* a GOT slot of q_fn */
static void *seen;
__attribute__((constructor)) static void ctor(void) { seen = dlsym(RTLD_DEFAULT, "q_fn"); }
void *c_seen(void) { return seen; }
C
cat >main.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static int n;
static void *loop(void *a)
{
	long bad = 0;

	for (int i = 0; i < n; i++) {
		void *h = dlopen(a, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			printf("dlopen %s: %s\n", (char *)a, dlerror());
			exit(1);
		}
		long (*u)(long) = (long (*)(long))dlsym(h, "c_use");
		void *(*s)(void) = (void *(*)(void))dlsym(h, "c_seen");
		if (u(5) != 4 || !s())
			bad++;
		dlclose(h);
	}
	return (void *)bad;
}
int main(int argc, char **argv)
{
	static const char *libs[4] = {"./libc1.so", "./libc2.so", "./libc3.so", "./libc4.so"};
	pthread_t t[4];
	long bad = 0;

	n = atoi(argv[1]);
	dlopen("./libq.so", RTLD_NOW | RTLD_GLOBAL);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], 0, loop, (void *)libs[i]);
	for (int i = 0; i < 4; i++) {
		void *v;
		pthread_join(t[i], &v);
		bad += (long)v;
	}
	printf("bad %ld\n", bad);
	return 0;
}
C
cc=${CC:-cc}
$cc -shared -fPIC -o libq.so q.c
for i in 1 2 3 4; do $cc -shared -fPIC -o libc$i.so c.c -L. -lq -ldl -Wl,-rpath,"$T"; done
$cc -o main main.c -ldl -lpthread -Wl,-rpath,"$T"

plain_run plain ./main 200
expect_status plain 0
for run in 1 2 3 4 5; do
	status=0
	timeout -s KILL 120 env CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=c_use,q_fn \
		CACHESHIM_OUTPUT="$T/churn$run.csr" LD_PRELOAD=$CS_SHIM ./main 200 \
		>"$T/churn$run.out" 2>"$T/churn$run.err" || status=$?
	expect_status churn$run 0
	same_output plain churn$run
done
echo "4 threads x 200 load/call/unload rounds, 5 runs: as without the shim"
