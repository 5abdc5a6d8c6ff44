/* SPDX-License-Identifier: MIT */
/* syscall(3), wrapped: a call that may install a seccomp filter
 * (libseccomp makes it so: SYS_seccomp, SYS_prctl) goes to the shim
 * (cs_sandbox_syscall, shim/sandbox.c), which runs the filter on its own
 * calls and makes the real call (those two take five arguments at most,
 * all in registers); every other call goes on to the real syscall by a
 * jump, with all its arguments (six registers and the seventh on the
 * stack) as they came. */

#define SYS_prctl 157
#define SYS_seccomp 317

/* Calls func with the caller's arguments and rax kept for the jump that
 * follows; seven pushes leave the stack aligned for the call. */
.macro CALL_KEEPING_ARGS func
	.irp reg, rdi, rsi, rdx, rcx, r8, r9, rax
	pushq %\reg
	.cfi_adjust_cfa_offset 8
	.endr
	call \func
	.irp reg, rax, r9, r8, rcx, rdx, rsi, rdi
	popq %\reg
	.cfi_adjust_cfa_offset -8
	.endr
.endm

	.text
	.globl syscall
	.type syscall, @function
	.p2align 4
syscall:
	.cfi_startproc
	cmpq $SYS_seccomp, %rdi
	je .Lask
	cmpq $SYS_prctl, %rdi
	je .Lask
.Lreal:
	/* r11: scratch at a call, and no argument of syscall's. */
	movq cs_real_syscall(%rip), %r11
	testq %r11, %r11
	jz .Linit
	jmp *%r11
.Lask:
	jmp cs_sandbox_syscall
.Linit:
	CALL_KEEPING_ARGS cs_syscall_init	/* stores the real syscall */
	movq cs_real_syscall(%rip), %r11
	testq %r11, %r11
	jz cs_syscall_missing
	jmp *%r11
	.cfi_endproc
	.size syscall, .-syscall

	.section .note.GNU-stack, "", @progbits
