/* SPDX-License-Identifier: MIT */
/* Side stacks for the slow path: sizes shared by shim/sidestack.c and the
 * trampoline (assembler: macros only). */
#ifndef CACHESHIM_SHIM_SIDESTACK_H
#define CACHESHIM_SHIM_SIDESTACK_H

#define CS_SIDE_STACKS 8 /* slow paths that can run on one at once */
#define CS_SIDE_SIZE 0x40000 /* 256 KiB each, a guard page at the bottom */
#define CS_SIDE_TOTAL (CS_SIDE_STACKS * CS_SIDE_SIZE)

#endif /* CACHESHIM_SHIM_SIDESTACK_H */
