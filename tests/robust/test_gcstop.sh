#!/bin/bash
# SPDX-License-Identifier: MIT
# A program whose malloc takes a lock that a "collector" holds while it
# waits for another thread's signal handler (prog_gcstop): the shim must
# not block signals around its own code that mallocs.  Blocking them in
# the new-thread wrapper and the patching pass after dlopen (to get a
# handler's target call there measured) deadlocked this program.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

STOPS=1000
PLUGIN=$T/plug.so
cp "$R/.libs/libcsplug.so" "$PLUGIN"
for mode in thread dlopen; do
	plugin=
	[ $mode = dlopen ] && plugin=$PLUGIN
	plain_run plain_$mode "$R/prog_gcstop" $mode $STOPS $plugin
	expect_status plain_$mode 0
	shim_run $mode tsc rt_leaf "$R/prog_gcstop" $mode $STOPS $plugin
	expect_status $mode 0
	same_output plain_$mode $mode
	echo "$mode: $STOPS stops acknowledged under the shim"
done
