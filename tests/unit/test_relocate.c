/* SPDX-License-Identifier: MIT */
/* Units: entry relocation (relocate.c): what cs_reloc_plan accepts and
 * refuses, the exact bytes cs_reloc_emit writes, and thunks that run. */
#include <CUnit/Basic.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "shim/internal.h"

/* run-time address of code that is never run: nothing maps the first
 * pages of the address space unless asked to with MAP_FIXED, so a jump
 * table there cannot be read */
#define FAKE 0x1000ull

/* endbr64; push %rbp; mov %rsp,%rbp; sub $16,%rsp; leave; ret */
static const uint8_t f_endbr[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89,
				  0xe5, 0x48, 0x83, 0xec, 0x10, 0xc9, 0xc3};
/* mov 0x100(%rip),%eax; add $1,%eax; ret */
static const uint8_t f_ripmov[] = {0x8b, 0x05, 0x00, 0x01, 0x00, 0x00, 0x83, 0xc0, 0x01, 0xc3};
/* test %edi,%edi; je 1f; mov $1,%eax; ret; 1: mov $2,%eax; ret */
static const uint8_t f_jcc[] = {0x85, 0xff, 0x74, 0x06, 0xb8, 0x01, 0x00, 0x00,
				0x00, 0xc3, 0xb8, 0x02, 0x00, 0x00, 0x00, 0xc3};
/* push %rbx; call 1f; pop %rbx; ret; 1: mov (%rsp),%rax; ret */
static const uint8_t f_call[] = {0x53, 0xe8, 0x02, 0x00, 0x00, 0x00, 0x5b,
				 0xc3, 0x48, 0x8b, 0x04, 0x24, 0xc3};
/* mov $3,%cl; 1: loop 1b; ret */
static const uint8_t f_loop[] = {0xb1, 0x03, 0xe2, 0xfe, 0xc3};
/* jrcxz 1f; mov $1,%eax; 1: ret */
static const uint8_t f_jrcxz[] = {0xe3, 0x05, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3};
/* xbegin 1f; mov $1,%eax; 1: ret */
static const uint8_t f_xbegin[] = {0xc7, 0xf8, 0x05, 0x00, 0x00, 0x00,
				   0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3};
/* f: push %rbp; mov %rsp,%rbp; mov $1,%eax; test %edi,%edi; jne f+2; pop %rbp; ret */
static const uint8_t f_into[] = {0x55, 0x48, 0x89, 0xe5, 0xb8, 0x01, 0x00, 0x00,
				 0x00, 0x85, 0xff, 0x75, 0xf5, 0x5d, 0xc3};
/* the same with jne f: lands on the patch point */
static const uint8_t f_atpatch[] = {0x55, 0x48, 0x89, 0xe5, 0xb8, 0x01, 0x00, 0x00,
				    0x00, 0x85, 0xff, 0x75, 0xf3, 0x5d, 0xc3};
/* the same with jmp f: a tail call to itself, patched */
static const uint8_t f_jmp_entry[] = {0x55, 0x48, 0x89, 0xe5, 0xb8, 0x01, 0x00, 0x00,
				      0x00, 0x85, 0xff, 0xeb, 0xf3, 0x5d, 0xc3};
/* f: endbr64; push %rbp; mov %rsp,%rbp; test %edi,%edi; jne f; pop %rbp; ret */
static const uint8_t f_atfunc[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89,
				   0xe5, 0x85, 0xff, 0x75, 0xf4, 0x5d, 0xc3};
/* call *%rax; mov %rax,%rdi; ret */
static const uint8_t f_icall[] = {0xff, 0xd0, 0x48, 0x89, 0xc7, 0xc3};
/* push %rbx; push %rbp; push %r12; call *%rax; ret */
static const uint8_t f_icall_last[] = {0x53, 0x55, 0x41, 0x54, 0xff, 0xd0, 0xc3};
/* mov %rdi,%rax; add $8,%rax; jmp *%rax */
static const uint8_t f_unbounded[] = {0x48, 0x89, 0xf8, 0x48, 0x83, 0xc0, 0x08, 0xff, 0xe0};
/* ret; int3 x 6 (function size 1) */
static const uint8_t f_ret_int3[] = {0xc3, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc};
/* ret; then another function: push %rbp; mov %rsp,%rbp */
static const uint8_t f_ret_next[] = {0xc3, 0x55, 0x48, 0x89, 0xe5};
/* ret; nopw %cs:0x0(%rax,%rax,1) (66 2e 0f 1f 84 ...) */
static const uint8_t f_ret_nopw[] = {0xc3, 0x66, 0x2e, 0x0f, 0x1f, 0x84,
				     0x00, 0x00, 0x00, 0x00, 0x00};
/* ret; nopl 0x0(%rax) (0f 1f 40 00); nop */
static const uint8_t f_ret_nopl[] = {0xc3, 0x0f, 0x1f, 0x40, 0x00, 0x90};
/* xor %eax,%eax (no ret: may fall through); int3 x 5 */
static const uint8_t f_fallthrough[] = {0x31, 0xc0, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc};
/* push %rbx; push %rbp; push %r12; call *8(%rsp); ret */
static const uint8_t f_icall_rsp[] = {0x53, 0x55, 0x41, 0x54, 0xff, 0x54, 0x24, 0x08, 0xc3};
/* 06 (push %es) is not an instruction in 64-bit mode */
static const uint8_t f_bad[] = {0x06, 0x00, 0x00, 0x00, 0x00, 0x00, 0xc3};

/* PIC jump tables, bounded by cmp $3 + ja (4 entries):
 *	cmp $3,%edi; ja 9f; mov %edi,%edi; lea 8f(%rip),%rdx
 *	movslq (%rdx,%rdi,4),%rax; add %rdx,%rax; jmp *%rax
 * 1:	mov $10,%eax; ret
 * 2:	mov $11,%eax; ret
 * 3:	mov $12,%eax; ret
 * 4:	mov $13,%eax; ret
 * 9:	xor %eax,%eax; ret; xchg %ax,%ax
 * 8:	.long 1b-8b, 2b-8b, 3b-8b, 4b-8b
 * The code is 0x32 bytes, the table at 0x34. */
static const uint8_t f_table_ok[] = {
	0x83, 0xff, 0x03, 0x77, 0x2a, 0x89, 0xff, 0x48, 0x8d, 0x15, 0x26, 0x00, 0x00, 0x00,
	0x48, 0x63, 0x04, 0xba, 0x48, 0x01, 0xd0, 0xff, 0xe0, 0xb8, 0x0a, 0x00, 0x00, 0x00,
	0xc3, 0xb8, 0x0b, 0x00, 0x00, 0x00, 0xc3, 0xb8, 0x0c, 0x00, 0x00, 0x00, 0xc3, 0xb8,
	0x0d, 0x00, 0x00, 0x00, 0xc3, 0x31, 0xc0, 0xc3, 0x66, 0x90, 0xe3, 0xff, 0xff, 0xff,
	0xe9, 0xff, 0xff, 0xff, 0xef, 0xff, 0xff, 0xff, 0xf5, 0xff, 0xff, 0xff};
