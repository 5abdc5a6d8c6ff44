#!/bin/bash
# SPDX-License-Identifier: MIT
# End to end: --subtract-overhead on a real program under the real shim.
# tests/preload/prog_sites calls cs_inner, a nearly empty library
# function, through the PLT; with the calibration overhead taken off its
# page faults are exactly 0 and its tsc median is small beside the raw
# one (a ratio, not a time: robust on a loaded machine), and the CSV
# shows the raw mean and the overhead taken off per call.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

CS_SHIM=${CS_SHIM:-$CS_BUILDDIR/.libs/libcacheshim.so}
PROG=$CS_BUILDDIR/tests/preload/prog_sites
[ -f "$CS_SHIM" ] || { echo "no shim at $CS_SHIM" >&2; exit 99; }
[ -x "$PROG" ] || { echo "$PROG is not built" >&2; exit 99; }
unset CACHESHIM_TARGETS CACHESHIM_EVENTS CACHESHIM_OUTPUT CACHESHIM_WINDOW \
	CACHESHIM_CAPACITY_MB CACHESHIM_SESSION CACHESHIM_QUIET CACHESHIM_LIB \
	CACHESHIM_SERIES LD_PRELOAD
export LC_ALL=C

status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc,perf::PAGE-FAULTS CACHESHIM_TARGETS=cs_inner \
	CACHESHIM_OUTPUT="$T/sites.csr" LD_PRELOAD=$CS_SHIM "$PROG" 20000 0 \
	>"$T/sites.out" 2>"$T/sites.err" || status=$?
if [ "$status" -ne 0 ] || [ ! -s "$T/sites.csr" ]; then
	fail $LINENO "prog_sites under the shim: status $status"
	show "$T/sites.err"
	finish
fi

# field CSV EVENT COLUMN: the value of COLUMN (by header name) in the
# cs_inner line of EVENT in CSV.
field()
{
	awk -F, -v ev="$2" -v col="$3" '
	NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$1 == "cs_inner" && $4 == ev { print $(c[col]); exit }' "$1"
}

run_cmd "$CS_CMD" report --format csv "$T/sites.csr"
expect_status $LINENO 0
cp "$T/out" "$T/raw.csv"
run_cmd "$CS_CMD" report --subtract-overhead --format csv "$T/sites.csr"
expect_status $LINENO 0
cp "$T/out" "$T/corr.csv"

# The default CSV keeps its columns; --subtract-overhead adds two at the end.
head -1 "$T/raw.csv" | grep -q ',raw_mean' && fail $LINENO "raw_mean without --subtract-overhead"
head -1 "$T/corr.csv" | grep -q ',raw_mean,overhead$' ||
	fail $LINENO "no raw_mean,overhead columns at the end: $(head -1 "$T/corr.csv")"

# Page faults: corrected exactly 0, the overhead taken off reported.
for col in min p50 max mean; do
	v=$(field "$T/corr.csv" perf::PAGE-FAULTS $col)
	[ "$v" = 0 ] || fail $LINENO "corrected page faults $col is '$v', not 0"
done
v=$(field "$T/corr.csv" perf::PAGE-FAULTS overhead)
[ -n "$v" ] || fail $LINENO "no page-fault overhead reported"

# tsc: the corrected median small beside the raw one, never below 0; the
# raw mean and the overhead as reported.
raw=$(field "$T/raw.csv" tsc p50)
corr=$(field "$T/corr.csv" tsc p50)
over=$(field "$T/corr.csv" tsc overhead)
rawmean=$(field "$T/corr.csv" tsc raw_mean)
mean=$(field "$T/raw.csv" tsc mean)
case "$raw$corr" in
*[!0-9]* | "") fail $LINENO "tsc p50 not numbers: raw '$raw', corrected '$corr'" ;;
*)
	[ "$raw" -gt 0 ] || fail $LINENO "raw tsc p50 is $raw"
	[ "$corr" -ge 0 ] && [ $((corr * 2)) -le "$raw" ] ||
		fail $LINENO "corrected tsc p50 $corr is not at most half the raw $raw"
	;;
esac
awk -v o="$over" 'BEGIN { exit !(o + 0 > 0) }' ||
	fail $LINENO "tsc overhead '$over' not reported"
[ "$rawmean" = "$mean" ] || fail $LINENO "raw_mean '$rawmean' is not the plain mean '$mean'"
awk -v m="$(field "$T/corr.csv" tsc mean)" -v min="$(field "$T/corr.csv" tsc min)" \
	'BEGIN { exit !(m >= 0 && min >= 0) }' || fail $LINENO "a corrected tsc value below 0"

# The table: the overhead line says it was subtracted, raw_mean beside mean.
run_cmd "$CS_CMD" report --subtract-overhead "$T/sites.csr"
expect_status $LINENO 0
grep -q '^overhead: tsc .*subtracted below)$' "$T/out" ||
	fail $LINENO "no overhead line in the table"
grep -q ' mean  raw_mean ' "$T/out" || fail $LINENO "no raw_mean column in the table"

[ "$nfail" -eq 0 ] || { show "$T/raw.csv"; show "$T/corr.csv"; }
finish
