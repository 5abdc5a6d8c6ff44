/* SPDX-License-Identifier: MIT */
/* One number from /proc/self/status (slow paths only). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim/internal.h"

long cs_proc_status(const char *field)
{
	char buf[4096], key[64], *p;
	ssize_t n;
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if ((size_t)snprintf(key, sizeof(key), "\n%s:", field) >= sizeof(key))
		return -1;
	p = strstr(buf, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}
