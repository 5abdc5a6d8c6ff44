#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs hash_lookup.rb under cacheshim once per hash size and prints what one
# rb_hash_aref call cost at each size.  Run from anywhere; uses the
# cacheshim of the build tree (./scripts/demo builds it and runs this).
#
# Environment: SIZES ("8 64 ..."), LOOKUPS (20000), GROW (262144: the
# entries of the growing Hash), OUTDIR (where the profiles go), CACHESHIM
# (the command, default ./cacheshim), RUBY (ruby), EXTRA_EVENTS (more
# comma-separated events to measure), PMU (auto: probe for a hardware PMU;
# yes or no: take that path without probing).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cd "$here/../.."
rel=examples/ruby-hash-lookup

CS=${CACHESHIM:-./cacheshim}
RUBY=${RUBY:-ruby}
SIZES=${SIZES:-8 64 512 4096 32768 262144 2097152}
LOOKUPS=${LOOKUPS:-20000}
OUTDIR=${OUTDIR:-$rel/cacheshim.out.d}
TARGETS=rb_hash_aref,rb_st_lookup
EVENTS=tsc,perf::PAGE-FAULTS
# With a hardware PMU, cycles and instructions are added, and the @cache
# preset (this CPU's own cache-miss events, with the formulas that combine
# them: L1D-misses, L2-hit-ratio, ...; `cacheshim list @cache`) is measured
# in runs of its own: a group must fit the PMU's counters at once (Zen 4
# has 6, @cache needs 7), so `cacheshim list` splits it into runs that fit,
# each keeping a formula's inputs together, and the report merges every
# run's file of a size.  perf::PERF_COUNT_HW_CACHE_MISSES is left out on
# purpose: what it counts differs from CPU to CPU.
PMU_EVENTS=perf::CYCLES,perf::INSTRUCTIONS
RUNS=() # events of the further runs per size

die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }

command -v "$CS" >/dev/null 2>&1 ||
	die "$CS not found: build cacheshim first (./scripts/demo does)"
command -v "$RUBY" >/dev/null 2>&1 || die "$RUBY not found"
mkdir -p "$OUTDIR"
rm -f "$OUTDIR"/size-* "$OUTDIR"/log-* "$OUTDIR"/pmu-probe.*

# Is there a hardware PMU?  cacheshim says on stderr when an event cannot be
# counted (no PMU visible, or denied by perf_event_paranoid).
case ${PMU:-auto} in
yes) probe_err= ;;
no) probe_err="cacheshim: perf::CYCLES: continuing without it (PMU=no)" ;;
auto)
	probe_err=$("$CS" run -e perf::CYCLES -t "$TARGETS" -o "$OUTDIR/pmu-probe.%p" \
		-- "$RUBY" --disable-gems -e 0 2>&1 >/dev/null) ||
		probe_err="cacheshim: perf::CYCLES: probe failed"
	rm -f "$OUTDIR"/pmu-probe.* ;;
*) die "PMU=$PMU: auto, yes or no" ;;
esac
if grep -qiE '^cacheshim:.*perf::CYCLES.*(continuing without|cannot|denied|fail)' \
	<<<"$probe_err"; then
	if grep -qi denied <<<"$probe_err"; then
		why="denied by kernel.perf_event_paranoid"
	else
		why="no hardware PMU visible, e.g. a virtual machine"
	fi
	echo "note: hardware events cannot be counted here ($why): measuring only tsc and page faults, so cache misses show up as time only."
