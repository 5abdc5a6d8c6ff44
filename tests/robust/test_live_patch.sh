#!/bin/bash
# SPDX-License-Identifier: MIT
# Entry patching of a module loaded while another thread runs (issue 8,
# point 4).  prog_live keeps a second thread calling rt_leaf while it
# dlopens a plugin, so the plugin's entries are written int3-first with
# membarrier(SYNC_CORE) in between.  Checked: identical output (including
# the program's own SIGTRAP handler still running for its raise(SIGTRAP)
# after the shim's handler was installed), the
# plugin's plug_leaf counted exactly through its patched entry alone
# (CACHESHIM_HOOK=entry); and when the second thread blocks SIGTRAP, the
# patches are deferred (one line says so) and GOT slots catch the calls
# instead (default hook), or nothing does (entry only).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=1000
cp "$R/.libs/libcsplug.so" "$T/plug.so"

plain_run plain "$R/prog_live" $N "$T/plug.so"
expect_status plain 0

# live_run NAME HOOK [block]: the program under the shim, with messages.
live_run()
{
	local name=$1 hook=$2

	shift 2
	status=0
	CACHESHIM_HOOK=$hook CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=plug_leaf,rt_leaf \
		CACHESHIM_OUTPUT=$T/$name.csr LD_PRELOAD=$CS_SHIM \
		"$R/prog_live" $N "$T/plug.so" "$@" >"$T/$name.out" 2>"$T/$name.err" ||
		status=$?
	expect_status $name 0
	same_output "${PLAIN:-plain}" $name
	report_csv $name
}

plug_calls()
{
	csv_sum $1 "function=plug_leaf@*,event=tsc" calls
}

live_run entry entry
got=$(plug_calls entry)
[ "$got" = $N ] || { show "$T/entry.err"; fail "entry, live patch: plug_leaf has $got calls, want $N"; }
if grep -q 'not patched' "$T/entry.err"; then
	show "$T/entry.err"
	fail "entry, live patch: a function was refused"
fi
echo "live entry patch: plug_leaf $N calls"

live_run block_entry entry block
grep -q "entry of 'plug_leaf' in .*plug.so not patched: deferred: a thread blocks SIGTRAP" \
	"$T/block_entry.err" || { show "$T/block_entry.err"; fail "no deferral line for plug_leaf"; }
got=$(plug_calls block_entry)
[ "${got:-0}" = 0 ] || fail "SIGTRAP blocked, entry only: plug_leaf has $got calls, want none"
echo "SIGTRAP blocked, entry only: deferred, not caught"

# The deferred patches are written at the next dlopen, once the thread that
# blocked SIGTRAP has ended: the second plug_run(N) is counted, the first
# was not.
cp "$R/.libs/libcsplug.so" "$T/plug2.so"
plain_run plain_again "$R/prog_live" $N "$T/plug.so" block "$T/plug2.so"
expect_status plain_again 0
PLAIN=plain_again live_run again entry block "$T/plug2.so"
got=$(csv_sum again "function=plug_leaf@*,module=plug.so,event=tsc" calls)
[ "$got" = $N ] || { show "$T/again.csv"; fail "deferred then retried: plug_leaf@plug.so has $got calls, want $N (the second run only)"; }
echo "deferred patches written at the next dlopen: the second $N calls counted"

live_run block_both both block
got=$(plug_calls block_both)
[ "$got" = $N ] || { show "$T/block_both.err"; fail "SIGTRAP blocked, both: plug_leaf has $got calls through GOT, want $N"; }
echo "SIGTRAP blocked, both: deferred, $N calls through GOT slots"
