/* SPDX-License-Identifier: MIT */
/* Functions of libcsrobust.so, the library the robustness tests wrap. */
#ifndef CACHESHIM_TESTS_ROBUST_H
#define CACHESHIM_TESTS_ROBUST_H

#include <signal.h>

/* 2 * x + 1: the plain leaf every counting test calls. */
long rt_leaf(long x);
/* Spins until *flag >= want (a signal handler raises it); returns the
 * number of polls, at least 1.  Counts its starts in rt_spin_started. */
long rt_spin(volatile sig_atomic_t *flag, long want);
extern volatile long rt_spin_started;
/* fn(x) + 1: the callback may leave by longjmp, siglongjmp or throw. */
long rt_callback(long (*fn)(long), long x);
/* n + (n - 1) + ... + 0, alternating between rt_ping and rt_pong; every
 * level is a call through the library's own PLT, so a wrapped call.
 * rt_ping(n) makes n + 1 calls in all (counting itself). */
long rt_ping(long n);
long rt_pong(long n);
/* Deliberately crashes (writes through a null pointer) after x calls:
 * used to leave a process by SIGSEGV in the middle of a wrapped call. */
long rt_crash(long x);

#endif /* CACHESHIM_TESTS_ROBUST_H */
