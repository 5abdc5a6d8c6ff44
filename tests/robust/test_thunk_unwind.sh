#!/bin/bash
# SPDX-License-Identifier: MIT
# Unwinding from inside an entry thunk (the relocated first instructions
# of a patched function, run in the stub region): a fault in one of them
# stops there.  The thunk had no frame information, so libgcc's unwinder
# ended at it: a program turning SIGSEGV into a C++ exception
# (-fnon-call-exceptions) died in std::terminate (status 134) where it
# caught every fault without the shim, and a crash handler's backtrace()
# listed 3 frames instead of the whole stack (review helper 71).  The
# shim registers frame information for its stubs and thunks.  The
# functions fault at their first instruction, after two pushes of
# callee-saved registers (whose values the catching caller relies on),
# and after push %rbp; mov %rsp,%rbp.
# A C program has no libgcc_s.so.1 at start, so its frame information
# waits; a C++ plugin it dlopens brings libgcc_s, and the information is
# registered after that dlopen: libgcc's _Unwind_Backtrace in the crash
# handler (taken from the plugin, not through backtrace(), which would
# load libgcc_s itself) walks through the thunk too.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

need_cxx
cc=${CC:-cc}
cd "$T"
# Each loads through its argument at once: the fault is in the window.
cat >lib.S <<'S'
	.text
	.globl u_first, u_pushed, u_framed
	.type u_first, @function
u_first:
	.cfi_startproc
	movq (%rdi), %rax
	addq $1, %rax
	ret
	.cfi_endproc
	.size u_first, .-u_first
	.type u_pushed, @function
u_pushed:
	.cfi_startproc
	pushq %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	pushq %rbp
	.cfi_def_cfa_offset 24
	.cfi_offset %rbp, -24
	movq (%rdi), %rax
	movq $-1, %rbx
	movq $-1, %rbp
	popq %rbp
	.cfi_def_cfa_offset 16
	popq %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size u_pushed, .-u_pushed
	.type u_framed, @function
u_framed:
	.cfi_startproc
	pushq %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq %rsp, %rbp
	.cfi_def_cfa_register %rbp
	movq (%rdi), %rax
	popq %rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size u_framed, .-u_framed
	.section .note.GNU-stack, "", @progbits
S
cat >throw.cc <<'C'
#include <csignal>
#include <cstdio>
#include <cstdlib>

extern "C" long u_first(long *), u_pushed(long *), u_framed(long *);
struct Fault {};
static void on_segv(int) { throw Fault(); }

/* N rounds: each function faults every third call, the fault becomes an
 * exception caught here; the sums use values kept in callee-saved
 * registers across the calls. */
int main(int argc, char **argv)
{
	long (*const fns[3])(long *) = {u_first, u_pushed, u_framed};
	long n = atol(argv[1]), x = 5, caught = 0, s = 0;
	struct sigaction sa = {};

	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, 0);
	for (long i = 0; i < n; i++)
		for (long k = 0; k < 3; k++) {
			long a = i * 7 + k, b = i ^ k;

			try {
				s += fns[k](i % 3 ? &x : (long *)0) + a;
			} catch (Fault &) {
				caught++;
				s += a * 3 + b;
			}
			s += a - b;
		}
	printf("caught %ld sum %ld\n", caught, s);
	return 0;
}
C
cat >trace.c <<'C'
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

long u_pushed(long *);
static void on_segv(int sig)
{
	void *b[64];
	char **s;
	int n = backtrace(b, 64), i;

	(void)sig;
	s = backtrace_symbols(b, n);
	for (i = 0; s && i < n; i++)
		if (strstr(s[i], "(caller") || strstr(s[i], "(main"))
			printf("%.*s\n", (int)strcspn(strchr(s[i], '(') + 1, "+)"), strchr(s[i], '(') + 1);
	fflush(stdout);
	_exit(3);
}
__attribute__((noinline)) long caller2(long *p) { long r = u_pushed(p); __asm__ volatile(""); return r; }
__attribute__((noinline)) long caller1(long *p) { long r = caller2(p); __asm__ volatile(""); return r; }
int main(void)
{
	signal(SIGSEGV, on_segv);
	return (int)caller1(0);
}
C
cat >plug.cc <<'C'
#include <string>
extern "C" long plug_len(const char *s) { return (long)std::string(s).size(); }
C
cat >plugtrace.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <unwind.h>

