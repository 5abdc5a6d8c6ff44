#!/bin/bash
# SPDX-License-Identifier: MIT
# The ruby demo's per-size table (examples/ruby-hash-lookup/table.awk) on
# CSVs laid out as `cacheshim report --format csv` lays them out (the header
# is taken from a real report): the events come from the CSVs, a preset's
# formulas replace its raw events (perf:: events stay), rb_st_lookup is
# taken at its call site inside rb_hash_aref, else at its busiest call site
# only when that has a call per lookup.
# Without a hardware PMU here, this is where the table's PMU case is tested.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

AWK=$CS_SRCDIR/examples/ruby-hash-lookup/table.awk

# The column names of the report's CSV, from a real report.
run_cmd "$CS_CMD" report --format csv "$T/basic.rpt"
expect_status $LINENO 0
header=$(head -1 "$T/out")
case $header in
*function*event*calls*mean*p50*p99*status*) ;;
*) fail $LINENO "unexpected CSV header: $header" ;;
esac

# csv_row FILE function=... event=... ...: appends a row with those columns
# (by name; the others empty) to FILE, which gets the header first.
csv_row()
{
	local file=$1
	shift
	[ -s "$file" ] || echo "$header" >"$file"
	awk -v header="$header" -v kv="$*" 'BEGIN {
		n = split(header, h, ",")
		m = split(kv, p, " ")
		for (i = 1; i <= m; i++) { k = p[i]; sub(/=.*/, "", k); v = p[i]; sub(/^[^=]*=/, "", v); val[k] = v }
		for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? "," : ""), val[h[i]]
		printf "\n"
	}' >>"$file"
}

# With a PMU: cycles, two raw @cache events and two of its formulas.
pmu=$T/pmu
mkdir -p "$pmu"
for n in 8 4096; do
	f=$pmu/size-$n.function.csv c=$pmu/size-$n.callsite.csv
	csv_row "$f" function=rb_hash_aref event=tsc calls=100 mean=$((n / 8 + 200)).4 p50=210 p99=300 status=ok
	csv_row "$f" function=rb_hash_aref event=perf::CYCLES calls=100 mean=500.25 status=ok
	csv_row "$f" function=rb_hash_aref event=L2_DC_MISS calls=100 mean=7 status=ok
	csv_row "$f" function=rb_hash_aref event=L1D-misses calls=100 mean=$((n / 1024)).5 status=derived
	csv_row "$f" function=rb_hash_aref event=L2-hit-ratio calls=100 mean=0.75 status=derived
	csv_row "$f" function=rb_st_lookup event=tsc calls=400 mean=99 status=ok
	# The call inside rb_hash_aref (a call per lookup) only past 8 entries;
	# a busier site elsewhere with fewer calls than lookups is not taken.
	csv_row "$c" function=rb_st_lookup callsite=a+1 event=tsc calls=60 mean=1000 p50=1 p99=2 status=ok
	if [ $n -gt 8 ]; then
		csv_row "$c" function=rb_st_lookup callsite=a+2 event=tsc calls=100 mean=150.6 p50=140 p99=400 status=ok
	fi
done
for n in 8 4096; do
	echo "$n $pmu/size-$n.function.csv $pmu/size-$n.callsite.csv"
done | awk -v lookups=100 -v outdir="$pmu" -f "$AWK" >"$T/out" 2>"$T/err"
[ -s "$T/err" ] && { fail $LINENO "awk said something"; show "$T/err"; }
if ! grep -q '^     size   calls    tsc    p50    p99 *CYCLES/call *L1D-misses/call *L2-hit-ratio/call    calls    tsc    p50    p99$' "$T/out"; then
	fail $LINENO "header: cycles and the two formulas, not the raw event"
	show "$T/out"
fi
grep -q L2_DC_MISS "$T/out" && fail $LINENO "a raw preset event shown beside its formulas"
expect_line()
{
	if ! awk -v want="$2" '{ $1 = $1 } $0 == want { f = 1 } END { exit !f }' "$T/out"; then
		fail "$1" "no line '$2'"
		show "$T/out"
	fi
}
expect_line $LINENO "8 100 201 210 300 500.250 0.500 0.750 0 - - -"
expect_line $LINENO "4096 100 712 210 300 500.250 4.500 0.750 100 151 140 400"

# Without one: tsc and page faults, the events as recorded.
nopmu=$T/nopmu
mkdir -p "$nopmu"
f=$nopmu/size-64.function.csv c=$nopmu/size-64.callsite.csv
csv_row "$f" function=rb_hash_aref event=tsc calls=50 mean=300 p50=290 p99=700 status=ok
csv_row "$f" function=rb_hash_aref event=perf::PAGE-FAULTS calls=50 mean=0.02 status=ok
csv_row "$c" function=rb_st_lookup callsite=a+2 event=tsc calls=50 mean=120 p50=110 p99=200 status=ok
echo "64 $f $c" | awk -v lookups=50 -v outdir="$nopmu" -f "$AWK" >"$T/out" 2>"$T/err"
if ! grep -q '^     size   calls    tsc    p50    p99 PAGE-FAULTS/call    calls    tsc    p50    p99$' "$T/out"; then
	fail $LINENO "header without a PMU"
	show "$T/out"
fi
expect_line $LINENO "64 50 300 290 700 0.020 50 120 110 200"

# The call site inside rb_hash_aref, though one elsewhere (Ruby's start)
# has more calls than there are lookups; with 8 entries only that other.
for n in 8 64; do
	f=$nopmu/site-$n.function.csv c=$nopmu/site-$n.callsite.csv
	csv_row "$f" function=rb_hash_aref event=tsc calls=50 mean=300 p50=290 p99=700 status=ok
	csv_row "$c" function=rb_st_lookup callsite=libruby.so+0x2070dc event=tsc calls=4115 mean=525 p50=363 p99=1588 status=ok
	[ $n = 8 ] ||
		csv_row "$c" function=rb_st_lookup callsite=rb_hash_aref+0x59 event=tsc calls=50 mean=120 p50=110 p99=200 status=ok
	echo "$n $f $c"
done | awk -v lookups=50 -v outdir="$nopmu" -f "$AWK" >"$T/out" 2>"$T/err"
expect_line $LINENO "8 50 300 290 700 0 - - -"
expect_line $LINENO "64 50 300 290 700 50 120 110 200"

# A size with no rb_hash_aref calls is named.
: >"$nopmu/empty.csv"
echo "$header" >"$nopmu/empty.csv"
echo "16 $nopmu/empty.csv $nopmu/empty.csv" | awk -v lookups=50 -v outdir=DIR -f "$AWK" >"$T/out"
grep -q "no rb_hash_aref calls recorded for size 16 (see DIR/log-\*.txt)" "$T/out" ||
	{ fail $LINENO "missing size not named"; show "$T/out"; }

finish
