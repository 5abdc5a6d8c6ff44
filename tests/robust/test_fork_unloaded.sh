#!/bin/bash
# SPDX-License-Identifier: MIT
# A child forked after a library with a target was unloaded.  The child's
# own report file gets the module blocks of the modules loaded (copied
# from the parent's file) and every target block again, the unloaded
# library's target too (its index is the parent's); that target named its
# module, which the child's file does not hold, and the report called the
# file damaged ("target 3 (g_fn) refers to module 7, which does not
# exist").  Here liba.so's g_fn is called 100 times and liba.so unloaded;
# the child loads libb.so (most often at liba's address) and calls its
# g_fn 10 times.  Both files must read without damage, with exact counts.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cc=${CC:-cc}
cd "$T"
echo 'long g_fn(long x) { return x + 3; }' >g.c
cat >main.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static long call(const char *path, long n, void **h)
{
	long (*g)(long);
	long i, s = 0;

	if (!(*h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) ||
	    !(g = (long (*)(long))dlsym(*h, "g_fn")))
		exit(2);
	for (i = 0; i < n; i++)
		s += g(i);
	return s;
}

int main(void)
{
	void *a, *b;
	long s = call("./liba.so", 100, &a);
	pid_t pid;
	int st;

	dlclose(a);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		printf("child: sum %ld\n", call("./libb.so", 10, &b));
		return 0;
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
		return 3;
	printf("parent: sum %ld\n", s);
	return 0;
}
C
$cc -shared -fPIC -o liba.so g.c
$cc -shared -fPIC -o libb.so g.c
$cc -o main main.c -ldl

plain_run plain ./main
expect_status plain 0
mkdir out
hang_run fork g_fn "a fork after an unload" env CACHESHIM_OUTPUT="$T/out/r.%p" ./main
expect_status fork 0
same_output plain fork
[ "$(ls out | wc -l)" = 2 ] || fail "$(ls out | wc -l) report files, want 2"
for f in out/r.*; do
	report_files one "$T/$f"
	grep -q damaged "$T/one.rerr" && { show "$T/one.rerr"; fail "$f called damaged"; }
	got=$(csv_sum one "function=g_fn@*,event=tsc" calls)
	[ "$got" = 100 ] || [ "$got" = 10 ] || { show "$T/one.csv"; fail "$f: g_fn $got calls, want 100 or 10"; }
done
report_files all "$T"/out/r.*
want_count all "function=g_fn@*,event=tsc" calls 110
echo "a child forked after an unload: both files whole, g_fn 100 + 10 calls"
