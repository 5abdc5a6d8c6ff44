/* SPDX-License-Identifier: MIT */
/* The signature-agnostic call-through trampoline every wrapped call enters.
 *
 * A per-target stub (shim/stubs.c) pushes the target's index and jumps
 * here, so on entry:  [rsp] = index, [rsp+8] = caller's return address,
 * [rsp+16...] = the caller's stack arguments.
 *
 * Call-through: all per-call state lives in this frame (struct cs_frame in
 * shim/internal.h, at rbp - CS_FRAME_SIZE), and the target is really
 * called after CACHESHIM_WINDOW bytes of stack arguments are copied below
 * the frame.  So the wrapper is reentrant, safe in signal handlers, needs
 * nothing special for recursion, fibers or tail calls, and unwinders (C++
 * exceptions, backtraces) pass through it by the CFI below.  A longjmp or
 * exception past it just abandons the frame: the call counts as entered,
 * not returned.
 *
 * Registers: every register the target may read (all argument registers,
 * rax for varargs, r10 static chain, r11) is restored before the call;
 * rflags is not (the ABI passes nothing in flags and has every call
 * clobber them; DF is clear, as the ABI requires at a call); after the call every general register but rsp/rbp is restored from
 * what the target left, so callers that rely on -fipa-ra see the target's
 * own register effects only.  The hooks (cs_hot_enter, cs_hot_exit) are
 * built with -mgeneral-regs-only, so vector and x87 state is never touched
 * on the fast path; the slow path (thread set-up, new call site) saves the
 * whole extended state with XSAVE first (mask excludes AMX tiles, which
 * the shim never uses).
 */

#include "shim/sidestack.h"

#define FS 0x2b0 /* CS_FRAME_SIZE */
#define F(off) ((off) - FS)(%rbp)
#define F_RDI F(0x00)
#define F_RSI F(0x08)
#define F_RDX F(0x10)
#define F_RCX F(0x18)
#define F_R8 F(0x20)
#define F_R9 F(0x28)
#define F_RAX F(0x30)
#define F_R10 F(0x38)
#define F_R11 F(0x40)
#define F_TARGET F(0x48)
#define F_COPY F(0x50)
#define F_RESULT F(0x58)
#define F_RDX_OUT F(0x60)
#define F_RAX_OUT F(0x68)
#define F_IDX F(0x70)
#define F_RET F(0x78)
#define F_ARGS F(0x80)
#define F_RCX_OUT F(0x98)
#define F_RSI_OUT F(0xa0)
#define F_RDI_OUT F(0xa8)
#define F_R8_OUT F(0xb0)
#define F_R9_OUT F(0xb8)
#define F_R10_OUT F(0xc0)
#define F_R11_OUT F(0xc8)
#define F_TSC_START F(0x90)
#define F_TSC_END F(0x200)
#define F_SIDE F(0x2a0)

/* Calls the C function \func(frame) with the whole extended state (vector,
 * x87, mask registers) saved around it: slow-path C code may use any of
 * it.  Leaves the function's result in rax and rsp below the frame (every
 * path after it sets rsp from rbp).  Runs on a free side stack
 * (shim/sidestack.c) unless already on one, else below the current rsp.
 *
 * F_SIDE says what is to be undone: -1 nothing (already on a side stack,
 * or none exist), -2 signals blocked but no side stack free, else the
 * index of the side stack taken (signals blocked too). */
.macro SLOW_CALL func
	movq $-1, F_SIDE
	movq cs_side_base(%rip), %rsi
	testq %rsi, %rsi
	jz .Lstay\@
	movq %rsp, %rax
	subq %rsi, %rax
	cmpq $CS_SIDE_TOTAL, %rax	/* on a side stack already */
	jb .Lstay\@
	/* Signals are blocked first (all but the ones a fault raises), a
	 * side stack is taken after: a handler that ran between the two
	 * and left by siglongjmp would leave the stack taken for good (all
	 * of them, after enough such jumps).  Blocked so that the program's
	 * handlers run on the thread's stack, never on a side stack: a
	 * handler may need more than a side stack holds.  The old mask goes
	 * to cs_tls_side_mask (~0: not blocked). */
	movq $-2, F_SIDE
	movq %fs:0, %rdx
	addq cs_tls_side_mask@gottpoff(%rip), %rdx
	movq $-1, (%rdx)
	movl $14, %eax			/* rt_sigprocmask */
	xorl %edi, %edi			/* SIG_BLOCK */
	leaq cs_side_sigblock(%rip), %rsi
	movl $8, %r10d
	syscall
	testq %rax, %rax
	jz .Lblocked\@
	movq %fs:0, %rdx		/* refused: nothing to restore */
	addq cs_tls_side_mask@gottpoff(%rip), %rdx
	movq $-1, (%rdx)
.Lblocked\@:				/* (no numeric label: the code around uses them) */
	movl $CS_SIDE_WAITS, %r8d
