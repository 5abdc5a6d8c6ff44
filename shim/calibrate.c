/* SPDX-License-Identifier: MIT */
/* Calibration: the bracket (trampoline, counter reads, aggregation) costs
 * something per event even around a function that does nothing.  At start
 * the shim calls an empty function through the wrapper like any target and
 * records it as the target "cacheshim:empty" (CS_HOOK_CALIBRATION); the
 * report subtracts that site's median per event from every call. */
#include "shim/internal.h"

/* noinline + an empty asm: a real call of a function with no body. */
__attribute__((noinline)) static void empty(void)
{
	__asm__ volatile("");
}

void cs_calibrate(void)
{
	void (*call)(void);
	int idx;
	unsigned i;

	idx = cs_target_add("cacheshim:empty", (uint64_t)(uintptr_t)empty, 0, CS_HOOK_CALIBRATION);
	if (idx < 0)
		return;
	call = (void (*)(void))cs_g.targets[idx].stub;
	for (i = 0; i < CS_CALIBRATION_CALLS; i++)
		call();
}
