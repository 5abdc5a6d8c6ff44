#!/bin/bash
# SPDX-License-Identifier: MIT
# A stderr that is a pipe nobody reads any more (`prog 2>&1 | head -1`
# once head has exited): the shim's one `cacheshim:` line (here: a
# target that matches nothing, a warning even when quiet) got EPIPE and
# a SIGPIPE, which killed a program that never writes to stderr itself
# (status 141 instead of 0).  The line's SIGPIPE is now taken back; the
# program ends as without the shim, every call counted.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

# broken_run NAME CMD...: CMD with its stderr a FIFO whose only reader
# has closed it (writes get EPIPE), stdout in $T/NAME.out; sets $status.
broken_run()
{
	local name=$1

	shift
	rm -f "$T/fifo"
	mkfifo "$T/fifo"
	status=0
	# Opened read-write first, so that the write-only open does not
	# wait for a reader; then the reader goes.
	exec 8<>"$T/fifo" 9>"$T/fifo"
	exec 8<&-
	"$@" >"$T/$name.out" 2>&9 || status=$?
	exec 9>&-
	touch "$T/$name.err"
}

N=1000
broken_run plain "$R/prog_threads" 2 $N
expect_status plain 0
broken_run pipe env CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc \
	CACHESHIM_TARGETS=rt_leaf,no_such_function CACHESHIM_OUTPUT="$T/pipe.csr" \
	LD_PRELOAD="$CS_SHIM" "$R/prog_threads" 2 $N
expect_status pipe 0
same_output plain pipe
report_csv pipe --by function
want_count pipe "function=rt_leaf,event=tsc" calls $((2 * N))
echo "a shim line into a broken pipe: status 0, $((2 * N)) calls"

# The launcher: `cacheshim run` prints its table on stderr when the
# program has ended, and that pipe's SIGPIPE ended it with status 141
# instead of the program's 3.
broken_run launch env CACHESHIM_LIB="$CS_SHIM" "$CS_CMD" run -e tsc -t rt_leaf \
	-o "$T/launch.csr" -- "$R/prog_threads" 2 $N
expect_status launch 0
same_output plain launch
report_csv launch --by function
want_count launch "function=rt_leaf,event=tsc" calls $((2 * N))
broken_run launch3 env CACHESHIM_LIB="$CS_SHIM" "$CS_CMD" run -e tsc -t rt_leaf -o "$T/launch3.csr" -- sh -c 'exit 3'
expect_status launch3 3
echo "cacheshim run, its table into a broken pipe: the program's status"

# Its own lines before the program runs (it cannot be run, a usage
# error) into a broken pipe: the launcher's status, not SIGPIPE's 141.
broken_run nosuch env CACHESHIM_LIB="$CS_SHIM" "$CS_CMD" run -e tsc -t rt_leaf \
	-o "$T/nosuch.csr" -- "$T/no such program"
expect_status nosuch 127
broken_run usage env CACHESHIM_LIB="$CS_SHIM" "$CS_CMD" run -e tsc -t rt_leaf
expect_status usage 2
echo "cacheshim run's own errors into a broken pipe: 127 and 2"

# The program's SIGPIPE disposition is its own (the launcher ignores
# SIGPIPE for itself only): the same signals ignored as without it, and
# SIGPIPE among them only when the launcher's parent ignored it.
ignored() { awk '/^SigIgn:/ { print $2 }' "$@"; }
grep SigIgn /proc/self/status >"$T/sigign.plain"
env CACHESHIM_LIB="$CS_SHIM" "$CS_CMD" run -q -e tsc -t rt_leaf -o "$T/sigign.csr" -- \
	grep SigIgn /proc/self/status >"$T/sigign.run" 2>"$T/sigign.err" || true
[ -n "$(ignored "$T/sigign.plain")" ] &&
	[ "$(ignored "$T/sigign.plain")" = "$(ignored "$T/sigign.run")" ] ||
	fail "ignored signals under cacheshim run: $(ignored "$T/sigign.run"), without: $(ignored "$T/sigign.plain")"
(
	trap '' PIPE
	grep SigIgn /proc/self/status >"$T/sigign.plain2"
	env CACHESHIM_LIB="$CS_SHIM" "$CS_CMD" run -q -e tsc -t rt_leaf -o "$T/sigign2.csr" -- \
		grep SigIgn /proc/self/status >"$T/sigign.run2" 2>"$T/sigign.err" || true
)
# (The trap must have changed something, unless the test started with
# SIGPIPE ignored, as under some harnesses.)
[ "$(ignored "$T/sigign.plain2")" = "$(ignored "$T/sigign.run2")" ] &&
	{ [ "$(ignored "$T/sigign.plain2")" != "$(ignored "$T/sigign.plain")" ] ||
		[ $((0x$(ignored "$T/sigign.plain") >> 12 & 1)) = 1 ]; } ||
	fail "SIGPIPE ignored by the parent: $(ignored "$T/sigign.run2") under cacheshim run, $(ignored "$T/sigign.plain2") without"
echo "the program's ignored signals are its own"

# The program killed by SIGPIPE: the launcher, which ignores it for
# itself, dies of it too, not exit 141 (perl tells the two apart), as a
# shell would see the program end without cacheshim.  Not when the test
# started with SIGPIPE ignored: the program inherits that and lives.
death_sig() { perl -e 'system { $ARGV[0] } @ARGV; print $? & 127, "\n"' -- "$@"; }
if [ $(( 0x$(ignored /proc/self/status) >> 12 & 1 )) = 0 ]; then
	plain=$(death_sig sh -c 'kill -PIPE $$')
	got=$(death_sig env CACHESHIM_LIB="$CS_SHIM" "$CS_CMD" run -q -e tsc -t rt_leaf \
		-o "$T/pipedeath.csr" -- sh -c 'kill -PIPE $$' 2>"$T/pipedeath.err")
	[ "$plain" = 13 ] && [ "$got" = 13 ] ||
		fail "killed by SIGPIPE: the launcher's death signal $got, without it $plain"
	echo "a program killed by SIGPIPE: so is the launcher"
fi