.Lscan\@:
	leaq cs_side_busy(%rip), %rcx
	xorl %edx, %edx
.Ltry\@:
	movl $1, %eax
	xchgl %eax, (%rcx,%rdx,4)
	testl %eax, %eax
	jz .Ltake\@
	incl %edx
	cmpl $CS_SIDE_STACKS, %edx
	jb .Ltry\@
	/* All taken (many threads setting up at once): staying here would
	 * overflow a small stack, so wait for one to be freed, yielding the
	 * CPU to the slow paths that hold them; a bounded while only, in case
	 * their holders wait for something this thread holds. */
	decl %r8d
	jz .Lstay\@
	movl $24, %eax			/* sched_yield */
	syscall
	jmp .Lscan\@
.Ltake\@:
	movq %rdx, F_SIDE		/* owned from here: freed below */
	incq %rdx
	imulq $CS_SIDE_SIZE, %rdx
	addq cs_side_base(%rip), %rdx
	movq %rdx, %rsp			/* the top of that stack */
.Lstay\@:
	subq cs_xsave_size(%rip), %rsp
	andq $-64, %rsp
	movl cs_xsave_mask(%rip), %eax
	movl cs_xsave_mask+4(%rip), %edx
	testl %eax, %eax
	jz .Lfx\@
	xorl %ecx, %ecx			/* XRSTOR faults on a dirty header */
	movq %rcx, 512(%rsp)
	movq %rcx, 520(%rsp)
	movq %rcx, 528(%rsp)
	movq %rcx, 536(%rsp)
	movq %rcx, 544(%rsp)
	movq %rcx, 552(%rsp)
	movq %rcx, 560(%rsp)
	movq %rcx, 568(%rsp)
	xsave64 (%rsp)
	jmp .Lsaved\@
.Lfx\@:
	fxsave64 (%rsp)
.Lsaved\@:
	leaq -FS(%rbp), %rdi
	call \func
	movq %rax, F_RESULT
	movl cs_xsave_mask(%rip), %eax
	movl cs_xsave_mask+4(%rip), %edx
	testl %eax, %eax
	jz .Lfxr\@
	xrstor64 (%rsp)
	jmp .Lrestored\@
.Lfxr\@:
	fxrstor64 (%rsp)
.Lrestored\@:
	/* Back on the thread's stack before the side stack is freed: a
	 * signal handler must not run on a stack another thread can take. */
	leaq -FS(%rbp), %rsp
	andq $-16, %rsp
	movq F_SIDE, %rdx
	cmpq $-1, %rdx
	je .Lkept\@
	testq %rdx, %rdx
	js .Lfreed\@
	leaq cs_side_busy(%rip), %rcx
	movl $0, (%rcx,%rdx,4)
.Lfreed\@:
	/* Signals as they were: a pending one is handled here, on the
	 * thread's stack. */
	movq %fs:0, %rsi
	addq cs_tls_side_mask@gottpoff(%rip), %rsi
	cmpq $-1, (%rsi)
	je .Lkept\@
	movl $14, %eax			/* rt_sigprocmask */
	movl $2, %edi			/* SIG_SETMASK */
	xorl %edx, %edx
	movl $8, %r10d
	syscall
.Lkept\@:
	movq F_RESULT, %rax
.endm

	.text
	.globl cs_trampoline
	.hidden cs_trampoline
	.type cs_trampoline, @function
	.p2align 4
cs_trampoline:
	.cfi_startproc
	/* An exception passing a measured call ends it in the nesting stack
	 * (shim/unwindreg.c); pc-relative: the routine is in this object. */
	.cfi_personality 0x1b, cs_trampoline_personality
	.cfi_def_cfa %rsp, 16		/* the stub pushed the index */
	.cfi_offset %rip, -8
	pushq %rbp
	.cfi_def_cfa_offset 24
	.cfi_offset %rbp, -24
	movq %rsp, %rbp
	.cfi_def_cfa_register %rbp
	leaq -FS(%rbp), %rsp
	movq %rdi, F_RDI
	movq %rsi, F_RSI
	movq %rdx, F_RDX
	movq %rcx, F_RCX
	movq %r8, F_R8
	movq %r9, F_R9
	movq %rax, F_RAX
	movq %r10, F_R10
	movq %r11, F_R11
	movq 8(%rbp), %rax
	movq %rax, F_IDX
	movq 16(%rbp), %rax
	movq %rax, F_RET
	/* The index slot (read above) now holds the caller's return address,
	 * so that [rbp + 8] is this frame's return address as a frame-pointer
	 * walk expects (a backtrace taken by frame pointers from inside the
	 * target, as profilers and ASan's fast unwinder take it, found the
	 * index there and stopped or skipped the caller).  Unwinding by the
	 * CFI reads the return address at rbp + 16 and is unchanged; the pass
	 * path below overwrites the slot again. */
	movq %rax, 8(%rbp)
	leaq 24(%rbp), %rax
	movq %rax, F_ARGS
	andq $-16, %rsp
	/* No cld: DF is clear at a call and at a return (the ABI; a signal
	 * handler starts with it clear too), and two of them were ~1 ns of
	 * every call. */
	leaq -FS(%rbp), %rdi
	call cs_hot_enter
	cmpq $2, %rax			/* CS_ENTER_SLOW */
	jne 1f

	/* Slow path: thread set-up, new call site. */
	SLOW_CALL cs_thread_enter_slow

