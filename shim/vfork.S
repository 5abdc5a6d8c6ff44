/* SPDX-License-Identifier: MIT */
/* vfork, wrapped: its child shares the parent's memory and thread pointer
 * until it execs or exits, so the calling thread's shim state (the
 * cs_thread of cs_tls_thread) is the child's too, and the child's target
 * calls were measured as the parent thread's.  cs_vfork_prepare marks that
 * thread CS_THREAD_VFORKED, which cs_hot_enter passes through after asking
 * the kernel whose process it runs in: in the child, unmeasured; back in
 * the parent (which vfork suspended until then), measuring again.
 *
 * The real vfork is entered by a jump with the caller's return address in
 * place: it pops it into a register before the system call, since the
 * child returns first, on the same stack, and overwrites it.  Nothing of
 * this wrapper may stay on that stack across the call. */

	.text
	.globl vfork
	.type vfork, @function
	.p2align 4
vfork:
	.cfi_startproc
	subq $8, %rsp			/* the stack aligned for the call */
	.cfi_adjust_cfa_offset 8
	call cs_vfork_prepare		/* the real vfork, in rax */
	addq $8, %rsp
	.cfi_adjust_cfa_offset -8
	jmp *%rax
	.cfi_endproc
	.size vfork, .-vfork

	.section .note.GNU-stack, "", @progbits
