/* SPDX-License-Identifier: MIT */
/* Deep recursion of wrapped functions, on a thread with a large stack.
 *
 * Usage: prog_recurse DEPTH STACK_MB.  A thread with a STACK_MB MiB stack
 * calls rt_ping(DEPTH): rt_ping and rt_pong call each other DEPTH levels
 * deep through libcsrobust's PLT, DEPTH + 1 wrapped calls in all, every
 * one of them on the stack at the deepest point.  The stack is the same
 * with and without the shim, so only the shim's own use of stack (a frame
 * and a copy of the stack-argument window per call) differs. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/robust/robust.h"

static void *deep(void *arg)
{
	long *depth = arg;

	*depth = rt_ping(*depth);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	pthread_t tid;
	long depth, want;
	size_t mb;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEPTH STACK_MB\n", argv[0]);
		return 2;
	}
	depth = atol(argv[1]);
	mb = (size_t)atol(argv[2]);
	want = depth * (depth + 1) / 2;
	pthread_attr_init(&attr);
	if (pthread_attr_setstacksize(&attr, mb << 20) ||
	    pthread_create(&tid, &attr, deep, &depth)) {
		fprintf(stderr, "cannot start a thread with a %zu MiB stack\n", mb);
		return 1;
	}
	pthread_join(tid, NULL);
	printf("rt_ping(%s) = %ld (want %ld)\n", argv[1], depth, want);
	return depth == want ? 0 : 1;
}
