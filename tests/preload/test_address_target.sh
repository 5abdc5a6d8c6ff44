#!/bin/bash
# SPDX-License-Identifier: MIT
# Address targets (issue 8, point 1): MODULE+0xOFFSET names a function of a
# module by its offset, accepted only at a function start listed in the
# module's .eh_frame_hdr.  cs_touch_pages named by its offset in
# libcstarget.so is counted exactly (calls, page faults); an offset one
# byte further is refused with one line and wraps nothing; a malformed
# offset is a settings error.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

lib=$CS_TESTLIBS/libcstarget.so
command -v nm >/dev/null || { echo "nm not found"; exit 77; }
off=$(nm -D --defined-only "$lib" | awk '$3 == "cs_touch_pages" { print $1 }')
[ -n "$off" ] || fail "cs_touch_pages not in $lib's dynamic symbols"
off=$(printf '0x%x' "$((16#$off))")
N=40 K=3

plain_run plain "$P/prog_pages" $K $N
shim_run addr perf::PAGE-FAULTS,tsc "libcstarget.so+$off" "$P/prog_pages" $K $N
[ "$status" -eq 0 ] || { show "$T/addr.err"; fail "exit status $status under the shim"; }
same_output plain addr
report_csv addr
row=$(csv_one addr "function=libcstarget.so+$off,event=perf::PAGE-FAULTS" calls,total,min,max)
IFS=$'\t' read -r calls total min max <<<"$row"
[ "$calls/$total/$min/$max" = "$N/$((N * K))/$K/$K" ] ||
	fail "libcstarget.so+$off: calls/total/min/max $calls/$total/$min/$max, want $N/$((N * K))/$K/$K"
"$CS_CMD" report --targets --format csv "$T/addr.csr" >"$T/addr.targets"
grep -q "^libcstarget.so+$off,.*,entry,0,1,$N," "$T/addr.targets" || {
	show "$T/addr.targets"
	fail "libcstarget.so+$off is not listed as entry-patched, hidden, with $N calls"
}
echo "libcstarget.so+$off: $N calls, $K page faults each, through its patched entry"

bad=$(printf '0x%x' $((off + 1)))
shim_run bad tsc "libcstarget.so+$bad" "$P/prog_pages" $K $N
[ "$status" -eq 0 ] || fail "exit status $status with a bad address target"
same_output plain bad
grep -q "^cacheshim: target 'libcstarget.so+$bad' is not a function start listed in libcstarget.so's .eh_frame_hdr; not wrapped$" \
	"$T/bad.err" || { show "$T/bad.err"; fail "no refusal line for +$bad"; }
"$CS_CMD" report --targets --format csv "$T/bad.csr" >"$T/bad.targets"
[ "$(wc -l <"$T/bad.targets")" = 1 ] || { show "$T/bad.targets"; fail "+$bad made a target"; }
echo "libcstarget.so+$bad: refused (not a function start)"

shim_run malformed tsc "libcstarget.so+0xzz,cs_touch_pages" "$P/prog_pages" $K $N
[ "$status" -eq 0 ] || fail "exit status $status with a malformed address target"
grep -q "^cacheshim: CACHESHIM_TARGETS: 'libcstarget.so+0xzz' is neither a function name nor MODULE+0xOFFSET; ignored$" \
	"$T/malformed.err" || { show "$T/malformed.err"; fail "no line for the malformed target"; }
echo "libcstarget.so+0xzz: a settings error, the other target still wrapped"
