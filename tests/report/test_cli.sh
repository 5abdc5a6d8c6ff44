#!/bin/bash
# SPDX-License-Identifier: MIT
# The command line: --help, --version, unknown commands and options.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

# LINE STATUS STDOUT-OR-STDERR TEXT ARGS...
check()
{
	local line=$1 want=$2 where=$3 text=$4

	shift 4
	run_cmd "$CS_CMD" "$@"
	expect_status "$line" "$want"
	if ! grep -qF -- "$text" "$T/$where"; then
		fail "$line" "$where of 'cacheshim $*' lacks '$text'"
		show "$T/$where"
	fi
}

check $LINENO 0 out "usage: cacheshim [--help] [--version] COMMAND" --help
check $LINENO 0 out "usage: cacheshim [--help]" help
check $LINENO 0 out "cacheshim 0." --version
check $LINENO 2 err "usage: cacheshim" ""
check $LINENO 2 err "usage: cacheshim"
check $LINENO 2 err "cacheshim: unknown command 'frobnicate'" frobnicate
check $LINENO 2 err "usage: cacheshim" --bogus
check $LINENO 0 out "usage: cacheshim report" report --help
check $LINENO 0 out "usage: cacheshim run" run --help
check $LINENO 0 out "usage: cacheshim list" list --help
# -q drops the summary and the shim's informational lines, not its
# warnings (libcacheshim(7)): the help says so.
check $LINENO 0 out "no summary, and no informational shim lines" run --help
check $LINENO 0 out "(CACHESHIM_QUIET=1); its warnings stay" run --help
# README's usage line of run has every option of run's own.
readme_run=$(grep -m1 '^cacheshim run ' "$CS_SRCDIR/README.md")
for opt in $("$CS_CMD" run --help | sed -n '1,/^$/p' | grep -oE '\[-[-a-z]+' | tr -d '['); do
	case " $readme_run " in
	*"[$opt "* | *"[$opt]"*) ;;
	*) fail $LINENO "README's 'cacheshim run' line lacks $opt" ;;
	esac
done
check $LINENO 2 err "cacheshim: report: no report file given" report
check $LINENO 2 err "unknown --format value 'xml' (table, csv, json or html)" report --format xml "$T/basic.rpt"
check $LINENO 2 err "unknown --by value 'thread' (function, callsite or key)" report --by thread "$T/basic.rpt"
check $LINENO 2 err "usage: cacheshim report" report --frobnicate "$T/basic.rpt"
check $LINENO 2 err "usage: cacheshim report" report -f
# Options after the file names work too.
check $LINENO 0 out "free,*,*,tsc" report "$T/basic.rpt" --format csv --by function

# Help, the version and listings into a full disk, a closed stdout or a
# pipe whose reader is gone (SIGPIPE ignored, as under some harnesses):
# one line on stderr and status 1, never a silent success.
for args in --help --version help "run --help" "report --help" "list --help" \
	"calibrate --help" list; do
	status=0
	# shellcheck disable=SC2086 # words of args are the arguments
	"$CS_CMD" $args >/dev/full 2>"$T/err" || status=$?
	expect_status "$LINENO ($args, /dev/full)" 1
	grep -qx "cacheshim: cannot write to standard output: No space left on device" "$T/err" ||
		{ fail $LINENO "cacheshim $args >/dev/full: no write error said"; show "$T/err"; }
	status=0
	# shellcheck disable=SC2086
	"$CS_CMD" $args >&- 2>"$T/err" || status=$?
	expect_status "$LINENO ($args, stdout closed)" 1
	grep -q "^cacheshim: cannot write to standard output" "$T/err" ||
		{ fail $LINENO "cacheshim $args >&-: no write error said"; show "$T/err"; }
done
# report says why too, whatever the format's size (an earlier failed
# flush of a large one left only the stream's error flag).
for fmt in table csv json html; do
	status=0
	"$CS_CMD" report -f $fmt "$T/bigseries.rpt" >/dev/full 2>"$T/err" || status=$?
	expect_status "$LINENO (report -f $fmt, /dev/full)" 1
	grep -qx "cacheshim: report: cannot write the report: No space left on device" "$T/err" ||
		{ fail $LINENO "report -f $fmt >/dev/full: the cause not said"; show "$T/err"; }
done
status=0
(
	trap '' PIPE
	# A FIFO whose only reader is closed before list starts: every
	# write gets EPIPE (opened read-write first, so that opening it for
	# writing does not wait for a reader).
	mkfifo "$T/gone.fifo"
	exec 3<>"$T/gone.fifo" 4>"$T/gone.fifo"
	exec 3<&-
	"$CS_CMD" list 2>"$T/err" >&4
) || status=$?
expect_status "$LINENO (list into a closed pipe)" 1
grep -qx "cacheshim: cannot write to standard output: Broken pipe" "$T/err" ||
	{ fail $LINENO "list into a closed pipe: no write error said"; show "$T/err"; }

finish
