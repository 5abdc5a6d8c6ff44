#!/bin/bash
# SPDX-License-Identifier: MIT
# A process killed while its report file was being made (SIGKILL between
# the create and the header's magic: `timeout -s KILL` of a script that
# forks hit one process in ~300) left an empty file behind, and
# `cacheshim report` of the run's files refused them all (exit 1, "bad
# magic").  The file now gets its name only once its header is whole:
# such a process leaves no file, and the others' report is whole.  Where
# the name cannot be given that way, the file is made by its name as
# before.
# The kill is made at the file's first fallocate(2) by strace's fault
# injection (skipped without strace or where it cannot inject).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

command -v strace >/dev/null || { echo "SKIP: no strace"; exit 77; }
strace -qq -o /dev/null -e trace=getpid -e inject=getpid:retval=7:when=1 /bin/true 2>/dev/null ||
	{ echo "SKIP: strace cannot inject here"; exit 77; }

# killed DIR: ls under the shim, killed at the first fallocate of
# its report file; then a complete run into the same directory.
killed()
{
	status=0
	strace -qq -o /dev/null -e trace=fallocate -e inject=fallocate:signal=KILL:when=1 \
		-E CACHESHIM_QUIET=1 -E CACHESHIM_EVENTS=tsc -E CACHESHIM_TARGETS=malloc \
		-E CACHESHIM_OUTPUT="$1/out.%p" -E LD_PRELOAD="$CS_SHIM" \
		ls / >"$1.kout" 2>"$1.kerr" || status=$?
	[ "$status" -eq 137 ] || { show "$1.kerr"; fail "$1: the killed run exited $status, want 137"; }
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=malloc \
		CACHESHIM_OUTPUT="$1/out.%p" LD_PRELOAD=$CS_SHIM ls / >/dev/null
}

# whole NAME DIR: every file in DIR is a report; together they count the
# one complete run's calls.
whole()
{
	local n

	n=$(ls "$2" | wc -l)
	[ "$n" -eq 1 ] || { ls -l "$2" >&2; fail "$1: $n files, want 1 (the complete run's)"; }
	report_files "$1" "$2"/*
	if grep -q -i -E 'damaged|incomplete|magic' "$T/$1.rerr"; then
		show "$T/$1.rerr"
		fail "$1: the report complains"
	fi
	[ "$(csv_sum "$1" "function=malloc,event=tsc" calls)" -gt 0 ] ||
		{ show "$T/$1.csv"; fail "$1: no calls of malloc"; }
}

mkdir "$T/proc"
killed "$T/proc"
whole proc "$T/proc"
echo "killed while making its file: no file left, the other run's report whole"

# Where the unnamed file cannot be named (linkat refused: here by
# strace's injection) it is made by its name as before: the program's
# file and its exec'd image's (.1), both whole.
mkdir "$T/nolink"
status=0
strace -f -qq -o /dev/null -e trace=linkat -e inject=linkat:error=EPERM \
	-E CACHESHIM_QUIET=1 -E CACHESHIM_EVENTS=tsc -E CACHESHIM_TARGETS=malloc \
	-E CACHESHIM_OUTPUT="$T/nolink/out" -E LD_PRELOAD="$CS_SHIM" \
	sh -c 'ls / >/dev/null; exec ls /' >"$T/nolink.out" 2>"$T/nolink.err" || status=$?
[ "$status" -eq 0 ] || { show "$T/nolink.err"; fail "nolink: exited $status"; }
ls / | cmp -s - "$T/nolink.out" || { show "$T/nolink.out"; fail "nolink: output differs"; }
[ -f "$T/nolink/out" ] && [ -f "$T/nolink/out.1" ] && [ -f "$T/nolink/out.2" ] ||
	{ ls -l "$T/nolink" >&2; fail "nolink: want out, out.1, out.2"; }
report_files nolink "$T"/nolink/*
if grep -q -i -E 'damaged|incomplete' "$T/nolink.rerr"; then
	show "$T/nolink.rerr"
	fail "nolink: the report complains"
fi
echo "no linkat: the files made by their names (out, out.1, out.2), reports whole"