1:	testq %rax, %rax		/* CS_ENTER_PASS */
	jz .Lpass

	/* Measured: copy the stack arguments below the frame, call through.
	 * The copy keeps the arguments' address modulo 64, not only 16: the
	 * ABI aligns a stack argument of type __m256 or __m512 (or a by-value
	 * structure with such alignment) to 32 or 64 bytes, and the target
	 * may load it with an aligned instruction (vmovapd: SIGSEGV when the
	 * copy was only 16-byte aligned) or see its address.  rsp =
	 * ((f & -16) - window) - ((that - args) & 48), which hotpath.c's
	 * touch_below computes too. */
	leaq -FS(%rbp), %rsp
	andq $-16, %rsp
	subq cs_window(%rip), %rsp
	leaq 24(%rbp), %rsi
	movq %rsp, %rax
	subq %rsi, %rax
	andl $48, %eax
	subq %rax, %rsp
	movq F_COPY, %rcx
	movq %rsp, %rdi
	/* Whole 256-byte windows by unrolled moves: rep movsq costs more to
	 * start than this copy takes. */
	cmpq $32, %rcx
	jne 7f
	.irp off, 0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240
	movq \off(%rsi), %rax
	movq \off+8(%rsi), %rdx
	movq %rax, \off(%rdi)
	movq %rdx, \off+8(%rdi)
	.endr
	jmp 8f
7:	rep movsq
8:
	movq F_RDI, %rdi
	movq F_RSI, %rsi
	movq F_RCX, %rcx
	movq F_R8, %r8
	movq F_R9, %r9
	movq F_R10, %r10
	movq F_R11, %r11
	/* The timestamps are taken here, right around the call, so that the
	 * bracket holds little more than the call, the target and its
	 * return, and the work above (lookup, copy) is not in it.  rdtsc
	 * then lfence: the target does not start before the reading.  rdtsc
	 * writes rax and rdx, so those two are restored after it. */
	rdtsc
	lfence
	shlq $32, %rdx
	orq %rdx, %rax
	movq %rax, F_TSC_START
	movq F_RDX, %rdx
	movq F_RAX, %rax
	call *F_TARGET
	.globl cs_trampoline_return
	.hidden cs_trampoline_return
cs_trampoline_return:			/* a target's return address */
	movq %rax, F_RAX_OUT
	movq %rdx, F_RDX_OUT
	lfence				/* the target's instructions are done */
	rdtsc
	shlq $32, %rdx
	orq %rdx, %rax
	movq %rax, F_TSC_END
	movq %rcx, F_RCX_OUT
	movq %rsi, F_RSI_OUT
	movq %rdi, F_RDI_OUT
	movq %r8, F_R8_OUT
	movq %r9, F_R9_OUT
	movq %r10, F_R10_OUT
	movq %r11, F_R11_OUT
	leaq -FS(%rbp), %rdi
	call cs_hot_exit
	testq %rax, %rax		/* CS_EXIT_SLOW: a block to make */
	jz 6f
	SLOW_CALL cs_thread_exit_slow
6:	movq F_RAX_OUT, %rax
	movq F_RDX_OUT, %rdx
	movq F_RCX_OUT, %rcx
	movq F_RSI_OUT, %rsi
	movq F_RDI_OUT, %rdi
	movq F_R8_OUT, %r8
	movq F_R9_OUT, %r9
	movq F_R10_OUT, %r10
	movq F_R11_OUT, %r11
	.cfi_remember_state
	leave
	.cfi_def_cfa %rsp, 16
	.cfi_restore %rbp
	leaq 8(%rsp), %rsp		/* drop the index */
	.cfi_def_cfa_offset 8
	ret

	/* Not measured: restore everything and enter the target as if the
	 * caller had called it directly (its return address is in place). */
.Lpass:
	.cfi_restore_state
	movq F_TARGET, %rax
	movq %rax, 8(%rbp)		/* the index slot becomes the jump target */
	movq F_RDI, %rdi
	movq F_RSI, %rsi
	movq F_RDX, %rdx
	movq F_RCX, %rcx
	movq F_R8, %r8
	movq F_R9, %r9
	movq F_RAX, %rax
	movq F_R10, %r10
	movq F_R11, %r11
	movq %rbp, %rsp
	popq %rbp
	.cfi_def_cfa %rsp, 16
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size cs_trampoline, .-cs_trampoline

	.section .note.GNU-stack, "", @progbits
