/* SPDX-License-Identifier: MIT */
/* Functions of libcsrobustxx.so, a C++ library whose exceptions cross the
 * wrapper. */
#ifndef CACHESHIM_TESTS_ROBUSTXX_H
#define CACHESHIM_TESTS_ROBUSTXX_H

namespace rtx
{
/* 3 * v; throws std::invalid_argument when v is a multiple of 4. */
long check(long v);
/* fn(v) + 1: fn may throw through this frame. */
long apply(long (*fn)(long), long v);
} // namespace rtx

#endif /* CACHESHIM_TESTS_ROBUSTXX_H */
