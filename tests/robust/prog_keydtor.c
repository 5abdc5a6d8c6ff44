/* SPDX-License-Identifier: MIT */
/*
 * Wrapped calls from a program's pthread key destructor, which runs as
 * the thread exits (after the shim's own key destructor in the first
 * round: the shim's key is made earlier, in its constructor).
 *
 * Usage: prog_keydtor T.  T threads each make 1 rt_leaf call, then 10
 * from the key destructor; prints the sum of all 11 * T results.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/robust/robust.h"

static pthread_key_t key;
static long total;

static void destructor(void *p)
{
	long i, s = 0;

	for (i = 0; i < 10; i++)
		s += rt_leaf(i);
	__atomic_fetch_add(&total, s, __ATOMIC_RELAXED);
	(void)p;
}

static void *thread(void *arg)
{
	pthread_setspecific(key, arg);
	__atomic_fetch_add(&total, rt_leaf(100), __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	static pthread_t t[64];
	int i, n = argc == 2 ? atoi(argv[1]) : 0;

	if (n < 1 || n > 64)
		return 2;
	if (pthread_key_create(&key, destructor))
		return 1;
	for (i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, thread, &key))
			return 1;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("total %ld\n", total);
	return 0;
}
