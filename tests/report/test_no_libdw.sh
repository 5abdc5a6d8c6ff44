#!/bin/bash
# SPDX-License-Identifier: MIT
# elfutils is loaded only when a module is symbolized (report/dwload.c):
# with libdw.so.1 unloadable (an empty file bind-mounted over it in a
# mount namespace of this test's own), `report` says so once, exits 0 and
# shows the call sites as module+offset; `run -q`, which symbolizes
# nothing, never tries to load it (no line at all).  Skipped (77) where
# this test cannot make a mount namespace (not root, no unshare).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"
PROG=$CS_BUILDDIR/tests/report/prog_lines
unset CACHESHIM_TARGETS CACHESHIM_EVENTS CACHESHIM_OUTPUT LD_PRELOAD
export LC_ALL=C

"$PROG" "$T/lines.rpt" "$T/lines.expected" || { echo "prog_lines failed" >&2; exit 99; }

# Loaded when needed: the call sites are symbolized as before.
run_cmd "$CS_CMD" report "$T/lines.rpt"
expect_status $LINENO 0
[ "$(grep -cE '^  lines_target +main\+0x[0-9a-f]+ ' "$T/out")" = 3 ] ||
	{ fail $LINENO "call sites not symbolized"; show "$T/out"; }
[ ! -s "$T/err" ] || { fail $LINENO "stderr not empty"; show "$T/err"; }

lib=$(ldconfig -p 2>/dev/null | awk '$1 == "libdw.so.1" && /x86-64/ { print $NF; exit }')
[ -n "$lib" ] || lib=/lib/x86_64-linux-gnu/libdw.so.1
lib=$(readlink -f "$lib")
: >"$T/empty"
if [ "$(id -u)" != 0 ] || ! command -v unshare >/dev/null ||
	! unshare -m true 2>/dev/null; then
	echo "SKIP: no mount namespace here"
	exit 77
fi
# hidden CMD...: CMD with libdw.so.1 an empty file.
hidden()
{
	status=0
	unshare -m bash -c 'mount --bind "$1" "$2" && shift 2 && exec "$@"' hidden \
		"$T/empty" "$lib" "$@" >"$T/out" 2>"$T/err" || status=$?
}

hidden "$CS_CMD" report "$T/lines.rpt"
expect_status $LINENO 0
[ "$(grep -c 'cannot load libdw.so.1' "$T/err")" = 1 ] ||
	{ fail $LINENO "want one line saying libdw.so.1 cannot be loaded"; show "$T/err"; }
[ "$(grep -cE '^  lines_target +prog_lines\+0x[0-9a-f]+ +prog_lines ' "$T/out")" = 3 ] ||
	{ fail $LINENO "call sites not shown as module+offset"; show "$T/out"; }
# CSV too, with every row.
hidden "$CS_CMD" report -f csv "$T/lines.rpt"
expect_status $LINENO 0
[ "$(grep -c '^lines_target,' "$T/out")" = 3 ] || { fail $LINENO "CSV rows"; show "$T/out"; }

# The launcher's end-of-run check symbolizes nothing: no attempt, no line.
hidden env CACHESHIM_LIB="$CS_BUILDDIR/.libs/libcacheshim.so" "$CS_CMD" run -q -e tsc \
	-t lines_target -o "$T/run.%p" -- "$PROG" "$T/again.rpt" "$T/again.expected"
expect_status $LINENO 0
if grep -q 'libdw' "$T/err"; then
	fail $LINENO "run -q tried to load libdw"
	show "$T/err"
fi
finish
