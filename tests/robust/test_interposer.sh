#!/bin/bash
# SPDX-License-Identifier: MIT
# A program's own LD_PRELOAD wrapper, built without symbol versions, in
# front of a versioned libc function (puts@GLIBC_2.2.5), reached through a
# lazily bound PLT slot.  The GOT pass resolves such a slot itself, and
# asked dlvsym, which refuses an unversioned definition that the loader
# accepts: the slot went to libc's puts, past the program's wrapper (its
# output lost the "[wrapped]" prefix).  It now binds as ld.so would.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cd "$T"
cat >wrap.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
int puts(const char *s)
{
	static int (*real)(const char *);
	if (!real)
		real = (int (*)(const char *))dlsym(RTLD_NEXT, "puts");
	fputs("[wrapped] ", stdout);
	return real(s);
}
C
cat >main.c <<'C'
#include <stdio.h>
int main(void)
{
	puts("hello");
	puts("world");
	return 0;
}
C
cc=${CC:-cc}
$cc -shared -fPIC -o libwrap.so wrap.c -ldl
$cc -O1 -fno-builtin -Wl,-z,lazy -o main main.c
# Premise: main's slot for puts is a lazily bound, versioned PLT slot.
readelf -rW main | grep -q 'R_X86_64_JUMP_SLOT.*puts@GLIBC_2.2.5' ||
	fail "premise: main has no lazily bound puts@GLIBC_2.2.5 slot"

status=0
LD_PRELOAD=$T/libwrap.so ./main >"$T/plain.out" 2>"$T/plain.err" || status=$?
expect_status plain 0
grep -q '^\[wrapped\] hello$' "$T/plain.out" || { show "$T/plain.out"; fail "premise: the wrapper runs"; }
# got: main's slot leads to the wrapper's puts (2 calls); both: the
# entries of the wrapper's and libc's puts are patched, and the wrapper
# calls libc's (2 + 2).
for hook_calls in got:2 both:4; do
	hook=${hook_calls%:*} calls=${hook_calls#*:}
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_HOOK=$hook CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=puts \
		CACHESHIM_OUTPUT="$T/$hook.csr" LD_PRELOAD="$CS_SHIM $T/libwrap.so" ./main \
		>"$T/$hook.out" 2>"$T/$hook.err" || status=$?
	expect_status $hook 0
	same_output plain $hook
	no_shim_lines $hook
	report_csv $hook --by function
	want_count $hook "function=puts@*,event=tsc" calls $calls
	# Two functions named puts, in two modules: each labelled with its
	# module, two calls each.
	if [ $hook = both ]; then
		want_count $hook "function=puts@libwrap.so,event=tsc" calls 2
		want_count $hook "function=puts@libc.so.6,event=tsc" calls 2
	fi
	echo "CACHESHIM_HOOK=$hook: the program's wrapper still runs; $calls calls of puts"
done
