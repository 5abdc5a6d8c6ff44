#!/bin/bash
# SPDX-License-Identifier: MIT
# Seccomp filters and the system calls the shim still made under them
# (review 14): the hot path's own (a perf group's read without rdpmc,
# the futex probe of a coroutine stack's window, getpid after vfork),
# calls missing from the shim's list (getppid and prlimit64 in a fork
# child's set-up), and a filter a library's constructor installs before
# the shim's constructor ran.  Each killed the program (status 159 or a
# child's 31).  Now: the same output and status, every call counted
# once.  A seccomp call that fails (a bad pointer) leaves measuring on.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=200
cd "$T"
echo 'volatile long sink; long t_leaf(long x) { sink += x; return x + 1; }' >t.c
cat >filt.h <<'C'
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#define KILL_IF(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
/* A filter killing the process at system calls a and b. */
static int kill_at(int a, int b)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		KILL_IF(a), KILL_IF(b), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog p = {sizeof(f) / sizeof(f[0]), f};

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &p);
}
C
cat >prog.c <<'C'
/* prog MODE N: N calls of t_leaf at a call site, a filter (by MODE), then
 * 2N more at the same call site.  read: kills read; vfork: kills getpid,
 * then vforks; coroutine: the calls are made on a coroutine stack ending
 * at a guard page, the filter kills futex; fork: kills getppid and
 * prlimit64, then a fork child calls t_leaf; failed: a seccomp call with
 * a bad filter pointer (EFAULT, no filter). */
#include "filt.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <ucontext.h>

long t_leaf(long);
static ucontext_t main_uc, co_uc;
static long sum;
static int k;
static char *stack;

static __attribute__((noinline)) void call_k(void)
{
	for (int i = 0; i < k; i++)
		sum += t_leaf(i);
}

static void run(int on_coroutine)
{
	if (!on_coroutine) {
		call_k();
		return;
	}
	getcontext(&co_uc);
	co_uc.uc_stack.ss_sp = stack;
	co_uc.uc_stack.ss_size = 65536;
	co_uc.uc_link = &main_uc;
	makecontext(&co_uc, call_k, 0);
	swapcontext(&main_uc, &co_uc);
}

int main(int argc, char **argv)
{
	const char *m = argv[1];
	int co = !strcmp(m, "coroutine"), st = 0, r = 0;
	char out[64];

	k = atoi(argv[2]);
	stack = mmap(NULL, 65536 + 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED || mprotect(stack + 65536, 4096, PROT_NONE))
		return 2;
	run(co);
	if (!strcmp(m, "read"))
		r = kill_at(SYS_read, SYS_read);
	else if (!strcmp(m, "vfork") && !(r = kill_at(SYS_getpid, SYS_getpid))) {
		pid_t p = vfork();

		if (!p)
			_exit(7);
		waitpid(p, &st, 0);
	} else if (co)
		r = kill_at(SYS_futex, SYS_futex);
	else if (!strcmp(m, "fork") && !(r = kill_at(SYS_getppid, SYS_prlimit64))) {
		pid_t p = fork();

		if (!p) {
			t_leaf(1);
			_exit(5);
		}
		waitpid(p, &st, 0);
	} else if (!strcmp(m, "failed"))
		r = !(syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, (void *)8) < 0 &&
		      errno == EFAULT);
	if (r)
		return 3;
	k *= 2;
	run(co);
	write(1, out, snprintf(out, sizeof(out), "sum %ld status %d\n", sum, st));
	return 0;
}
C
cat >sb.c <<'C'
/* A library whose constructor sandboxes the process. */
#include "filt.h"
__attribute__((constructor)) static void sb(void)
{
	if (kill_at(SYS_ftruncate, SYS_fallocate))
		_exit(3);
}
C
echo 'long t_leaf(long); int main(void) { long s = 0; for (int i = 0; i < 100; i++) s += t_leaf(i); return s != 5050; }' >ctor.c
cc=${CC:-cc}
$cc -O1 -shared -fPIC -o libt.so t.c
$cc -O1 -shared -fPIC -o libsb.so sb.c
$cc -O1 -o prog prog.c -L. -lt -Wl,-rpath,"$T"
$cc -O1 -o ctor ctor.c -Wl,--no-as-needed -L. -lt -lsb -Wl,-rpath,"$T"

# run MODE EVENTS: as without the shim; then the report of it in CSV.
run()
{
	plain_run "plain_$1" ./prog "$1" $N
	expect_status "plain_$1" 0
	shim_run "$1" "$2" t_leaf ./prog "$1" $N
	expect_status "$1" 0
	same_output "plain_$1" "$1"
	report_csv "$1"
	"$CS_CMD" report "$T/$1.csr" >"$T/$1.txt" 2>&1 || { show "$T/$1.txt"; fail "report of $1"; }
}

run read tsc,perf::PAGE-FAULTS
want_count read "function=t_leaf,event=tsc" calls $N
want_count read "function=t_leaf,event=tsc" dropped $((2 * N))
echo "read refused, a perf group read without rdpmc: $N measured, $((2 * N)) dropped"

run vfork tsc
want_count vfork "function=t_leaf,event=tsc" calls $N
grep -q "not recorded.*: $((2 * N))\$" "$T/vfork.txt" || { show "$T/vfork.txt"; fail "vfork: want $((2 * N)) not recorded"; }
echo "getpid refused, after vfork: $N measured, $((2 * N)) not recorded"

run coroutine tsc
want_count coroutine "function=t_leaf,event=tsc" calls $N
want_count coroutine "function=t_leaf,event=tsc" dropped $((2 * N))
echo "futex refused, calls on a coroutine stack: $N measured, $((2 * N)) dropped"

run fork tsc
want_count fork "function=t_leaf,event=tsc" calls $((3 * N))
echo "getppid and prlimit64 refused: the fork child lives, $((3 * N)) measured"

run failed tsc
want_count failed "function=t_leaf,event=tsc" calls $((3 * N))
echo "a seccomp call that fails (EFAULT): all $((3 * N)) calls measured"

shim_run ctor tsc t_leaf ./ctor
expect_status ctor 0
echo "a filter installed by a library's constructor: the shim stays inert, exit 0"
