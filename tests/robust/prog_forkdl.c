/* SPDX-License-Identifier: MIT */
/* Forks while another thread loads and unloads a plugin in a loop, so that
 * some forks happen while that thread holds the loader's lock; the lock
 * stays held in the child.
 *
 * Usage: prog_forkdl N PLUGIN.  Forks N children one after the other; each
 * calls rt_leaf(i) once from the program and once from generated code (an
 * anonymous executable mapping, as a JIT's: a call site in no module), and
 * exits with 0 if both returned 2 i + 1.  stdout: "children N, failed F"
 * (F counts children that did not exit with 0). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/robust/robust.h"

static const char *plugin;
static volatile int stop;

static void *loader(void *arg)
{
	(void)arg;
	while (!stop) {
		void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);

		if (!h) {
			fprintf(stderr, "dlopen: %s\n", dlerror());
			exit(1);
		}
		dlclose(h);
	}
	return NULL;
}

/* Code that calls fn(x) and returns its result, in a mapping of its own. */
static long (*jit_call(long (*fn)(long)))(long)
{
	static const unsigned char head[] = {0x48, 0x83, 0xec, 0x08, 0x48, 0xb8}; /* sub $8,%rsp; movabs */
	static const unsigned char tail[] = {0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0xc3}; /* call *%rax; add; ret */
	unsigned char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *addr = (void *)fn;

	if (m == MAP_FAILED)
		return NULL;
	memcpy(m, head, sizeof(head));
	memcpy(m + sizeof(head), &addr, sizeof(addr));
	memcpy(m + sizeof(head) + sizeof(addr), tail, sizeof(tail));
	return (long (*)(long))(void *)m;
}

int main(int argc, char **argv)
{
	long (*jit)(long);
	int i, n, failed = 0, st;
	pthread_t th;
	pid_t pid;

	if (argc != 3) {
		fprintf(stderr, "usage: %s N PLUGIN\n", argv[0]);
		return 2;
	}
	n = atoi(argv[1]);
	plugin = argv[2];
	jit = jit_call(rt_leaf);
	if (!jit) {
		fprintf(stderr, "mmap failed\n");
		return 1;
	}
	if (pthread_create(&th, NULL, loader, NULL)) {
		fprintf(stderr, "pthread_create failed\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid == 0)
			_exit(rt_leaf(i) == 2 * i + 1 && jit(i) == 2 * i + 1 ? 0 : 3);
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			failed++;
	}
	stop = 1;
	pthread_join(th, NULL);
	printf("children %d, failed %d\n", n, failed);
	return 0;
}
