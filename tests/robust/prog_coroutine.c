/* SPDX-License-Identifier: MIT */
/*
 * A coroutine (makecontext) on a stack of its own, with nothing readable
 * above its top, makes wrapped calls from its entry function: their
 * arguments lie a few bytes below the stack's end.
 *
 * Usage: prog_coroutine guard|unmapped|brk N [sandbox].  guard: a PROT_NONE
 * page above the stack; unmapped: no mapping there; brk: a 16 KiB stack
 * taken from the heap by brk, whose end is the stack's top (run under
 * `ulimit -s unlimited`, the heap grows into the range glibc gives for
 * the main thread's stack).  sandbox: first a
 * seccomp filter that kills the process at process_vm_readv or
 * process_vm_writev, as some sandboxes do.  Prints the sum of N rt_leaf
 * calls made in the coroutine.
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "tests/robust/robust.h"

static ucontext_t main_uc, co_uc;
static long calls, sum;

static void co(void)
{
	long i;

	for (i = 0; i < calls; i++)
		sum += rt_leaf(i);
}

static int sandbox(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_writev, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = {sizeof(insns) / sizeof(insns[0]), insns};

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
	size_t size = 64 * 1024, page = 4096;
	char *m;

	if (argc < 3 || argc > 4 ||
	    (strcmp(argv[1], "guard") && strcmp(argv[1], "unmapped") && strcmp(argv[1], "brk")) ||
	    (argc == 4 && strcmp(argv[3], "sandbox")))
		return 2;
	if (argc == 4 && sandbox())
		return 1;
	calls = atol(argv[2]);
	if (!strcmp(argv[1], "brk")) {
		size = 16 * 1024;
		m = (char *)(((uintptr_t)sbrk(0) + page - 1) & ~(uintptr_t)(page - 1));
		if (brk(m + size))
			return 1;
		goto made;
	}
	m = mmap(NULL, size + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	if (!strcmp(argv[1], "guard") ? mprotect(m + size, page, PROT_NONE)
				      : munmap(m + size, page))
		return 1;
made:
	getcontext(&co_uc);
	co_uc.uc_stack.ss_sp = m;
	co_uc.uc_stack.ss_size = size;
	co_uc.uc_link = &main_uc;
	makecontext(&co_uc, co, 0);
	swapcontext(&main_uc, &co_uc);
	printf("sum %ld\n", sum);
	return 0;
}