else
	EVENTS=$EVENTS,$PMU_EVENTS
	# The split cacheshim proposes when @cache needs more counters than
	# this PMU has (its "CACHESHIM_EVENTS=..." lines), else one run.
	mapfile -t RUNS < <("$CS" list @cache 2>/dev/null | sed -n 's/^ *CACHESHIM_EVENTS=//p')
	[ ${#RUNS[@]} -gt 0 ] || RUNS=(tsc,@cache)
	echo "note: measuring @cache in ${#RUNS[@]} more run(s) per size (the counters it needs do not fit beside the others); each size's files are merged."
fi
[ -n "${EXTRA_EVENTS:-}" ] && EVENTS=$EVENTS,$EXTRA_EVENTS

# hash_lookup.rb's own line (ns per lookup) goes to the log with
# cacheshim's: under measurement it holds the wrapper's cost of every call.
for n in $SIZES; do
	log=$OUTDIR/log-$n.txt
	: >"$log"
	for events in "$EVENTS" ${RUNS[@]+"${RUNS[@]}"}; do
		if ! "$CS" run -e "$events" -t "$TARGETS" -o "$OUTDIR/size-$n.%p" -- \
			"$RUBY" --disable-gems "$rel/hash_lookup.rb" --size "$n" \
			--lookups "$LOOKUPS" >>"$log" 2>&1; then
			cat "$log" >&2
			die "size $n: cacheshim run -e $events failed"
		fi
	done
	files=()
	for f in "$OUTDIR/size-$n".*; do
		case $f in *.csv) ;; *) [ -e "$f" ] && files+=("$f") ;; esac
	done
	if [ ${#files[@]} -eq 0 ]; then
		cat "$log" >&2
		die "size $n: no profile written to $OUTDIR"
	fi
	for by in function callsite; do
		"$CS" report --by $by --format csv "${files[@]}" \
			>"$OUTDIR/size-$n.$by.csv" || die "size $n: cacheshim report failed"
	done
done

# One row per size from the CSVs of each run (columns found by name):
# rb_hash_aref from --by function; rb_st_lookup from --by callsite, at its
# call site inside rb_hash_aref (a Hash of 8 entries or fewer has none).
echo
runs=$((1 + ${#RUNS[@]}))
echo "Per call, $LOOKUPS random hits per size$([ $runs -gt 1 ] && echo " (in each of $runs runs: calls are their sum)"); tsc in TSC ticks:"
for n in $SIZES; do
	echo "$n $OUTDIR/size-$n.function.csv $OUTDIR/size-$n.callsite.csv"
done | awk -v lookups="$((LOOKUPS * runs))" -v outdir="$OUTDIR" -f "$here/table.awk"

# One run, the Hash growing: h[k] over time.  Every call is in a window of
# calls (cacheshim keeps 256 windows per thread and function, doubling
# their size as the run goes on), so the cost per lookup as the Hash grows,
# and its drops when the table is rebuilt larger, come from one process.
GROW=${GROW:-262144}
rm -f "$OUTDIR"/grow.* "$OUTDIR"/log-grow.txt
echo
echo "One run: a Hash grown to $GROW entries, 4 random hits h[k] after each insert."
if ! "$CS" run -e "$EVENTS" -t rb_hash_aref -o "$OUTDIR/grow.%p" -- \
	"$RUBY" --disable-gems -e '
		n = Integer(ARGV[0])
		rng = Random.new(42)
		keys = []
		h = {}
		n.times do |i|
		  k = rng.rand(1 << 48)
		  h[k] = i
		  keys << k
		  4.times { h[keys[rng.rand(keys.size)]] } # the measured calls
		end' "$GROW" 2>"$OUTDIR/log-grow.txt"; then
	cat "$OUTDIR/log-grow.txt" >&2
	die "growing hash: cacheshim run failed"
fi
files=("$OUTDIR"/grow.[0-9]*)
"$CS" report --series --format csv "${files[@]}" >"$OUTDIR/grow.series.csv" ||
	die "growing hash: cacheshim report --series failed"
"$CS" report --format html "${files[@]}" >"$OUTDIR/grow.html" ||
	die "growing hash: cacheshim report --format html failed"
# About 16 of the windows, evenly spread; the Hash had about
# first_call / 4 entries then.
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	$col["target"] == "rb_hash_aref" && $col["event"] == "tsc" { row[++n] = $0 }
	END {
		printf "%12s %10s %8s %6s %6s %6s\n", "from call", "Hash size", "calls", "tsc", "p50", "p99"
		step = n > 16 ? int((n + 15) / 16) : 1
		for (i = 1; i <= n; i += step) {
			split(row[i], f, ",")
			printf "%12s %10d %8s %6.0f %6s %6s\n", f[col["first_call"]],
			       f[col["first_call"]] / 4, f[col["calls"]], f[col["mean"]],
			       f[col["p50"]], f[col["p99"]]
		}
		if (n == 0) print "no series recorded (see the log)"
	}' "$OUTDIR/grow.series.csv"
echo "every window: $OUTDIR/grow.series.csv; charts: $OUTDIR/grow.html (any browser)"

echo
for n in $SIZES; do last=$n; done
echo "profiles: $OUTDIR (e.g. $CS report --by callsite $OUTDIR/size-$last.[0-9]*)"