/* As above with two cases, 9 at 0x23, the table at 0x28:
 * 8:	.long 1b-8b, 2b-8b, f+3-8b, 1b-8b   (f+3: the ja, inside the window) */
static const uint8_t f_table_in[] = {
	0x83, 0xff, 0x03, 0x77, 0x1e, 0x89, 0xff, 0x48, 0x8d, 0x15, 0x1a, 0x00, 0x00, 0x00,
	0x48, 0x63, 0x04, 0xba, 0x48, 0x01, 0xd0, 0xff, 0xe0, 0xb8, 0x0a, 0x00, 0x00, 0x00,
	0xc3, 0xb8, 0x0b, 0x00, 0x00, 0x00, 0xc3, 0x31, 0xc0, 0xc3, 0x66, 0x90, 0xef, 0xff,
	0xff, 0xff, 0xf5, 0xff, 0xff, 0xff, 0xdb, 0xff, 0xff, 0xff, 0xef, 0xff, 0xff, 0xff};
/* f_table_ok without its bounds check: nop x 5 in place of cmp + ja */
static const uint8_t f_table_unbounded[] = {
	0x90, 0x90, 0x90, 0x90, 0x90, 0x89, 0xff, 0x48, 0x8d, 0x15, 0x26, 0x00, 0x00, 0x00,
	0x48, 0x63, 0x04, 0xba, 0x48, 0x01, 0xd0, 0xff, 0xe0, 0xb8, 0x0a, 0x00, 0x00, 0x00,
	0xc3, 0xb8, 0x0b, 0x00, 0x00, 0x00, 0xc3, 0xb8, 0x0c, 0x00, 0x00, 0x00, 0xc3, 0xb8,
	0x0d, 0x00, 0x00, 0x00, 0xc3, 0x31, 0xc0, 0xc3, 0x66, 0x90, 0xe3, 0xff, 0xff, 0xff,
	0xe9, 0xff, 0xff, 0xff, 0xef, 0xff, 0xff, 0xff, 0xf5, 0xff, 0xff, 0xff};

/* f_table_ok with its last case (at 0x29) turned into jmp 0x7: a branch
 * into the table's set-up, past the bounds check */
static const uint8_t f_table_skip[] = {
	0x83, 0xff, 0x03, 0x77, 0x2a, 0x89, 0xff, 0x48, 0x8d, 0x15, 0x26, 0x00, 0x00, 0x00,
	0x48, 0x63, 0x04, 0xba, 0x48, 0x01, 0xd0, 0xff, 0xe0, 0xb8, 0x0a, 0x00, 0x00, 0x00,
	0xc3, 0xb8, 0x0b, 0x00, 0x00, 0x00, 0xc3, 0xb8, 0x0c, 0x00, 0x00, 0x00, 0xc3, 0xeb,
	0xdc, 0x90, 0x90, 0x90, 0x90, 0x31, 0xc0, 0xc3, 0x66, 0x90, 0xe3, 0xff, 0xff, 0xff,
	0xe9, 0xff, 0xff, 0xff, 0xef, 0xff, 0xff, 0xff, 0xf5, 0xff, 0xff, 0xff};
/* Jump table variants from glibc and Zydis, the table after the code:
 *	cmp $3,%eax; ja 9f; lea 8f(%rip),%rdx; mov %eax,%eax
 *	movslq (%rdx,%rax,4),%rax; add %rdx,%rax; jmp *%rax
 * 1:	mov $10,%eax; ret
 * 9:	xor %eax,%eax; ret
 * 8:	.long 1b-8b, 1b-8b, 1b-8b, f+3-8b	(the last lands in the window) */
static const uint8_t f_table_zext[] = {0x83, 0xf8, 0x03, 0x77, 0x18, 0x48, 0x8d, 0x15, 0x14, 0x00,
				       0x00, 0x00, 0x89, 0xc0, 0x48, 0x63, 0x04, 0x82, 0x48, 0x01,
				       0xd0, 0xff, 0xe0, 0xb8, 0x0a, 0x00, 0x00, 0x00, 0xc3, 0x31,
				       0xc0, 0xc3, 0xf7, 0xff, 0xff, 0xff, 0xf7, 0xff, 0xff, 0xff,
				       0xf7, 0xff, 0xff, 0xff, 0xe3, 0xff, 0xff, 0xff};
/*	cmp $3,%edx; ja 9f; lea 8f(%rip),%r8; mov %edx,%edi
 *	movslq (%r8,%rdi,4),%rdi; add %r8,%rdi; jmp *%rdi	(index renamed)
 * 1:	mov $10,%eax; ret
 * 9:	xor %eax,%eax; ret
 * 8:	.long 1b-8b, 1b-8b, 1b-8b, 1b-8b */
static const uint8_t f_table_rename[] = {0x83, 0xfa, 0x03, 0x77, 0x18, 0x4c, 0x8d, 0x05, 0x14, 0x00,
					 0x00, 0x00, 0x89, 0xd7, 0x49, 0x63, 0x3c, 0xb8, 0x4c, 0x01,
					 0xc7, 0xff, 0xe7, 0xb8, 0x0a, 0x00, 0x00, 0x00, 0xc3, 0x31,
					 0xc0, 0xc3, 0xf7, 0xff, 0xff, 0xff, 0xf7, 0xff, 0xff, 0xff,
					 0xf7, 0xff, 0xff, 0xff, 0xf7, 0xff, 0xff, 0xff};
/*	sub $0x62,%eax; cmp $3,%al; ja 9f; lea 8f(%rip),%rcx; movzbl %al,%eax
 *	movslq (%rcx,%rax,4),%rax; add %rcx,%rax; jmp *%rax	(byte index)
 * 1:	mov $10,%eax; ret
 * 9:	xor %eax,%eax; ret; nop
 * 8:	.long 1b-8b, 1b-8b, 1b-8b, 1b-8b */
static const uint8_t f_table_byte[] = {
	0x83, 0xe8, 0x62, 0x3c, 0x03, 0x77, 0x19, 0x48, 0x8d, 0x0d, 0x16, 0x00, 0x00,
	0x00, 0x0f, 0xb6, 0xc0, 0x48, 0x63, 0x04, 0x81, 0x48, 0x01, 0xc8, 0xff, 0xe0,
	0xb8, 0x0a, 0x00, 0x00, 0x00, 0xc3, 0x31, 0xc0, 0xc3, 0x90, 0xf6, 0xff, 0xff,
	0xff, 0xf6, 0xff, 0xff, 0xff, 0xf6, 0xff, 0xff, 0xff, 0xf6, 0xff, 0xff, 0xff};
