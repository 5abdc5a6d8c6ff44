#!/bin/bash
# SPDX-License-Identifier: MIT
# Preset formulas in `cacheshim report` (rows named after the formula,
# status derived, "not counted" whenever an input was not counted, never a
# number) and `cacheshim list @PRESET` (recipe rows with their raw
# encodings and sources, formulas, counter budget), on fixtures whose
# events are named as the recipes name them (mkpresets).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

"$CS_BUILDDIR/tests/report/mkpresets" "$T" || { echo "mkpresets failed" >&2; exit 99; }

# expect_csv LINE TEXT: the last output has a CSV line that starts with
# TEXT, the columns up to status; the columns after it (key, source, ...)
# are not this test's business.
expect_csv()
{
	if ! awk -v want="$2" 'substr($0, 1, length(want)) == want &&
		(length($0) == length(want) || substr($0, length(want) + 1, 1) == ",") { found = 1 }
		END { exit !found }' "$T/out"; then
		fail "$1" "no CSV line starting '$2'"
		show "$T/out"
	fi
}

# skl.rpt (see mkpresets.c): MEM_INST_RETIRED:ALL_LOADS failed to open.
run_cmd "$CS_CMD" report --format csv "$T/skl.rpt"
expect_status $LINENO 0
expect_no_err $LINENO
# One event alone: its whole distribution.  L3 hits 1 0 1 0.
expect_csv $LINENO "lookup,prog+0x10,prog,L3-hits,4,2,0.5,0.5,0,0,1,1,1,4,0,derived"
expect_csv $LINENO "lookup,prog+0x10,prog,L1D-misses,4,16,4,0,4,4,4,4,4,4,0,derived"
# Ratios of the means: 3 / (3 + 1), 0.5 / (0.5 + 0.5); no total, no
# distribution.
expect_csv $LINENO "lookup,prog+0x10,prog,L2-hit-ratio,4,,0.75,,,,,,,4,0,derived"
expect_csv $LINENO "lookup,prog+0x10,prog,L3-hit-ratio,4,,0.5,,,,,,,4,0,derived"
# An input that failed to open: not counted at every row.
expect_csv $LINENO "lookup,prog+0x10,prog,L1D-miss-ratio,,,,,,,,,,,,not counted"
expect_csv $LINENO "lookup,prog+0x20,prog,L1D-miss-ratio,,,,,,,,,,,,not counted"
# Thread 11 did not open the L3 events: its row has no L3 data, so the L3
# formulas are not counted there, while L2 (hits 2 and 4, no miss) is.
expect_csv $LINENO "lookup,prog+0x20,prog,MEM_LOAD_RETIRED:L3_HIT,0,0,,,,,,,,2,0,no data"
expect_csv $LINENO "lookup,prog+0x20,prog,L3-hits,,,,,,,,,,,,not counted"
expect_csv $LINENO "lookup,prog+0x20,prog,L3-hit-ratio,,,,,,,,,,,,not counted"
expect_csv $LINENO "lookup,prog+0x20,prog,L2-hit-ratio,2,,1,,,,,,,2,0,derived"
# Calls that never reached L2: 0 / 0 is undefined, not a number.
expect_csv $LINENO "lookup,prog+0x30,prog,L2-hit-ratio,2,,,,,,,,,2,0,undefined"
# Formulas over events that were not recorded (instructions) are not shown.
if grep -q -e MPKI -e ',IPC,' "$T/out"; then
	fail $LINENO "a formula without its inputs"
	show "$T/out"
fi
# Beside the raw events: each row's formulas follow its events.
[ "$(sed -n '8p;9p' "$T/out" | cut -d, -f4 | tr '\n' ' ')" = "MEM_INST_RETIRED:ALL_LOADS L1D-misses " ] ||
	{ fail $LINENO "formulas not right after the row's events"; show "$T/out"; }
nderived=$(grep -c ',derived\(,\|$\)' "$T/out")
# 7 at prog+0x10, 4 at +0x20 (no L3), 5 at +0x30 (two ratios undefined).
[ "$nderived" -eq 16 ] || { fail $LINENO "$nderived derived lines, want 16"; show "$T/out"; }

