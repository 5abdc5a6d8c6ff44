#!/bin/bash
# SPDX-License-Identifier: MIT
# Events that cannot be counted: hardware events without a PMU, an event
# libpfm4 does not know.  Each gives exactly one cacheshim: line naming it,
# the program runs on unchanged, the other events are still counted and the
# report says "not counted" instead of printing numbers for it.  On a
# machine with a PMU the hardware events must be counted instead.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

K=3
N=20
plain_run plain "$P/prog_pages" $K $N
[ "$status" -eq 0 ] || fail "prog_pages exits $status without the shim"

# run NAME EVENTS: prog_pages under the shim with EVENTS; same output.
run()
{
	shim_run "$1" "$2" cs_touch_pages "$P/prog_pages" $K $N
	[ "$status" -eq 0 ] || { show "$T/$1.err"; fail "$1: prog_pages exits $status"; }
	same_output plain "$1"
	report_csv "$1"
}

# counted NAME EVENT: EVENT has its row with every call in it.
counted()
{
	local row calls total st

	row=$(csv_one "$1" "function=cs_touch_pages,event=$2" calls,total,status)
	IFS=$'\t' read -r calls total st <<<"$row"
	[ "$calls" = $N ] && [ "$st" = ok ] && is_num "$total" || {
		show "$T/$1.csv"
		fail "$1: $2 row is '$row', want $N calls counted"
	}
}

# not_counted NAME EVENT: exactly one cacheshim: line, naming EVENT, and a
# row for EVENT that carries no number.
not_counted()
{
	local row

	if [ "$(grep -c '^cacheshim:' "$T/$1.err")" -ne 1 ] ||
		! grep '^cacheshim:' "$T/$1.err" | grep -qF "'$2'"; then
		show "$T/$1.err"
		fail "$1: want exactly one cacheshim: line, naming '$2'"
	fi
	row=$(csv_one "$1" "function=cs_touch_pages,event=$2" \
		calls,total,mean,min,max,status)
	[ "$row" = "$(printf '\t\t\t\t\tnot counted')" ] || {
		show "$T/$1.csv"
		fail "$1: $2 row is '$row', want no numbers and 'not counted'"
	}
}

# The events that do count: the page faults exactly.
pages_counted()
{
	local row

	counted "$1" tsc
	row=$(csv_one "$1" "function=cs_touch_pages,event=perf::PAGE-FAULTS" \
		calls,total,min,max,status)
	[ "$row" = "$(printf '%s\t%s\t%s\t%s\tok' $N $((N * K)) $K $K)" ] || {
		show "$T/$1.csv"
		fail "$1: perf::PAGE-FAULTS row is '$row'"
	}
}

if "$P/prog_haspmu" >"$T/pmu.out"; then
	pmu=1
else
	pmu=0
fi
cat "$T/pmu.out"

# A generic hardware event: every PMU has it.
run cycles perf::CYCLES,perf::PAGE-FAULTS,tsc
pages_counted cycles
if [ $pmu = 1 ]; then
	no_shim_lines cycles
	counted cycles perf::CYCLES
else
	not_counted cycles perf::CYCLES
	grep -qi pmu "$T/cycles.err" || {
		show "$T/cycles.err"
		fail "cycles: the cacheshim: line does not say that no PMU is there"
	}
fi

# A model-specific event (Intel): unknown to other models' libpfm4 tables.
run l3 MEM_LOAD_RETIRED:L3_MISS,perf::PAGE-FAULTS,tsc
pages_counted l3
if [ $pmu = 1 ] && ! grep -q '^cacheshim:' "$T/l3.err"; then
	counted l3 MEM_LOAD_RETIRED:L3_MISS
else
	not_counted l3 MEM_LOAD_RETIRED:L3_MISS
fi

if [ $pmu = 0 ]; then
	# Encoded for Skylake, where it exists, so it fails to open rather
	# than to encode.  (A forced PMU hides the perf:: events.)
	LIBPFM_FORCE_PMU=skl run skl MEM_LOAD_RETIRED:L3_MISS,tsc
	not_counted skl MEM_LOAD_RETIRED:L3_MISS
	grep -qi pmu "$T/skl.err" || {
		show "$T/skl.err"
		fail "skl: the cacheshim: line does not say that no PMU is there"
	}
	counted skl tsc
fi

run unknown NO_SUCH_EVENT,perf::PAGE-FAULTS,tsc
pages_counted unknown
not_counted unknown NO_SUCH_EVENT
echo "events that cannot be counted are reported and skipped"