/* the same without the movzbl: bits 8-63 of the index unchecked */
static const uint8_t f_table_byte_nozext[] = {
	0x83, 0xe8, 0x62, 0x3c, 0x03, 0x77, 0x19, 0x48, 0x8d, 0x0d, 0x16, 0x00, 0x00,
	0x00, 0x90, 0x90, 0x90, 0x48, 0x63, 0x04, 0x81, 0x48, 0x01, 0xc8, 0xff, 0xe0,
	0xb8, 0x0a, 0x00, 0x00, 0x00, 0xc3, 0x31, 0xc0, 0xc3, 0x90, 0xf6, 0xff, 0xff,
	0xff, 0xf6, 0xff, 0xff, 0xff, 0xf6, 0xff, 0xff, 0xff, 0xf6, 0xff, 0xff, 0xff};
/*	cmpl $3,0xc(%rbx); ja 9f; mov 0xc(%rbx),%eax	(bound in memory)
 *	lea 8f(%rip),%rcx; movslq (%rcx,%rax,4),%rax; add %rcx,%rax; jmp *%rax
 *	... as above */
static const uint8_t f_table_mem[] = {
	0x83, 0x7b, 0x0c, 0x03, 0x77, 0x19, 0x8b, 0x43, 0x0c, 0x48, 0x8d, 0x0d, 0x14,
	0x00, 0x00, 0x00, 0x48, 0x63, 0x04, 0x81, 0x48, 0x01, 0xc8, 0xff, 0xe0, 0xb8,
	0x0a, 0x00, 0x00, 0x00, 0xc3, 0x31, 0xc0, 0xc3, 0x66, 0x90, 0xf5, 0xff, 0xff,
	0xff, 0xf5, 0xff, 0xff, 0xff, 0xf5, 0xff, 0xff, 0xff, 0xf5, 0xff, 0xff, 0xff};
/*	cmp $3,%esi; ja 9f; lea 8f(%rip),%rsi	(bound on another register)
 *	movslq (%rsi,%rcx,4),%rcx; add %rsi,%rcx; jmp *%rcx
 *	... as above */
static const uint8_t f_table_other[] = {0x83, 0xfe, 0x03, 0x77, 0x16, 0x48, 0x8d, 0x35, 0x14, 0x00,
					0x00, 0x00, 0x48, 0x63, 0x0c, 0x8e, 0x48, 0x01, 0xf1, 0xff,
					0xe1, 0xb8, 0x0a, 0x00, 0x00, 0x00, 0xc3, 0x31, 0xc0, 0xc3,
					0x66, 0x90, 0xf5, 0xff, 0xff, 0xff, 0xf5, 0xff, 0xff, 0xff,
					0xf5, 0xff, 0xff, 0xff, 0xf5, 0xff, 0xff, 0xff};
/* push %rbx; push %rbp; push %r12; lcall *(%rax); ret */
static const uint8_t f_far[] = {0x53, 0x55, 0x41, 0x54, 0xff, 0x18, 0xc3};
/* mov 0x0(%eip),%eax; ret */
static const uint8_t f_eip[] = {0x67, 0x8b, 0x05, 0x00, 0x00, 0x00, 0x00, 0xc3};
/* push %rbx; push %rbp; push %r12; call *%rsp; ret */
static const uint8_t f_call_rsp[] = {0x53, 0x55, 0x41, 0x54, 0xff, 0xd4, 0xc3};
/* push %rdi; pop %rcx; call *-8(%rsp); ret: the callee is the word the
 * push left below rsp, where the emulated call stores its return address
 * (the thunk jumped to that address, the callee never ran) */
static const uint8_t f_call_slot[] = {0x57, 0x59, 0xff, 0x54, 0x24, 0xf8, 0xc3};
/* nop; nop; call *-12(%rsp); ret: 4 of its 8 bytes there */
static const uint8_t f_call_half[] = {0x90, 0x90, 0xff, 0x54, 0x24, 0xf4, 0xc3};
/* push %rbx; call *-16(%rsp); ret: just below the slot, moved */
static const uint8_t f_call_below[] = {0x53, 0xff, 0x54, 0x24, 0xf0, 0xc3};
/* push %rbx; push %rbp; call *(%rsp,%rax,8); ret: an index may reach the
 * slot */
static const uint8_t f_call_index[] = {0x53, 0x55, 0xff, 0x14, 0xc4, 0xc3};

/* push %rbp (gdb's int3 over it); mov %rsp,%rbp; pop %rbp; ret, and a
 * breakpoint on the second instruction of endbr64; push %rbx; ... */
static const uint8_t f_int3[] = {0xcc, 0x48, 0x89, 0xe5, 0x5d, 0xc3};
static const uint8_t f_endbr_int3[] = {0xf3, 0x0f, 0x1e, 0xfa, 0xcc, 0x48, 0x89, 0xe5, 0x5b, 0xc3};
/* gcc -O2 -mharden-sls=all of `int inc(int x) { return x + 1; }`: lea
 * 0x1(%rdi),%eax; ret; int3 (the int3 inside the symbol's 5 bytes), then
 * padding: entry-patched before the int3 check refused the window */
static const uint8_t f_sls_ret_int3[] = {0x8d, 0x47, 0x01, 0xc3, 0xcc, 0x66, 0x90, 0x90};
/* gcc -O2 -mharden-sls=all of `int zero(void) { return 0; }`: xor
 * %eax,%eax; ret; int3 (4 bytes), then padding: the window ends in it,
 * the ret is the last instruction (refused as "may fall through"). */
static const uint8_t f_sls_short[] = {0x31, 0xc0, 0xc3, 0xcc, 0x66, 0x90, 0x90, 0x90};
/* The same without the ret: it may fall through. */
static const uint8_t f_short_int3[] = {0x31, 0xc0, 0x90, 0xcc, 0x66, 0x90, 0x90, 0x90};

struct plan_case {
	int line;
	const uint8_t *code;
	size_t limit; /* readable bytes */
	size_t size; /* function size */
	int live; /* run-time address = the array's (its tables are read) */
	int ok;
	unsigned patch_off, window; /* when ok */
	const char *why; /* when refused */
	uint64_t why_off;
};

#define CODE(a) a, sizeof(a)

