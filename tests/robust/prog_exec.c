/* SPDX-License-Identifier: MIT */
/* Wrapped calls before and after exec, through each exec function.
 *
 * Usage: prog_exec N [HOW...], HOW one of execve, execv, execvp, execvpe,
 * execl, execlp, execle, fexecve, execveat, or execve-noshim (execve with LD_PRELOAD
 * taken out of the environment: the next image is not profiled).  The program makes N calls; if HOWs are
 * left, it first tries the first HOW on a program that does not exist (the
 * exec fails and the program goes on), makes N more calls, then replaces
 * itself through the first HOW by `prog_exec N+1 REST...`.  So image i of
 * the chain makes 2 * (N + i) calls, the last one N + i.  The p-variants
 * find the program by the name prog_exec in PATH. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/robust/robust.h"

extern char **environ;

static long calls(long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++)
		s += rt_leaf(i);
	return s;
}

/* The calls after a failed exec, from another call site: a new site block
 * can only be had if the file was unsealed again. */
__attribute__((noinline)) static long calls_more(long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++)
		s += rt_leaf(i) * 1;
	__asm__ volatile("" ::: "memory");
	return s;
}

/* Execs path (or the name for the p-variants) with argv through how.
 * Returns only when the exec failed. */
static int run_exec(const char *how, const char *path, const char *name, char **av)
{
	int fd;

	if (!strcmp(how, "execve"))
		return execve(path, av, environ);
	if (!strcmp(how, "execve-noshim")) {
		char *env[256];
		int i, n = 0;

		for (i = 0; environ[i] && n < 255; i++) {
			if (strncmp(environ[i], "LD_PRELOAD=", 11))
				env[n++] = environ[i];
		}
		env[n] = NULL;
		return execve(path, av, env);
	}
	if (!strcmp(how, "execv"))
		return execv(path, av);
	if (!strcmp(how, "execvp"))
		return execvp(name, av);
	if (!strcmp(how, "execvpe"))
		return execvpe(name, av, environ);
	/* The l-variants take a fixed list: prog N [HOW...] with at most 3 HOWs
	 * left after this one (enough for the chains of the test). */
	if (!strcmp(how, "execl"))
		return execl(path, av[0], av[1], av[2], av[3], av[4], (char *)NULL);
	if (!strcmp(how, "execlp"))
		return execlp(name, av[0], av[1], av[2], av[3], av[4], (char *)NULL);
	if (!strcmp(how, "execle")) {
		/* envp comes right after the list's terminating NULL. */
		if (!av[2])
			return execle(path, av[0], av[1], (char *)NULL, environ);
		if (!av[3])
			return execle(path, av[0], av[1], av[2], (char *)NULL, environ);
		if (!av[4])
			return execle(path, av[0], av[1], av[2], av[3], (char *)NULL, environ);
		return execle(path, av[0], av[1], av[2], av[3], av[4], (char *)NULL, environ);
	}
	if (!strcmp(how, "execveat")) {
		/* path relative to a descriptor of the root directory */
		fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		execveat(fd, path + 1, av, environ, 0);
		close(fd);
		return -1;
	}
	if (!strcmp(how, "fexecve")) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		fexecve(fd, av, environ);
		close(fd);
		return -1;
	}
	fprintf(stderr, "prog_exec: unknown exec function %s\n", how);
	exit(2);
}

int main(int argc, char **argv)
{
	char self[4096], next[32], *av[64];
	long n;
	ssize_t len;
	int i;

	if (argc < 2 || argc > 6) {
		fprintf(stderr, "usage: %s N [HOW...] (at most 4 HOWs)\n", argv[0]);
		return 2;
	}
	n = atol(argv[1]);
	printf("image %s: %ld calls, sum %ld\n", argv[1], n, calls(n));
	if (argc == 2)
		return 0;

	/* A failing exec: the program goes on, and so does the profile. */
	snprintf(next, sizeof(next), "%ld", n + 1);
	av[0] = "cs-no-such-program";
	av[1] = next;
	for (i = 3; i <= argc; i++)
		av[i - 1] = argv[i]; /* ends with argv[argc] = NULL */
	for (i = argc - 1; i < 5; i++)
		av[i] = NULL;
	errno = 0;
	run_exec(argv[2], "/nonexistent/cs-no-such-program", "cs-no-such-program", av);
	printf("exec of a missing program through %s: %s\n", argv[2], strerror(errno));
	printf("image %s: %ld more calls, sum %ld\n", argv[1], n, calls_more(n));
	fflush(stdout);

	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0) {
		perror("readlink /proc/self/exe");
		return 1;
	}
	self[len] = '\0';
	av[0] = "prog_exec";
	run_exec(argv[2], self, "prog_exec", av);
	perror("exec");
	return 1;
}
