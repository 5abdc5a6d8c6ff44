#!/bin/bash
# SPDX-License-Identifier: MIT
# The report reader under attack.  Seeds are real report files made here
# (threads, two events, a crash that left a running file, dlopen/dlclose,
# calls that never returned, unknown events, a forked child), plus
# truncated copies.  fuzz_driver (gcc, the normal build) feeds each seed
# and a fixed series of mutations of it to the harness; then the same
# harness as a libFuzzer target (clang, ASan + UBSan) gets a short
# coverage-guided run.  Any crash, sanitizer report or leak fails; a
# crashing input is kept as tests/robust/fuzz-crash-* in the build tree.
# Skipped (77) only when clang is not installed.  CS_FUZZ_RUNS and
# CS_FUZZ_SECONDS (default 100000 runs, at most 30 s) make longer runs.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

RUNS=${CS_FUZZ_RUNS:-100000}
SECONDS_MAX=${CS_FUZZ_SECONDS:-30}

mkdir "$T/seeds"
cd "$T"
# seed NAME EVENTS TARGETS CMD...: the report of CMD becomes seeds/NAME.
seed()
{
	local name=$1 events=$2 targets=$3

	shift 3
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=$events CACHESHIM_TARGETS=$targets \
		CACHESHIM_CAPACITY_MB=1 CACHESHIM_OUTPUT="$T/seeds/$name" LD_PRELOAD=$CS_SHIM \
		"$@" >/dev/null 2>&1 || true
	[ -s "$T/seeds/$name" ] || fail "no seed file from $*"
}
seed threads tsc rt_leaf "$R/prog_threads" 2 50
seed two-events tsc,perf::PAGE-FAULTS rt_leaf "$R/prog_threads" 1 20
seed crashed tsc rt_leaf,rt_crash "$R/prog_crash" 10 segv-in
cp "$R/.libs/libcsplug.so" "$T/plugA.so"
cp "$R/.libs/libcsplug.so" "$T/plugB.so"
seed dlopen tsc rt_leaf,plug_leaf "$R/prog_dl" 3 now-global "$T/plugA.so" "$T/plugB.so" "$T/plugA.so"
seed longjmp tsc rt_callback,rt_spin "$R/prog_jump" 5 1
seed unknown-event perf::NO-SUCH-EVENT,tsc rt_leaf "$R/prog_threads" 0 5
mkdir "$T/forked"
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf CACHESHIM_CAPACITY_MB=1 \
	CACHESHIM_OUTPUT="$T/forked/f.%p" LD_PRELOAD=$CS_SHIM "$R/prog_fork" fork 1 10 >/dev/null
i=0
for f in "$T"/forked/f.*; do
	cp "$f" "$T/seeds/fork$i"
	i=$((i + 1))
done
# The seeds must be valid reports to begin with.
for f in "$T"/seeds/*; do
	"$CS_CMD" report --format csv "$f" >/dev/null 2>"$T/seed.err" || {
		show "$T/seed.err"
		fail "seed $f is not a valid report"
	}
done
# Truncated copies: inside the header, at its end, inside the blocks.
head -c 100 "$T/seeds/threads" >"$T/seeds/cut-100"
head -c 4096 "$T/seeds/threads" >"$T/seeds/cut-4096"
head -c 4100 "$T/seeds/threads" >"$T/seeds/cut-4100"
head -c $(($(stat -c %s "$T/seeds/threads") / 2 + 3)) "$T/seeds/threads" >"$T/seeds/cut-half"
: >"$T/seeds/empty"
echo "$(ls "$T/seeds" | wc -l) seeds"

# --- gcc build: every seed, and 300 mutations of each ------------------------
if ! "$R/fuzz_driver" -m 300 "$T"/seeds/* >"$T/driver.out" 2>"$T/driver.err"; then
	show "$T/driver.err"
	fail "fuzz_driver (gcc build) failed"
fi
echo "gcc build: $(cat "$T/driver.out")"

# --- clang: libFuzzer with ASan and UBSan ----------------------------------
FUZZER=$R/fuzz_reader_clang
if [ ! -x "$FUZZER" ]; then
	if command -v clang >/dev/null; then
		fail "clang is installed but $FUZZER was not built (re-run configure?)"
	fi
	echo "SKIP (libFuzzer part): clang is not installed"
	exit 77
fi
mkdir "$T/corpus"
status=0
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
	"$FUZZER" -runs=$RUNS -max_total_time=$SECONDS_MAX -seed=1 -timeout=10 \
	-rss_limit_mb=2048 -max_len=1048576 -artifact_prefix="$T/" -print_final_stats=1 \
	"$T/corpus" "$T/seeds" >"$T/fuzz.out" 2>"$T/fuzz.err" || status=$?
if [ $status -ne 0 ] || grep -Eq 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$T/fuzz.err"; then
	tail -n 60 "$T/fuzz.err" >&2
	for f in "$T"/crash-* "$T"/leak-* "$T"/timeout-* "$T"/oom-*; do
		[ -e "$f" ] || continue
		cp "$f" "$R/fuzz-$(basename "$f")"
		echo "kept the input as $R/fuzz-$(basename "$f")" >&2
	done
	fail "the libFuzzer run found a problem (status $status)"
fi
grep -E '^(Done|stat::number_of_executed_units)' "$T/fuzz.err" || true
