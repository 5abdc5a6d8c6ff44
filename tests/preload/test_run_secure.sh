#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim run of a set-user-ID or set-group-ID program (or, for a user
# other than root, one with file capabilities): ld.so runs it in secure
# mode and leaves LD_PRELOAD out, so nothing is measured.  The launcher
# said "no report file of this run in DIR (was LIB loaded?)", as if the
# library were broken; it now says why.  The program runs as without
# cacheshim (its status passes through).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

# Giving a file to another user needs root.
[ "$(id -u)" = 0 ] || { echo "SKIP: not root"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "SKIP: no user nobody"; exit 77; }

# secure_run NAME WANT: cacheshim run of $T/NAME (a copy of prog_exit,
# 2 calls, exit 3); stderr must say WANT ("" for a measured run).
secure_run()
{
	local name=$1 want=$2

	status=0
	(cd "$T" && CACHESHIM_LIB=$CS_SHIM "$CS_CMD" run -e tsc -t cs_inner -- "$T/$name" 2 exit) \
		>"$T/$name.out" 2>"$T/$name.err" || status=$?
	[ "$status" -eq 3 ] || { show "$T/$name.err"; fail "$name: status $status, want 3"; }
	grep -q '^sum 1$' "$T/$name.out" || { show "$T/$name.out"; fail "$name: did not run"; }
	if [ -z "$want" ]; then
		grep -q 'cacheshim summary of' "$T/$name.err" ||
			{ show "$T/$name.err"; fail "$name: no summary"; }
		grep -q 'dynamic loader ignores' "$T/$name.err" &&
			{ show "$T/$name.err"; fail "$name: said to be unmeasured"; }
	else
		grep -qF "cacheshim: warning: run: $T/$name $want: the dynamic loader ignores LD_PRELOAD in it, so it was not measured" \
			"$T/$name.err" || { show "$T/$name.err"; fail "$name: lacks '$want'"; }
		grep -q 'was .* loaded?' "$T/$name.err" &&
			{ show "$T/$name.err"; fail "$name: asks whether the library was loaded"; }
	fi
	return 0
}

cp "$P/prog_exit" "$T/plain"
cp "$P/prog_exit" "$T/suid"
chown nobody "$T/suid"
chmod 4755 "$T/suid"
cp "$P/prog_exit" "$T/sgid"
chgrp "$(id -gn nobody)" "$T/sgid"
chmod 2755 "$T/sgid"

# A file system mounted nosuid runs them as plain programs: nothing to see.
CACHESHIM_TARGETS=cs_inner CACHESHIM_OUTPUT=$T/probe LD_PRELOAD=$CS_SHIM \
	"$T/suid" 2 exit >/dev/null 2>&1 || true
[ -e "$T/probe" ] && { echo "SKIP: $T is nosuid"; exit 77; }

secure_run plain ""
secure_run suid "is set-user-ID"
secure_run sgid "is set-group-ID"
# Set-user-ID to oneself (root's own): no secure mode, measured.
cp "$P/prog_exit" "$T/ownsuid"
chmod 4755 "$T/ownsuid"
secure_run ownsuid ""
exit 0
