/* SPDX-License-Identifier: MIT */
/* cs_main_stack (shim/mainstack.c) against glibc's pthread_getattr_np,
 * which reads /proc/self/maps: the same bounds, under several stack
 * limits, and no answer where it cannot tell (no limit). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <CUnit/Basic.h>

#include "shim/internal.h"

/* glibc's bounds of the calling (main) thread's stack. */
static int glibc_stack(uint64_t *lo, uint64_t *hi)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	int ok;

	if (pthread_getattr_np(pthread_self(), &attr))
		return 0;
	ok = !pthread_attr_getstack(&attr, &addr, &size);
	pthread_attr_destroy(&attr);
	*lo = (uint64_t)(uintptr_t)addr;
	*hi = *lo + size;
	return ok;
}

/* Started by ld.so as a program (main's re-exec below): AT_EXECFN is
 * argv[0] then, not the top of the stack; no answer is right, a wrong one
 * is not. */
static int via_ldso;

/* Whether the strings above the stack's start (argv, the environment)
 * take more than the 64 pages cs_main_stack checks: then it does not
 * answer (a CI runner with a very large environment). */
static int huge_environment(void)
{
	extern void *__libc_stack_end;
	const char *fn = (const char *)getauxval(AT_EXECFN);

	return fn && (uintptr_t)fn + strlen(fn) - (uintptr_t)__libc_stack_end > 60 * 4096ul;
}

/* Under soft limit cur (if the hard limit allows it): both agree, or
 * (may_refuse) cs_main_stack does not answer. */
static void same_as_glibc(rlim_t cur, int may_refuse)
{
	struct rlimit old, rl;
	uint64_t lo = 0, hi = 0, glo = 0, ghi = 0;
	int answered;

	CU_ASSERT_FATAL(getrlimit(RLIMIT_STACK, &old) == 0);
	rl = old;
	rl.rlim_cur = cur;
	if (cur != old.rlim_cur && (old.rlim_max != RLIM_INFINITY && cur > old.rlim_max))
		return;
	CU_ASSERT_FATAL(setrlimit(RLIMIT_STACK, &rl) == 0);
	answered = cs_main_stack(&lo, &hi);
	CU_ASSERT_EQUAL(glibc_stack(&glo, &ghi), 1);
	if ((via_ldso || may_refuse || huge_environment()) && !answered) {
		CU_ASSERT_FATAL(setrlimit(RLIMIT_STACK, &old) == 0);
		return;
	}
	CU_ASSERT_EQUAL(answered, 1);
	if (lo != glo || hi != ghi)
		fprintf(stderr, "limit %llu: [%#llx, %#llx) against glibc's [%#llx, %#llx)\n",
			(unsigned long long)cur, (unsigned long long)lo, (unsigned long long)hi,
			(unsigned long long)glo, (unsigned long long)ghi);
	CU_ASSERT_EQUAL(lo, glo);
	CU_ASSERT_EQUAL(hi, ghi);
	/* This frame is inside. */
	CU_ASSERT((uint64_t)(uintptr_t)&rl > lo && (uint64_t)(uintptr_t)&rl < hi);
	CU_ASSERT_FATAL(setrlimit(RLIMIT_STACK, &old) == 0);
}

static void test_limits(void)
{
	same_as_glibc(8u << 20, 0);
	same_as_glibc(4u << 20, 0);
	same_as_glibc(64u << 20, 0);
	same_as_glibc((1u << 20) + 12345, 0); /* not a page multiple */
	/* Raised since the exec, past the mmap area's top (ld.so: at most
	 * 16 GB and the mmap randomization, 1 TB or 16 TB, below the stack),
	 * as a library's constructor may before the shim's (with ASLR off,
	 * 128 MB suffice): glibc stops at ld.so; cs_main_stack took all
	 * 32 TB (a module inside: no answer now). */
	same_as_glibc(1ull << 45, 1);
}

/* No limit: glibc's size is then the gap down to the mapping below, which
 * only the maps tell: no answer (the shim asks glibc). */
static void test_unlimited(void)
{
	struct rlimit old, rl;
	uint64_t lo = 1, hi = 2;

	CU_ASSERT_FATAL(getrlimit(RLIMIT_STACK, &old) == 0);
	if (old.rlim_max != RLIM_INFINITY)
		return;
	rl = old;
	rl.rlim_cur = RLIM_INFINITY;
	CU_ASSERT_FATAL(setrlimit(RLIMIT_STACK, &rl) == 0);
	CU_ASSERT_EQUAL(cs_main_stack(&lo, &hi), 0);
	CU_ASSERT_EQUAL(lo, 1);
	CU_ASSERT_EQUAL(hi, 2);
	CU_ASSERT_FATAL(setrlimit(RLIMIT_STACK, &old) == 0);
}

/* ld.so, or NULL where it is not looked for. */
static const char *find_ldso(void)
{
	static const char *const ldso[] = {"/lib64/ld-linux-x86-64.so.2",
					   "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"};
	unsigned i;

	for (i = 0; i < sizeof(ldso) / sizeof(ldso[0]); i++)
		if (access(ldso[i], X_OK) == 0)
			return ldso[i];
	return NULL;
}

/* This program again, started by ld.so as a program: 0 if it passed. */
static int run_via_ldso(const char *self)
{
	static char pad[3 * 4096];
	const char *ldso = find_ldso();
	char cmd[8192];

	if (!ldso)
		return 0; /* nothing to run */
	/* Pages of environment above argv[0], so that its page is not the
	 * top one. */
	memset(pad, 'x', sizeof(pad) - 1);
	setenv("CS_TEST_PAD", pad, 1);
	snprintf(cmd, sizeof(cmd), "%s '%s' --via-ldso >/dev/null", ldso, self);
	return system(cmd);
}

/* The same with only an environment sized so that the strings above
 * argv[0] (the argument, the environment, ld.so's name, each with its
 * NUL) fill two pages exactly: argv[0], which ld.so makes AT_EXECFN, then
 * ends 8 bytes below a page boundary as the kernel's copy does (its stack
 * was taken two pages larger than glibc's).  0 if it passed. */
static int run_via_ldso_exact(const char *self)
{
	static char pad[2 * 4096];
	const char *ldso = find_ldso();
	char *args[] = {NULL, (char *)self, "--via-ldso", NULL}, *env[] = {pad, NULL};
	size_t len;
	pid_t pid;
	int status;

	if (!ldso)
		return 0;
	args[0] = (char *)ldso;
	len = sizeof(pad) - sizeof("--via-ldso") - (strlen(ldso) + 1) - 1;
	memset(pad, 'x', len);
	memcpy(pad, "CS_TEST_PAD=", 12);
	pad[len] = '\0';
	pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(99);
		execve(ldso, args, env);
		_exit(99);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static const char *self;

static void test_ldso(void)
{
	CU_ASSERT_EQUAL(run_via_ldso(self), 0);
	CU_ASSERT_EQUAL(run_via_ldso_exact(self), 0);
}

int main(int argc, char **argv)
{
	CU_pSuite s;
	int failed;

	via_ldso = argc > 1 && !strcmp(argv[1], "--via-ldso");
	self = argv[0];

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	s = CU_add_suite("main thread's stack", NULL, NULL);
	if (!s || !CU_add_test(s, "same bounds as glibc", test_limits) ||
	    !CU_add_test(s, "no answer without a limit", test_unlimited) ||
	    (!via_ldso && !CU_add_test(s, "ld.so as the program", test_ldso))) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = (int)CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
