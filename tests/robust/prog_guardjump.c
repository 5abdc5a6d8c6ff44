/* SPDX-License-Identifier: MIT */
/* A signal handler's siglongjmp out of the shim's own code.  The shim's
 * exec wrapper calls getpid() while it holds its "own code is running"
 * guard; this program defines getpid (exported, it comes first in the
 * lookup scope, so that call reaches it), and while armed its getpid
 * raises SIGUSR1, whose handler siglongjmps back into main, abandoning the
 * wrapper half-way.  Then main calls rt_leaf N times: every one of them
 * must still be measured.  Usage: prog_guardjump N; prints the sum of the
 * N calls, and on stderr how often the handler jumped (1 under the shim:
 * without it execv just fails). */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "tests/robust/robust.h"

static volatile sig_atomic_t armed, jumped;
static sigjmp_buf back;

pid_t getpid(void);
__attribute__((visibility("default"))) pid_t getpid(void)
{
	if (armed) {
		armed = 0;
		raise(SIGUSR1);
	}
	return (pid_t)syscall(SYS_getpid);
}

static void on_usr1(int sig)
{
	(void)sig;
	jumped++;
	siglongjmp(back, 1);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, i, sum;
	struct sigaction sa = {0};
	char *const none[] = {"/nonexistent/prog", NULL};

	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	if (!sigsetjmp(back, 1)) {
		armed = 1; /* the shim's exec wrapper reaches getpid */
		execv(none[0], none);
	}
	armed = 0;
	for (i = 0, sum = 0; i < n; i++)
		sum += rt_leaf(i);
	printf("sum %ld\n", sum);
	fprintf(stderr, "jumped %d\n", (int)jumped);
	return 0;
}
