#!/bin/bash
# SPDX-License-Identifier: MIT
# fork while another thread is inside the clear of a pass's memo of the
# loads it handled (shim/loadmemo.c).  The child re-initializes the
# shim's locks, and the memo is as the other thread left it: its array
# freed, its pointer not yet forgotten.  The child's next pass (a dlopen)
# dropped the memo again and freed the array a second time.  The order is
# forced by a free() preloaded before the shim (libhook.so): thread B's
# first free from the shim's code once armed, in its dlclose's forget of
# unloaded modules, frees the block and then waits until main has forked;
# in the child, a second free of that block is reported (exit 66; glibc
# itself need not see it: the block went to thread B's cache).  The
# child must dlopen libb.so and count its 10 calls of g_fn in its own
# file, the parent liba.so's 100 in its.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cc=${CC:-cc}
cd "$T"
# Premise: the shim's symbols, to tell where the hook held thread B.
clear_at=$(nm -S "$CS_SHIM" 2>/dev/null | awk '$4 == "cs_load_memo_clear" { print $1, $2 }')
if [ -z "$clear_at" ]; then
	echo "SKIP: no symbol table in $CS_SHIM (cs_load_memo_clear not found)"
	exit 77
fi
echo 'long g_fn(long x) { return x + 3; }' >g.c
cat >hook.c <<'C'
#define _GNU_SOURCE
#include <link.h>
#include <semaphore.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

void __libc_free(void *);

sem_t hook_in, hook_forked;
uintptr_t hook_at; /* where in the shim the held free returns to */
static uintptr_t shim_base, shim_lo, shim_hi;
static __thread int armed;
static void *held;

static int find_shim(struct dl_phdr_info *info, size_t size, void *data)
{
	int i;

	(void)size;
	(void)data;
	if (!info->dlpi_name || !strstr(info->dlpi_name, "libcacheshim"))
		return 0;
	shim_base = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && (info->dlpi_phdr[i].p_flags & PF_X)) {
			shim_lo = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			shim_hi = shim_lo + info->dlpi_phdr[i].p_memsz;
		}
	return 1;
}

/* The calling thread's next free of a block from the shim's code waits,
 * the block freed, until hook_forked is posted. */
int hook_arm(void)
{
	dl_iterate_phdr(find_shim, NULL);
	armed = 1;
	return shim_lo != 0;
}

void free(void *p)
{
	uintptr_t ret = (uintptr_t)__builtin_return_address(0);

	if (p && p == held) {
		static const char msg[] = "hook: the held block freed a second time\n";

		write(2, msg, sizeof(msg) - 1);
		_exit(66);
	}
	__libc_free(p);
	if (armed && p && ret >= shim_lo && ret < shim_hi) {
		armed = 0;
		held = p;
		hook_at = ret - shim_base;
		sem_post(&hook_in);
		sem_wait(&hook_forked);
	}
}
C
cat >main.c <<'C'
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

extern sem_t hook_in, hook_forked;
extern uintptr_t hook_at;
int hook_arm(void);
static void *a;

static long call(void *h, long n)
{
	long (*g)(long) = (long (*)(long))dlsym(h, "g_fn");
	long i, s = 0;

	if (!g)
		exit(3);
	for (i = 0; i < n; i++)
		s += g(i);
	return s;
}

/* dlclose of liba.so: the shim forgets it, and clears the entry pass's
 * memo (its first free once armed). */
static void *thread_b(void *arg)
{
	if (!hook_arm())
		exit(4);
	dlclose(a);
	return arg;
}

int main(void)
{
	pthread_t t;
	long s;
	pid_t pid;
	int st;

	sem_init(&hook_in, 0, 0);
	sem_init(&hook_forked, 0, 0);
	if (!(a = dlopen("./liba.so", RTLD_NOW | RTLD_LOCAL)))
		return 2;
	s = call(a, 100);
	pthread_create(&t, NULL, thread_b, NULL);
	sem_wait(&hook_in);
	pid = fork();
	if (pid == 0) {
		void *b = dlopen("./libb.so", RTLD_NOW | RTLD_LOCAL);

		if (!b)
			_exit(2);
		printf("child: sum %ld\n", call(b, 10));
		fflush(stdout);
		_exit(0);
	}
	sem_post(&hook_forked);
	pthread_join(t, NULL);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return 5;
	printf("parent: sum %ld\n", s);
	fprintf(stderr, "held at 0x%lx\n", (unsigned long)hook_at);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
C
$cc -shared -fPIC -o liba.so g.c
$cc -shared -fPIC -o libb.so g.c
$cc -shared -fPIC -o libhook.so hook.c
$cc -o main main.c ./libhook.so -ldl -pthread -Wl,-rpath,"$T"

mkdir out
status=0
timeout 60 env CACHESHIM_QUIET=1 CACHESHIM_UNMATCHED=0 CACHESHIM_EVENTS=tsc \
	CACHESHIM_TARGETS=g_fn CACHESHIM_OUTPUT="$T/out/r.%p" \
	LD_PRELOAD="$T/libhook.so $CS_SHIM" ./main >fork.out 2>fork.err || status=$?
[ "$status" != 124 ] || fail "hung (killed after 60 s)"
[ "$status" != 66 ] || { show "$T/fork.err"; fail "the child freed the memo's block a second time"; }
expect_status fork 0
# Premise: the hook held thread B inside cs_load_memo_clear.
at=$(sed -n 's/^held at 0x\([0-9a-f]*\)$/\1/p' fork.err)
read -r lo size <<<"$clear_at"
[ -n "$at" ] && (((16#$at) > (16#$lo) && (16#$at) <= (16#$lo) + (16#$size))) ||
	{ show "$T/fork.err"; fail "thread B was held at 0x$at, not in cs_load_memo_clear (0x$lo, 0x$size bytes)"; }
[ "$(sort fork.out)" = "$(printf 'child: sum 75\nparent: sum 5250\n')" ] ||
	{ show "$T/fork.out"; fail "wrong output"; }
[ "$(ls out | wc -l)" = 2 ] || fail "$(ls out | wc -l) report files, want 2"
for f in out/r.*; do
	report_files one "$T/$f"
	got=$(csv_sum one "function=g_fn@*,event=tsc" calls)
	[ "$got" = 100 ] || [ "$got" = 10 ] || { show "$T/one.csv"; fail "$f: g_fn $got calls, want 100 or 10"; }
done
report_files all "$T"/out/r.*
want_count all "function=g_fn@*,event=tsc" calls 110
echo "fork while a thread cleared a memo: the child's pass did not free it again; g_fn 100 + 10 calls"
