#!/bin/bash
# SPDX-License-Identifier: MIT
# Calls after the report file filled up: a call site whose block could not
# be made took the slow path at every call (two rt_sigprocmask and a
# failed reservation each), and so did every nested call of a site whose
# nested block could not be made; a program whose new call sites came
# after the file system filled up ran many times slower (review helper 53:
# 8 threads on a full 300 KB tmpfs, 4.4 s against 0.3 s).  Now the thread
# remembers that the block is missing and only every 256th such call tries
# again (shim/hotpath.c: not_made, nested_skip).
#
# prog_full fill on a 192 KB tmpfs: the file fills up among its first 48
# call sites; then 5,000 nested calls under a site without a nested block
# and 5,000 calls of a site without a block.  Every call is counted,
# recorded or not (exactly), the program runs as without the shim, and
# (with strace) the shim made a few hundred rt_sigprocmask calls, not
# ~45,000.  Needs root to mount the tmpfs (skipped otherwise).
#
# First, nested blocks' share of the file: they took all the room they
# found, and with thousands of nesting targets (ruby under rb_*) they and
# the series filled the file, so that half of all calls, those of later
# call sites, were lost (review helper 56: 1.35 M of 2.6 M).  prog_full
# nest 40 in a 1 MB file: 40 call sites with a nested block each, then 48
# call sites of a leaf; nested blocks stop at an eighth of the file, and
# every call is recorded (in a row of its own or an overflow row; before,
# 77 of 1,256).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

plain_run plain_nest "$R/prog_full" nest 40
expect_status plain_nest 0
CACHESHIM_CAPACITY_MB=1 CACHESHIM_SERIES=0 shim_run nest tsc rt_leaf,rt_callback \
	"$R/prog_full" nest 40
expect_status nest 0
same_output plain_nest nest
grep -q "nested calls' blocks use an eighth of the report file" "$T/nest.err" ||
	{ show "$T/nest.err"; fail "no line about nested blocks' share of the file"; }
report_csv nest
want_count nest "function=rt_callback,event=tsc" calls 40
want_count nest "function=rt_leaf,event=tsc" calls $((40 + 1176))
echo "40 call sites with nested blocks, then 48 more, in a 1 MB file: every call recorded"

# 200 threads live at once in a 1 MB file: their blocks use up its
# capacity, and the calls of the threads without one are not recorded;
# the report says why (the capacity, not the file system or a thread).
cat >"$T/live.c" <<'C'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static pthread_barrier_t all;
static void *run(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 10; i++)
		(void)getppid();
	pthread_barrier_wait(&all); /* every thread alive at once */
	return NULL;
}
int main(int argc, char **argv)
{
	int n = atoi(argv[1]), i;
	pthread_t *t = malloc((size_t)n * sizeof(*t));

	pthread_barrier_init(&all, NULL, (unsigned)n);
	for (i = 0; i < n; i++)
		pthread_create(&t[i], NULL, run, NULL);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%d threads\n", n);
	return 0;
}
C
${CC:-cc} -O1 -pthread -o "$T/live" "$T/live.c"
plain_run plain_live "$T/live" 200
expect_status plain_live 0
CACHESHIM_CAPACITY_MB=1 CACHESHIM_SERIES=0 shim_run live tsc getppid "$T/live" 200
expect_status live 0
same_output plain_live live
report_csv live
"$CS_CMD" report "$T/live.csr" >"$T/live.txt" 2>&1 || { show "$T/live.txt"; fail "report failed"; }
lost=$(sed -n 's/^calls not recorded (report file full (CACHESHIM_CAPACITY_MB)): \([0-9]*\)$/\1/p' \
	"$T/live.txt")
measured=$(csv_sum live "function=getppid,event=tsc" calls)
[ -n "$lost" ] && [ $((measured + lost)) = 2000 ] ||
	{ show "$T/live.txt"; fail "want 2000 calls, recorded or not recorded for the file's capacity"; }
echo "200 live threads in a 1 MB file: $measured calls recorded, $lost not (the file's capacity said)"

N=5000
# rt_callback N + 1 times; rt_leaf 1,176 times in the fill, N at call site
# 0 (made before the fill) and N at call site 47 (not made).
ALL=$((N + 1 + 1176 + 2 * N))
mkdir "$T/fs"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=192k tmpfs "$T/fs" 2>/dev/null; then
	echo "SKIP: cannot mount a tmpfs (not root?)"
	exit 77
fi
cleanup_add "umount '$T/fs' 2>/dev/null"

plain_run plain "$R/prog_full" fill $N
expect_status plain 0
trace=
if command -v strace >/dev/null; then
	trace="strace -f -qq -e trace=rt_sigprocmask -o $T/trace"
fi
status=0
$trace env CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf,rt_callback \
	CACHESHIM_OUTPUT="$T/fs/r" LD_PRELOAD="$CS_SHIM" \
	"$R/prog_full" fill $N >"$T/full.out" 2>"$T/full.err" || status=$?
expect_status full 0
same_output plain full
grep -q 'no room left on the file system' "$T/full.err" ||
	{ show "$T/full.err"; fail "the file system did not fill up: no test"; }
report_files full "$T/fs/r"
want_count full "function=rt_callback,event=tsc" calls $((N + 1))
# The busiest rt_leaf row is call site 0: its fill call and the N calls of
# rt_callback's callback, nested calls of a site without a nested block.
most=$(csv_select "$T/full.csv" "function=rt_leaf,event=tsc" calls | sort -n | tail -n 1)
[ "$most" = $((N + 1)) ] || { show "$T/full.csv"; fail "call site 0 has $most calls, want $((N + 1))"; }
"$CS_CMD" report "$T/fs/r" >"$T/full.txt" 2>&1 || { show "$T/full.txt"; fail "report failed"; }
lost=$(sed -n 's/^calls not recorded.*: \([0-9]*\)$/\1/p' "$T/full.txt")
measured=$(csv_sum full "event=tsc" calls)
[ -n "$lost" ] && [ "$lost" -ge $N ] ||
	{ show "$T/full.txt"; fail "calls not recorded: '$lost', want at least $N (call site 47)"; }
[ $((measured + lost)) = $ALL ] ||
	{ show "$T/full.txt"; fail "$measured recorded + $lost not recorded, want $ALL calls"; }
# And why: the file could not grow (not its capacity, not a thread).
grep -qx "calls not recorded (report file could not grow (file system full, quota or RLIMIT_FSIZE)): $lost" \
	"$T/full.txt" || { show "$T/full.txt"; fail "the reason is not the file system's"; }
echo "file full: $measured calls recorded, $lost not, of $ALL"
if [ -n "$trace" ]; then
	masks=$(grep -c 'rt_sigprocmask(' "$T/trace" || true)
	# ~400 now (the calls that tried again, the blocks made); before,
	# ~9 per call of site 47 and per nested call of site 0.
	if [ "$masks" -gt $((N / 4)) ]; then
		fail "$masks rt_sigprocmask calls for $N calls each of a missing block and a missing nested block: the slow path is taken at every call"
	fi
	echo "rt_sigprocmask: $masks calls"
else
	echo "no strace: the slow paths were not counted"
fi
