/* SPDX-License-Identifier: MIT */
/* perf's software events by libpfm4's names (common/swevents.c). */
#ifndef CACHESHIM_COMMON_SWEVENTS_H
#define CACHESHIM_COMMON_SWEVENTS_H

#include <stdint.h>

/* If name is one of perf's software events under libpfm4's bare name
 * ("perf::PAGE-FAULTS", any case, no modifiers), its perf_event_attr.config
 * (type PERF_TYPE_SOFTWARE; user space only, as libpfm4 encodes it by
 * default) into *config, and 1; else 0. */
int cs_sw_event_config(const char *name, uint64_t *config);
/* The name of the i-th of those events, NULL past the last (for tests). */
const char *cs_sw_event_at(unsigned i);
/* Whether a LIBPFM_ variable is set (LIBPFM_FORCE_PMU, say, hides
 * libpfm4's perf:: events): then libpfm4 decides about every event. */
int cs_libpfm_env(void);

#endif
