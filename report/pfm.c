/* SPDX-License-Identifier: MIT */
/* libpfm4, loaded on demand (report/pfm.h). */
#include <dlfcn.h>
#include <string.h>

#include "report/pfm.h"

struct cs_pfm cs_pfm;

int cs_pfm_load(const char **why)
{
	void *h = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		*why = dlerror();
		return -1;
	}
	*(void **)&cs_pfm.initialize = dlsym(h, "pfm_initialize");
	*(void **)&cs_pfm.terminate = dlsym(h, "pfm_terminate");
	*(void **)&cs_pfm.strerror = dlsym(h, "pfm_strerror");
	*(void **)&cs_pfm.encode = dlsym(h, "pfm_get_os_event_encoding");
	*(void **)&cs_pfm.pmu_info = dlsym(h, "pfm_get_pmu_info");
	*(void **)&cs_pfm.event_next = dlsym(h, "pfm_get_event_next");
	*(void **)&cs_pfm.event_info = dlsym(h, "pfm_get_event_info");
	*(void **)&cs_pfm.attr_info = dlsym(h, "pfm_get_event_attr_info");
	if (!cs_pfm.initialize || !cs_pfm.terminate || !cs_pfm.strerror || !cs_pfm.encode ||
	    !cs_pfm.pmu_info || !cs_pfm.event_next || !cs_pfm.event_info || !cs_pfm.attr_info) {
		*why = "libpfm.so.4 lacks a function this command needs";
		return -1;
	}
	return 0;
}

int cs_pfm_encode(const char *ev, struct perf_event_attr *attr)
{
	pfm_perf_encode_arg_t arg;

	memset(attr, 0, sizeof(*attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = attr;
	arg.size = sizeof(arg);
	/* PFM_PLM3: count user space only, as shim/events.c encodes. */
	return cs_pfm.encode(ev, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
}
