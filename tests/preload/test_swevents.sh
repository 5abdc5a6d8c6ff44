#!/bin/bash
# SPDX-License-Identifier: MIT
# perf's software events by libpfm4's names (perf::PAGE-FAULTS, in any
# case) are encoded without libpfm4, whose loading and pfm_initialize were
# milliseconds of every start; anything else (a modifier, a LIBPFM_
# variable) loads it as before.  The program says whether libpfm4 is mapped
# in it; the software event is counted either way (exact counts of the
# same event: test_pages.sh).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

cat >"$T/maps.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int pfm = 0, i;

	for (i = 0; i < 10; i++)
		(void)getppid(); /* the target */
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "libpfm"))
			pfm = 1;
	printf("libpfm4 %s\n", pfm ? "mapped" : "not mapped");
	return 0;
}
C
${CC:-cc} -O1 -o "$T/maps" "$T/maps.c"

# loaded NAME EVENTS SW WANT [VAR=VALUE...]: under EVENTS, libpfm4 is WANT
# ("mapped" or "not mapped"), and getppid's 10 calls are in the report,
# counted by tsc and by the software event SW (as EVENTS names it).
loaded()
{
	local name=$1 events=$2 sw=$3 want=$4 ev

	shift 4
	status=0
	env "$@" CACHESHIM_QUIET=1 CACHESHIM_EVENTS=$events CACHESHIM_TARGETS=getppid \
		CACHESHIM_OUTPUT=$T/$name.csr LD_PRELOAD=$CS_SHIM "$T/maps" >"$T/$name.out" \
		2>"$T/$name.err" || status=$?
	[ "$status" -eq 0 ] || { show "$T/$name.err"; fail "$name: exit status $status"; }
	[ "$(cat "$T/$name.out")" = "libpfm4 $want" ] ||
		{ show "$T/$name.out"; fail "$name: want libpfm4 $want"; }
	report_csv "$name"
	"$CS_CMD" report "$T/$name.csr" >"$T/$name.txt" 2>/dev/null ||
		fail "$name: cacheshim report failed"
	for ev in tsc "$sw"; do
		[ "$(csv_one "$name" "function=getppid,event=$ev" calls,status)" = "10	ok" ] ||
			{ show "$T/$name.csv"; fail "$name: $ev: not 10 calls counted"; }
	done
	echo "$name: $events: libpfm4 $want"
}

loaded bare tsc,perf::PAGE-FAULTS perf::PAGE-FAULTS "not mapped"
loaded lower tsc,perf::page-faults,perf::cs perf::cs "not mapped"
loaded modifier tsc,perf::PAGE-FAULTS:u perf::PAGE-FAULTS:u mapped
loaded hardware tsc,perf::PAGE-FAULTS,perf::CYCLES perf::PAGE-FAULTS mapped
loaded libpfm_env tsc,perf::PAGE-FAULTS perf::PAGE-FAULTS mapped LIBPFM_VERBOSE=0
# The report merges one event under two spellings, or two of its names:
# one table of 30 calls (before, two of 10 and 20, and --diff found the
# event in neither run).
"$CS_CMD" report --format csv "$T/bare.csr" "$T/lower.csr" "$T/libpfm_env.csr" >"$T/spell.csv" \
	2>"$T/spell.err" || { show "$T/spell.err"; fail "spell: report failed"; }
[ "$(csv_select "$T/spell.csv" "function=getppid" event | sort -u | tr '\n' ' ')" = \
	"perf::PAGE-FAULTS perf::cs tsc " ] || { show "$T/spell.csv"; fail "spell: events not merged"; }
[ "$(csv_one spell "function=getppid,event=perf::PAGE-FAULTS" calls)" = 30 ] ||
	{ show "$T/spell.csv"; fail "spell: page faults not 30 calls"; }
"$CS_CMD" report --diff "$T/lower.csr" "$T/bare.csr" --format csv --event perf::FAULTS \
	>"$T/spelld.csv" 2>"$T/spelld.err" || { show "$T/spelld.err"; fail "spell: --diff failed"; }
[ "$(csv_one spelld "function=getppid" calls_a,calls_b,status)" = "$(printf '10\t10\tok')" ] ||
	{ show "$T/spelld.csv"; fail "spell: --diff did not match perf::page-faults with perf::PAGE-FAULTS"; }
