#!/bin/bash
# SPDX-License-Identifier: MIT
# A library loaded, called through a dlsym pointer and unloaded 2,500
# times: each load's entry stubs take a region near it, and after ~1,700
# loads no room is left within 2 GB.  The loads after that were not
# targets at all: their calls went unmeasured with nothing in the report
# saying so (only one line on stderr, once).  Each such function is now a
# target refused with the reason, which the report shows.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=2500
cd "$T"
cat >t.c <<'C'
long t_use(long x) { return 2 * x; }
C
cat >main.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	long s = 0;

	for (int i = 0; i < n; i++) {
		void *h = dlopen("./libt.so", RTLD_NOW | RTLD_LOCAL);
		long (*u)(long) = (long (*)(long))dlsym(h, "t_use");

		s += u(i);
		dlclose(h);
	}
	printf("sum %ld\n", s);
	return 0;
}
C
cc=${CC:-cc}
$cc -shared -fPIC -o libt.so t.c
$cc -o main main.c -ldl

plain_run plain ./main $N
expect_status plain 0
shim_run churn tsc t_use ./main $N
expect_status churn 0
same_output plain churn
report_csv churn --by function
calls=$(csv_sum churn "function=t_use,event=tsc" calls)
"$CS_CMD" report --targets --format csv "$T/churn.csr" >"$T/targets.csv" 2>"$T/targets.err"
if [ "$calls" -lt $N ]; then
	grep -q '^t_use,.*,refused,.*no memory within 2 GB of the module for entry stubs$' \
		"$T/targets.csv" || {
		show "$T/targets.csv"
		fail "$calls of $N calls measured, and no refused t_use says why"
	}
	echo "$N loads: $calls calls measured, the later loads' t_use refused with the reason"
else
	echo "$N loads: all $N calls measured (room for every load's stubs)"
fi
