#!/bin/bash
# SPDX-License-Identifier: MIT
# Functions no call-through wrapper may stand in front of: setjmp returns
# twice, vfork's child returns on its parent's stack.  Named as targets
# (and matched by broad globs), they are never wrapped: the program runs as
# without the shim, one line says why, and the other targets are counted.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cat >"$T/twice.c" <<'C'
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static jmp_buf env;

static void __attribute__((noinline)) bounce(int i)
{
	longjmp(env, i + 1);
}

int main(void)
{
	volatile int n = 0;
	int i, status;

	for (i = 0; i < 50; i++) {
		if (setjmp(env) == 0)
			bounce(i);
		n++;
	}
	for (i = 0; i < 5; i++) {
		pid_t p = vfork();

		if (p == 0)
			_exit(i);
		waitpid(p, &status, 0);
		n += WEXITSTATUS(status);
	}
	printf("%d %d\n", n, (int)(getpid() > 0));
	return 0;
}
C
${CC:-cc} -O1 -o "$T/twice" "$T/twice.c"
plain_run plain "$T/twice"
expect_status plain 0
for hook in both got entry; do
	status=0
	CACHESHIM_HOOK=$hook CACHESHIM_EVENTS=tsc \
		CACHESHIM_TARGETS='*setjmp*,vfork,__vfork,getpid' CACHESHIM_OUTPUT=$T/$hook.csr \
		LD_PRELOAD=$CS_SHIM "$T/twice" >"$T/$hook.out" 2>"$T/$hook.err" || status=$?
	expect_status $hook 0
	same_output plain $hook
	if [ $hook != got ]; then
		grep -q "^cacheshim: '_setjmp' returns twice or is not entered by a call: never wrapped$" \
			"$T/$hook.err" || { show "$T/$hook.err"; fail "$hook: no line for _setjmp"; }
	fi
	report_csv $hook --by function
	want_count $hook "function=getpid,event=tsc" calls 1
	for fn in _setjmp setjmp vfork __vfork; do
		got=$(csv_sum $hook "function=$fn,event=tsc" entered)
		[ "$got" = 0 ] || fail "$hook: $fn wrapped ($got calls entered)"
	done
	echo "$hook: setjmp and vfork never wrapped, getpid counted once"
done
