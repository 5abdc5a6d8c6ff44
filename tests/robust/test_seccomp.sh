#!/bin/bash
# SPDX-License-Identifier: MIT
# A seccomp filter that kills (or traps) on perf_event_open: the program
# never makes that call, the shim did at start and the program died of
# SIGSYS (exit 159).  Now the shim finds out in a throw-away child first
# and measures tsc only; with a filter that returns EPERM the events fail
# as before.  Every run: the program's output and status, and its calls
# counted under tsc.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=200
plain_run plain "$R/prog_memset" $N
expect_status plain 0
for how in kill trap eperm; do
	plain_run plain_$how "$R/prog_nosyscall" $how "$R/prog_memset" $N
	expect_status plain_$how 0
	same_output plain plain_$how
	status=0
	# Only the program runs with the shim, under the filter.
	"$R/prog_nosyscall" $how env CACHESHIM_EVENTS=tsc,perf::PAGE-FAULTS \
		CACHESHIM_TARGETS=memset CACHESHIM_OUTPUT="$T/$how.csr" LD_PRELOAD="$CS_SHIM" \
		"$R/prog_memset" $N >"$T/$how.out" 2>"$T/$how.err" || status=$?
	expect_status $how 0
	same_output plain $how
	report_csv $how
	want_count $how "function=memset,module=prog_memset,event=tsc" calls $N
	echo "$how: ran as without the shim, $N calls under tsc; said: $(grep '^cacheshim:' "$T/$how.err" | head -1)"
done

# A preset under the same filters: it falls back to what can be measured,
# and the lines say the same (kill, trap: tsc only, for the filter, in one
# line; eperm: the open fails as denied, and page faults fail with it).
for how in kill trap; do
	status=0
	"$R/prog_nosyscall" $how env CACHESHIM_EVENTS=@cache CACHESHIM_TARGETS=memset \
		CACHESHIM_OUTPUT="$T/preset_$how.csr" LD_PRELOAD="$CS_SHIM" \
		"$R/prog_memset" $N >"$T/preset_$how.out" 2>"$T/preset_$how.err" || status=$?
	expect_status preset_$how 0
	same_output plain preset_$how
	[ "$(grep -c '^cacheshim:' "$T/preset_$how.err")" = 1 ] &&
		grep -q '^cacheshim: a seccomp filter kills perf_event_open in this process; measuring tsc only$' \
			"$T/preset_$how.err" || { show "$T/preset_$how.err"; fail "preset_$how: not the filter's one line"; }
	report_csv preset_$how
	want_count preset_$how "function=memset,module=prog_memset,event=tsc" calls $N
	echo "preset_$how: @cache under the filter: tsc only, one line"
done

# A filter that fails perf_event_open with EPERM: page faults fail as the
# hardware counters do, so the preset's line says tsc only, and names the
# filter as a possible cause, not just perf_event_paranoid.
status=0
"$R/prog_nosyscall" eperm env CACHESHIM_EVENTS=@cache CACHESHIM_TARGETS=memset \
	CACHESHIM_OUTPUT="$T/preset_eperm.csr" LD_PRELOAD="$CS_SHIM" \
	"$R/prog_memset" $N >"$T/preset_eperm.out" 2>"$T/preset_eperm.err" || status=$?
expect_status preset_eperm 0
same_output plain preset_eperm
[ "$(grep -c '^cacheshim:' "$T/preset_eperm.err")" = 1 ] &&
	grep -q '^cacheshim: @cache: hardware counters denied (a seccomp filter, or kernel.perf_event_paranoid=-\?[0-9]*); measuring tsc only$' \
		"$T/preset_eperm.err" || { show "$T/preset_eperm.err"; fail "preset_eperm: the line claims page faults"; }
report_csv preset_eperm
want_count preset_eperm "function=memset,module=prog_memset,event=tsc" calls $N
echo "preset_eperm: @cache under an EPERM filter: tsc only, one line"

# No events named: the defaults are what opens here, and one line says
# so (kill, trap: the filter's line, tsc only; eperm: tsc, and why no
# more), never page faults that then fail.
for how in kill trap eperm; do
	status=0
	"$R/prog_nosyscall" $how env -u CACHESHIM_EVENTS CACHESHIM_TARGETS=memset \
		CACHESHIM_OUTPUT="$T/defaults_$how.csr" LD_PRELOAD="$CS_SHIM" \
		"$R/prog_memset" $N >"$T/defaults_$how.out" 2>"$T/defaults_$how.err" || status=$?
	expect_status defaults_$how 0
	same_output plain defaults_$how
	case $how in
	eperm) want='^cacheshim: CACHESHIM_EVENTS not set or names no event; measuring tsc (counters denied: a seccomp filter, or kernel.perf_event_paranoid=-\?[0-9]*)$' ;;
	*) want='^cacheshim: a seccomp filter kills perf_event_open in this process; measuring tsc only$' ;;
	esac
	[ "$(grep -c '^cacheshim:' "$T/defaults_$how.err")" = 1 ] && grep -q "$want" "$T/defaults_$how.err" ||
		{ show "$T/defaults_$how.err"; fail "defaults_$how: not one line saying tsc only"; }
	report_csv defaults_$how
	want_count defaults_$how "function=memset,module=prog_memset,event=tsc" calls $N
	[ "$(grep -c 'PAGE-FAULTS' "$T/defaults_$how.csv")" = 0 ] ||
		{ show "$T/defaults_$how.csv"; fail "defaults_$how: a page-fault row that was never counted"; }
	echo "defaults_$how: no events named, under the filter: tsc only, one line"
done