static const struct plan_case plan_cases[] = {
	{__LINE__, CODE(f_int3), sizeof(f_int3), 0, 0, 0, 0,
	 "int3 in the window (a debugger's breakpoint?)", 0},
	{__LINE__, CODE(f_endbr_int3), sizeof(f_endbr_int3), 0, 0, 0, 0,
	 "int3 in the window (a debugger's breakpoint?)", 4},
	{__LINE__, CODE(f_sls_ret_int3), 5, 0, 1, 0, 5, NULL, 0},
	{__LINE__, CODE(f_sls_short), 4, 0, 1, 0, 6, NULL, 0},
	{__LINE__, CODE(f_short_int3), 4, 0, 0, 0, 0, "int3 in the window (a debugger's breakpoint?)", 3},
	{__LINE__, CODE(f_endbr), sizeof(f_endbr), 0, 1, 4, 8, NULL, 0},
	{__LINE__, CODE(f_ripmov), sizeof(f_ripmov), 0, 1, 0, 6, NULL, 0},
	{__LINE__, CODE(f_jcc), sizeof(f_jcc), 0, 1, 0, 9, NULL, 0},
	{__LINE__, CODE(f_call), sizeof(f_call), 0, 1, 0, 6, NULL, 0},
	{__LINE__, CODE(f_loop), sizeof(f_loop), 0, 0, 0, 0, "loop, jrcxz or xbegin in the window",
	 2},
	{__LINE__, CODE(f_jrcxz), sizeof(f_jrcxz), 0, 0, 0, 0,
	 "loop, jrcxz or xbegin in the window", 0},
	{__LINE__, CODE(f_xbegin), sizeof(f_xbegin), 0, 0, 0, 0,
	 "loop, jrcxz or xbegin in the window", 0},
	{__LINE__, CODE(f_into), sizeof(f_into), 0, 0, 0, 0, "branch into the window", 11},
	/* A loop whose head is the entry: every turn would be a call
	 * (review helper 70); a jmp there is a tail call to itself. */
	{__LINE__, CODE(f_atpatch), sizeof(f_atpatch), 0, 0, 0, 0,
	 "a loop of the function starts at its entry", 11},
	{__LINE__, CODE(f_jmp_entry), sizeof(f_jmp_entry), 0, 1, 0, 9, NULL, 0},
	{__LINE__, CODE(f_atfunc), sizeof(f_atfunc), 0, 0, 0, 0,
	 "a loop of the function starts at its entry", 10},
	{__LINE__, CODE(f_icall), sizeof(f_icall), 0, 0, 0, 0, "indirect call inside the window",
	 0},
	{__LINE__, CODE(f_icall_last), sizeof(f_icall_last), 0, 1, 0, 6, NULL, 0},
	{__LINE__, CODE(f_icall_rsp), sizeof(f_icall_rsp), 0, 1, 0, 8, NULL, 0},
	{__LINE__, CODE(f_unbounded), sizeof(f_unbounded), 0, 0, 0, 0,
	 "indirect jump that cannot be bounded", 7},
	{__LINE__, CODE(f_ret_int3), 1, 0, 1, 0, 5, NULL, 0},
	{__LINE__, CODE(f_ret_next), 1, 0, 0, 0, 0, "window crosses the function end", 1},
	{__LINE__, CODE(f_ret_nopw), 1, 0, 1, 0, 11, NULL, 0},
	{__LINE__, CODE(f_ret_nopl), 1, 0, 1, 0, 5, NULL, 0},
	/* the padding runs out before the window is whole */
	{__LINE__, f_ret_int3, 3, 1, 0, 0, 0, 0,
	 "function shorter than the 5-byte window, and no padding after it", 3},
	{__LINE__, CODE(f_fallthrough), 2, 0, 0, 0, 0, "short function that may fall through", 0},
	{__LINE__, CODE(f_bad), sizeof(f_bad), 0, 0, 0, 0, "undecodable instruction in the window",
	 0},
	{__LINE__, CODE(f_table_ok), 0x32, 1, 1, 0, 5, NULL, 0},
	{__LINE__, CODE(f_table_in), 0x26, 1, 0, 0, 0, "jump table entry lands inside the window",
	 0x15},
	{__LINE__, CODE(f_table_unbounded), 0x32, 1, 0, 0, 0,
	 "indirect jump that cannot be bounded", 0x15},
	/* at a fake address the table is read where it would be: unmapped */
	{__LINE__, CODE(f_table_ok), 0x32, 0, 0, 0, 0, "jump table cannot be read", 0x15},
	{__LINE__, CODE(f_table_skip), 0x32, 1, 0, 0, 0, "branch into a jump table's bounds check",
	 0x29},
	{__LINE__, CODE(f_table_zext), 0x20, 1, 0, 0, 0, "jump table entry lands inside the window",
	 0x15},
	{__LINE__, CODE(f_table_rename), 0x20, 1, 1, 0, 5, NULL, 0},
	{__LINE__, CODE(f_table_byte), 0x23, 1, 1, 0, 5, NULL, 0},
	{__LINE__, CODE(f_table_byte_nozext), 0x23, 1, 0, 0, 0,
	 "indirect jump that cannot be bounded", 0x18},
	{__LINE__, CODE(f_table_mem), 0x22, 1, 0, 0, 0, "indirect jump that cannot be bounded",
	 0x17},
	{__LINE__, CODE(f_table_other), 0x1e, 1, 0, 0, 0, "indirect jump that cannot be bounded",
	 0x13},
	{__LINE__, CODE(f_far), sizeof(f_far), 0, 0, 0, 0, "far branch in the window", 4},
	{__LINE__, CODE(f_eip), sizeof(f_eip), 0, 0, 0, 0, "eip-relative operand in the window", 0},
	{__LINE__, CODE(f_call_rsp), sizeof(f_call_rsp), 0, 0, 0, 0, "call cannot be emulated", 0},
	{__LINE__, CODE(f_call_slot), sizeof(f_call_slot), 0, 0, 0, 0, "call cannot be emulated",
	 0},
	{__LINE__, CODE(f_call_half), sizeof(f_call_half), 0, 0, 0, 0, "call cannot be emulated",
	 0},
	{__LINE__, CODE(f_call_below), sizeof(f_call_below), 0, 1, 0, 5, NULL, 0},
	{__LINE__, CODE(f_call_index), sizeof(f_call_index), 0, 0, 0, 0, "call cannot be emulated",
	 0},
};

static void test_plan(void)
{
	unsigned i;

	for (i = 0; i < sizeof(plan_cases) / sizeof(plan_cases[0]); i++) {
		const struct plan_case *c = &plan_cases[i];
		uint64_t func = c->live ? (uint64_t)(uintptr_t)c->code : FAKE;
		struct cs_reloc_plan p;
		const char *why = "unset";
		uint64_t off = 99;
		int r = cs_reloc_plan(c->code, func, func + c->size, func + c->limit, &p, &why,
				      &off);

		if ((r == 0) != c->ok || (!c->ok && (strcmp(why, c->why) || off != c->why_off)) ||
		    (c->ok &&
		     (p.patch != func + c->patch_off || p.window != c->window || p.func != func ||
		      memcmp(p.orig, c->code + c->patch_off, c->window))))
			printf("\nline %d: r=%d why=%s off=%llu window=%u\n", c->line, r,
			       r ? why : "-", (unsigned long long)off, r ? 0 : p.window);
		CU_ASSERT_EQUAL(r, c->ok ? 0 : -1);
		if (c->ok) {
			CU_ASSERT_PTR_NULL(why);
			CU_ASSERT_EQUAL(p.func, func);
			CU_ASSERT_EQUAL(p.patch, func + c->patch_off);
			CU_ASSERT_EQUAL(p.window, c->window);
			CU_ASSERT_EQUAL(memcmp(p.orig, c->code + c->patch_off, c->window), 0);
		} else {
			CU_ASSERT_STRING_EQUAL(why, c->why);
			CU_ASSERT_EQUAL(off, c->why_off);
		}
	}
}

