/* SPDX-License-Identifier: MIT */
/*
 * Wrapped calls from a program's pthread key destructor, which runs as
 * the thread exits (after the shim's own key destructor in the first
 * round: the shim's key is made earlier, in its constructor).
 *
 * Usage: prog_keydtor T [late].  T threads each make 1 rt_leaf call, then
 * 10 from the key destructor; prints the sum of all 11 * T results.
 * late: the threads make no call of their own; their key destructor sets
 * the key again until glibc's last round and makes 1 call there; prints
 * how many descriptors the process gained meanwhile.
 */
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Rounds of key destructors so far, per thread, counted in the value. */
static void late_destructor(void *p)
{
	long round = (long)p;

	if (round < PTHREAD_DESTRUCTOR_ITERATIONS)
		pthread_setspecific(key, (void *)(round + 1));
	else
		__atomic_fetch_add(&total, rt_leaf(round), __ATOMIC_RELAXED);
}

static void *late_thread(void *arg)
{
	pthread_setspecific(key, (void *)1);
	return arg;
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
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
	int i, fds, n = argc >= 2 ? atoi(argv[1]) : 0;

	if (n < 1 || (argc == 2 && n > 64))
		return 2;
	if (argc == 3 && !strcmp(argv[2], "late")) {
		if (pthread_key_create(&key, late_destructor))
			return 1;
		fds = open_fds();
		for (i = 0; i < n; i++) {
			if (pthread_create(&t[0], NULL, late_thread, NULL))
				return 1;
			pthread_join(t[0], NULL);
		}
		printf("total %ld, descriptors gained %d\n", total, open_fds() - fds);
		return 0;
	}
	if (argc != 2)
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
