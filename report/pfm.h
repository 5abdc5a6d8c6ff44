/* SPDX-License-Identifier: MIT */
/* libpfm4 for the command, loaded with dlopen by the subcommands that need
 * it (list, and run to check event names): linked into the command, its
 * ~40,000 relocations were most of the start-up of `cacheshim run`. */
#ifndef CACHESHIM_REPORT_PFM_H
#define CACHESHIM_REPORT_PFM_H

#include <perfmon/pfmlib_perf_event.h>

struct cs_pfm {
	int (*initialize)(void);
	void (*terminate)(void);
	const char *(*strerror)(int code);
	int (*encode)(const char *str, int dfl_plm, pfm_os_t os, void *arg);
	int (*pmu_info)(pfm_pmu_t pmu, pfm_pmu_info_t *info);
	int (*event_next)(int idx);
	int (*event_info)(int idx, pfm_os_t os, pfm_event_info_t *info);
	int (*attr_info)(int idx, int attr, pfm_os_t os, pfm_event_attr_info_t *info);
};

extern struct cs_pfm cs_pfm;

/* Loads libpfm.so.4 into cs_pfm (not initialized).  Returns 0, or -1 with
 * the reason in why (static storage). */
int cs_pfm_load(const char **why);

/* Encodes the event string ev as the shim does (user space unless the
 * string says otherwise) into *attr.  Returns PFM_SUCCESS or the libpfm4
 * error. */
int cs_pfm_encode(const char *ev, struct perf_event_attr *attr);

#endif
