/* SPDX-License-Identifier: MIT */
/* _exit and _Exit, wrapped: a process that leaves without exit() runs no
 * destructor and no exit handler, so its file stayed RUNNING and the
 * report called it incomplete ("did not exit cleanly") although every
 * call had ended: a forked child's usual way out, and dash's at the end
 * of every `sh -c` (a review helper).  The file is sealed here first.
 *
 * _exit may be called from a signal handler, and in a vfork child: the
 * seal is stores and one trim (no lock, no allocation), and it is made
 * only in the process the file belongs to (getpid, asked of the kernel:
 * a vfork or _Fork child still holds the parent's file, which the parent
 * goes on writing).  Under the program's seccomp filter, stores alone,
 * and only where getpid may still be asked.  The real _exit is looked up
 * in the constructor (dlsym is not async-signal-safe); without it, the
 * system call it makes. */
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "shim/internal.h"
#include "shim/rawsys.h"

static void (*real_exit)(int);
static void (*real_Exit)(int);

void cs_quickexit_init(void)
{
	real_exit = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
	real_Exit = (void (*)(int))dlsym(RTLD_NEXT, "_Exit");
}

/* Seals the file if it is this process's: 1 if it did (the guard is
 * then up, so that nothing of ours after it is measured). */
static int seal_before_exit(void)
{
	if (!cs_g.enabled || !cs_g.hdr)
		return 0;
	if (cs_g.sandbox_refused & CS_SB_GETPID)
		return 0;
	if (cs_syscall6(SYS_getpid, 0, 0, 0, 0, 0, 0) != cs_g.pid)
		return 0;
	cs_guard_take();
	if (cs_g.sandboxed)
		cs_output_seal_stores();
	else
		cs_output_seal_gone();
	return 1;
}

int __cxa_at_quick_exit(void (*fn)(void *), void *dso);

/* quick_exit runs the at_quick_exit handlers, then glibc's own _exit,
 * never the exported one: the file stayed RUNNING and the report called
 * it incomplete.  This handler, registered in the constructor, runs
 * after the handlers the program registers (last in, first out), whose
 * calls it keeps.  The guard goes down again: a handler registered
 * before the constructor (a library's constructor) runs after it and
 * its calls are counted as not recorded (file sealed), as after exit's
 * seal. */
static void seal_at_quick_exit(void *unused)
{
	(void)unused;
	if (seal_before_exit())
		cs_guard_drop();
}

void cs_quickexit_register(void)
{
	/* For no library (dso NULL), as the seal at exit. */
	__cxa_at_quick_exit(seal_at_quick_exit, NULL);
}

static __attribute__((noreturn)) void leave(void (*real)(int), int status)
{
	if (real)
		real(status);
	for (;;)
		cs_syscall6(SYS_exit_group, status, 0, 0, 0, 0, 0);
}

CS_EXPORT __attribute__((noreturn)) void _exit(int status)
{
	seal_before_exit();
	leave(real_exit, status);
}

CS_EXPORT __attribute__((noreturn)) void _Exit(int status)
{
	seal_before_exit();
	leave(real_Exit ? real_Exit : real_exit, status);
}
