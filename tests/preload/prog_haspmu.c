/* SPDX-License-Identifier: MIT */
/* Exits 0 if this machine can count hardware events (a PMU is there), 1 if
 * not: test_nopmu.sh checks the shim's fallback or its counts accordingly. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
	struct perf_event_attr attr;
	long fd;

	/* The shim opens its counters like this: user-only, this thread. */
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_HARDWARE;
	attr.config = PERF_COUNT_HW_CPU_CYCLES;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		printf("no PMU: perf_event_open(cycles): %s\n", strerror(errno));
		return 1;
	}
	close((int)fd);
	printf("PMU present\n");
	return 0;
}
