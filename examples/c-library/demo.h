/* SPDX-License-Identifier: MIT */
/* libdemo: two small functions to measure with cacheshim. */
#ifndef CACHESHIM_EXAMPLES_DEMO_H
#define CACHESHIM_EXAMPLES_DEMO_H

#include <stddef.h>

/* Sum of a[0..n-1]: its cost grows with n and with where a lives. */
long demo_sum(const long *a, size_t n);
/* Maps pages fresh pages, writes one byte to each, unmaps them: one page
 * fault per page.  Returns 0, or -1 if the mapping failed. */
int demo_touch(size_t pages);

#endif /* CACHESHIM_EXAMPLES_DEMO_H */
