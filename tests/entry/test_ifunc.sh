#!/bin/bash
# SPDX-License-Identifier: MIT
# IFUNC targets (strlen and most of libc's string functions): the symbol is
# the resolver, the implementation is chosen when the loader binds it and
# has no symbol of its own, so entry patching cannot take it.  Under
# CACHESHIM_HOOK=entry the start-up line said "matched no function in any
# loaded module"; it now says it is an IFUNC and that the GOT pass wraps
# it.  The GOT pass (got, both) wraps its calls.  A later target taken by
# an earlier pattern (f*,fn) said "matched no function" too; it now names
# the pattern that took it; a misspelt later target (f*,fnx) is not named
# as taken by the earlier one (it was, by the pattern's text alone: a
# function of that name seemed to exist).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

cd "$T"
cat >lib.c <<'C'
static long fi_impl(long x) { return x + 1; }
static void *fi_resolve(void) { return (void *)fi_impl; }
long fi(long x) __attribute__((ifunc("fi_resolve")));
long fn(long x) { return x + 2; }
C
cat >prog.c <<'C'
#include <stdio.h>
long fi(long), fn(long);
int main(void)
{
	long s = 0;
	for (int i = 0; i < 100; i++)
		s += fi(i) + fn(i);
	printf("%ld\n", s);
	return 0;
}
C
cc=${CC:-cc}
$cc -O1 -shared -fPIC -o libi.so lib.c
$cc -O1 -o prog prog.c -L. -li -Wl,-rpath,"$T"
plain_run plain ./prog

# expect_line NAME REGEX: run NAME's stderr has a line matching REGEX.
expect_line()
{
	grep -qE "$2" "$T/$1.err" || { show "$T/$1.err"; fail "$1: no line matching '$2'"; }
}

hook_run entry entry tsc fi ./prog
[ "$status" -eq 0 ] || { show "$T/entry.err"; fail "entry: exit status $status"; }
same_output plain entry
expect_line entry "^cacheshim: 'fi' is an IFUNC .*CACHESHIM_HOOK=got or both"
! grep -q "matched no function" "$T/entry.err" ||
	{ show "$T/entry.err"; fail "entry: an IFUNC reported as matching nothing"; }

hook_run glob entry tsc 'f*,fn' ./prog
[ "$status" -eq 0 ] || { show "$T/glob.err"; fail "glob: exit status $status"; }
same_output plain glob
expect_line glob "^cacheshim: target 'f\\*' names 1 IFUNC \\(fi\\)"
expect_line glob "^cacheshim: target 'fn' is taken by the earlier target 'f\\*'"
hook_run typo entry tsc 'f*,fnx' ./prog
[ "$status" -eq 0 ] || { show "$T/typo.err"; fail "typo: exit status $status"; }
expect_line typo "^cacheshim: target 'fnx' matched no function"
! grep -q "taken by" "$T/typo.err" || { show "$T/typo.err"; fail "typo: fnx named as taken"; }
report_csv glob
[ "$(csv_one glob "function=fn,event=tsc" calls)" = 100 ] ||
	{ show "$T/glob.csv"; fail "glob: fn's calls"; }

# memcpy in glibc: memcpy@GLIBC_2.2.5 a function, the default
# memcpy@@GLIBC_2.14 that programs link to an IFUNC: entry patching takes
# the old version only, and says so.
libc=$(ldd ./prog | awk '/libc\.so/ { print $3 }')
if nm -D "$libc" | grep -q ' T memcpy@GLIBC_2.2.5$' &&
	nm -D "$libc" | grep -q ' i memcpy@@GLIBC_2.14$'; then
	hook_run memcpy entry tsc memcpy ./prog
	[ "$status" -eq 0 ] || { show "$T/memcpy.err"; fail "memcpy: exit status $status"; }
	same_output plain memcpy
	expect_line memcpy "^cacheshim: 'memcpy' is also an IFUNC"
fi

for hook in got both; do
	hook_run $hook $hook tsc fi ./prog
	[ "$status" -eq 0 ] || { show "$T/$hook.err"; fail "$hook: exit status $status"; }
	same_output plain $hook
	! grep -q "IFUNC" "$T/$hook.err" || { show "$T/$hook.err"; fail "$hook: IFUNC line"; }
	report_csv $hook
	[ "$(csv_one $hook "function=fi,event=tsc" calls)" = 100 ] ||
		{ show "$T/$hook.csv"; fail "$hook: fi's calls"; }
done
echo "IFUNC fi: said under entry, 100 calls wrapped under got and both; f*,fn: fn taken by f*"
