#!/bin/bash
# SPDX-License-Identifier: MIT
# A signal handler siglongjmping out every 40 us while the program calls
# 64 targets in turn, one call per series window (CACHESHIM_SERIES=1), so
# that windows merge often.  A call left between counting its window
# bucket and counting itself leaves a bucket count with no call; merges
# touched only the buckets between a window's min and max (or none in a
# window without calls), so the stray count stayed in a zeroed window and
# a later call's window held a count beyond its calls and sum: the report
# called the file damaged (every run).  Merges after lost numbers now take
# every bucket; every view reads the file clean.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=1500000
cd "$T"
make_fns64
cat >jump.c <<'C'
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include "fns.h"

static sigjmp_buf env;
static volatile long jumps;

static void on_alarm(int sig)
{
	(void)sig;
	jumps++;
	siglongjmp(env, 1);
}

int main(int argc, char **argv)
{
	struct itimerval every = {{0, 40}, {0, 40}}, off = {{0, 0}, {0, 0}};
	struct sigaction sa = {0};
	volatile long i = 0;
	long n = atol(argv[1]);

	for (int k = 0; k < 64; k++) /* bound before the storm */
		fns[k](0);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	if (sigsetjmp(env, 1) == 0)
		setitimer(ITIMER_REAL, &every, NULL);
	while (i < n) {
		fns[i & 63](i);
		i = i + 1;
	}
	setitimer(ITIMER_REAL, &off, NULL);
	printf("%ld calls returned\n", (long)i);
	fprintf(stderr, "jumps %ld\n", (long)jumps);
	return 0;
}
C
cc=${CC:-cc}
$cc -O1 -shared -fPIC -o libf.so lib.c
$cc -O1 -o jump jump.c -L. -lf -Wl,-rpath,"$T" -Wl,-z,now

jump_run 'f*' 1 ./jump $N

for view in "" "--series" "--format json"; do
	# shellcheck disable=SC2086 # the view's words are separate arguments
	if ! "$CS_CMD" report $view "$T/jump.csr" >"$T/view.out" 2>"$T/view.err" ||
		grep -q damaged "$T/view.err"; then
		show "$T/view.err"
		fail "report ${view:-(table)} failed or called the file damaged"
	fi
done
report_csv jump --by function
calls=$(csv_sum jump "event=tsc" calls)
entered=$(csv_sum jump "event=tsc" entered)
# 64 first calls and N loop steps returned once at least; each jump adds
# one call at most.
[ "$calls" -ge $((N + 64)) ] || fail "$calls calls counted, the program made $((N + 64)) at least"
[ "$entered" -le $((N + 64 + jumps)) ] || fail "$entered calls entered, $((N + 64)) + $jumps at most"
echo "ok: $jumps jumps, $calls calls of $entered returned, 64 series"
