#!/bin/bash
# SPDX-License-Identifier: MIT
# Call sites symbolized offline: in an executable with .symtab, in libc
# (.dynsym only), a rebuilt module (build id differs), a module that is
# gone but has a debug file under --debug-dir.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

# self.expected (written by mkfixture): the call sites it recorded, as
# they must appear, then the debug file path of mkfixture and mkfixture.
{
	read -r in_self
	read -r in_libc
	read -r rebuilt
	read -r moved
	read -r debug_file
	read -r program
} <"$T/self.expected"
libc=$(basename "$(ldd "$MKFIXTURE" | awk '/libc\.so/ { print $3 }')")

run_cmd "$CS_CMD" report -f csv "$T/self.rpt"
csv_pick "$CSV_HEADER" # the source column is test_source.sh's
expect_status $LINENO 0
expect_line $LINENO "$T/out" "sym_target,$in_self,mkfixture,tsc,1,1,1,0,1,1,1,1,1,1,0,ok,"
expect_line $LINENO "$T/out" "sym_target,$in_libc,$libc,tsc,1,2,2,0,2,2,2,2,2,1,0,ok,"

# The build id recorded is not the file's: no symbol from the wrong file.
run_cmd "$CS_CMD" report -f csv "$T/selfbad.rpt"
csv_pick "$CSV_HEADER" # the source column is test_source.sh's
expect_status $LINENO 0
expect_line $LINENO "$T/out" "sym_target,$rebuilt,mkfixture,tsc,1,1,1,0,1,1,1,1,1,1,0,ok,"

# The module is gone: module+offset, unless its debug file is there.
run_cmd "$CS_CMD" report -f csv "$T/selfmoved.rpt"
csv_pick "$CSV_HEADER" # the source column is test_source.sh's
expect_line $LINENO "$T/out" "sym_target,$moved,mkfixture-moved,tsc,1,1,1,0,1,1,1,1,1,1,0,ok,"
mkdir -p "$T/debug/$(dirname "$debug_file")"
cp "$program" "$T/debug/$debug_file"
run_cmd "$CS_CMD" report -f csv --debug-dir "$T/debug" "$T/selfmoved.rpt"
csv_pick "$CSV_HEADER" # the source column is test_source.sh's
expect_status $LINENO 0
expect_line $LINENO "$T/out" "sym_target,$in_self,mkfixture-moved,tsc,1,1,1,0,1,1,1,1,1,1,0,ok,"

# A module path that is a FIFO now: not opened (that would block).
mkfifo "$T/fifo"
run_cmd timeout 20 "$CS_CMD" report -f csv "$T/fifo.rpt"
csv_pick "$CSV_HEADER" # the source column is test_source.sh's
expect_status $LINENO 0
expect_line $LINENO "$T/out" "fn,fifo+0x10,fifo,tsc,1,1,1,0,1,1,1,1,1,1,0,ok,"

# The table shows the same names.
run_cmd "$CS_CMD" report "$T/self.rpt"
expect_status $LINENO 0
grep -qF "$in_self" "$T/out" || fail $LINENO "table lacks $in_self"

finish
