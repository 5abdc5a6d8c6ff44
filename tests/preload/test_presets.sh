#!/bin/bash
# SPDX-License-Identifier: MIT
# Presets under the shim.  Without a PMU (this machine, CI): @cache falls
# back to what exists, with one clear line, and tsc and the page faults
# are measured exactly.  With one: the preset expands to the recipe's raw
# events.  Anywhere: an unknown preset is one line; a group larger than
# the (forced) PMU's counters is reported before the run with a split.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
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

# only_line NAME TEXT: stderr of run NAME is exactly one cacheshim: line,
# and it contains TEXT.
only_line()
{
	if [ "$(grep -c '^cacheshim:' "$T/$1.err")" -ne 1 ] ||
		! grep '^cacheshim:' "$T/$1.err" | grep -qF -- "$2"; then
		show "$T/$1.err"
		fail "$1: want exactly one cacheshim: line with '$2'"
	fi
}

# measured NAME: tsc has every call; the page faults are exact.
measured()
{
	local row calls st

	row=$(csv_one "$1" "function=cs_touch_pages,event=tsc" calls,status)
	IFS=$'\t' read -r calls st <<<"$row"
	[ "$calls" = $N ] && [ "$st" = ok ] || { show "$T/$1.csv"; fail "$1: tsc row '$row'"; }
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

run cache @cache,tsc
if [ $pmu = 0 ]; then
	only_line cache \
		"@cache: no hardware PMU visible — virtual machine? measuring tsc and page faults only"
	measured cache
	# tsc and the page faults only: no hardware event, no formula.
	events=$(csv_select "$T/cache.csv" "function=cs_touch_pages" event | sort -u | tr '\n' ' ')
	[ "$events" = "perf::PAGE-FAULTS tsc " ] || {
		show "$T/cache.csv"
		fail "cache: events '$events', want tsc and perf::PAGE-FAULTS only"
	}
else
	# The recipe's events instead of the preset: more than tsc.
	n=$(csv_select "$T/cache.csv" "function=cs_touch_pages" event | sort -u | wc -l)
	[ "$n" -ge 3 ] || { show "$T/cache.csv"; fail "cache: @cache did not expand"; }
	! grep -q ',@cache,' "$T/cache.csv" || fail "cache: '@cache' recorded as an event"
fi

# A forced PMU hides libpfm4's perf:: events: the fallback is tsc alone,
# still in one line (there was a second, "'perf::PAGE-FAULTS': event not
# found").
if [ $pmu = 0 ]; then
	LIBPFM_FORCE_PMU=amd64_fam19h_zen3 run forced @cache
	only_line forced "@cache: no hardware PMU visible — virtual machine? measuring tsc only"
	events=$(csv_select "$T/forced.csv" "function=cs_touch_pages" event | sort -u | tr '\n' ' ')
	[ "$events" = "tsc " ] || { show "$T/forced.csv"; fail "forced: events '$events', want tsc"; }
fi

# Two presets, one line naming both; explicit events stay as they are.
run two @l2,@l3,perf::PAGE-FAULTS
if [ $pmu = 0 ]; then
	only_line two "@l2,@l3: no hardware PMU visible — virtual machine?"
	measured two
fi

# A preset that does not exist: one line, the rest measured.
run bogus @bogus,tsc,perf::PAGE-FAULTS
only_line bogus "CACHESHIM_EVENTS: '@bogus' is not a preset (@cache, @l1, @l2, @l3, @tlb, @ipc, @all); ignored"
measured bogus

# The counter budget, before the run: six family 10h events that each
# need one of its 4 general-purpose counters.  The split keeps the L1D
# ratio's three events together, and the L1I ratio's.
DCA=DATA_CACHE_ACCESSES
DCL2=DATA_CACHE_REFILLS:L2_SHARED:L2_EXCLUSIVE:L2_OWNED:L2_MODIFIED
DCSYS=DATA_CACHE_REFILLS_FROM_SYSTEM:SHARED:EXCLUSIVE:OWNED:MODIFIED
ICF=INSTRUCTION_CACHE_FETCHES
ICL2=INSTRUCTION_CACHE_REFILLS_FROM_L2
ICSYS=INSTRUCTION_CACHE_REFILLS_FROM_SYSTEM
LIBPFM_FORCE_PMU=amd64_fam10h_barcelona \
	run budget "tsc,$DCA,$DCL2,$DCSYS,$ICF,$ICL2,$ICSYS"
grep -qxF "cacheshim: 6 events need a general-purpose counter but amd64_fam10h_barcelona has 4: the kernel cannot schedule them as one group, so no call would be measured; split them over 2 runs and merge the files with \`cacheshim report\`:" "$T/budget.err" &&
	grep -qxF "cacheshim:   run 1: CACHESHIM_EVENTS=tsc,$DCA,$DCL2,$DCSYS" "$T/budget.err" &&
	grep -qxF "cacheshim:   run 2: CACHESHIM_EVENTS=tsc,$ICF,$ICL2,$ICSYS" "$T/budget.err" || {
	show "$T/budget.err"
	fail "budget: no counter-budget line with the split"
}
# Within the budget: no such line.
LIBPFM_FORCE_PMU=amd64_fam10h_barcelona run fits "tsc,$DCA,$DCL2,$DCSYS"
! grep -q 'general-purpose counter' "$T/fits.err" || {
	show "$T/fits.err"
	fail "fits: a budget line for 3 events on 4 counters"
}
# Ice Lake has 8 general-purpose counters (libpfm4's table says 16), and
# the kernel puts the load events on the first 4 only: five of them do
# not fit one group, and the split keeps the L3 ratio's two together.
MEM=MEM_LOAD_RETIRED
LIBPFM_FORCE_PMU=icl \
	run lowbudget "tsc,$MEM:L1_MISS,$MEM:L2_HIT,$MEM:L2_MISS,$MEM:L3_HIT,$MEM:L3_MISS"
grep -qxF "cacheshim: 5 events count on the first 4 general-purpose counters of icl only: the kernel cannot schedule them as one group, so no call would be measured; split them over 2 runs and merge the files with \`cacheshim report\`:" "$T/lowbudget.err" &&
	grep -qxF "cacheshim:   run 1: CACHESHIM_EVENTS=tsc,$MEM:L2_HIT,$MEM:L2_MISS,$MEM:L3_HIT,$MEM:L3_MISS" "$T/lowbudget.err" &&
	grep -qxF "cacheshim:   run 2: CACHESHIM_EVENTS=tsc,$MEM:L1_MISS" "$T/lowbudget.err" || {
	show "$T/lowbudget.err"
	fail "lowbudget: no counter-constraint line with the split"
}
echo "presets fall back, are checked and budgeted"
