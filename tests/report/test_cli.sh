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

finish