/* Expected thunk bytes are built with these. */
static size_t put8(uint8_t *b, size_t n, unsigned v)
{
	b[n] = (uint8_t)v;
	return n + 1;
}

static size_t put32(uint8_t *b, size_t n, uint64_t v)
{
	uint32_t x = (uint32_t)v;

	memcpy(b + n, &x, 4);
	return n + 4;
}

/* e9 rel32 from (at + n) to target */
static size_t put_jmp(uint8_t *b, size_t n, uint64_t at, uint64_t target)
{
	n = put8(b, n, 0xe9);
	return put32(b, n, target - (at + n + 4));
}

static int plan_fake(const uint8_t *code, size_t len, uint64_t func, struct cs_reloc_plan *p)
{
	const char *why;
	uint64_t off;

	return cs_reloc_plan(code, func, func + len, func + len, p, &why, &off);
}

static void check_emit(int line, const struct cs_reloc_plan *p, uint64_t thunk, const uint8_t *want,
		       size_t n)
{
	uint8_t out[CS_THUNK_MAX];
	const char *why = "unset";
	int r = cs_reloc_emit(p, thunk, out, sizeof(out), &why);

	if (r != (int)n || memcmp(out, want, n)) {
		int i;

		printf("\nline %d: r=%d why=%s\n got:", line, r, r < 0 ? why : "-");
		for (i = 0; i < r; i++)
			printf(" %02x", out[i]);
		printf("\nwant:");
		for (i = 0; i < (int)n; i++)
			printf(" %02x", want[i]);
		printf("\n");
	}
	CU_ASSERT_EQUAL(r, (int)n);
	CU_ASSERT_EQUAL(memcmp(out, want, n), 0);
	CU_ASSERT_PTR_NULL(why);
}

static void test_emit_rip(void)
{
	uint64_t thunk = FAKE + 0x40000000ull; /* 1 GB away */
	struct cs_reloc_plan p;
	uint8_t want[32];
	size_t n = 0;

	CU_ASSERT_EQUAL_FATAL(plan_fake(f_ripmov, sizeof(f_ripmov), FAKE, &p), 0);
	/* mov disp32(%rip),%eax aimed at FAKE + 6 + 0x100 */
	n = put8(want, n, 0x8b);
	n = put8(want, n, 0x05);
	n = put32(want, n, (FAKE + 6 + 0x100) - (thunk + 6));
	n = put_jmp(want, n, thunk, FAKE + 6);
	check_emit(__LINE__, &p, thunk, want, n);

	/* endbr64 kept in place: only the lea moves */
	CU_ASSERT_EQUAL_FATAL(plan_fake(f_endbr, sizeof(f_endbr), FAKE, &p), 0);
	n = 0;
	n = put8(want, n, 0x55);
	n = put8(want, n, 0x48);
	n = put8(want, n, 0x89);
	n = put8(want, n, 0xe5);
	n = put8(want, n, 0x48);
	n = put8(want, n, 0x83);
	n = put8(want, n, 0xec);
	n = put8(want, n, 0x10);
	n = put_jmp(want, n, thunk, FAKE + 12);
	check_emit(__LINE__, &p, thunk, want, n);
}

static void test_emit_rip_far(void)
{
	struct cs_reloc_plan p;
	uint8_t out[CS_THUNK_MAX];
	const char *why = NULL;

	CU_ASSERT_EQUAL_FATAL(plan_fake(f_ripmov, sizeof(f_ripmov), FAKE, &p), 0);
	CU_ASSERT_EQUAL(cs_reloc_emit(&p, FAKE + 0xc0000000ull, out, sizeof(out), &why), -1);
	CU_ASSERT_STRING_EQUAL(why, "rip-relative operand out of reach of the thunk");
	/* too small a buffer fails instead of overrunning */
	CU_ASSERT_EQUAL(cs_reloc_emit(&p, FAKE + 0x1000, out, 8, &why), -1);
	CU_ASSERT_STRING_EQUAL(why, "thunk buffer too small");
}

static void test_emit_jcc(void)
{
	uint64_t thunk = FAKE + 0x100000;
	struct cs_reloc_plan p;
	uint8_t want[64];
	size_t n = 0;

	CU_ASSERT_EQUAL_FATAL(plan_fake(f_jcc, sizeof(f_jcc), FAKE, &p), 0);
	n = put8(want, n, 0x85);
	n = put8(want, n, 0xff);
	n = put8(want, n, 0x0f); /* je rel32 to FAKE + 10 */
	n = put8(want, n, 0x84);
	n = put32(want, n, (FAKE + 10) - (thunk + 8));
	n = put8(want, n, 0xb8);
	n = put32(want, n, 1);
	n = put_jmp(want, n, thunk, FAKE + 9);
	check_emit(__LINE__, &p, thunk, want, n);

	/* 3 GB away: jne over jmp *0(%rip) + the absolute target */
	thunk = FAKE + 0xc0000000ull;
	n = 0;
	n = put8(want, n, 0x85);
	n = put8(want, n, 0xff);
	n = put8(want, n, 0x75);
	n = put8(want, n, 14);
	n = put8(want, n, 0xff);
	n = put8(want, n, 0x25);
	n = put32(want, n, 0);
	n = put32(want, n, FAKE + 10);
	n = put32(want, n, 0);
	n = put8(want, n, 0xb8);
	n = put32(want, n, 1);
	n = put8(want, n, 0xff);
	n = put8(want, n, 0x25);
	n = put32(want, n, 0);
	n = put32(want, n, FAKE + 9);
	n = put32(want, n, 0);
	check_emit(__LINE__, &p, thunk, want, n);
}

/* The emulated call's return address ret: a real call over an int3 (so
 * the return stack predictor stays in step), the pushed address then
 * overwritten: movl $lo,(%rsp); movl $hi,4(%rsp). */
