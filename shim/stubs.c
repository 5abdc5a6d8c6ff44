/* SPDX-License-Identifier: MIT */
/* Entry stubs: one 16-byte stub per target index, made once at start in
 * one executable mapping that is never written again (so no thread can
 * ever run a page being changed).  A stub is
 *     endbr64                 ; valid indirect-branch target under CET IBT
 *     push $idx               ; the trampoline's only argument
 *     jmp *cs_trampoline_ptr  ; rip-relative, through the first 16 bytes
 * and touches no register, so the trampoline sees the caller's state. */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "shim/internal.h"

#define STUB_SIZE 16u
#define STUBS_BYTES (STUB_SIZE * (CS_MAX_TARGETS + 1u))

void cs_trampoline(void);

static uint8_t *stubs; /* [0, 16): the trampoline's address; stubs follow */

int cs_stubs_init(void)
{
	uint8_t *p;
	unsigned i;

	p = mmap(NULL, STUBS_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		cs_log("cannot map the entry stubs: %s; not profiling", strerror(errno));
		return -errno;
	}
	*(uint64_t *)p = (uint64_t)(uintptr_t)cs_trampoline;
	for (i = 0; i < CS_MAX_TARGETS; i++) {
		uint8_t *s = p + STUB_SIZE * (i + 1);
		int32_t disp = (int32_t)(p - (s + 15)); /* from the jmp's end */

		memcpy(s, "\xf3\x0f\x1e\xfa", 4); /* endbr64 */
		s[4] = 0x68; /* push imm32 */
		memcpy(s + 5, &i, 4);
		s[9] = 0xff; /* jmp *disp32(%rip) */
		s[10] = 0x25;
		memcpy(s + 11, &disp, 4);
		s[15] = 0xcc; /* never reached */
	}
	if (mprotect(p, STUBS_BYTES, PROT_READ | PROT_EXEC) < 0) {
		cs_log("cannot make the entry stubs executable: %s; not profiling",
		       strerror(errno));
		munmap(p, STUBS_BYTES);
		return -errno;
	}
	stubs = p;
	return 0;
}

void *cs_stub_addr(unsigned idx)
{
	return stubs + STUB_SIZE * (idx + 1);
}

int cs_stub_containing(uint64_t addr, uint64_t *offset)
{
	uint64_t lo = (uint64_t)(uintptr_t)stubs + STUB_SIZE;

	if (!cs_stub_is(addr))
		return -1;
	*offset = (addr - lo) % STUB_SIZE;
	return (int)((addr - lo) / STUB_SIZE);
}

int cs_stub_index(uint64_t addr)
{
	uint64_t off = 0;
	int i = cs_stub_containing(addr, &off);

	return i >= 0 && off == 0 ? i : -1;
}

int cs_stub_is(uint64_t addr)
{
	uint64_t lo = (uint64_t)(uintptr_t)stubs + STUB_SIZE;

	return stubs && addr >= lo && addr < lo + STUB_SIZE * CS_MAX_TARGETS;
}
