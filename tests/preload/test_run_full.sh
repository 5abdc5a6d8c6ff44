#!/bin/bash
# SPDX-License-Identifier: MIT
# `cacheshim run` on a file system with no room for the report file's
# first blocks: the function the target matches is left unwrapped (the
# library says so), and the launcher said the target "matched no function
# in the program", which is false.  Now the file says functions were left
# unwrapped (header.lost_why's CS_LOST_TARGETS), and the launcher says
# that instead.  The program runs as without cacheshim.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

mkdir "$T/fs"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=64k tmpfs "$T/fs" 2>/dev/null; then
	echo "SKIP: cannot mount a tmpfs (not root?)"
	exit 77
fi
trap 'umount "$T/fs" 2>/dev/null || true; rm -rf "$T"' EXIT
dd if=/dev/zero of="$T/fs/fill" bs=4k count=14 status=none
plain_run plain "$P/prog_pages" 1 5
plain_status=$status
status=0
CACHESHIM_LIB=$CS_SHIM "$CS_CMD" run -e tsc -t cs_touch_pages -o "$T/fs/r.%p" -- \
	"$P/prog_pages" 1 5 >"$T/full.out" 2>"$T/full.err" || status=$?
[ "$status" = "$plain_status" ] ||
	{ show "$T/full.err"; fail "exit status $status"; }
cmp -s "$T/plain.out" "$T/full.out" || { show "$T/full.out"; fail "the program's output differs"; }
grep -q "^cacheshim: warning: run: target 'cs_touch_pages' is in no report file of this run: a report file filled up before the functions it matched could be wrapped\$" \
	"$T/full.err" || { show "$T/full.err"; fail "no line that the file filled up"; }
! grep -q "matched no function" "$T/full.err" || { show "$T/full.err"; fail "said to match no function"; }
echo "a file full before the target was wrapped: said so, not 'matched no function'"
