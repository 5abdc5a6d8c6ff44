#!/bin/bash
# SPDX-License-Identifier: MIT
# A thread's first wrapped call made inside malloc, with the thread's arena
# locked: the shim's thread set-up asked pthread_getattr_np for the stack,
# which mallocs, and waited for that same lock for ever (Python: a new
# thread's first malloc runs _int_malloc with its new arena locked).  The
# stack is now learnt where that is safe: in the new thread before its
# start routine (pthread_create is wrapped), in the constructor for the
# main thread; threads made otherwise (C11 thrd_create) get bounds that
# need no call.  Skipped (77) without python3, or without libc's debug
# symbols (_int_malloc is not exported).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

# Debian's own python3 (a pyenv shim on PATH would run bash first).
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || { echo "SKIP: no python3"; exit 77; }
script='import threading
out = []
ts = [threading.Thread(target=lambda i=i: out.append(i * i)) for i in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print(sorted(out))'
plain_run plain "$PY" -c "$script"
expect_status plain 0
status=0
# The shim's variables inside timeout: only python runs with it.
timeout -k 5 60 env CACHESHIM_QUIET=1 CACHESHIM_HOOK=entry CACHESHIM_EVENTS=tsc \
	CACHESHIM_TARGETS=_int_malloc CACHESHIM_OUTPUT="$T/py.csr" LD_PRELOAD="$CS_SHIM" \
	"$PY" -c "$script" >"$T/py.out" 2>"$T/py.err" || status=$?
if grep -q "'_int_malloc' matched no function" "$T/py.err"; then
	echo "SKIP: no debug symbols for libc (libc6-dbg): _int_malloc cannot be wrapped"
	exit 77
fi
[ "$status" != 124 ] && [ "$status" != 137 ] || fail "python hung (killed by timeout)"
expect_status py 0
same_output plain py
report_csv py --by function
calls=$(csv_one py "function=_int_malloc,event=tsc" calls)
[ "$calls" -gt 4 ] || fail "$calls calls of _int_malloc counted, want one per thread at least"
echo "python, 4 threads whose first wrapped call is inside malloc: no hang, $calls calls"

# A thread made by C11 thrd_create (glibc calls its pthread_create inside,
# not the wrapper): bounds that need no call, the calls counted.
cat >"$T/c11.c" <<'C'
#include <stdio.h>
#include <threads.h>
long rt_leaf(long x);
static int run(void *arg)
{
	long i, s = 0;

	for (i = 0; i < 10; i++)
		s += rt_leaf(i);
	*(long *)arg = s;
	return 0;
}
int main(void)
{
	thrd_t t;
	long s = 0;

	if (thrd_create(&t, run, &s) != thrd_success)
		return 1;
	thrd_join(t, NULL);
	printf("sum %ld\n", s);
	return 0;
}
C
${CC:-cc} -O1 -o "$T/c11" "$T/c11.c" -L"$R/.libs" -lcsrobust -Wl,-rpath,"$R/.libs" -lpthread
plain_run plain_c11 "$T/c11"
expect_status plain_c11 0
shim_run c11 tsc rt_leaf "$T/c11"
expect_status c11 0
same_output plain_c11 c11
no_shim_lines c11
report_csv c11 --by function
want_count c11 "function=rt_leaf,event=tsc" calls 10
echo "thrd_create thread: 10 calls"
