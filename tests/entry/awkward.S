/* SPDX-License-Identifier: MIT */
/* Awkward function entries for entry patching (issue 8), in the main
 * program, hidden: prog_awkward.c reaches them by direct `call`, never by
 * a PLT or GOT slot, so only an entry patch can count them.
 *
 * Targets are named aw_*; helpers that must stay unpatched are awh_* (the
 * tests' glob aw_* does not match them).  Every function is in .symtab
 * with its .size, so a patcher knows where it ends.  Functions that may be
 * patched although shorter than the 5-byte jump are followed by int3
 * padding; the one that must be refused is followed directly by another
 * function.
 *
 * The expected verdict of each is in test_awkward.sh (PATCHED/REFUSED).
 */

#define FUNC(name) \
	.globl name; .hidden name; .type name, @function; name:
#define END(name) .size name, . - name
/* int3 up to the next 16-byte boundary (at least one byte when the
 * function is not aligned at its end). */
#define PAD .p2align 4, 0xcc

	.text
	PAD

/* ---- a rip-relative first instruction: returns ++aw_counter ---- */
FUNC(aw_riprel)
	movl aw_counter(%rip), %eax
	addl $1, %eax
	movl %eax, aw_counter(%rip)
	ret
END(aw_riprel)
	PAD

/* ---- 1- to 4-byte functions, int3 padding after each ---- */
/* void aw_len1(void): touches nothing at all. */
FUNC(aw_len1)
	ret
END(aw_len1)
	PAD

/* int aw_len2(int x): returns x. */
FUNC(aw_len2)
	xchgl %eax, %edi
	ret
END(aw_len2)
	PAD

/* int aw_len3(int x): returns x. */
FUNC(aw_len3)
	movl %edi, %eax
	ret
END(aw_len3)
	PAD

/* int aw_len4(int x): returns x + 1. */
FUNC(aw_len4)
	leal 1(%rdi), %eax
	ret
END(aw_len4)
	PAD

/* ---- a 2-byte function followed at once by another: no room for the
 * jump without overwriting aw_after_short.  Must be refused. ---- */
/* int aw_short2(int x): returns x. */
FUNC(aw_short2)
	xchgl %eax, %edi
	ret
END(aw_short2)
/* int aw_after_short(int x): returns x + 2; patchable itself. */
FUNC(aw_after_short)
	leal 2(%rdi), %eax
	nopl 0(%rax,%rax,1)
	ret
END(aw_after_short)
	PAD

/* ---- a jcc inside the first 5 bytes (rel8, target past the window):
 * int aw_jcc(int x): x < 0 ? -1 : x + 1 ---- */
FUNC(aw_jcc)
	testl %edi, %edi
	js 1f
	leal 1(%rdi), %eax
	ret
1:	movl $-1, %eax
	ret
END(aw_jcc)
	PAD

/* ---- a branch from another function into aw_victim's first bytes:
 * aw_intruder jumps to aw_victim + 2.  aw_victim must be refused;
 * aw_intruder (a mov and a jmp rel32 in its window) is patchable.
 * int aw_victim(int x): x + 3;  int aw_intruder(int x): x + 3 too, without
 * entering aw_victim at its start. ---- */
FUNC(aw_victim)
	movl %edi, %eax
.Lvictim_mid:
	addl $3, %eax
	nopl 0(%rax,%rax,1)
	ret
END(aw_victim)
	PAD

FUNC(aw_intruder)
	movl %edi, %eax
	jmp .Lvictim_mid
END(aw_intruder)
	PAD

/* ---- a leading endbr64 (kept; the jump goes after it):
 * int aw_endbr(int x): x + 5 ---- */
FUNC(aw_endbr)
	endbr64
	leal 5(%rdi), %eax
	nopl 0(%rax,%rax,1)
	ret
END(aw_endbr)
	PAD

/* ---- a tail call from one target to another:
 * int aw_tail_a(int x): aw_tail_b(x + 1);  int aw_tail_b(int x): x + 10 ---- */
FUNC(aw_tail_a)
	leal 1(%rdi), %edi
	jmp aw_tail_b
END(aw_tail_a)
	PAD

FUNC(aw_tail_b)
	leal 10(%rdi), %eax
	nopl 0(%rax,%rax,1)
	ret
END(aw_tail_b)
	PAD

/* ---- tail recursion: long aw_tailrec(long n) jumps to its own start n
 * times (n + 1 entries, no stack growth without the shim), returns 0 ---- */
FUNC(aw_tailrec)
	testq %rdi, %rdi
	jz 1f
	subq $1, %rdi
	jmp aw_tailrec
