/* SPDX-License-Identifier: MIT */
/* A stop-the-world collector's pattern (Boehm GC with malloc redirected).
 *
 * Usage: prog_gcstop thread|dlopen STOPS.  The program's own malloc takes
 * an allocator lock; a collection (main) holds that lock while it signals
 * thread B and waits for B's handler to acknowledge.  B creates and joins
 * a thread (thread) or loads and unloads a library (dlopen) in a loop,
 * calling rt_leaf each round.  A stop not acknowledged within 10 s is a
 * deadlock: exit 3.
 *
 * The shim must never block signals around code that mallocs: B would
 * wait in malloc for the lock with SIGUSR1 blocked, main for B's
 * acknowledgement.  The new-thread wrapper and the patching pass after
 * dlopen did so for a while (a handler's target call there went
 * uncounted otherwise). */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/robust/robust.h"

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;

void *malloc(size_t n)
{
	void *p;

	pthread_mutex_lock(&alloc_lock);
	p = __libc_malloc(n);
	pthread_mutex_unlock(&alloc_lock);
	return p;
}

void free(void *p)
{
	pthread_mutex_lock(&alloc_lock);
	__libc_free(p);
	pthread_mutex_unlock(&alloc_lock);
}

void *calloc(size_t a, size_t b)
{
	void *p;

	pthread_mutex_lock(&alloc_lock);
	p = __libc_calloc(a, b);
	pthread_mutex_unlock(&alloc_lock);
	return p;
}

void *realloc(void *q, size_t n)
{
	void *p;

	pthread_mutex_lock(&alloc_lock);
	p = __libc_realloc(q, n);
	pthread_mutex_unlock(&alloc_lock);
	return p;
}

static atomic_int acks, stop;
static const char *plugin;

static void suspend(int sig)
{
	(void)sig;
	atomic_fetch_add(&acks, 1);
}

static void *nop(void *arg)
{
	return arg;
}

static void *busy(void *arg)
{
	while (!atomic_load(&stop)) {
		if (plugin) {
			void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);

			if (h)
				dlclose(h);
		} else {
			pthread_t t;

			if (pthread_create(&t, NULL, nop, NULL) == 0)
				pthread_join(t, NULL);
		}
		rt_leaf(1);
	}
	return arg;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = suspend, .sa_flags = SA_RESTART};
	pthread_t b;
	int stops;

	if (argc < 3 || (strcmp(argv[1], "thread") && strcmp(argv[1], "dlopen")) ||
	    (stops = atoi(argv[2])) < 1 || (!strcmp(argv[1], "dlopen") && argc != 4)) {
		fprintf(stderr, "usage: prog_gcstop thread STOPS | dlopen STOPS PLUGIN\n");
		return 2;
	}
	if (argc == 4)
		plugin = argv[3];
	sigaction(SIGUSR1, &sa, NULL);
	pthread_create(&b, NULL, busy, NULL);
	for (int i = 0; i < stops; i++) {
		struct timespec t0, t1;
		int want = atomic_load(&acks) + 1;

		pthread_mutex_lock(&alloc_lock);
		pthread_kill(b, SIGUSR1);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (atomic_load(&acks) < want) {
			clock_gettime(CLOCK_MONOTONIC, &t1);
			if (t1.tv_sec - t0.tv_sec > 10) {
				static const char m[] = "a stop not acknowledged in 10 s: deadlock\n";

				write(1, m, sizeof(m) - 1);
				_exit(3);
			}
		}
		pthread_mutex_unlock(&alloc_lock);
		usleep(100);
	}
	atomic_store(&stop, 1);
	pthread_join(b, NULL);
	printf("%d stops acknowledged\n", stops);
	return 0;
}
