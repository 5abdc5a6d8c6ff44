#!/bin/bash
# SPDX-License-Identifier: MIT
# The C examples (examples/c-library, memcpy-sizes, static-function) run as
# their READMEs say, and what the READMEs say of their output holds: one
# page fault per page demo_touch and find touch, per call site; one row of
# memcpy per copy size class; find caught by its patched entry.  Without
# cacheshim built, every example's run.sh says so (status 1).  The ruby
# example is test_demo_run.sh's.  Skipped (77) only without cc or make.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

for x in "${CC:-cc}" make; do
	command -v "$x" >/dev/null 2>&1 || { echo "SKIP: no $x"; exit 77; }
done
EX=$CS_SRCDIR/examples

# example NAME: runs NAME's run.sh (from its directory, as its README
# does) with this build's cacheshim; stdout in $T/out, stderr in $T/err.
example()
{
	status=0
	(cd "$EX/$1" && CACHESHIM=$CS_CMD bash ./run.sh) >"$T/out" 2>"$T/err" || status=$?
}

# c-library builds in its own directory: a copy of it, here.
mkdir "$T/src" && cp -R "$EX/c-library" "$T/src/" &&
	rm -f "$T/src/c-library/demo" "$T/src/c-library/libdemo.so" "$T"/src/c-library/cacheshim.out.* ||
	exit 99
EX=$T/src example c-library
expect_status $LINENO 0
expect_line $LINENO "$T/out" "done (500049954495000)"
for want in perf::PAGE-FAULTS "tsc (TSC ticks)"; do
	expect_line $LINENO "$T/out" "$want"
done
run_cmd "$CS_CMD" report --by callsite --format csv --event perf::PAGE-FAULTS \
	--sort calls:asc "$T"/src/c-library/cacheshim.out.*
expect_status $LINENO 0
csv_pick function,calls,total,min,max
# demo_touch: 10 calls each of 1, 16 and 256 pages at one call site, 1,000
# pages at the other; demo_sum touches no new page.
expect_out $LINENO <<'OUT'
function,calls,total,min,max
demo_touch,1,1000,1000,1000
demo_sum,3,0,0,0
demo_sum,30,0,0,0
demo_touch,30,2730,1,256
OUT

example memcpy-sizes
expect_status $LINENO 0
# A row per size class, 1 byte to 4 MiB, each of its 200 calls.
sed -n 's/^ *memcpy[^ ]*\[arg3:\([0-9]*\)\] *\([0-9]*\) .*/\1 \2/p' "$T/out" | sort -n >"$T/rows"
for ((s = 1; s <= 4194304; s *= 4)); do echo "$s 200"; done >"$T/want"
diff -u "$T/want" "$T/rows" >"$T/diff" ||
	{ fail $LINENO "memcpy's size classes"; show "$T/diff"; show "$T/out"; }

example static-function
expect_status $LINENO 0
# find(1 + i % 4), 100 times: 250 pages, 1 to 4 a call.
awk '$1 == "find" && $4 == 100 && $5 == 2.5 && $7 == 1 && $11 == 4 && $12 == 250 { n++ }
	END { exit n != 1 }' "$T/out" ||
	{ fail $LINENO "find's page faults: want 100 calls, mean 2.5, min 1, max 4"; show "$T/out"; }
awk '$1 == "find" && $4 == "entry" && $5 == "hidden" && $6 == 100 { n++ } END { exit n != 1 }' \
	"$T/out" || { fail $LINENO "find not caught by its entry"; show "$T/out"; }

# Without cacheshim: one line that says to build it, before anything runs.
for ex in c-library memcpy-sizes static-function ruby-hash-lookup; do
	status=0
	CACHESHIM=$T/none bash "$EX/$ex/run.sh" >"$T/out" 2>"$T/err" || status=$?
	expect_status $LINENO 1
	expect_err $LINENO "run.sh: $T/none not found: build cacheshim first"
done
finish
