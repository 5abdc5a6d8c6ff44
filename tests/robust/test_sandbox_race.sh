#!/bin/bash
# SPDX-License-Identifier: MIT
# Two threads install seccomp filters at once: A one the kernel refuses
# (an instruction after its last return: EINVAL), main a valid one that
# kills on gettid and getpid, which the program never calls and the shim
# does (a new thread's set-up).  A refused filter's undo checked that no
# other filter had come, then cleared the sandboxed state by two stores:
# with main's filter installed between the check and the stores, the shim
# took itself for unsandboxed and the next thread's set-up was killed
# (SIGSYS).  The interleaving is forced under gdb (a watchpoint on the
# first store; skipped without gdb): the program must exit 0.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

command -v gdb >/dev/null 2>&1 || { echo "SKIP: no gdb"; exit 77; }
cd "$T"
echo 'volatile long sink; long t_leaf(long x) { sink += x; return x + 1; }' >t.c
cat >prog.c <<'C'
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

long t_leaf(long);
volatile int b_go;
static volatile int a_done;

#define KILL_GETTID_GETPID                                                \
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)), \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_gettid, 1, 0),            \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 0, 1),            \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),              \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static struct sock_filter good[] = {KILL_GETTID_GETPID};
static struct sock_filter bad[] = {
	KILL_GETTID_GETPID, BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))};

__attribute__((noinline)) void b_done(void)
{
	__asm__ volatile("");
}

static void *thread_a(void *arg)
{
	struct sock_fprog p = {sizeof(bad) / sizeof(bad[0]), bad};

	printf("A: %d\n", prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p, 0, 0));
	a_done = 1;
	return arg;
}

static void *thread_c(void *arg)
{
	return (void *)t_leaf(3);
}

int main(void)
{
	struct sock_fprog p = {sizeof(good) / sizeof(good[0]), good};
	pthread_t a, c;

	t_leaf(1);
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	pthread_create(&a, NULL, thread_a, NULL);
	/* A finishes first unless the debugger lets this in early. */
	while (!b_go && !a_done)
		;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p, 0, 0))
		return 1;
	b_done();
	pthread_join(a, NULL);
	pthread_create(&c, NULL, thread_c, NULL);
	pthread_join(c, NULL);
	printf("done\n");
	return 0;
}
C
cc=${CC:-cc}
$cc -O1 -shared -fPIC -o libt.so t.c
$cc -g -O1 -o prog prog.c -L. -lt -Wl,-rpath,"$T" -pthread

plain_run plain ./prog
expect_status plain 0
cat >race.gdb <<G
set pagination off
set confirm off
set startup-with-shell off
set environment CACHESHIM_QUIET=1
set environment CACHESHIM_EVENTS=tsc
set environment CACHESHIM_TARGETS=t_leaf
set environment CACHESHIM_OUTPUT=$T/shim.csr
set environment LD_PRELOAD=$CS_SHIM
break main
run
# Thread A's undo, once it starts clearing (gdb stops after the store).
watch -l cs_g.sandbox_refused if cs_g.sandbox_refused == 0
continue
set var b_go = 1
set scheduler-locking on
thread 1
break b_done
continue
set scheduler-locking off
delete
continue
G
gdb -q -batch -x race.gdb ./prog >gdb.out 2>&1 || true
if ! grep -q "b_done" gdb.out; then
	cat gdb.out
	echo "SKIP: gdb could not force the interleaving"
	exit 77
fi
if ! grep -q "exited normally" gdb.out || ! grep -q "^done$" gdb.out; then
	cat gdb.out
	fail "under the shim, with main's filter installed during A's undo, the program did not end normally"
fi
echo "main's filter installed during the refused filter's undo: the program ends normally"
