#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim list: events and their perf encodings, with libpfm4 forced to
# PMUs this machine does not have (encodings need no hardware).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

# LINE PMU PATTERN EXPECTED-LINE (a regular expression)
cases=(
	$LINENO skl MEM_LOAD_RETIRED:L3_MISS '^    :L3_MISS +type 4 config 0x20d1$'
	$LINENO skl 'mem_load_retired*' '^skl::MEM_LOAD_RETIRED +\(needs a umask\)$'
	$LINENO skl L3_MISS '^skl::MEM_LOAD_RETIRED +\(needs a umask\)$'
	$LINENO amd64_fam10h_barcelona DATA_CACHE_REFILLS '^    :L2_SHARED +type 4 config 0x242$'
	$LINENO amd64_fam10h_barcelona 'amd64_fam10h_barcelona::DATA_CACHE_REFILLS' '^amd64_fam10h_barcelona::DATA_CACHE_REFILLS +type 4 config 0x'
)
for ((i = 0; i < ${#cases[@]}; i += 4)); do
	line=${cases[i]}
	run_cmd "$CS_CMD" list --pmu "${cases[i + 1]}" "${cases[i + 2]}"
	expect_status "$line" 0
	grep -qE -- "${cases[i + 3]}" "$T/out" ||
		{ fail "$line" "no line matching '${cases[i + 3]}'"; show "$T/out"; }
done

# A pattern keeps only the umasks it matches.
run_cmd "$CS_CMD" list --pmu skl MEM_LOAD_RETIRED:L3_MISS
[ "$(grep -c '^    :' "$T/out")" -eq 1 ] || { fail $LINENO "other umasks listed"; show "$T/out"; }

# Without --pmu: the perf:: generic events, encodable here.
run_cmd "$CS_CMD" list PAGE_FAULTS
expect_status $LINENO 0
grep -qE '^perf::PERF_COUNT_SW_PAGE_FAULTS +type 1 config 0x2$' "$T/out" ||
	{ fail $LINENO "perf::PERF_COUNT_SW_PAGE_FAULTS not listed"; show "$T/out"; }

# Where no hardware counter opens (a virtual machine), the full listing
# says so, as @cache does, rather than list the CPU's events as if they
# counted; with --pmu (another machine's PMU) it does not.
"$CS_CMD" list @cache >"$T/preset.out" 2>/dev/null
if [ -s "$T/preset.out" ]; then
	note='note: no hardware PMU visible here (virtual machine?)'
	run_cmd "$CS_CMD" list
	expect_status $LINENO 0
	if grep -qF "$note" "$T/preset.out"; then
		head -1 "$T/out" | grep -qF "$note" || { fail $LINENO "no note on the missing PMU"; head -3 "$T/out" >&2; }
	else
		grep -qF "$note" "$T/out" && fail $LINENO "a note on a missing PMU where @cache has none"
	fi
	run_cmd "$CS_CMD" list --pmu skl
	grep -qF "$note" "$T/out" && fail $LINENO "the note with --pmu"
fi

run_cmd "$CS_CMD" list --pmu no_such_pmu
expect_status $LINENO 2
expect_err $LINENO "cacheshim: list: unknown PMU 'no_such_pmu'"
run_cmd "$CS_CMD" list --pmu no_such_pmu @cache
expect_status $LINENO 2
expect_err $LINENO "cacheshim: list: unknown PMU 'no_such_pmu'"

# A PMU libpfm4 has, but not a core PMU: it has no presets (it is not
# unknown, `list --pmu perf` lists it).
run_cmd "$CS_CMD" list --pmu perf @cache
expect_status $LINENO 2
expect_err $LINENO "list: PMU 'perf' (perf_events generic PMU) has no @cache: presets are recipes for a CPU's core PMU; recipes exist for:"
expect_err $LINENO "  skl ("
# A PMU a recipe is for that this libpfm4 lacks (adl_glc before 4.14):
# not unknown either.
for args in "--pmu adl_glc @all" "--pmu adl_glc"; do
	# shellcheck disable=SC2086 # the words of $args are arguments
	run_cmd "$CS_CMD" list $args
	[ "$status" -eq 0 ] && continue # a libpfm4 that has it
	expect_status $LINENO 1
	expect_err $LINENO "list: this libpfm4 does not know PMU 'adl_glc', which cacheshim's intel_adl recipe"
	expect_err $LINENO "it needs a newer libpfm4"
done

run_cmd "$CS_CMD" list --pmu skl NO_SUCH_EVENT_AT_ALL
expect_status $LINENO 0
expect_err $LINENO "no event matches 'NO_SUCH_EVENT_AT_ALL'"

run_cmd "$CS_CMD" list a b
expect_status $LINENO 2

finish
