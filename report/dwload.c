/* SPDX-License-Identifier: MIT */
/*
 * elfutils loaded with dlopen when the first module is symbolized, not
 * linked: libdw and what it pulls in (libelf, libz, liblzma, libbz2) cost
 * every cacheshim command ~0.35 ms of loading and relocation on the
 * development VMs, and `cacheshim run -q` (a launcher that only checks
 * its targets: it symbolizes only a target name the file keeps cut at 127
 * bytes), `list` and `report --series` symbolize nothing.
 */
#include <dlfcn.h>

#include "report/dwload.h"
#include "report/internal.h"

#define CS_DW_SONAME "libdw.so.1"

struct cs_dw cs_dw;

int cs_dw_load(void)
{
	static int state; /* 0: not tried, 1: loaded, -1: failed */
	const char *missing = NULL;
	void *h;

	if (state)
		return state > 0 ? 0 : -1;
	state = -1;
	h = dlopen(CS_DW_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		cs_warn("cannot load %s (%s): functions and call sites are shown as "
			"module+offset",
			CS_DW_SONAME, dlerror());
		return -1;
	}
	/* libelf's functions are found through libdw, which depends on it. */
#define CS_DW_RESOLVE(f)                                            \
	if (!missing && !(cs_dw.f = (__typeof__(f) *)dlsym(h, #f))) \
		missing = #f;
	CS_DW_FUNCS(CS_DW_RESOLVE)
#undef CS_DW_RESOLVE
	if (missing) {
		cs_warn("%s has no %s: functions and call sites are shown as module+offset",
			CS_DW_SONAME, missing);
		dlclose(h);
		return -1;
	}
	state = 1;
	return 0;
}