echo "spell: perf::page-faults, perf::PAGE-FAULTS and perf::FAULTS are one event in the report"
# A preset where no hardware counter opens falls back to tsc and page
# faults: that needs no libpfm4 either (with a PMU, its recipe does).
if ! "$P/prog_haspmu" >/dev/null; then
	loaded preset @cache perf::PAGE-FAULTS "not mapped"
	loaded preset_env @cache,tsc tsc mapped LIBPFM_VERBOSE=0
	# The fallback's page faults are the ones already listed.
	loaded preset_pf perf::page-faults,@cache perf::page-faults "not mapped"
	grep -q '^events: *perf::page-faults, tsc$' "$T/preset_pf.txt" ||
		{ show "$T/preset_pf.txt"; fail "preset_pf: page faults measured twice"; }
	# Listed after the preset, under another of its names: measured
	# once, under the user's name (a filter on it finds the row).
	loaded preset_faults @cache,perf::FAULTS perf::FAULTS "not mapped"
	grep -q '^events: *tsc, perf::FAULTS$' "$T/preset_faults.txt" ||
		{ show "$T/preset_faults.txt"; fail "preset_faults: not under the user's name"; }
	# 15 events and the preset: its fallback's tsc is the 16th, and the
	# line says so (not "tsc and page faults", which did not fit).
	full=perf::CS,perf::MIGRATIONS,perf::MINOR-FAULTS,perf::MAJOR-FAULTS,perf::CPU-CLOCK
	full=$full,perf::TASK-CLOCK,perf::CYCLES,perf::INSTRUCTIONS,perf::BRANCHES
	full=$full,perf::BRANCH-MISSES,perf::CACHE-MISSES,perf::CACHE-REFERENCES
	full=$full,perf::BUS-CYCLES,perf::REF-CYCLES,perf::STALLED-CYCLES-FRONTEND,@cache
	CACHESHIM_EVENTS=$full CACHESHIM_TARGETS=getppid CACHESHIM_OUTPUT=$T/full.csr \
		LD_PRELOAD=$CS_SHIM "$T/maps" >"$T/full.out" 2>"$T/full.err" ||
		{ show "$T/full.err"; fail "full: exit status"; }
	grep -q "^cacheshim: @cache: no hardware PMU visible — virtual machine? measuring tsc only$" \
		"$T/full.err" || { show "$T/full.err"; fail "full: the line names events not measured"; }
	echo "full: @cache's fallback in a full list says tsc only"
fi
# One software event under two names is measured once.
loaded twice tsc,perf::CS,perf::CONTEXT-SWITCHES perf::CS "not mapped"
grep -q '^events: *tsc, perf::CS$' "$T/twice.txt" ||
	{ show "$T/twice.txt"; fail "twice: context switches measured twice"; }

# A libpfm.so.4 that has none of libpfm4's functions: the events that need
# it are not counted and one line says so; software events still are.
mkdir "$T/nopfm"
echo 'int not_libpfm;' >"$T/nopfm/stub.c"
${CC:-cc} -shared -fPIC -o "$T/nopfm/libpfm.so.4" "$T/nopfm/stub.c"
status=0
LD_LIBRARY_PATH=$T/nopfm CACHESHIM_EVENTS=tsc,perf::PAGE-FAULTS,perf::CYCLES \
	CACHESHIM_TARGETS=getppid CACHESHIM_OUTPUT=$T/nopfm.csr LD_PRELOAD=$CS_SHIM "$T/maps" \
	>"$T/nopfm.out" 2>"$T/nopfm.err" || status=$?
[ "$status" -eq 0 ] || { show "$T/nopfm.err"; fail "nopfm: exit status $status"; }
grep -q "^cacheshim: libpfm4 (libpfm.so.4) cannot be loaded: symbols missing; only tsc and perf's software events (perf::PAGE-FAULTS, ...) are available$" \
	"$T/nopfm.err" || { show "$T/nopfm.err"; fail "nopfm: no line saying what is still available"; }
report_csv nopfm
for ev in tsc perf::PAGE-FAULTS; do
	[ "$(csv_one nopfm "function=getppid,event=$ev" calls,status)" = "10	ok" ] ||
		{ show "$T/nopfm.csv"; fail "nopfm: $ev: not 10 calls counted"; }
done
grep -q 'perf::CYCLES' "$T/nopfm.csv" && ! csv_one nopfm "function=getppid,event=perf::CYCLES" status |
	grep -qx ok || { show "$T/nopfm.csv"; fail "nopfm: perf::CYCLES counted without libpfm4"; }
echo "nopfm: libpfm.so.4 without its functions: tsc and page faults counted, perf::CYCLES not"

# The launcher checks event names before it starts the program: for these
# it needs no libpfm4 either (ld.so's LD_DEBUG=files names every library
# any process of the run loads).
# launched NAME EVENTS WANT: under `cacheshim run -e EVENTS`, libpfm4 is
# loaded by some process of the run (WANT "loaded") or by none ("not
# loaded").
launched()
{
	local name=$1 events=$2 want=$3 got="not loaded"

	mkdir "$T/$name.ld"
	status=0
	LD_DEBUG=files LD_DEBUG_OUTPUT=$T/$name.ld/ld "$CS_CMD" run -q -e "$events" -t getppid \
		-o "$T/$name.%p.csr" -- "$T/maps" >"$T/$name.out" 2>"$T/$name.err" || status=$?
	[ "$status" -eq 0 ] || { show "$T/$name.err"; fail "$name: exit status $status"; }
	ls "$T/$name.ld"/ld.* >/dev/null 2>&1 || fail "$name: LD_DEBUG_OUTPUT wrote nothing"
	if grep -q 'file=libpfm\.so' "$T/$name.ld"/ld.*; then
		got=loaded
	fi
	[ "$got" = "$want" ] || fail "$name: libpfm4 $got, want $want"
	echo "$name: cacheshim run -e $events: libpfm4 $want"
}

launched run_bare tsc,perf::PAGE-FAULTS "not loaded"
launched run_modifier tsc,perf::PAGE-FAULTS:u loaded
