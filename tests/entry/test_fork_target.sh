#!/bin/bash
# SPDX-License-Identifier: MIT
# fork itself as a target, with every hook: entry patching puts the
# wrapper inside libc's fork, GOT patching in the program's PLT slot.  The
# child returns from fork through the wrapper entered by its parent, and
# must go on normally: K children exit with known statuses, which the
# parent adds up.  (Until 004cf85 each child died of SIGSEGV there, in GOT
# mode too: cs_hot_exit read the thread state the fork handler had
# cleared.)
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

CC=${CC_FOR_TESTS:-gcc}
K=20
cat >"$T/fk.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int k = atoi(argv[1]), i, st, sum = 0;

	for (i = 0; i < k; i++) {
		pid_t p = fork();

		if (p < 0)
			return 1;
		if (p == 0)
			_exit(i % 7);
		if (waitpid(p, &st, 0) != p)
			return 1;
		/* a child killed by a signal adds 100 + the signal */
		sum += WIFEXITED(st) ? WEXITSTATUS(st) : 100 + WTERMSIG(st);
	}
	printf("%d children, statuses add up to %d\n", k, sum);
	return 0;
}
C
$CC -O2 -o "$T/fk" "$T/fk.c" || fail "cannot build fk"
plain_run plain "$T/fk" $K
[ "$status" -eq 0 ] || fail "fk fails without the shim"
# Premise: 0+1+...+6 twice, then 0..5.
grep -qx "$K children, statuses add up to 57" "$T/plain.out" || fail "fk: $(cat "$T/plain.out")"
for hook in got entry both; do
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_HOOK=$hook CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=fork \
		CACHESHIM_OUTPUT="$T/$hook.%p.csr" LD_PRELOAD=$CS_SHIM "$T/fk" $K \
		>"$T/$hook.out" 2>"$T/$hook.err" || status=$?
	[ "$status" -eq 0 ] || { show "$T/$hook.err"; fail "$hook: fk exits $status"; }
	same_output plain $hook
	echo "$hook: $K children exit normally"
done
