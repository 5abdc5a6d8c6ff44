/* SPDX-License-Identifier: MIT */
/* A second static function named elf_twin, for test_elfsyms: two local
 * functions of one name at different addresses. */
#include <stdint.h>

uint64_t elf_twin_other(void);

static __attribute__((noinline)) int elf_twin(int x)
{
	return x * 3 + 1;
}

uint64_t elf_twin_other(void)
{
	return (uint64_t)(uintptr_t)&elf_twin;
}
