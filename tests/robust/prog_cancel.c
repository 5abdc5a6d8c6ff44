/* SPDX-License-Identifier: MIT */
/* Threads with a pthread_cancel request pending (deferred, the default)
 * when they reach the shim's code that calls libc: the request must act
 * at the program's own next cancellation point, as without the shim.
 *
 * Usage: prog_cancel first N: N threads, one after the other, each
 *   cancelled while it spins (no cancellation point) and then making its
 *   first wrapped call (rt_leaf: the shim sets the thread up) before
 *   pthread_testcancel; prints what each call returned.  Then main's call.
 * prog_cancel dlopen PLUGIN: a thread cancelled the same way dlopens
 *   PLUGIN (the shim's patching pass runs in the dlopen) and stores
 *   whether it loaded before pthread_testcancel; then main dlopens it too
 *   and calls plug_run(100).
 * prog_cancel fork N: a thread that made a call is cancelled, then forks
 *   (the shim's fork handler runs in the child, with the request pending
 *   there too); the child calls rt_leaf(N) and leaves by _exit with what
 *   it returned; prints the child's wait status. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/robust/robust.h"

static volatile int pending;
static long arg;
static const char *plugin;
static volatile long result;
static int child_status = -1;

static void wait_pending(void)
{
	while (!pending)
		; /* no cancellation point */
}

static void *first(void *p)
{
	(void)p;
	wait_pending();
	result = rt_leaf(arg);
	pthread_testcancel();
	result = -1;
	return NULL;
}

static void *load(void *p)
{
	(void)p;
	wait_pending();
	result = dlopen(plugin, RTLD_NOW) != NULL;
	pthread_testcancel();
	result = -1;
	return NULL;
}

static void *forker(void *p)
{
	pid_t pid;

	(void)p;
	result = rt_leaf(0);
	wait_pending();
	pid = fork();
	if (pid == 0)
		_exit((int)rt_leaf(arg));
	/* waitpid is a cancellation point: wait with the request held. */
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	if (pid > 0)
		waitpid(pid, &child_status, 0);
	pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
	pthread_testcancel();
	child_status = -2;
	return NULL;
}

/* Runs fn in a thread cancelled before it goes on; 0 if it was. */
static int cancelled(void *(*fn)(void *))
{
	pthread_t t;
	void *ret = NULL;

	pending = 0;
	result = 0;
	if (pthread_create(&t, NULL, fn, NULL)) {
		fprintf(stderr, "pthread_create failed\n");
		exit(2);
	}
	if (fn == forker)
		while (!result)
			;
	pthread_cancel(t);
	pending = 1;
	pthread_join(t, &ret);
	return ret == PTHREAD_CANCELED ? 0 : 1;
}

int main(int argc, char **argv)
{
	long i, n;
	int st;

	if (argc != 3) {
		fprintf(stderr, "usage: %s first N | dlopen PLUGIN | fork N\n", argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "first")) {
		n = atol(argv[2]);
		for (i = 0; i < n; i++) {
			arg = i;
			st = cancelled(first);

			printf("thread %ld: rt_leaf %ld, %s\n", i, result,
			       st ? "ended" : "cancelled");
		}
		printf("main: rt_leaf %ld\n", rt_leaf(n));
	} else if (!strcmp(argv[1], "dlopen")) {
		void *h;
		long (*run)(long);

		plugin = argv[2];
		st = cancelled(load);
		printf("thread: loaded %ld, %s\n", result, st ? "ended" : "cancelled");
		h = dlopen(plugin, RTLD_NOW);
		run = h ? (long (*)(long))dlsym(h, "plug_run") : NULL;
		if (!run) {
			fprintf(stderr, "%s: %s\n", plugin, dlerror());
			return 1;
		}
		printf("main: plug_run %ld\n", run(100));
	} else if (!strcmp(argv[1], "fork")) {
		arg = atol(argv[2]);
		st = cancelled(forker);
		printf("child: status %#x; thread %s\n", child_status, st ? "ended" : "cancelled");
	} else {
		fprintf(stderr, "%s: unknown mode '%s'\n", argv[0], argv[1]);
		return 2;
	}
	return 0;
}
