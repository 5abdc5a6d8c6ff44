/* SPDX-License-Identifier: MIT */
/* syscall(3), wrapped: a call that installs a seccomp filter (libseccomp
 * makes it so) tells the shim first (cs_sandbox_syscall, shim/sandbox.c);
 * every call then goes on to the real syscall by a jump, with all its
 * arguments (six registers and the seventh on the stack) as they came. */

#define SYS_prctl 157
#define SYS_seccomp 317

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
	movq cs_real_syscall(%rip), %rax
	testq %rax, %rax
	jz .Linit
	jmp *%rax
.Lask:
	/* Seven pushes: the stack is aligned for the call. */
	pushq %rdi
	.cfi_adjust_cfa_offset 8
	pushq %rsi
	.cfi_adjust_cfa_offset 8
	pushq %rdx
	.cfi_adjust_cfa_offset 8
	pushq %rcx
	.cfi_adjust_cfa_offset 8
	pushq %r8
	.cfi_adjust_cfa_offset 8
	pushq %r9
	.cfi_adjust_cfa_offset 8
	pushq %rax
	.cfi_adjust_cfa_offset 8
	call cs_sandbox_syscall
	popq %rax
	.cfi_adjust_cfa_offset -8
	popq %r9
	.cfi_adjust_cfa_offset -8
	popq %r8
	.cfi_adjust_cfa_offset -8
	popq %rcx
	.cfi_adjust_cfa_offset -8
	popq %rdx
	.cfi_adjust_cfa_offset -8
	popq %rsi
	.cfi_adjust_cfa_offset -8
	popq %rdi
	.cfi_adjust_cfa_offset -8
	jmp .Lreal
.Linit:
	pushq %rdi
	.cfi_adjust_cfa_offset 8
	pushq %rsi
	.cfi_adjust_cfa_offset 8
	pushq %rdx
	.cfi_adjust_cfa_offset 8
	pushq %rcx
	.cfi_adjust_cfa_offset 8
	pushq %r8
	.cfi_adjust_cfa_offset 8
	pushq %r9
	.cfi_adjust_cfa_offset 8
	subq $8, %rsp
	.cfi_adjust_cfa_offset 8
	call cs_syscall_init		/* the real syscall, in rax */
	addq $8, %rsp
	.cfi_adjust_cfa_offset -8
	popq %r9
	.cfi_adjust_cfa_offset -8
	popq %r8
	.cfi_adjust_cfa_offset -8
	popq %rcx
	.cfi_adjust_cfa_offset -8
	popq %rdx
	.cfi_adjust_cfa_offset -8
	popq %rsi
	.cfi_adjust_cfa_offset -8
	popq %rdi
	.cfi_adjust_cfa_offset -8
	testq %rax, %rax
	jz cs_syscall_missing
	jmp *%rax
	.cfi_endproc
	.size syscall, .-syscall

	.section .note.GNU-stack, "", @progbits