# The table: a section per formula, its expression and inputs.
run_cmd "$CS_CMD" report "$T/skl.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" "L2-hit-ratio = L2_HIT / (L2_HIT + L2_MISS) (ratio of the means per call)"
expect_line $LINENO "$T/out" "  where L2_HIT = MEM_LOAD_RETIRED:L2_HIT, L2_MISS = MEM_LOAD_RETIRED:L2_MISS"
expect_line $LINENO "$T/out" "L1D-miss-ratio = L1_MISS / LOADS (ratio of the means per call)"
expect_line $LINENO "$T/out" "  not counted (an input could not be opened)"
grep -qE '^  lookup +prog\+0x10 +prog +4 +0\.75( +-){7}$' "$T/out" ||
	{ fail $LINENO "no L2 hit ratio line"; show "$T/out"; }
grep -qE '^  lookup +prog\+0x20 +prog +- +not counted( +-){7}$' "$T/out" ||
	{ fail $LINENO "no not-counted line"; show "$T/out"; }
grep -qE '^  lookup +prog\+0x30 +prog +2 +undefined( +-){7}$' "$T/out" ||
	{ fail $LINENO "no undefined line"; show "$T/out"; }

# fam10h.rpt: L1D misses = refills from L2 + refills from the system.
run_cmd "$CS_CMD" report --format csv "$T/fam10h.rpt"
expect_status $LINENO 0
# From the system always 0: the sum's distribution is that of the refills
# from L2 (2 and 4), exactly.
expect_csv $LINENO "walk,prog+0x10,prog,L1D-misses,2,6,3,1,2,2,4,4,4,2,0,derived"
expect_csv $LINENO "walk,prog+0x10,prog,L1D-miss-ratio,2,,0.3,,,,,,,2,0,derived"
# Both vary (1 3 and 1 1): mean and total exact, the distribution unknown.
expect_csv $LINENO "walk,prog+0x20,prog,L1D-misses,2,6,3,,,,,,,2,0,derived"
expect_csv $LINENO "walk,prog+0x20,prog,L1D-miss-ratio,2,,0.15,,,,,,,2,0,derived"

# The same in two runs (a split for 4 counters), merged: the means
# combine, (3 + 1) / 10.
run_cmd "$CS_CMD" report --format csv "$T/split_a.rpt" "$T/split_b.rpt"
expect_status $LINENO 0
expect_csv $LINENO "walk,prog+0x10,prog,L1D-misses,2,8,4,,,,,,,5,0,derived"
expect_csv $LINENO "walk,prog+0x10,prog,L1D-miss-ratio,2,,0.4,,,,,,,5,0,derived"

# Files without recipe events: no formula at all.
run_cmd "$CS_CMD" report --format csv "$T/basic.rpt"
if grep -q -e ',derived,' -e 'derived from' "$T/out"; then
	fail $LINENO "formulas without recipe events"
	show "$T/out"
fi

