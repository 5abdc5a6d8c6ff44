/* SPDX-License-Identifier: MIT */
/* perf's software events by libpfm4's names, known without libpfm4 (the
 * shim encodes them, the launcher checks them).
 *
 * Loading libpfm4 and its pfm_initialize cost ~3 ms of every process's
 * start on the development VMs (a CPUID is a VM exit of ~5.6 us there, and
 * pfm_initialize makes some 400 of them while it looks for its PMUs), and
 * software events need no PMU.  Only the bare names below (in any case,
 * as libpfm4 takes them) are encoded here; anything with a modifier
 * (":u"), another PMU or no "perf::" goes to libpfm4 as before.  Each
 * encoding is libpfm4's own at its default level, user space only
 * (tests/unit/test_swevents.c compares them), but for exclude_hv, which
 * libpfm4 takes from the core PMU it detects and the kernel ignores for
 * software events. */
#include <linux/perf_event.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "common/swevents.h"

static const struct {
	const char *name;
	uint64_t config;
} software[] = {
	{"perf::CPU-CLOCK", PERF_COUNT_SW_CPU_CLOCK},
	{"perf::TASK-CLOCK", PERF_COUNT_SW_TASK_CLOCK},
	{"perf::PAGE-FAULTS", PERF_COUNT_SW_PAGE_FAULTS},
	{"perf::FAULTS", PERF_COUNT_SW_PAGE_FAULTS},
	{"perf::CONTEXT-SWITCHES", PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"perf::CS", PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"perf::CPU-MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS},
	{"perf::MIGRATIONS", PERF_COUNT_SW_CPU_MIGRATIONS},
	{"perf::MINOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MIN},
	{"perf::MAJOR-FAULTS", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
	{"perf::CGROUP-SWITCHES", 11 /* PERF_COUNT_SW_CGROUP_SWITCHES, Linux 5.13 */},
};

const char *cs_sw_event_at(unsigned i)
{
	return i < sizeof(software) / sizeof(software[0]) ? software[i].name : NULL;
}

int cs_sw_event_config(const char *name, uint64_t *config)
{
	size_t i;

	for (i = 0; i < sizeof(software) / sizeof(software[0]); i++) {
		if (!strcasecmp(name, software[i].name)) {
			*config = software[i].config;
			return 1;
		}
	}
	return 0;
}

int cs_libpfm_env(void)
{
	extern char **environ;
	char **v;

	for (v = environ; v && *v; v++)
		if (!strncmp(*v, "LIBPFM_", 7))
			return 1;
	return 0;
}
