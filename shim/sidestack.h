/* SPDX-License-Identifier: MIT */
/* Side stacks for the slow path: sizes shared by shim/sidestack.c and the
 * trampoline (assembler: macros only). */
#ifndef CACHESHIM_SHIM_SIDESTACK_H
#define CACHESHIM_SHIM_SIDESTACK_H

#define CS_SIDE_STACKS 16 /* slow paths that can run on one at once */
/* With all taken, a slow path waits for one for at most this many
 * sched_yield rounds before it runs on the thread's own stack. */
#define CS_SIDE_WAITS 100000
#define CS_SIDE_SIZE 0x40000 /* 256 KiB each, a guard page at the bottom */
#define CS_SIDE_TOTAL (CS_SIDE_STACKS * CS_SIDE_SIZE)

#endif /* CACHESHIM_SHIM_SIDESTACK_H */
