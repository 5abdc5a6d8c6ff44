#!/bin/bash
# SPDX-License-Identifier: MIT
# Threads loading, calling and unloading libraries in a loop, each its own
# copy (another file), whose t_use calls t_fn through the library's own
# PLT.  A thread's dlclose is seen (the module map finds the module gone)
# after the real dlclose returned; meanwhile another thread's copy may be
# mapped at the same addresses and entry-patched.  The module map then
# marked every target in the range unloaded, the new copy's too: its t_fn,
# entry-patched, looked unpatched, and the next pass hooked its GOT slot
# as well, so calls from t_use were counted twice (t_fn 801-802 calls of
# 800 in 8 runs of 12).  So t_use and t_fn have exactly threads x rounds
# calls.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cd "$T"
cat >t.c <<'C'
long t_fn(long x) { return x + 1; }
long t_use(long x) { return t_fn(x) * 2; } /* a PLT call: t_fn's GOT slot */
C
cat >main.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
static int n;
static char libs[8][16];
static pthread_barrier_t all_made, all_done;
static void *loop(void *a)
{
	long bad = 0;

	pthread_barrier_wait(&all_made); /* see test_dlchurn.sh */
	for (int i = 0; i < n; i++) {
		void *h = dlopen(a, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			printf("dlopen %s: %s\n", (char *)a, dlerror());
			exit(1);
		}
		long (*u)(long) = (long (*)(long))dlsym(h, "t_use");
		if (u(5) != 12)
			bad++;
		dlclose(h);
	}
	/* Nor while a thread exits: glibc blocks every signal there. */
	pthread_barrier_wait(&all_done);
	return (void *)bad;
}
int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 4;
	pthread_t t[8];
	long bad = 0;

	n = atoi(argv[1]);
	if (threads < 1 || threads > 8)
		return 2;
	pthread_barrier_init(&all_made, NULL, threads + 1);
	pthread_barrier_init(&all_done, NULL, threads);
	for (int i = 0; i < threads; i++) {
		snprintf(libs[i], sizeof(libs[i]), "./libt%d.so", i + 1);
		pthread_create(&t[i], 0, loop, libs[i]);
	}
	pthread_barrier_wait(&all_made);
	for (int i = 0; i < threads; i++) {
		void *v;
		pthread_join(t[i], &v);
		bad += (long)v;
	}
	printf("bad %ld\n", bad);
	return 0;
}
C
cc=${CC:-cc}
for i in 1 2 3 4 5 6 7 8; do $cc -shared -fPIC -O1 -o libt$i.so t.c; done
$cc -o main main.c -ldl -lpthread

threads=8 rounds=100
plain_run plain ./main $rounds $threads
expect_status plain 0
for run in 1 2 3 4 5 6; do
	name=churn_$run
	status=0
	timeout -s KILL 120 env CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc \
		CACHESHIM_TARGETS=t_fn,t_use CACHESHIM_OUTPUT="$T/$name.csr" \
		LD_PRELOAD=$CS_SHIM ./main $rounds $threads \
		>"$T/$name.out" 2>"$T/$name.err" || status=$?
	expect_status $name 0
	same_output plain $name
	report_csv $name
	want_count $name "function=t_use,event=tsc" calls $((threads * rounds))
	want_count $name "function=t_fn,event=tsc" calls $((threads * rounds))
done
echo "$threads threads x $rounds load/call/unload rounds of copies calling through" \
	"their own PLT, 6 runs: as without the shim, every call counted once"
