/* SPDX-License-Identifier: MIT */
/* Runs a program under a seccomp filter that forbids perf_event_open, as a
 * service manager or a container profile might.
 *
 * Usage: prog_nosyscall kill|trap|eperm|nopopulate PROGRAM ARGS...  kill:
 * the process is killed by the call (SECCOMP_RET_KILL_PROCESS); trap:
 * SIGSYS is raised (SECCOMP_RET_TRAP); eperm: the call fails with EPERM.
 * nopopulate: perf_event_open is allowed, and madvise(MADV_POPULATE_WRITE)
 * fails with EINVAL instead, as on a kernel before Linux 5.14.  Every other
 * system call is allowed. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Installs the filter of n instructions and runs argv under it. */
static int run_filtered(struct sock_filter *insns, unsigned short n, char **argv)
{
	struct sock_fprog prog = {n, insns};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("seccomp");
		return 1;
	}
	execvp(argv[0], argv);
	perror("exec");
	return 127;
}

/* Runs argv with madvise(MADV_POPULATE_WRITE) failing as a kernel that
 * does not know it fails it (EINVAL). */
static int old_kernel(char **argv)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_madvise, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, MADV_POPULATE_WRITE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};

	return run_filtered(insns, sizeof(insns) / sizeof(insns[0]), argv);
}

int main(int argc, char **argv)
{
	unsigned action;

	if (argc < 3) {
		fprintf(stderr, "usage: %s kill|trap|eperm|nopopulate PROGRAM ARGS...\n",
			argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "nopopulate"))
		return old_kernel(argv + 2);
	if (!strcmp(argv[1], "kill"))
		action = SECCOMP_RET_KILL_PROCESS;
	else if (!strcmp(argv[1], "trap"))
		action = SECCOMP_RET_TRAP;
	else
		action = SECCOMP_RET_ERRNO | EPERM;
	{
		struct sock_filter insns[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, action),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};

		return run_filtered(insns, sizeof(insns) / sizeof(insns[0]), argv + 2);
	}
}