long u_pushed(long *);
static _Unwind_Reason_Code (*walk)(_Unwind_Trace_Fn, void *);
static _Unwind_Ptr (*ip_of)(struct _Unwind_Context *);

static _Unwind_Reason_Code frame(struct _Unwind_Context *c, void *arg)
{
	Dl_info di;

	(void)arg;
	if (dladdr((void *)(ip_of(c) - 1), &di) && di.dli_sname &&
	    (!strncmp(di.dli_sname, "caller", 6) || !strcmp(di.dli_sname, "main")))
		printf("%s\n", di.dli_sname);
	return _URC_NO_REASON;
}

static void on_segv(int sig)
{
	(void)sig;
	walk(frame, NULL);
	fflush(stdout);
	_exit(3);
}
__attribute__((noinline)) long caller2(long *p) { long r = u_pushed(p); __asm__ volatile(""); return r; }
__attribute__((noinline)) long caller1(long *p) { long r = caller2(p); __asm__ volatile(""); return r; }
int main(void)
{
	void *h = dlopen("./libplug.so", RTLD_NOW | RTLD_LOCAL);

	if (!h || !(walk = dlsym(h, "_Unwind_Backtrace")) || !(ip_of = dlsym(h, "_Unwind_GetIP")))
		return 2;
	signal(SIGSEGV, on_segv);
	return (int)caller1(0);
}
C
$cc -shared -fPIC -o libu.so lib.S
"$CXX" -shared -fPIC -o libplug.so plug.cc
$cc -O1 -rdynamic -o plugtrace plugtrace.c -L. -lu -Wl,-rpath,"$T" -ldl
! ldd ./plugtrace | grep -q libgcc_s || fail "plugtrace has libgcc_s from the start: nothing tested"
"$CXX" -O2 -fnon-call-exceptions -o throw throw.cc -L. -lu -Wl,-rpath,"$T"
$cc -O1 -rdynamic -o trace trace.c -L. -lu -Wl,-rpath,"$T"

N=300
plain_run plain ./throw $N
expect_status plain 0
grep -q "^caught $N " "$T/plain.out" || { show "$T/plain.out"; fail "throw's own count is off"; }
for hook in entry got; do
	CACHESHIM_HOOK=$hook shim_run throw_$hook tsc 'u_*' ./throw $N
	expect_status throw_$hook 0
	same_output plain throw_$hook
	report_csv throw_$hook --by function
	for f in u_first u_pushed u_framed; do
		want_count throw_$hook "function=$f,event=tsc" entered $N
		want_count throw_$hook "function=$f,event=tsc" calls $((N - N / 3))
	done
	echo "$hook: $N faults in u_* caught as exceptions, every call counted"
done
"$CS_CMD" report --targets "$T/throw_entry.csr" >targets.txt 2>&1
[ "$(grep -c '^ *u_[a-z]* .* entry ' targets.txt)" = 3 ] || { show targets.txt; fail "u_* not entry-patched: nothing tested"; }

plain_run tplain ./trace
expect_status tplain 3
printf 'caller2\ncaller1\nmain\n' >want.txt
cmp -s want.txt "$T/tplain.out" || { show "$T/tplain.out"; fail "trace's own backtrace is off"; }
for hook in entry got; do
	CACHESHIM_HOOK=$hook shim_run trace_$hook tsc u_pushed ./trace
	expect_status trace_$hook 3
	same_output tplain trace_$hook
done
echo "a crash handler's backtrace() in a faulting thunk shows the whole stack"

plain_run pplain ./plugtrace
expect_status pplain 3
cmp -s want.txt "$T/pplain.out" || { show "$T/pplain.out"; fail "plugtrace's own walk is off"; }
shim_run plug_entry tsc u_pushed ./plugtrace
expect_status plug_entry 3
same_output pplain plug_entry
echo "a C program's thunk frames registered after a C++ plugin's dlopen brought libgcc_s"