static size_t put_push_ret(uint8_t *b, size_t n, uint64_t ret)
{
	n = put8(b, n, 0xe8);
	n = put32(b, n, 1);
	n = put8(b, n, 0xcc);
	n = put8(b, n, 0xc7);
	n = put8(b, n, 0x04);
	n = put8(b, n, 0x24);
	n = put32(b, n, ret);
	n = put8(b, n, 0xc7);
	n = put8(b, n, 0x44);
	n = put8(b, n, 0x24);
	n = put8(b, n, 0x04);
	return put32(b, n, ret >> 32);
}
static void test_emit_call(void)
{
	uint64_t thunk = FAKE + 0x2000;
	struct cs_reloc_plan p;
	uint8_t want[64];
	size_t n = 0;

	/* push %rbx; call 1f; int3; 1: movl $lo,(%rsp); movl $hi,4(%rsp);
	 * jmp callee; jmp back */
	CU_ASSERT_EQUAL_FATAL(plan_fake(f_call, sizeof(f_call), FAKE, &p), 0);
	n = put8(want, n, 0x53);
	n = put_push_ret(want, n, FAKE + 6);
	n = put_jmp(want, n, thunk, FAKE + 8);
	n = put_jmp(want, n, thunk, FAKE + 6);
	check_emit(__LINE__, &p, thunk, want, n);

	/* call *%rax last: the same return address, then jmp *%rax */
	CU_ASSERT_EQUAL_FATAL(plan_fake(f_icall_last, sizeof(f_icall_last), FAKE, &p), 0);
	n = 0;
	n = put8(want, n, 0x53);
	n = put8(want, n, 0x55);
	n = put8(want, n, 0x41);
	n = put8(want, n, 0x54);
	n = put_push_ret(want, n, FAKE + 6);
	n = put8(want, n, 0xff);
	n = put8(want, n, 0xe0);
	n = put_jmp(want, n, thunk, FAKE + 6);
	check_emit(__LINE__, &p, thunk, want, n);

	/* call *8(%rsp): read after the call, so jmp *16(%rsp) */
	CU_ASSERT_EQUAL_FATAL(plan_fake(f_icall_rsp, sizeof(f_icall_rsp), FAKE, &p), 0);
	n = 0;
	n = put8(want, n, 0x53);
	n = put8(want, n, 0x55);
	n = put8(want, n, 0x41);
	n = put8(want, n, 0x54);
	n = put_push_ret(want, n, FAKE + 8);
	n = put8(want, n, 0xff);
	n = put8(want, n, 0x64);
	n = put8(want, n, 0x24);
	n = put8(want, n, 0x10);
	n = put_jmp(want, n, thunk, FAKE + 8);
	check_emit(__LINE__, &p, thunk, want, n);
}

/* ---- thunks that run ---- */

/* mov 0xfa(%rip),%eax (reads offset 0x100); add $1,%eax; ret */
static const uint8_t x_ripmov[] = {0x8b, 0x05, 0xfa, 0x00, 0x00, 0x00, 0x83, 0xc0, 0x01, 0xc3};
/* endbr64; lea 0xf0(%rip),%rax; ret: returns its own address + 0xff */
static const uint8_t x_endlea[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x8d,
				   0x05, 0xf0, 0x00, 0x00, 0x00, 0xc3};

/* mov $7,%al; ret */
static const uint8_t x_short[] = {0xb0, 0x07, 0xc3};

/* push %rbx; push %rbp; push %r12; call *%rdi; pop %r12; pop %rbp; pop %rbx; ret */
static const uint8_t x_icall[] = {0x53, 0x55, 0x41, 0x54, 0xff, 0xd7, 0x41, 0x5c, 0x5d, 0x5b, 0xc3};
/* push %rdi; push %rbx; call *8(%rsp); pop %rbx; pop %rdi; ret */
static const uint8_t x_icall_rsp[] = {0x57, 0x53, 0xff, 0x54, 0x24, 0x08, 0x5b, 0x5f, 0xc3};
/* mov (%rsp),%rax; ret: returns its return address */
static const uint8_t x_retaddr[] = {0x48, 0x8b, 0x04, 0x24, 0xc3};

#define RUN_FUNC 0x0
#define RUN_HELPER 0x200
#define RUN_DATA 0x100
#define RUN_THUNK 0x400
#define RUN_STUB 0x800

/* Copies code (len bytes, the function size of them) to a fresh RWX page,
 * plans it, emits its thunk in the page or at far, and patches the entry
 * with a jmp to a stub that jumps to the thunk.  Returns the page (its
 * function at RUN_FUNC) or NULL. */
static uint8_t *install(const uint8_t *code, size_t len, size_t size, uint8_t *far)
{
	uint8_t *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base = (uint64_t)(uintptr_t)m, thunk;
	struct cs_reloc_plan p;
	const char *why = NULL;
	uint64_t off;
	int r;

	if (m == MAP_FAILED)
		return NULL;
	memset(m, 0xcc, 4096);
	memcpy(m + RUN_FUNC, code, len);
	put32(m, RUN_DATA, 41);
	memcpy(m + RUN_HELPER, x_retaddr, sizeof(x_retaddr));
	/* int3 after the code, up to the data */
	r = cs_reloc_plan(m, base, base + size, base + RUN_DATA, &p, &why, &off);
	CU_ASSERT_EQUAL(r, 0);
	if (r)
		goto fail;
	thunk = far ? (uint64_t)(uintptr_t)far : base + RUN_THUNK;
	r = cs_reloc_emit(&p, thunk, far ? far : m + RUN_THUNK, CS_THUNK_MAX, &why);
	CU_ASSERT(r > 0);
	if (r <= 0)
		goto fail;
	if (far) {
		/* the stub: jmp *0(%rip); .quad thunk */
		m[RUN_STUB] = 0xff;
		m[RUN_STUB + 1] = 0x25;
		put32(m, RUN_STUB + 2, 0);
		memcpy(m + RUN_STUB + 6, &thunk, 8);
		__builtin___clear_cache((char *)far, (char *)far + 4096);
	} else {
		/* the stub: jmp thunk */
		put_jmp(m + RUN_STUB, 0, base + RUN_STUB, thunk);
	}
	/* the patch: jmp stub, the rest of the window int3 */
	memset(m + (p.patch - base), 0xcc, p.window);
	put_jmp(m + (p.patch - base), 0, p.patch, base + RUN_STUB);
	__builtin___clear_cache((char *)m, (char *)m + 4096);
	return m;
fail:
	munmap(m, 4096);
	return NULL;
}

typedef uint64_t (*fn1)(uint64_t);

static fn1 as_fn(uint8_t *m)
{
	fn1 f;

	memcpy(&f, &m, sizeof(f));
	return f;
}

