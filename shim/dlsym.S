/* SPDX-License-Identifier: MIT */
/* dlsym, wrapped (the C part is cs_dlsym_wanted and cs_dlsym_mapped in
 * shim/init.c): asked a module's handle for a function whose GOT slots
 * point at its stub, it answers that stub too, or a program comparing
 * dlsym's answer with the function's address (Ruby checks an extension's
 * ruby_xmalloc so) sees two addresses.
 *
 * Every other lookup, and RTLD_NEXT and RTLD_DEFAULT always, is answered
 * by the real dlsym entered with the caller's own return address, by a
 * jump: glibc finds the caller from that address, for RTLD_NEXT (the
 * object after the caller's), RTLD_DEFAULT (the caller's scope) and the
 * dependency it records; a call from here would make the caller
 * libcacheshim. */

/* Calls func(handle, name) and keeps both for the jump that follows;
 * the stack stays aligned for the call. */
.macro CALL_KEEPING_ARGS func
	pushq %rdi
	.cfi_adjust_cfa_offset 8
	pushq %rsi
	.cfi_adjust_cfa_offset 8
	subq $8, %rsp
	.cfi_adjust_cfa_offset 8
	call \func
	addq $8, %rsp
	.cfi_adjust_cfa_offset -8
	popq %rsi
	.cfi_adjust_cfa_offset -8
	popq %rdi
	.cfi_adjust_cfa_offset -8
.endm

	.text
	.globl dlsym
	.type dlsym, @function
	.p2align 4
dlsym:
	.cfi_startproc
	movq cs_real_dlsym(%rip), %rax
	testq %rax, %rax
	jz .Linit
.Lready:
	cmpq $-1, %rdi			/* RTLD_NEXT */
	je .Lreal
	CALL_KEEPING_ARGS cs_dlsym_wanted	/* a GOT-hooked target's name? */
	testl %eax, %eax
	jz .Lreal
	jmp cs_dlsym_mapped
.Lreal:
	movq cs_real_dlsym(%rip), %rax
	jmp *%rax
.Linit:
	CALL_KEEPING_ARGS cs_dlsym_init	/* the real dlsym, in rax */
	jmp .Lready
	.cfi_endproc
	.size dlsym, .-dlsym

	.section .note.GNU-stack, "", @progbits
