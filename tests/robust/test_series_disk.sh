#!/bin/bash
# SPDX-License-Identifier: MIT
# Disk use of series windows.  A series block reserves 256 windows (~1.5 KB
# each with one event) and a target called a few times writes its first
# 16; the file grew by fallocate over all of them, so a shell running
# `echo hi` with 14 targets kept 4.7 MB.  On a tmpfs the file's pages now
# get space only as they are mapped in: 64 targets called once each must
# leave at least 64 x 256 KB of the file unallocated, also after a report
# read it (root only: a tmpfs is mounted; disk file systems keep whole
# steps allocated, test_series_folio.sh).  A target called 100,000 times
# keeps every call in its series, and where the file system has no room
# for more windows (a full tmpfs) the windows it has merge instead: no
# SIGBUS, every call still in the series, and the report reads the file
# where it lies (its holes on the full tmpfs).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=100000
cd "$T"
make_fns64
make_fill_h
cat >prog.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "fill.h"
#include "fns.h"

/* prog N [FILL [EARLY]]: f0..f63 once (with EARLY, only the first EARLY
 * of them before filling FILL's file system, the rest after), then f0 N
 * times. */
int main(int argc, char **argv)
{
	long n = atol(argv[1]), s = 0, i;
	int k, early = argc > 3 ? atoi(argv[3]) : 64;

	for (k = 0; k < early; k++)
		s += fns[k](0);
	if (argc > 2)
		fill(argv[2]);
	for (k = early; k < 64; k++)
		s += fns[k](0);
	for (i = 0; i < n; i++)
		s += fns[0](i);
	printf("%ld\n", s);
	return 0;
}
C
cc=${CC:-cc}
$cc -O1 -shared -fPIC -o libf.so lib.c
$cc -O1 -o prog prog.c -L. -lf -Wl,-rpath,"$T" -Wl,-z,now

# run NAME N [FILL]: ./prog N [FILL] under the shim (tsc, targets f*)
# into $T/NAME.csr, status and output as without it.
run()
{
	local name=$1

	shift
	plain_run plain ./prog "$@"
	expect_status plain 0
	[ $# -lt 2 ] || rm -f "$2"
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS='f*' \
		CACHESHIM_OUTPUT="$T/$name.csr" LD_PRELOAD="$CS_SHIM" \
		./prog "$@" >"$T/$name.out" 2>"$T/$name.err" || status=$?
	expect_status "$name" 0
	same_output plain "$name"
}

# series_calls NAME TARGET: calls and windows of TARGET's series.
series_calls()
{
	"$CS_CMD" report --series --format csv "$T/$1.csr" >"$T/$1.series" 2>"$T/$1.serr" ||
		{ show "$T/$1.serr"; fail "cacheshim report --series $1 failed"; }
	csv_select "$T/$1.series" "target=$2,event=tsc" calls |
		awk '{ s += $1; n++ } END { printf "%d %d\n", s, n }'
}

run many $N
read -r calls windows < <(series_calls many f0)
[ "$calls" = $((N + 1)) ] || fail "series of f0 holds $calls calls, want $((N + 1))"
[ "$windows" -gt 16 ] || fail "$N calls in $windows windows"
echo "many: $calls calls in $windows windows"

mkdir "$T/fs"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=64m tmpfs "$T/fs" 2>/dev/null; then
	echo "SKIP: cannot mount a tmpfs (not root?): the space parts not run"
	exit 0
fi
cleanup_add "umount '$T/fs' 2>/dev/null"

# 64 targets called once, the file on a tmpfs.
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS='f*' \
	CACHESHIM_OUTPUT="$T/fs/once.csr" LD_PRELOAD="$CS_SHIM" \
	./prog 0 >"$T/once.out" 2>"$T/once.err" || status=$?
expect_status once 0
read -r blocks unit size < <(stat -c '%b %B %s' "$T/fs/once.csr")
report_files once "$T/fs/once.csr"
want_count once "event=tsc,function=f63" calls 1
want_count once "event=tsc,module=prog" calls 64
allocated=$((blocks * unit))
[ $((allocated + 64 * (256 << 10))) -le "$size" ] ||
	fail "64 targets called once: $allocated of $size bytes allocated"
# Reading it allocates nothing (a mapping's read fault on a tmpfs hole
# would).
[ "$(stat -c %b "$T/fs/once.csr")" = "$blocks" ] ||
	fail "reading the report allocated its holes: $blocks blocks, now $(stat -c %b "$T/fs/once.csr")"
echo "once: $allocated of $size bytes allocated"
rm -f "$T/fs/once.csr"

# The same tmpfs made 8 MB and filled by the program.
mount -o remount,size=8m "$T/fs"
plain_run plain ./prog $N "$T/fs/fill"
expect_status plain 0
rm -f "$T/fs/fill"
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS='f*' \
	CACHESHIM_OUTPUT="$T/fs/full.csr" LD_PRELOAD="$CS_SHIM" \
	./prog $N "$T/fs/fill" >"$T/full.out" 2>"$T/full.err" || status=$?
expect_status full 0
same_output plain full
# Read where it lies, the tmpfs still full: a mapping's read fault on a
# tmpfs hole allocates a page (SIGBUS: "a report file shrank").
"$CS_CMD" report "$T/fs/full.csr" >"$T/full.table" 2>"$T/full.rerr" ||
	{ show "$T/full.rerr"; fail "report of the file on the full tmpfs failed"; }
rm -f "$T/fs/fill"
cp "$T/fs/full.csr" "$T/full.csr"
read -r calls windows < <(series_calls full f0)
[ "$calls" = $((N + 1)) ] || fail "full disk: series of f0 holds $calls calls, want $((N + 1))"
[ "$windows" -le 16 ] || fail "full disk: $windows windows, 16 could be allocated"
echo "full disk: $calls calls in $windows windows"

# 56 targets first called after the fill: their call sites find no room,
# which is what the shim says (it blamed CACHESHIM_CAPACITY_MB).
plain_run plain ./prog 10 "$T/fs/fill" 8
expect_status plain 0
rm -f "$T/fs/fill" "$T/fs/full.csr"
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS='f*' \
	CACHESHIM_OUTPUT="$T/fs/late.csr" LD_PRELOAD="$CS_SHIM" \
	./prog 10 "$T/fs/fill" 8 >"$T/late.out" 2>"$T/late.err" || status=$?
expect_status late 0
same_output plain late
grep -q "^cacheshim: no room left on the file system for the report file" "$T/late.err" ||
	{ show "$T/late.err"; fail "late: no line saying the file system has no room"; }
! grep -q "CACHESHIM_CAPACITY_MB" "$T/late.err" ||
	{ show "$T/late.err"; fail "late: the capacity blamed for a full file system"; }
echo "late targets on the full tmpfs: said there is no room"
