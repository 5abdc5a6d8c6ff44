#!/bin/bash
# SPDX-License-Identifier: MIT
# --subtract-overhead in the files of forked processes: the shim measures
# its own cost (the calibration calls) once, at start, so a forked child's
# file had none, and `cacheshim report -s` took nothing off the child's
# calls: a child's file alone had mean = raw_mean, and merged with its
# parent's (78 ticks of overhead) 39 ticks were taken off per call, half
# the overhead the summary line said was subtracted (review helper 59).
# The child's file now holds a copy of the calibration calls it inherited,
# so every file of the tree has the same overhead.  A grandchild too.  And
# of the nested calibration: what a wrapped call adds to the call around
# it (no page fault; more TSC ticks than a bracket).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cd "$T"
cat >lib.c <<'C'
/* A few thousand cycles: no call measures less than the overhead, so
 * the mean less it is exact. */
__attribute__((noinline)) long t_call(long x)
{
	for (int i = 0; i < 2000; i++)
		__asm__ volatile("" : "+r"(x));
	return x + 1;
}
C
cat >prog.c <<'C'
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

long t_call(long x);

/* Calls t_call n times, forks a child that does the same (and whose own
 * child, at depth < 2, too), waits for it; exits 1 if a child failed. */
static int tree(int depth, long n)
{
	long i, s = 0;
	int st = 0;
	pid_t c;

	for (i = 0; i < n; i++)
		s += t_call(i);
	if (depth < 2) {
		c = fork();
		if (c == 0)
			_exit(tree(depth + 1, n));
		if (c < 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st))
			return 1;
	}
	return s == n * (n + 1) / 2 ? 0 : 1;
}

int main(void)
{
	int ret = tree(0, 200);

	puts(ret ? "failed" : "ok");
	return ret;
}
C
cc=${CC:-cc}
$cc -O1 -shared -fPIC -o libt.so lib.c
$cc -O1 -o prog prog.c -L. -lt -Wl,-rpath,"$T"

mkdir out
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc,perf::PAGE-FAULTS CACHESHIM_TARGETS=t_call \
	CACHESHIM_OUTPUT="$T/out/f.%p" LD_PRELOAD=$CS_SHIM ./prog >run.out 2>run.err || status=$?
[ "$status" -eq 0 ] || { show "$T/run.err"; fail "prog exits $status"; }
n=$(find out -type f | wc -l)
[ "$n" -eq 3 ] || fail "$n report files, want 3 (a parent, its child and grandchild)"

# The parent's overhead: its file's calibration median.
want=
for f in out/f.*; do
	report_files one "$f" -- --subtract-overhead --by function
	want_count one "function=t_call,event=tsc" calls 200
	want_count one "function=t_call,event=perf::PAGE-FAULTS" overhead 0
	over=$(csv_select "$T/one.csv" "function=t_call,event=tsc" overhead)
	raw=$(csv_select "$T/one.csv" "function=t_call,event=tsc" raw_mean)
	mean=$(csv_select "$T/one.csv" "function=t_call,event=tsc" mean)
	[ -n "$over" ] && [ "$over" != 0 ] ||
		{ show "$T/one.csv"; fail "$f: tsc overhead '$over': nothing taken off"; }
	awk -v r="$raw" -v m="$mean" -v o="$over" 'BEGIN { d = r - o - m; exit !(d < 0.0015 && d > -0.0015) }' ||
		{ show "$T/one.csv"; fail "$f: tsc mean $mean is not raw_mean $raw less the overhead $over"; }
	if [ -z "$want" ]; then
		want=$over
	elif [ "$over" != "$want" ]; then
		fail "$f: tsc overhead $over, another file of the tree has $want"
	fi
	! incomplete_said one || { show "$T/one.rerr"; fail "$f is incomplete"; }
	# The nested calibration (a wrapped call inside another), copied
	# too: page faults 0 exactly (the wrapper touches no fresh page),
	# tsc more than a bracket (the inner call's two group reads).
	"$CS_CMD" report --format json "$f" >one.json 2>&1 || { show one.json; fail "$f: report --format json"; }
	python3 - one.json "$over" <<'PY' || fail "$f: nested overhead"
import json, sys
ev = {e["name"]: e for e in json.load(open(sys.argv[1]))["events"]}
pf, tsc = ev["perf::PAGE-FAULTS"]["nested_overhead"], ev["tsc"]["nested_overhead"]
if pf != 0 or tsc is None or tsc <= int(sys.argv[2]):
    sys.exit("nested_overhead: page faults %r (want 0), tsc %r (want more than %s)" % (pf, tsc, sys.argv[2]))
PY
done
report_files all out/f.* -- --subtract-overhead --by function
want_count all "function=t_call,event=tsc" calls 600
got=$(csv_select "$T/all.csv" "function=t_call,event=tsc" overhead)
[ "$got" = "$want" ] || { show "$T/all.csv"; fail "merged: tsc overhead $got, want $want"; }
echo "ok: 3 processes of a fork tree, each file with the calibration: $want ticks taken off per call"