static void test_run(void)
{
	uint8_t *m;

	m = install(x_ripmov, sizeof(x_ripmov), sizeof(x_ripmov), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL(m[0], 0xe9); /* really patched */
	CU_ASSERT_EQUAL((uint32_t)as_fn(m)(0), 42);
	munmap(m, 4096);

	m = install(f_jcc, sizeof(f_jcc), sizeof(f_jcc), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL((uint32_t)as_fn(m)(0), 2);
	CU_ASSERT_EQUAL((uint32_t)as_fn(m)(5), 1);
	munmap(m, 4096);

	/* the callee returns its return address: the original one */
	m = install(f_call, sizeof(f_call), sizeof(f_call), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL(as_fn(m)(0), (uint64_t)(uintptr_t)m + 6);
	munmap(m, 4096);

	/* indirect calls: the callee sees the original return address */
	m = install(x_icall, sizeof(x_icall), sizeof(x_icall), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL(as_fn(m)((uint64_t)(uintptr_t)m + RUN_HELPER), (uint64_t)(uintptr_t)m + 6);
	munmap(m, 4096);
	m = install(x_icall_rsp, sizeof(x_icall_rsp), sizeof(x_icall_rsp), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL(as_fn(m)((uint64_t)(uintptr_t)m + RUN_HELPER), (uint64_t)(uintptr_t)m + 6);
	munmap(m, 4096);

	/* cmp + ja moved, the table read through the original code */
	m = install(f_table_ok, sizeof(f_table_ok), 0x32, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL((uint32_t)as_fn(m)(0), 10);
	CU_ASSERT_EQUAL((uint32_t)as_fn(m)(1), 11);
	CU_ASSERT_EQUAL((uint32_t)as_fn(m)(2), 12);
	CU_ASSERT_EQUAL((uint32_t)as_fn(m)(3), 13);
	CU_ASSERT_EQUAL((uint32_t)as_fn(m)(4), 0);
	CU_ASSERT_EQUAL((uint32_t)as_fn(m)(~0u), 0);
	munmap(m, 4096);

	/* a 3-byte function: the window takes 2 bytes of int3 padding */
	m = install(x_short, sizeof(x_short), sizeof(x_short), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL((uint8_t)as_fn(m)(0), 7);
	munmap(m, 4096);

	m = install(x_endlea, sizeof(x_endlea), sizeof(x_endlea), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL(m[0], 0xf3); /* endbr64 kept */
	CU_ASSERT_EQUAL(m[4], 0xe9);
	CU_ASSERT_EQUAL(as_fn(m)(0), (uint64_t)(uintptr_t)m + 11 + 0xf0);
	munmap(m, 4096);
}

/* The same functions with their thunks 8 GB away: every jump leaves
 * through jmp *0(%rip), a jcc through its inverse over it. */
static void test_run_far(void)
{
	uint8_t *hint = (uint8_t *)mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *far, *m;

	CU_ASSERT_FATAL(hint != MAP_FAILED);
	munmap(hint, 4096);
	far = mmap(hint + (8ull << 30), 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (far == MAP_FAILED)
		far = mmap(hint - (8ull << 30), 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (far == MAP_FAILED) {
		printf("(no mapping 8 GB away: not run) ");
		return;
	}

	memset(far, 0xcc, 4096);
	m = install(f_jcc, sizeof(f_jcc), sizeof(f_jcc), far);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL(far[2], 0x75); /* jne over the absolute jump */
	CU_ASSERT_EQUAL((uint32_t)as_fn(m)(0), 2);
	CU_ASSERT_EQUAL((uint32_t)as_fn(m)(5), 1);
	munmap(m, 4096);

	memset(far, 0xcc, 4096);
	m = install(f_call, sizeof(f_call), sizeof(f_call), far);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL(as_fn(m)(0), (uint64_t)(uintptr_t)m + 6);
	munmap(m, 4096);

	memset(far, 0xcc, 4096);
	m = install(f_table_ok, sizeof(f_table_ok), 0x32, far);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL((uint32_t)as_fn(m)(2), 12);
	CU_ASSERT_EQUAL((uint32_t)as_fn(m)(9), 0);
	munmap(m, 4096);
	munmap(far, 4096);
}

/* Absolute (non-PIC) jump tables need a table address below 2 GB:
 *	abst: cmp $2,%edi; ja 9f; jmp *LOW+0x100(,%rdi,8); 9: xor %eax,%eax; ret
 *	absm: cmp $2,%edi; ja 9f; mov %edi,%eax; mov LOW+0x100(,%rax,8),%rax
 *	      jmp *%rax; 9: xor %eax,%eax; ret */
#define LOW 0x3e000000ull
static const uint8_t f_abst[] = {0x83, 0xff, 0x02, 0x77, 0x07, 0xff, 0x24, 0xfd,
				 0x00, 0x01, 0x00, 0x3e, 0x31, 0xc0, 0xc3};
static const uint8_t f_absm[] = {0x83, 0xff, 0x02, 0x77, 0x0c, 0x89, 0xf8, 0x48, 0x8b, 0x04,
				 0xc5, 0x00, 0x01, 0x00, 0x3e, 0xff, 0xe0, 0x31, 0xc0, 0xc3};

static void test_abs_tables(void)
{
	static const struct {
		int line;
		const uint8_t *code;
		size_t len;
		uint64_t entry2; /* third entry, function offset */
		const char *why;
		uint64_t why_off;
	} cases[] = {
		{__LINE__, CODE(f_abst), 12, NULL, 0},
		{__LINE__, CODE(f_abst), 3, "jump table entry lands inside the window", 5},
		{__LINE__, CODE(f_absm), 17, NULL, 0},
		{__LINE__, CODE(f_absm), 4, "jump table entry lands inside the window", 15},
	};
	uint8_t *m = mmap((void *)(uintptr_t)LOW, 4096, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	unsigned i;

	if (m != (uint8_t *)(uintptr_t)LOW) {
		printf("(no mapping at 0x%llx: not run) ", LOW);
		if (m != MAP_FAILED)
			munmap(m, 4096);
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cs_reloc_plan p;
		const char *why = "unset";
		uint64_t off = 99, e[3] = {LOW + cases[i].len - 3, LOW + cases[i].len - 3,
					   LOW + cases[i].entry2};
		int r;

		memcpy(m, cases[i].code, cases[i].len);
		memcpy(m + 0x100, e, sizeof(e));
		r = cs_reloc_plan(m, LOW, LOW + cases[i].len, LOW + cases[i].len, &p, &why, &off);
		if (r != (cases[i].why ? -1 : 0))
			printf("\nline %d: r=%d why=%s\n", cases[i].line, r, why);
		if (cases[i].why) {
			CU_ASSERT_EQUAL(r, -1);
			CU_ASSERT_STRING_EQUAL(why, cases[i].why);
			CU_ASSERT_EQUAL(off, cases[i].why_off);
		} else {
			CU_ASSERT_EQUAL(r, 0);
			CU_ASSERT_EQUAL(p.window, 5);
		}
	}
	munmap(m, 4096);
}

/* cs_reloc_cfi on thunk bytes: a 16-byte stub, then code, then jmp back.
 * Returns the CFI's length; *cfi the instructions. */
static size_t thunk_cfi(const uint8_t *code, size_t n, uint8_t *cfi, size_t cap)
{
	uint8_t t[CS_STUB_BYTES + 64] = {0};

	memcpy(t + CS_STUB_BYTES, code, n);
	t[CS_STUB_BYTES + n] = 0xe9; /* jmp rel32 */
	return cs_reloc_cfi(t, CS_STUB_BYTES + n + 5, CS_STUB_BYTES, cfi, cap);
}

#define CFI_IS(code, ...)                                                          \
	do {                                                                       \
		static const uint8_t want_[] = {__VA_ARGS__};                      \
		uint8_t got_[64];                                                  \
		size_t n_ = thunk_cfi(code, sizeof(code), got_, sizeof(got_));     \
		CU_ASSERT_EQUAL(n_, sizeof(want_));                                \
		CU_ASSERT(n_ == sizeof(want_) && !memcmp(got_, want_, n_));        \
	} while (0)

/* The rows of a thunk: the CFA and the slots of the registers pushed, or
 * a stop (DW_CFA_undefined of the return address) where a slot would not
 * hold the caller's value. */
static void test_cfi(void)
{
	/* push %rbp; mov %rsp,%rbp; push %rbx */
	static const uint8_t framed[] = {0x55, 0x48, 0x89, 0xe5, 0x53};
	/* sub $4,%rsp; push %rbx: the slot at CFA - 20, off the grid of
	 * DW_CFA_offset (factored by -8); it said CFA - 16 */
	static const uint8_t odd[] = {0x48, 0x83, 0xec, 0x04, 0x53};
	/* mov %rbx,%r11; mov %rdi,%rbx; push %rbx: the slot holds rdi, the
	 * caller's rbx is in r11; it said rbx at CFA - 16 */
	static const uint8_t changed[] = {0x49, 0x89, 0xdb, 0x48, 0x89, 0xfb, 0x53};
	/* push %rbx; pop %rbx; push %rax; push %rax; push %rax: the slot is
	 * pushed over after the pop; it said rbx at CFA - 16 still */
	static const uint8_t popped[] = {0x53, 0x5b, 0x50, 0x50, 0x50};

	/* +1: CFA rsp+16, rbp at CFA-16; +4: CFA rbp+16; +5: rbx at CFA-24 */
	CFI_IS(framed, 0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06, 0x41, 0x83, 0x03);
	/* +4: CFA rsp+12; +5: rsp+20, return address undefined */
	CFI_IS(odd, 0x44, 0x0e, 0x0c, 0x41, 0x0e, 0x14, 0x07, 0x10);
	/* +7: return address undefined */
	CFI_IS(changed, 0x47, 0x07, 0x10);
	/* +1: rsp+16, rbx at CFA-16; +2: rsp+8, rbx restored; +3..+5 */
	CFI_IS(popped, 0x41, 0x0e, 0x10, 0x83, 0x02, 0x41, 0x0e, 0x08, 0xc3, 0x41, 0x0e, 0x10,
	       0x41, 0x0e, 0x18, 0x41, 0x0e, 0x20);
}

/* Random bytes: plan never crashes and emits only what it accepted. */
static void test_fuzz(void)
{
	uint8_t code[64], out[CS_THUNK_MAX];
	uint64_t seed = 0x9e3779b97f4a7c15ull, off;
	unsigned i, j, accepted = 0;

	for (i = 0; i < 20000; i++) {
		struct cs_reloc_plan p;
		const char *why;

		for (j = 0; j < sizeof(code); j++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			code[j] = (uint8_t)(seed >> 56);
		}
		if (cs_reloc_plan(code, FAKE, FAKE + 1 + i % 63, FAKE + sizeof(code), &p, &why,
				  &off) == 0) {
			accepted++;
			CU_ASSERT(cs_reloc_emit(&p, FAKE + 0x10000, out, sizeof(out), &why) > 0);
		} else {
			CU_ASSERT_PTR_NOT_NULL(why);
		}
	}
	printf("(%u of 20000 accepted) ", accepted);
}

/* Every function of the C library (.dynsym, sizes known): each plan is
 * whole (its bytes are the live ones) and each accepted one emits. */
struct sweep {
	unsigned total, accepted, emitted, bad;
};

static int sweep_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Sym) *sym = NULL;
	const uint32_t *gnu_hash = NULL;
	uint64_t xlo = 0, xhi = 0;
	struct sweep *w = arg;
	size_t nsym = 0, k;
	int i;

	if (!strstr(info->dlpi_name, "/libc.so"))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(uintptr_t)(info->dlpi_addr + ph->p_vaddr);
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			xlo = info->dlpi_addr + ph->p_vaddr;
			xhi = xlo + ph->p_memsz;
		}
	}
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		if (dyn->d_tag == DT_SYMTAB)
			sym = (const ElfW(Sym) *)dyn->d_un.d_ptr;
		if (dyn->d_tag == DT_GNU_HASH)
			gnu_hash = (const uint32_t *)dyn->d_un.d_ptr;
	}
	if (!sym || !gnu_hash)
		return 1;
	{
		/* the symbol count: past the last chain of the largest bucket */
		uint32_t nbuckets = gnu_hash[0], symoffset = gnu_hash[1], bloom = gnu_hash[2];
		const uint32_t *buckets = gnu_hash + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
		const uint32_t *chain = buckets + nbuckets;
		uint32_t b, last = 0;

		for (b = 0; b < nbuckets; b++)
			if (buckets[b] > last)
				last = buckets[b];
		if (last) {
			while (!(chain[last - symoffset] & 1))
				last++;
			nsym = last + 1;
		}
	}
	for (k = 0; k < nsym; k++) {
		uint64_t a = info->dlpi_addr + sym[k].st_value, end = a + sym[k].st_size;
		uint8_t out[CS_THUNK_MAX];
		struct cs_reloc_plan p;
		const char *why;
		uint64_t off;

		if (ELF64_ST_TYPE(sym[k].st_info) != STT_FUNC || sym[k].st_shndx == SHN_UNDEF ||
		    !sym[k].st_size || a < xlo || end > xhi)
			continue;
		w->total++;
		if (cs_reloc_plan((const uint8_t *)(uintptr_t)a, a, end,
				  end + 16 < xhi ? end + 16 : xhi, &p, &why, &off))
			continue;
		w->accepted++;
		if (p.window < CS_PATCH_JMP_SIZE || p.window > CS_PATCH_JMP_SIZE - 1 + 15 ||
		    memcmp(p.orig, (const void *)(uintptr_t)p.patch, p.window))
			w->bad++;
		if (cs_reloc_emit(&p, a + 0x10000000, out, sizeof(out), &why) > 0)
			w->emitted++;
	}
	return 1;
}

static void test_libc(void)
{
	struct sweep w = {0, 0, 0, 0};

	dl_iterate_phdr(sweep_module, &w);
	printf("(%u of %u accepted) ", w.accepted, w.total);
	CU_ASSERT(w.total > 100);
	CU_ASSERT(w.accepted > 0);
	CU_ASSERT_EQUAL(w.bad, 0);
	CU_ASSERT_EQUAL(w.emitted, w.accepted);
}

int main(void)
{
	CU_pSuite suite;
	unsigned failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite("relocate", NULL, NULL);
	CU_add_test(suite, "plan", test_plan);
	CU_add_test(suite, "emit rip-relative", test_emit_rip);
	CU_add_test(suite, "emit rip-relative out of reach", test_emit_rip_far);
	CU_add_test(suite, "emit jcc", test_emit_jcc);
	CU_add_test(suite, "emit call", test_emit_call);
	CU_add_test(suite, "absolute jump tables", test_abs_tables);
	CU_add_test(suite, "run patched functions", test_run);
	CU_add_test(suite, "run with far thunks", test_run_far);
	CU_add_test(suite, "frame information", test_cfi);
	CU_add_test(suite, "random bytes", test_fuzz);
	CU_add_test(suite, "the C library", test_libc);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
