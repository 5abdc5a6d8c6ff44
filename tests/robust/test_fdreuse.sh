#!/bin/bash
# SPDX-License-Identifier: MIT
# A program that closes every descriptor it did not open (as daemons do)
# and opens a file of its own, which gets the number the shim's report
# file had: the shim must not write zeros into it, grow it or truncate it
# at exit through that number, and the report must still count every call
# (as measured, or as dropped where the program closed the shim's counters).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=200
plain_run plain "$R/prog_fdreuse" "$T/plain.victim" $N
expect_status plain 0

# One event and two (a perf group: the shim has more descriptors).
for events in tsc tsc,perf::PAGE-FAULTS; do
	name=run-${events%%,*}-$(echo "$events" | tr -cd , | wc -c)
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=$events CACHESHIM_TARGETS=rt_leaf \
		CACHESHIM_OUTPUT="$T/$name.csr" LD_PRELOAD=$CS_SHIM \
		"$R/prog_fdreuse" "$T/$name.victim" $N >"$T/$name.out" 2>"$T/$name.err" || status=$?
	expect_status $name 0
	# Same output: the program got the same descriptor number as without the shim.
	same_output plain $name
	no_shim_lines $name
	[ "$(cat "$T/$name.victim")" = precious ] && [ "$(stat -c %s "$T/$name.victim")" = 9 ] ||
		fail "$name: the program's file was changed: $(stat -c %s "$T/$name.victim") bytes"
	report_files $name "$T/$name.csr" -- --by function
	want_count $name "function=rt_leaf,event=tsc" entered $((64 * N))
	if [ "$events" = tsc ]; then
		want_count $name "function=rt_leaf,event=tsc" calls $((64 * N))
	else
		# The program closed the shim's counters too: its calls cannot be
		# read any more and count as dropped, none is lost or made up.
		want_count $name "function=rt_leaf,event=tsc" dropped $((64 * N))
	fi
	echo "$events: the program's file intact, $((64 * N)) calls"
done

# A daemon: chdir("/"), fds 0..1023 closed, a new call site measured before
# it opens /dev/null as 0, 1, 2 and its log file: the shim, reopening its
# report (relative name, now the wrong directory) for that call site, must
# neither take 0 (the program's stdin) nor lose the report: 12 threads one
# after another set up new call sites and series, growing the file past its
# first 4 MB.
TH=12
D=20
plain_run dplain "$R/prog_fdreuse" "$T/dplain.log" $D --daemon $TH
expect_status dplain 0
mkdir "$T/cwd"
status=0
(cd "$T/cwd" && CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
	CACHESHIM_OUTPUT=daemon.csr LD_PRELOAD=$CS_SHIM \
	"$R/prog_fdreuse" "$T/daemon.log" $D --daemon $TH >"$T/daemon.out" 2>"$T/daemon.err") ||
	status=$?
expect_status daemon 0
cmp -s "$T/dplain.log" "$T/daemon.log" || {
	diff "$T/dplain.log" "$T/daemon.log" >&2 || true
	fail "daemon: the program's log differs (its descriptor numbers changed)"
}
[ -f "$T/cwd/daemon.csr" ] && [ ! -e /daemon.csr ] || fail "daemon: report file not where it was created"
report_files daemon "$T/cwd/daemon.csr" -- --by function
want_count daemon "function=rt_leaf,event=tsc" calls $((1 + 64 * D * TH))
echo "daemon: descriptors as without the shim, report kept after chdir, $((1 + 64 * D * TH)) calls"

# A program that lowers RLIMIT_FSIZE below the report's size: the shim must
# not write past it (SIGXFSZ would kill the program), and still counts.
plain_run fplain "$R/prog_fdreuse" unused $N --fsize
expect_status fplain 0
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
	CACHESHIM_OUTPUT="$T/fsize.csr" LD_PRELOAD=$CS_SHIM \
	"$R/prog_fdreuse" unused $N --fsize >"$T/fsize.out" 2>"$T/fsize.err" || status=$?
expect_status fsize 0
same_output fplain fsize
report_files fsize "$T/fsize.csr" -- --by function
want_count fsize "function=rt_leaf,event=tsc" calls $((64 * N))
echo "RLIMIT_FSIZE 4096 set by the program: no SIGXFSZ, $((64 * N)) calls"
