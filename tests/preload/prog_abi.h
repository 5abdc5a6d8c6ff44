/* SPDX-License-Identifier: MIT */
/* What prog_abi.c and its -mavx part prog_abi_avx.c share. */
#ifndef CACHESHIM_TESTS_PROG_ABI_H
#define CACHESHIM_TESTS_PROG_ABI_H

/* Adds n to the expected call count of function name. */
void abi_called(const char *name, long n);
/* Prints one check line; counts a failure unless ok. */
void abi_result(const char *what, int ok, const char *got, const char *want);
/* Checks cs_avx.  Call only when the CPU has AVX. */
void abi_check_avx(void);

#endif /* CACHESHIM_TESTS_PROG_ABI_H */