# list @PRESET --pmu MODEL: the recipe rows with the vendor encodings.
# LINE PMU PRESET EXPECTED-LINE (a regular expression)
cases=(
	$LINENO amd64_fam10h_barcelona @cache '^  DC_REFILL_L2 +DATA_CACHE_REFILLS:L2_SHARED:L2_EXCLUSIVE:L2_OWNED:L2_MODIFIED +type 4 config 0x1e42$'
	$LINENO amd64_fam10h_barcelona @cache '^  DC_REFILL_SYS +DATA_CACHE_REFILLS_FROM_SYSTEM:SHARED:EXCLUSIVE:OWNED:MODIFIED +type 4 config 0x1e43$'
	$LINENO amd64_fam10h_barcelona @cache '^  L1D-misses = DC_REFILL_L2 \+ DC_REFILL_SYS \(count\)$'
	$LINENO amd64_fam10h_barcelona @cache '^  L2-misses = DC_REFILL_SYS \+ IC_REFILL_SYS \+ L2_MISS_TLB \(count\)$'
	$LINENO amd64_fam10h_barcelona @cache '^  L2_MISS_TLB +L2_CACHE_MISS:TLB_WALK +type 4 config 0x47e$'
	$LINENO amd64_fam10h_barcelona @cache '^@cache needs 10 general-purpose counters, amd64_fam10h_barcelona has 4: measure it in [0-9] runs'
	$LINENO amd64_fam10h_barcelona @cache '^ +source: AMD BKDG for Family 10h Processors \(#31116\)'
	$LINENO amd64_fam10h_barcelona @ipc '^  IPC = INSTR / CYCLES \(ratio\)$'
	$LINENO skl @l3 '^  L3_MISS +MEM_LOAD_RETIRED:L3_MISS +type 4 config 0x20d1$'
	$LINENO skl @l3 '^  L3_HIT +MEM_LOAD_RETIRED:L3_HIT +type 4 config 0x4d1$'
	$LINENO skl @l3 '^  L3-hit-ratio = L3_HIT / \(L3_HIT \+ L3_MISS\) \(ratio\)$'
	$LINENO skl @l2 '^  L2_MISS +MEM_LOAD_RETIRED:L2_MISS +type 4 config 0x10d1$'
	$LINENO skl @l2 '^  L2_HIT +MEM_LOAD_RETIRED:L2_HIT +type 4 config 0x2d1$'
	$LINENO skl @all '^  L3-MPKI = 1000 \* L3_MISS / INSTR \(ratio\)$'
	$LINENO spr @tlb '^  DTLB_LOAD_WALK +DTLB_LOAD_MISSES:WALK_COMPLETED +type 4 config 0xe12$'
	$LINENO icl @tlb '^  DTLB_LOAD_WALK +DTLB_LOAD_MISSES:WALK_COMPLETED +type 4 config 0xe08$'
	$LINENO amd64_fam19h_zen4 @l3 '^  L3_FILL +DEMAND_DATA_CACHE_FILLS_FROM_SYSTEM:LOCAL_CCX +type 4 config 0x243$'
	$LINENO amd64_fam19h_zen3 @l2 '^  L2_DC_HIT +CORE_TO_L2_CACHEABLE_REQUEST_ACCESS_STATUS:0xf0 +type 4 config 0xf064$'
	$LINENO amd64_fam17h_zen1 @l3 '^  none: the amd_zen1 recipe has no events for @l3$'
	$LINENO icl @cache '^counters: 8 general-purpose, 4 fixed$'
	$LINENO spr @cache '^counters: 8 general-purpose, 4 fixed$'
	$LINENO skl @cache '^counters: 4 general-purpose, 3 fixed$'
	$LINENO icl @cache '^@cache has 6 events that icl counts on its first 4 general-purpose counters only: measure it in 2 runs'
	$LINENO spr @cache '^@cache has 6 events that spr counts on its first 4 general-purpose counters only: measure it in 2 runs'
	$LINENO spr @cache '^  CACHESHIM_EVENTS=tsc,MEM_LOAD_RETIRED:L3_HIT,MEM_LOAD_RETIRED:L3_MISS$'
	$LINENO skl @cache '^@cache needs 6 general-purpose counters, skl has 4: measure it in 2 runs'
	$LINENO icl @all '^@all needs 9 general-purpose counters, icl has 8: measure it in 3 runs'
	$LINENO amd64_fam19h_zen3 @all '^counters: 6 general-purpose, 0 fixed$'
	# The fixed counters' events are free: in every run, so that each
	# run's file has the inputs of IPC and the MPKI formulas.
	$LINENO icl @all '^  CACHESHIM_EVENTS=tsc,INST_RETIRED:ANY_P,CPU_CLK_UNHALTED:THREAD_P,ITLB_MISSES:WALK_COMPLETED$'
	$LINENO skl @all '^  CACHESHIM_EVENTS=tsc,INST_RETIRED:ANY_P,CPU_CLK_UNHALTED,MEM_INST_RETIRED:ALL_LOADS,MEM_LOAD_RETIRED:L1_MISS,MEM_LOAD_RETIRED:L2_HIT,MEM_LOAD_RETIRED:L2_MISS$'
)
for ((i = 0; i < ${#cases[@]}; i += 4)); do
	line=${cases[i]}
	run_cmd "$CS_CMD" list --pmu "${cases[i + 1]}" "${cases[i + 2]}"
	expect_status "$line" 0
	grep -qE -- "${cases[i + 3]}" "$T/out" ||
		{ fail "$line" "no line matching '${cases[i + 3]}'"; show "$T/out"; }
done

# Zen 2's LsMabRespLclCache (unit mask 02h) is a fill from any cache
# whose home node is local, another CCX's included: its L3 formulas say
# so, not "the core's own CCX" of Zen 3 and 4.
run_cmd "$CS_CMD" list --pmu amd64_fam17h_zen2 @l3
tr -s ' \n' '  ' <"$T/out" >"$T/flat"
grep -q "L3-hits = L3_FILL (count) L1D demand fills served by a cache other than the core's L2 with the line's home node local: the L3 (or another L2) of the core's CCX, and also another CCX's cache" "$T/flat" &&
	! grep -q "own CCX" "$T/flat" || { fail $LINENO "zen2: L3 formulas said of the own CCX"; show "$T/out"; }
run_cmd "$CS_CMD" list --pmu amd64_fam19h_zen3 @l3
tr -s ' \n' '  ' <"$T/out" >"$T/flat"
grep -q "L3-hits = L3_FILL (count) L1D demand fills served by the L3 (or another L2) of the core's own CCX" "$T/flat" ||
	{ fail $LINENO "zen3: L3-hits"; show "$T/out"; }

# A preset lists its own formulas only: @cache has no per-instruction
# ones (instructions are @ipc); @tlb fits skl's 4 counters, its events
# any of them.
run_cmd "$CS_CMD" list --pmu skl @cache
if grep -q -e MPKI -e 'IPC =' "$T/out"; then
	fail $LINENO "@cache lists formulas it should not"
	show "$T/out"
fi
run_cmd "$CS_CMD" list --pmu skl @tlb
if grep -q -e 'general-purpose counters, ' -e 'counters only' "$T/out"; then
	fail $LINENO "@tlb lists a budget it should not"
	show "$T/out"
fi

run_cmd "$CS_CMD" list --pmu hsw @cache
expect_status $LINENO 1
expect_err $LINENO "cacheshim: list: no preset recipe for PMU 'hsw'"
run_cmd "$CS_CMD" list @l4
expect_status $LINENO 2
expect_err $LINENO "cacheshim: list: '@l4' is not a preset (@cache, @l1, @l2, @l3, @tlb, @ipc, @all)"
run_cmd "$CS_CMD" list --pmu no_such_pmu @cache
expect_status $LINENO 2
expect_err $LINENO "unknown PMU 'no_such_pmu'"

# A full listing ends with the presets of the model's recipe.
run_cmd "$CS_CMD" list --pmu skl
expect_status $LINENO 0
[ "$(tail -n 1 "$T/out")" = "presets for skl (intel_skl recipe; \`cacheshim list @NAME\` shows one): @cache 6, @l1 2, @l2 2, @l3 2, @tlb 3, @ipc 2 events" ] ||
	{ fail $LINENO "no presets line"; tail -n 3 "$T/out" >&2; }

# Control characters in a function's name (sklctl.rpt: skl.rpt with
# "lo\nk\x1bup" for lookup) are written as escapes in the formulas'
# tables too, the columns as wide as the escaped text.
run_cmd "$CS_CMD" report --by callsite "$T/sklctl.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '  lo\nk\x1bup  prog+0x10  prog        4       0.75       -    -    -    -    -    -      -'
expect_line $LINENO "$T/out" '  lo\nk\x1bup  prog+0x30  prog        2    undefined       -    -    -    -    -    -      -'
expect_no_ctl $LINENO "$T/out"

finish
