#!/bin/bash
# SPDX-License-Identifier: MIT
# The ruby demo end to end (examples/ruby-hash-lookup/run.sh), small: one
# run per size without a PMU; with one (PMU=yes takes that path here too,
# where the hardware events then go uncounted), @cache in the extra runs
# `cacheshim list @cache` proposes, every run's file of a size merged into
# its row.  Skipped (77) only if ruby is absent.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

command -v ruby >/dev/null 2>&1 || { echo "SKIP: no ruby"; exit 77; }
RUN=$CS_SRCDIR/examples/ruby-hash-lookup/run.sh

# demo NAME PMU: run.sh for sizes 8 and 64, 500 lookups, its output in
# $T/NAME.out and its profiles in $T/NAME.d.
demo()
{
	status=0
	OUTDIR=$T/$1.d PMU=$2 SIZES="8 64" LOOKUPS=500 GROW=200 CACHESHIM=$CS_CMD \
		bash "$RUN" >"$T/$1.out" 2>"$T/$1.err" || status=$?
}

# profiles NAME SIZE: how many report files that size's runs left.
profiles()
{
	local f n=0

	for f in "$T/$1.d/size-$2".[0-9]*; do
		[ -e "$f" ] && n=$((n + 1))
	done
	echo $n
}

demo nopmu no
expect_status $LINENO 0
for size in 8 64; do
	[ "$(profiles nopmu $size)" = 1 ] || fail $LINENO "size $size: $(profiles nopmu $size) profiles, want 1"
done
grep -q "^note: hardware events cannot be counted here" "$T/nopmu.out" ||
	{ fail $LINENO "no note on the missing PMU"; show "$T/nopmu.out"; }
# hash_lookup.rb's ns per lookup, measured with the wrapper's cost in it,
# is in each size's log, not among the table's lines.
grep -q 'ns per lookup' "$T/nopmu.out" &&
	{ fail $LINENO "hash_lookup.rb's timing in the output"; show "$T/nopmu.out"; }
for size in 8 64; do
	grep -q "^size *$size  lookups *500 .*ns per lookup" "$T/nopmu.d/log-$size.txt" ||
		{ fail $LINENO "size $size: no timing line in the log"; show "$T/nopmu.d/log-$size.txt"; }
done
# rb_hash_aref: the 500 lookups and a few calls of ruby's own.
awk '$1 == 8 || $1 == 64 { n++; if ($2 < 500 || $2 > 600) bad = 1 } END { exit !(n == 2 && !bad) }' \
	"$T/nopmu.out" || { fail $LINENO "rows of 500-600 calls for sizes 8 and 64"; show "$T/nopmu.out"; }

runs=$(("$CS_CMD" list @cache 2>/dev/null | grep -c '^ *CACHESHIM_EVENTS=') || true)
[ "$runs" -gt 0 ] || runs=1
demo pmu yes
expect_status $LINENO 0
grep -q "^note: measuring @cache in $runs more run(s) per size" "$T/pmu.out" ||
	{ fail $LINENO "no note on the $runs @cache run(s)"; show "$T/pmu.out"; }
for size in 8 64; do
	[ "$(profiles pmu $size)" = $((runs + 1)) ] ||
		fail $LINENO "size $size: $(profiles pmu $size) profiles, want $((runs + 1))"
done
# The rows sum the runs' calls.
awk -v r=$((runs + 1)) '$1 == 8 || $1 == 64 { n++; if ($2 < 500 * r || $2 > 600 * r) bad = 1 }
	END { exit !(n == 2 && !bad) }' "$T/pmu.out" ||
	{ fail $LINENO "rows of the $((runs + 1)) runs' calls"; show "$T/pmu.out"; }
finish
