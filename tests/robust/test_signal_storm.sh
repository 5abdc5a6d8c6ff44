#!/bin/bash
# SPDX-License-Identifier: MIT
# A storm of signals on one thread whose handler calls the target the
# interrupted call is in (64 targets in turn, each with its series of
# windows, so that windows merge often): a handler's call that found all
# windows used merged them while the interrupted call was adding itself to
# a window, which then counted a call twice (the reader: "window 62 has 513
# calls ... 512 per window", every run; test_signals.sh about one run in
# ten).  Now the merge waits while a claimed number is not in its window
# yet; the file reads clean and every call counts once.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=1280000
cd "$T"
make_fns64
cat >storm.c <<'C'
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "fns.h"

static volatile int cur, done;
static volatile long handled;
static pid_t main_tid;

static __attribute__((noinline)) long call_one(int k, long x)
{
	return fns[k](x);
}

static void on_usr1(int sig)
{
	(void)sig;
	call_one(cur, 1); /* the target main is in, or about to call */
	handled++;
}

static void *signaler(void *arg)
{
	(void)arg;
	while (!done)
		syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
	return NULL;
}

int main(int argc, char **argv)
{
	long n = atol(argv[1]), s = 0;
	struct sigaction sa = {0};
	pthread_t th;

	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGUSR1, &sa, NULL);
	main_tid = gettid();
	pthread_create(&th, NULL, signaler, NULL);
	for (long i = 0; i < n; i++) {
		cur = (int)(i & 63);
		s += call_one(cur, i);
	}
	done = 1;
	pthread_join(th, NULL); /* a signal still pending came on its way out */
	printf("sum %ld\n", s);
	fprintf(stderr, "handled %ld\n", handled);
	return 0;
}
C
cc=${CC:-cc}
$cc -O2 -shared -fPIC -o libf.so lib.c
$cc -O2 -pthread -o storm storm.c -L. -lf -Wl,-rpath,"$T"

plain_run plain ./storm $N
expect_status plain 0
shim_run storm tsc 'f[0-9]*' ./storm $N
expect_status storm 0
same_output plain storm
handled=$(sed -n 's/^handled //p' "$T/storm.err")
"$CS_CMD" report "$T/storm.csr" >"$T/storm.txt" 2>&1 ||
	{ show "$T/storm.txt"; fail "report of the storm run refused"; }
if grep -q 'damaged' "$T/storm.txt"; then
	show "$T/storm.txt"
	fail "the report file is damaged"
fi
report_csv storm
want_count storm "event=tsc" calls $((N + handled))
echo "$N calls and $handled handler calls of 64 targets in a signal storm: all counted, file clean"
