#!/bin/bash
# SPDX-License-Identifier: MIT
# Targets called from other libraries' destructors at exit: a library the
# program linked (glibc finalizes it after the preloaded shim, which it
# initialized before the shim) and a library the program dlopened and
# never closed.  Every call counts: 1,000 in main, 500 and 700 in the two
# destructors.  Before, the shim's destructor sealed the file first and
# the 1,200 destructor calls were only counted as not recorded.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cd "$T"
cat >t.c <<'C'
volatile long sink;
__attribute__((noinline)) long t_leaf(long x) { sink += x; return x + 1; }
C
cat >linked.c <<'C'
long t_leaf(long);
__attribute__((destructor)) static void at_end(void) { for (int i = 0; i < 500; i++) t_leaf(i); }
void linked_here(void) {}
C
cat >opened.c <<'C'
long t_leaf(long);
__attribute__((destructor)) static void at_end(void) { for (int i = 0; i < 700; i++) t_leaf(i); }
C
cat >main.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
long t_leaf(long);
void linked_here(void);
int main(void)
{
	linked_here();
	for (int i = 0; i < 1000; i++)
		t_leaf(i);
	if (!dlopen("./libopened.so", RTLD_NOW)) {
		puts(dlerror());
		return 1;
	}
	puts("main done");
	return 0;
}
C
cc=${CC:-cc}
$cc -O2 -shared -fPIC -o libt.so t.c
$cc -O2 -shared -fPIC -o liblinked.so linked.c -L. -lt -Wl,-rpath,"$T"
$cc -O2 -shared -fPIC -o libopened.so opened.c -L. -lt -Wl,-rpath,"$T"
$cc -O2 -o main main.c -L. -llinked -lt -Wl,-rpath,"$T" -ldl

plain_run plain ./main
expect_status plain 0
shim_run late tsc t_leaf ./main
expect_status late 0
same_output plain late
report_csv late
want_count late "function=t_leaf,event=tsc" calls 2200
"$CS_CMD" report "$T/late.csr" >"$T/late.txt" 2>&1
if grep -q 'not recorded' "$T/late.txt"; then
	show "$T/late.txt"
	fail "calls counted as not recorded"
fi
echo "2,200 calls, 1,200 of them in destructors run after the shim's"