1:	xorl %eax, %eax
	ret
END(aw_tailrec)
	PAD

/* ---- direct recursion: int aw_rec(int n): n <= 0 ? 0 : aw_rec(n - 1) + 1,
 * n + 1 calls for n >= 0 ---- */
FUNC(aw_rec)
	testl %edi, %edi
	jle 1f
	subq $8, %rsp
	subl $1, %edi
	call aw_rec
	addl $1, %eax
	addq $8, %rsp
	ret
1:	xorl %eax, %eax
	ret
END(aw_rec)
	PAD

/* ---- varargs: long aw_va(int a, ...) with five more int arguments:
 * returns al (the caller's count of vector registers) * 65536 + the sum of
 * the six ints, so a clobbered al or argument register shows. ---- */
FUNC(aw_va)
	movzbl %al, %eax
	shll $16, %eax
	addl %edi, %eax
	addl %esi, %eax
	addl %edx, %eax
	addl %ecx, %eax
	addl %r8d, %eax
	addl %r9d, %eax
	cltq
	ret
END(aw_va)
	PAD

/* ---- a call in the first 5 bytes: void *aw_callfirst(void) returns the
 * return address awh_retaddr saw, which must be aw_callfirst + 5 (the
 * relocated call keeps the original return address). ---- */
FUNC(aw_callfirst)
	call awh_retaddr
	ret
END(aw_callfirst)
	PAD

/* ---- the same with CFI, for unwinders: int aw_callbt(void) returns
 * awh_bt(), which unwinds its own stack with backtrace(3) and wants to
 * pass aw_callbt + 9 (the original return address of the relocated call)
 * and then awh_bt_root, aw_callbt's caller.  The sub keeps the C callee's
 * stack aligned; the call still starts inside the 5-byte window. ---- */
FUNC(aw_callbt)
	.cfi_startproc
	subq $8, %rsp
	.cfi_adjust_cfa_offset 8
	call awh_bt
	addq $8, %rsp
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
END(aw_callbt)
	PAD

FUNC(awh_retaddr)
	movq (%rsp), %rax
	ret
END(awh_retaddr)
	PAD

/* ---- jrcxz in the window: int aw_jrcxz(int x): x != 0.  Refused. ---- */
FUNC(aw_jrcxz)
	movl %edi, %ecx
	jrcxz 1f
	movl $1, %eax
	ret
1:	xorl %eax, %eax
	ret
END(aw_jrcxz)
	PAD

/* ---- loop in the window: int aw_loop(int x): x (rcx, whatever it is,
 * is decremented; both ways lead to the ret).  Refused. ---- */
FUNC(aw_loop)
	movl %edi, %eax
	loop 1f
	nopl 0(%rax,%rax,1)
1:	ret
END(aw_loop)
	PAD

/* ---- xbegin in the window (never called: RTM may be absent).
 * Refused. ---- */
FUNC(aw_xbegin)
	xbegin 1f
	xend
1:	xorl %eax, %eax
	ret
END(aw_xbegin)
	PAD

/* ---- an indirect jump that is no jump table: int aw_indjmp(int x): x.
 * Refused (the target of jmp *%rax cannot be bounded). ---- */
FUNC(aw_indjmp)
	movl %edi, %eax
	leaq .Lindjmp_to(%rip), %rdx
	jmp *%rdx
	int3
.Lindjmp_to:
	ret
END(aw_indjmp)
	PAD

/* ---- register sentinel targets: they touch no register but rax ---- */
/* long aw_ident(long x): x, only rax written. */
FUNC(aw_ident)
	movq %rdi, %rax
	nopl 0(%rax,%rax,1)
	ret
END(aw_ident)
	PAD

/* long aw_ident_endbr(long x): the same after an endbr64. */
FUNC(aw_ident_endbr)
	endbr64
	movq %rdi, %rax
	ret
END(aw_ident_endbr)
	PAD

/* long aw_riprel_ro(void): aw_constant, read rip-relative. */
FUNC(aw_riprel_ro)
	movq aw_constant(%rip), %rax
	ret
END(aw_riprel_ro)
	PAD

/* ---- awh_clobber: what awh_sentinel must catch (prog_awkward
 * --selftest): changes rbx, xmm9, MXCSR, the x87 control word and DF. ---- */
FUNC(awh_clobber)
	movl $1, %ebx
	pxor %xmm9, %xmm9
	ldmxcsr awh_default_mxcsr(%rip)
	fninit
	std
	ret
END(awh_clobber)
	PAD

