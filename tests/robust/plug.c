/* SPDX-License-Identifier: MIT */
/* libcsplug.so: a plugin loaded with dlopen after the program started.
 * The tests copy it under several names and load the copies in turn. */
#include "tests/robust/robust.h"

long plug_leaf(long x);
long plug_run(long n);

/* Built with -fsemantic-interposition: plug_run reaches plug_leaf
 * through the plugin's own PLT, a GOT slot that only exists once the
 * plugin is loaded. */
long plug_leaf(long x)
{
	return 3 * x + 2;
}

/* Makes n calls of plug_leaf and n calls of rt_leaf (libcsrobust, loaded
 * before the plugin).  Returns the sum of the results. */
long plug_run(long n)
{
	long i, s = 0;

	for (i = 0; i < n; i++)
		s += plug_leaf(i) + rt_leaf(i);
	return s;
}
