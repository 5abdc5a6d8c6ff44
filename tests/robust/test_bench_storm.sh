#!/bin/bash
# SPDX-License-Identifier: MIT
# bench -m jumpstorm (bench/bench.c) with threads (-t): the timer's
# SIGALRM goes to any thread of the process, often the main one waiting in
# pthread_join, and its handler siglongjmp'd into the one sigjmp_buf, a
# worker's, onto that worker's stack: a segmentation fault every run.  Now
# each thread jumps only into its own storm and only the workers take the
# signals.  Built as bench/run.sh builds it; run bare and under the shim.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cc=${CC:-cc}
b=$T/bench
sh "$CS_SRCDIR/bench/gen.sh" "$b"
flags=(-O2 -D_GNU_SOURCE -I"$CS_SRCDIR")
$cc "${flags[@]}" -fPIC -shared -o "$b/libbenchlib.so" "$CS_SRCDIR/bench/benchlib.c"
$cc "${flags[@]}" -fPIC -shared -o "$b/libbench1000.so" "$b/lib1000.c"
$cc -O1 -I"$CS_SRCDIR" -c -o "$b/sites.o" "$b/sites.c"
$cc -O1 -I"$CS_SRCDIR" -c -o "$b/targets.o" "$b/targets.c"
$cc "${flags[@]}" -o "$b/bench" "$CS_SRCDIR/bench/bench.c" "$b/sites.o" "$b/targets.o" \
	-L"$b" -lbenchlib -lbench1000 -Wl,-rpath,"$b" -lpthread

# storm NAME ARGS...: one bench run (bare, or with the shim when NAME is
# cs*); it must end well and print its "ns total used" line.
storm()
{
	local name=$1 status=0

	shift
	if [ "${name#cs}" != "$name" ]; then
		CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=bench_inc \
			CACHESHIM_OUTPUT="$T/$name.csr" LD_PRELOAD="$CS_SHIM" \
			timeout 120 "$b/bench" -m jumpstorm "$@" >"$T/$name.out" 2>"$T/$name.err" ||
			status=$?
	else
		timeout 120 "$b/bench" -m jumpstorm "$@" >"$T/$name.out" 2>"$T/$name.err" ||
			status=$?
	fi
	if [ "$status" -ne 0 ]; then
		show "$T/$name.err"
		fail "bench -m jumpstorm $* ($name) ended with status $status"
	fi
	grep -Eq '^[0-9.]+ [0-9]+ [0-9]+$' "$T/$name.out" || fail "$name: no result line"
}

storm bare -n 20000 -w 20000 -k 5
for t in 1 2 4; do
	storm bare_t$t -n 20000 -w 20000 -k 5 -t $t
done
storm cs_t2 -n 20000 -w 20000 -k 5 -t 2
"$CS_CMD" report "$T/cs_t2.csr" >/dev/null 2>"$T/cs.rerr" || {
	show "$T/cs.rerr"
	fail "report of the threaded storm failed"
}
! grep -q damaged "$T/cs.rerr" || fail "the report calls the threaded storm's file damaged"
echo "ok: bench -m jumpstorm with 1, 2 and 4 threads"
