#!/bin/bash
# SPDX-License-Identifier: MIT
# Series over time: a per-call cost that changes at a known call index
# gives windows with the right means before and after the change, and ten
# million calls stay within the bound of CS_SERIES_WINDOWS windows.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"
S=$CS_BUILDDIR/tests/series

series_csv()
{
	"$CS_CMD" report --series --format csv "$T/$1.csr" >"$T/$1.series" 2>"$T/$1.serr" ||
		{ show "$T/$1.serr"; fail "cacheshim report --series failed"; }
}

# 4096 calls at 1 page, then 4096 at 3: with W windows, windows hold
# 8192 / W calls each (a power of two dividing 4096), so no window mixes.
M=4096
shim_run phase perf::PAGE-FAULTS cs_touch_pages "$S/prog_phase" $M 1 3
[ "$status" -eq 0 ] || { show "$T/phase.err"; fail "prog_phase exits $status"; }
series_csv phase
csv_select "$T/phase.series" "target=cs_touch_pages,event=perf::PAGE-FAULTS" \
	first_call,last_call,calls,mean,p50,p99 >"$T/phase.rows"
awk -F'\t' -v m=$M '
	{ want = ($2 <= m) ? 1 : 3
	  if ($1 <= m && $2 > m) { print "window " $1 "-" $2 " mixes"; bad = 1 }
	  if ($4 != want || $5 != want || $6 != want) { print "window " $1 "-" $2 ": " $4 " " $5 " " $6 ", want " want; bad = 1 }
	  calls += $3; n++ }
	END { if (calls != 2 * m) { print calls " calls, want " 2 * m; bad = 1 }
	      if (n < 2) { print n " windows"; bad = 1 }
	      exit bad }' "$T/phase.rows" >"$T/phase.bad" ||
	{ show "$T/phase.bad"; fail "series windows before/after the change"; }
echo "phase: $(wc -l <"$T/phase.rows") windows, means 1 then 3"

# Ten million calls of a tiny function: at most CS_SERIES_WINDOWS windows
# (read from a short run's maximum), all calls accounted for, file bounded.
N=10000000
shim_run many tsc cs_inner "$S/prog_many" $N
[ "$status" -eq 0 ] || { show "$T/many.err"; fail "prog_many exits $status"; }
series_csv many
csv_select "$T/many.series" "target=cs_inner,event=tsc" calls >"$T/many.rows"
windows=$(wc -l <"$T/many.rows")
calls=$(awk '{ s += $1 } END { print s + 0 }' "$T/many.rows")
[ "$calls" = $N ] || fail "series holds $calls calls, want $N"
[ "$windows" -le 256 ] && [ "$windows" -ge 128 ] ||
	fail "$windows windows for $N calls, want 128..256"
size=$(stat -c %s "$T/many.csr")
[ "$size" -lt $((8 << 20)) ] || fail "report file is $size bytes"
echo "many: $N calls in $windows windows, file $size bytes"
