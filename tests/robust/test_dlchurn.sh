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
# And copies whose t_use calls t_fn through their own PLT: a thread's
# dlclose seen late (after another thread's copy was mapped at its
# addresses and entry-patched) marked every target in the range
# unloaded, the new copy's too; its t_fn then looked unpatched, the next
# pass hooked its GOT slot as well, and calls from t_use were counted
# twice (t_fn 801-802 calls of 800 in 8 runs of 12).
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
cat >t.c <<'C'
long t_fn(long x) { return x + 1; }
long t_use(long x) { return t_fn(x) * 2; } /* a PLT call: t_fn's GOT slot */
C
# main ROUNDS THREADS P: threads load, call P_use of (and P_seen, if
# there), and unload ./libP1.so ... ./libPn.so, each its own.
cat >main.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int n;
static char libs[8][16], use[16], seen[16];
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
		long (*u)(long) = (long (*)(long))dlsym(h, use);
		void *(*s)(void) = (void *(*)(void))dlsym(h, seen);
		bad += u(5) != (*use == 'c' ? 4 : 12) || (s && !s());
		dlclose(h);
	}
	/* Nor while a thread exits: glibc blocks every signal there. */
	pthread_barrier_wait(&all_done);
	return (void *)bad;
}
int main(int argc, char **argv)
{
	int threads = atoi(argv[2]);
	pthread_t t[8];
	long bad = 0;

	n = atoi(argv[1]);
	if (argc != 4 || threads < 1 || threads > 8 || strlen(argv[3]) > 4)
		return 2;
	snprintf(use, sizeof(use), "%s_use", argv[3]);
	snprintf(seen, sizeof(seen), "%s_seen", argv[3]);
	dlopen("./libq.so", RTLD_NOW | RTLD_GLOBAL);
	pthread_barrier_init(&all_made, NULL, threads + 1);
	pthread_barrier_init(&all_done, NULL, threads);
	for (int i = 0; i < threads; i++) {
		snprintf(libs[i], sizeof(libs[i]), "./lib%s%d.so", argv[3], i + 1);
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
for i in 1 2 3 4 5 6 7 8; do
	$cc -shared -fPIC -o libc$i.so c.c -L. -lq -ldl -Wl,-rpath,"$T"
	$cc -shared -fPIC -O1 -o libt$i.so t.c
done
$cc -o main main.c -ldl -lpthread -Wl,-rpath,"$T"

# churn_runs P THREADS ROUNDS RUNS: P's functions have exactly THREADS x
# ROUNDS calls in each of RUNS runs.
churn_runs()
{
	local p=$1 threads=$2 rounds=$3 run name fns

	fns=c_use,q_fn
	[ $p = t ] && fns=t_use,t_fn
	plain_run plain$p$threads ./main $rounds $threads $p
	expect_status plain$p$threads 0
	for run in $(seq 1 $4); do
		name=churn$p${threads}_$run
		status=0
		timeout -s KILL 120 env CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc \
			CACHESHIM_TARGETS=$fns CACHESHIM_OUTPUT="$T/$name.csr" \
			LD_PRELOAD=$CS_SHIM ./main $rounds $threads $p \
			>"$T/$name.out" 2>"$T/$name.err" || status=$?
		expect_status $name 0
		same_output plain$p$threads $name
		report_csv $name
		want_count $name "function=${fns%,*}@*,event=tsc" calls $((threads * rounds))
		want_count $name "function=${fns#*,}@*,event=tsc" calls $((threads * rounds))
	done
	echo "$fns: $threads threads x $rounds load/call/unload rounds, $4 runs:" \
		"as without the shim, every call counted once"
}

churn_runs c 4 200 5
churn_runs c 8 100 3
churn_runs t 8 100 6
