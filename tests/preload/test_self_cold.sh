#!/bin/bash
# SPDX-License-Identifier: MIT
# The cold (first) call of a site whose calls are partly nested, with
# --self, from exact page faults: t_outer touches a fresh pages, then
# calls t_inner touching b (none when b < 0).  Calls 7 (nothing nested),
# 2 + 5, 4: the cold call's self value is 7, the warm ones 2 and 4.  The
# report guessed which nested value was the first call's by comparing
# values: the second call's inclusive 7 equals the first call's 7, so it
# printed a cold self value of 2 and warm 11 (review helper 47).  The
# shim now says in the nested block whether it was made at the site's
# first call.  And after a fork: the parent's pages were shared
# copy-on-write with the child, and the first write to one of the shim's
# (its site table for the nested call's new call site, the stack below
# the program's frames for the nested call's trampoline frame) faulted
# inside the enclosing call: 8 where the call touched 7 pages.  They are
# written again in fork now (MADV_POPULATE_WRITE, not counted).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

cd "$T"
cat >lib.c <<'C'
#include <sys/mman.h>

static char *pool;
/* The next fresh page, in shared memory: a private variable would be
 * copied on its first write after a fork, one page fault more. */
static long *next;

__attribute__((constructor)) static void init(void)
{
	pool = mmap(0, 1L << 30, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	madvise(pool, 1L << 30, MADV_NOHUGEPAGE);
	next = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	*next = 0;
}

/* After a fork: the shared page's first access is a fault of the child's
 * (its mapping is not copied), here, not in a call. */
void t_ready(void)
{
	*(volatile long *)next = *next;
}

static void touch(long k)
{
	for (long i = 0; i < k; i++)
		pool[((*next)++) * 4096] = 1;
}

__attribute__((noinline)) void t_inner(long b)
{
	touch(b);
	__asm__ volatile("");
}

__attribute__((noinline)) void t_outer(long a, long b)
{
	touch(a);
	if (b >= 0)
		t_inner(b);
	__asm__ volatile("");
}
C
cat >prog.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void t_outer(long a, long b);
void t_ready(void);

/* prog [-f] A1 B1 A2 B2 ...: t_outer(A1, B1), t_outer(A2, B2), ...; with
 * -f in a forked child and then in the parent. */
int main(int argc, char **argv)
{
	int i = 1, fork_first = argc > 1 && !strcmp(argv[1], "-f");
	pid_t child = fork_first ? fork() : -1;

	if (child == 0 || child > 0) {
		if (child > 0 && waitpid(child, NULL, 0) != child)
			return 3;
		t_ready();
		i = 2;
	}
	for (; i + 1 < argc; i += 2)
		t_outer(atol(argv[i]), atol(argv[i + 1]));
	puts("done");
	return 0;
}
C
cc=${CC:-cc}
# Bound at start: lazy binding's first write to a GOT page after a fork
# is a page fault of the program's own, inside the call.
$cc -O1 -shared -fPIC -Wl,-z,now -o libt.so lib.c
$cc -O1 -o prog prog.c -L. -lt -Wl,-rpath,"$T" -Wl,-z,now

COLS=calls,cold_mean,warm_n,warm_total,warm_min,warm_max
# want NAME OPTS WANT: t_outer's COLS of `report --cold OPTS`.
want()
{
	local got

	# shellcheck disable=SC2086 # the options are separate words
	report_csv "$1" --cold $2
	got=$(csv_one "$1" function=t_outer,event=perf::PAGE-FAULTS "$COLS")
	[ "$got" = "$3" ] || { show "$T/$1.csv"; fail "'$1' ${2:-(inclusive)}: t_outer has '$got', want '$3'"; }
}

shim_run plain_first perf::PAGE-FAULTS t_outer,t_inner ./prog 7 -1 2 5 4 -1
[ "$status" -eq 0 ] || { show "$T/plain_first.err"; fail "status $status"; }
tab=$(printf '\t')
want plain_first "" "3${tab}7${tab}2${tab}11${tab}4${tab}7"
want plain_first --self "3${tab}7${tab}2${tab}6${tab}2${tab}4"

# The first call nested: its self value (2) is the cold one.
shim_run nested_first perf::PAGE-FAULTS t_outer,t_inner ./prog 2 5 7 -1 4 -1
[ "$status" -eq 0 ] || { show "$T/nested_first.err"; fail "status $status"; }
want nested_first "" "3${tab}7${tab}2${tab}11${tab}4${tab}7"
want nested_first --self "3${tab}2${tab}2${tab}11${tab}4${tab}7"
echo "ok: cold and warm self values of both orders"

# The same calls in a forked child and then in its parent: each file has
# exactly the pages touched.
mkdir "$T/fork"
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=perf::PAGE-FAULTS CACHESHIM_TARGETS=t_outer,t_inner \
	CACHESHIM_OUTPUT="$T/fork/out.%p" LD_PRELOAD=$CS_SHIM ./prog -f 7 -1 2 5 4 -1 \
	>"$T/fork.out" 2>"$T/fork.err" || status=$?
[ "$status" -eq 0 ] || { show "$T/fork.err"; fail "fork: status $status"; }
n=0
for f in "$T"/fork/out.*; do
	n=$((n + 1))
	cp "$f" "$T/fork$n.csr"
	want fork$n "" "3${tab}7${tab}2${tab}11${tab}4${tab}7"
done
[ $n -eq 2 ] || fail "fork: $n report files, want 2"
echo "ok: after a fork, parent and child count exactly the pages touched"
