#!/bin/bash
# SPDX-License-Identifier: MIT
# Threads loading, calling and unloading libraries in a loop, each its own
# copy, whose constructor looks a target up with dlsym.  The entry pass
# read a module's code after listing it without holding it loaded: another
# thread's dlclose unmapped it under the pass (SIGSEGV in 4 of 12 runs;
# the build before the dlsym change hung instead).  The pass now holds
# each module while it reads and patches it, as the GOT pass does.
# Every call must also be counted: the dlclose wrapper forgets a module
# after the real dlclose returned, and another thread's copy mapped at
# its addresses meanwhile was taken for it (done, its c_use patched
# already): ~8% of c_use calls were not counted, and no loss was
# reported.  So c_use and q_fn have exactly threads x rounds calls, with
# 4 threads and with 8.
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
static char libs[8][16];
static pthread_barrier_t all_made, all_done;
static void *loop(void *a)
{
	long bad = 0;

	/* Not while a thread is being made: glibc's pthread_create blocks
	 * every signal meanwhile, and a thread blocking SIGTRAP makes the
	 * shim defer live entry patches (said in the report); the shim waits
	 * for that moment to pass, a second at most, which a loaded machine
	 * can exceed. */
	pthread_barrier_wait(&all_made);
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
	dlopen("./libq.so", RTLD_NOW | RTLD_GLOBAL);
	pthread_barrier_init(&all_made, NULL, threads + 1);
	pthread_barrier_init(&all_done, NULL, threads);
	for (int i = 0; i < threads; i++) {
		snprintf(libs[i], sizeof(libs[i]), "./libc%d.so", i + 1);
		pthread_create(&t[i], 0, loop, libs[i]);
	}
	pthread_barrier_wait(&all_made); /* main is out of pthread_create */
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
$cc -shared -fPIC -o libq.so q.c
for i in 1 2 3 4 5 6 7 8; do $cc -shared -fPIC -o libc$i.so c.c -L. -lq -ldl -Wl,-rpath,"$T"; done
$cc -o main main.c -ldl -lpthread -Wl,-rpath,"$T"

# churn_runs THREADS ROUNDS RUNS
churn_runs()
{
	local threads=$1 rounds=$2 run name

	plain_run plain$threads ./main $rounds $threads
	expect_status plain$threads 0
	for run in $(seq 1 $3); do
		name=churn${threads}_$run
		status=0
		timeout -s KILL 120 env CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc \
			CACHESHIM_TARGETS=c_use,q_fn CACHESHIM_OUTPUT="$T/$name.csr" \
			LD_PRELOAD=$CS_SHIM ./main $rounds $threads \
			>"$T/$name.out" 2>"$T/$name.err" || status=$?
		expect_status $name 0
		same_output plain$threads $name
		report_csv $name
		want_count $name "function=c_use,event=tsc" calls $((threads * rounds))
		want_count $name "function=q_fn,event=tsc" calls $((threads * rounds))
	done
	echo "$threads threads x $rounds load/call/unload rounds, $3 runs:" \
		"as without the shim, every call counted"
}

churn_runs 4 200 5
churn_runs 8 100 3
