#!/bin/bash
# SPDX-License-Identifier: MIT
# Report files of two builds of one program path, merged: their call
# sites' offsets are of two different files.  The report said nothing and
# named every call site by offset alone (the first file's build id did not
# match the file on disk), and a call site of one build at the offset of
# another build's merged into its row.  Now a warning says so, and the call
# sites stay offsets (never one build's symbols for the other's offsets);
# each file alone is symbolized as before.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

cd "$T"
cat >one.c <<'C'
#include <stdio.h>
#include <unistd.h>
int main(void)
{
	(void)getppid();
	puts("one");
	return 0;
}
C
cat >two.c <<'C'
#include <stdio.h>
#include <unistd.h>
static int twice(int x) { return 2 * x; }
int main(int argc, char **argv)
{
	(void)argv;
	(void)getppid();
	(void)getppid();
	printf("two %d\n", twice(argc));
	return 0;
}
C
cc=${CC:-cc}
for b in one two; do
	$cc -O1 -o prog $b.c
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=getppid \
		CACHESHIM_OUTPUT="$T/$b.csr" LD_PRELOAD=$CS_SHIM ./prog >"$b.out" ||
		fail "$b: exit status"
done
# Alone: the call sites of the build on disk are named by function.
"$CS_CMD" report --format csv two.csr >alone.csv 2>alone.err || { show alone.err; fail "report two"; }
[ "$(csv_select alone.csv "function=getppid" callsite | grep -c '^main+')" = 2 ] ||
	{ show alone.csv; fail "two.csr alone: call sites not named by main"; }
# Merged, the build on disk first: its symbols named the other build's
# offsets too.  Now one line says so, and the 3 calls are there by offset.
"$CS_CMD" report --format csv two.csr one.csr >both.csv 2>both.err || { show both.err; fail "report both"; }
grep -qx "cacheshim: warning: report: $T/prog: the files come from more than one build of it (their build ids differ): its call sites are merged by offset and shown as offsets; report each build's files apart" \
	both.err || { show both.err; fail "no line about the two builds"; }
[ "$(grep -c 'more than one build' both.err)" = 1 ] || fail "the line said more than once"
[ "$(csv_select both.csv "function=getppid" calls | awk '{ s += $1 } END { print s }')" = 3 ] || { show both.csv; fail "not 3 calls"; }
! csv_select both.csv "function=getppid" callsite | grep -q '^main+' ||
	{ show both.csv; fail "a call site named by one build's symbols"; }
echo "two builds of prog merged: said once, 3 calls, call sites by offset"