/* ---- the sentinel caller: void awh_sentinel(void *fn, int avx)
 * Loads awh_in (struct aw_state in prog_awkward.c) into every general
 * register but rsp, xmm0-15 (ymm0-15 when avx), MXCSR and the x87 control
 * word, calls fn, and stores the same registers, rsp and rflags into
 * awh_out.  Restores its caller's callee-saved registers, MXCSR and
 * control word before returning. ---- */
#define S_GPR(i) (8 * (i))
#define S_VEC(i) (128 + 32 * (i))
#define S_MXCSR 640
#define S_FCW 644
#define S_RFLAGS 648
#define S_RSP 656

FUNC(awh_sentinel)
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	subq $24, %rsp			/* 16-byte aligned at the call */
	movq %rdi, awh_fn(%rip)
	stmxcsr 0(%rsp)
	fnstcw 4(%rsp)
	movl %esi, 8(%rsp)
	testl %esi, %esi
	jz 1f
	vmovdqu awh_in+S_VEC(0)(%rip), %ymm0
	vmovdqu awh_in+S_VEC(1)(%rip), %ymm1
	vmovdqu awh_in+S_VEC(2)(%rip), %ymm2
	vmovdqu awh_in+S_VEC(3)(%rip), %ymm3
	vmovdqu awh_in+S_VEC(4)(%rip), %ymm4
	vmovdqu awh_in+S_VEC(5)(%rip), %ymm5
	vmovdqu awh_in+S_VEC(6)(%rip), %ymm6
	vmovdqu awh_in+S_VEC(7)(%rip), %ymm7
	vmovdqu awh_in+S_VEC(8)(%rip), %ymm8
	vmovdqu awh_in+S_VEC(9)(%rip), %ymm9
	vmovdqu awh_in+S_VEC(10)(%rip), %ymm10
	vmovdqu awh_in+S_VEC(11)(%rip), %ymm11
	vmovdqu awh_in+S_VEC(12)(%rip), %ymm12
	vmovdqu awh_in+S_VEC(13)(%rip), %ymm13
	vmovdqu awh_in+S_VEC(14)(%rip), %ymm14
	vmovdqu awh_in+S_VEC(15)(%rip), %ymm15
	jmp 2f
1:	movdqu awh_in+S_VEC(0)(%rip), %xmm0
	movdqu awh_in+S_VEC(1)(%rip), %xmm1
	movdqu awh_in+S_VEC(2)(%rip), %xmm2
	movdqu awh_in+S_VEC(3)(%rip), %xmm3
	movdqu awh_in+S_VEC(4)(%rip), %xmm4
	movdqu awh_in+S_VEC(5)(%rip), %xmm5
	movdqu awh_in+S_VEC(6)(%rip), %xmm6
	movdqu awh_in+S_VEC(7)(%rip), %xmm7
	movdqu awh_in+S_VEC(8)(%rip), %xmm8
	movdqu awh_in+S_VEC(9)(%rip), %xmm9
	movdqu awh_in+S_VEC(10)(%rip), %xmm10
	movdqu awh_in+S_VEC(11)(%rip), %xmm11
	movdqu awh_in+S_VEC(12)(%rip), %xmm12
	movdqu awh_in+S_VEC(13)(%rip), %xmm13
	movdqu awh_in+S_VEC(14)(%rip), %xmm14
	movdqu awh_in+S_VEC(15)(%rip), %xmm15
