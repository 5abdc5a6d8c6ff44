#!/bin/bash
# SPDX-License-Identifier: MIT
# fork on a coroutine's stack with a MAP_SHARED file mapping right below
# it (prog_forkbelow): the shim's fork handlers wrote 64 KiB below the
# forking frame again (MADV_POPULATE_WRITE, so that copy-on-write faults
# do not land in measured calls), which dirtied the file's pages: its
# holes were filled (blocks allocated) and its mtime changed.  Only the
# thread's own stack is written again now.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

plain_run plain "$R/prog_forkbelow" "$T/plain.data"
expect_status plain 0
grep -q "^forked 1, blocks of the file 0$" "$T/plain.out" ||
	{ show "$T/plain.out"; fail "prog_forkbelow without the shim"; }
shim_run shim tsc rt_leaf "$R/prog_forkbelow" "$T/shim.data"
expect_status shim 0
same_output plain shim
report_csv shim --by function
want_count shim "function=rt_leaf,event=tsc" calls 3
echo "the file below the coroutine stack kept its holes"