2:	ldmxcsr awh_in+S_MXCSR(%rip)
	fldcw awh_in+S_FCW(%rip)
	cld
	movq awh_in+S_GPR(0)(%rip), %rax
	movq awh_in+S_GPR(1)(%rip), %rbx
	movq awh_in+S_GPR(2)(%rip), %rcx
	movq awh_in+S_GPR(3)(%rip), %rdx
	movq awh_in+S_GPR(4)(%rip), %rsi
	movq awh_in+S_GPR(5)(%rip), %rdi
	movq awh_in+S_GPR(6)(%rip), %rbp
	movq awh_in+S_GPR(8)(%rip), %r8
	movq awh_in+S_GPR(9)(%rip), %r9
	movq awh_in+S_GPR(10)(%rip), %r10
	movq awh_in+S_GPR(11)(%rip), %r11
	movq awh_in+S_GPR(12)(%rip), %r12
	movq awh_in+S_GPR(13)(%rip), %r13
	movq awh_in+S_GPR(14)(%rip), %r14
	movq awh_in+S_GPR(15)(%rip), %r15
	movq %rsp, awh_in+S_RSP(%rip)
	call *awh_fn(%rip)
	movq %rax, awh_out+S_GPR(0)(%rip)
	movq %rbx, awh_out+S_GPR(1)(%rip)
	movq %rcx, awh_out+S_GPR(2)(%rip)
	movq %rdx, awh_out+S_GPR(3)(%rip)
	movq %rsi, awh_out+S_GPR(4)(%rip)
	movq %rdi, awh_out+S_GPR(5)(%rip)
	movq %rbp, awh_out+S_GPR(6)(%rip)
	movq %rsp, awh_out+S_GPR(7)(%rip)
	movq %r8, awh_out+S_GPR(8)(%rip)
	movq %r9, awh_out+S_GPR(9)(%rip)
	movq %r10, awh_out+S_GPR(10)(%rip)
	movq %r11, awh_out+S_GPR(11)(%rip)
	movq %r12, awh_out+S_GPR(12)(%rip)
	movq %r13, awh_out+S_GPR(13)(%rip)
	movq %r14, awh_out+S_GPR(14)(%rip)
	movq %r15, awh_out+S_GPR(15)(%rip)
	pushfq
	popq awh_out+S_RFLAGS(%rip)
	cld				/* awh_clobber sets DF */
	stmxcsr awh_out+S_MXCSR(%rip)
	fnstcw awh_out+S_FCW(%rip)
	cmpl $0, 8(%rsp)
	jz 3f
	vmovdqu %ymm0, awh_out+S_VEC(0)(%rip)
	vmovdqu %ymm1, awh_out+S_VEC(1)(%rip)
	vmovdqu %ymm2, awh_out+S_VEC(2)(%rip)
	vmovdqu %ymm3, awh_out+S_VEC(3)(%rip)
	vmovdqu %ymm4, awh_out+S_VEC(4)(%rip)
	vmovdqu %ymm5, awh_out+S_VEC(5)(%rip)
	vmovdqu %ymm6, awh_out+S_VEC(6)(%rip)
	vmovdqu %ymm7, awh_out+S_VEC(7)(%rip)
	vmovdqu %ymm8, awh_out+S_VEC(8)(%rip)
	vmovdqu %ymm9, awh_out+S_VEC(9)(%rip)
	vmovdqu %ymm10, awh_out+S_VEC(10)(%rip)
	vmovdqu %ymm11, awh_out+S_VEC(11)(%rip)
	vmovdqu %ymm12, awh_out+S_VEC(12)(%rip)
	vmovdqu %ymm13, awh_out+S_VEC(13)(%rip)
	vmovdqu %ymm14, awh_out+S_VEC(14)(%rip)
	vmovdqu %ymm15, awh_out+S_VEC(15)(%rip)
	vzeroupper
	jmp 4f
3:	movdqu %xmm0, awh_out+S_VEC(0)(%rip)
	movdqu %xmm1, awh_out+S_VEC(1)(%rip)
	movdqu %xmm2, awh_out+S_VEC(2)(%rip)
	movdqu %xmm3, awh_out+S_VEC(3)(%rip)
	movdqu %xmm4, awh_out+S_VEC(4)(%rip)
	movdqu %xmm5, awh_out+S_VEC(5)(%rip)
	movdqu %xmm6, awh_out+S_VEC(6)(%rip)
	movdqu %xmm7, awh_out+S_VEC(7)(%rip)
	movdqu %xmm8, awh_out+S_VEC(8)(%rip)
	movdqu %xmm9, awh_out+S_VEC(9)(%rip)
	movdqu %xmm10, awh_out+S_VEC(10)(%rip)
	movdqu %xmm11, awh_out+S_VEC(11)(%rip)
	movdqu %xmm12, awh_out+S_VEC(12)(%rip)
	movdqu %xmm13, awh_out+S_VEC(13)(%rip)
	movdqu %xmm14, awh_out+S_VEC(14)(%rip)
	movdqu %xmm15, awh_out+S_VEC(15)(%rip)
4:	ldmxcsr 0(%rsp)
	fldcw 4(%rsp)
	addq $24, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
END(awh_sentinel)

	.data
	.p2align 3
	.globl aw_counter
	.hidden aw_counter
aw_counter:
	.long 0
	.long 0
	.globl aw_constant
	.hidden aw_constant
aw_constant:
	.quad 0x0123456789abcdef
awh_fn:
	.quad 0
awh_default_mxcsr:
	.long 0x1f80

	.bss
	.p2align 6
	.globl awh_in
	.hidden awh_in
awh_in:
	.zero 664
	.globl awh_out
	.hidden awh_out
awh_out:
	.zero 664

	.section .note.GNU-stack, "", @progbits
