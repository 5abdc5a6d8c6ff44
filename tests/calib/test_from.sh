# SPDX-License-Identifier: MIT
# cacheshim calibrate --from on a report file written as a machine with a
# PMU would (tests/calib/mkcalib): every verdict the development VM cannot
# produce — OK on hardware counts, SCALED with its factor, NOT COUNTING,
# NOISY, UNSUPPORTED without a number — in the table and in CSV, for the
# level(F) and dtlb(K) kernels' cache and TLB events too.
. "$(dirname "$0")/../preload/run-test.sh"

"$CS_BUILDDIR/tests/calib/mkcalib" "$T/fx.csr" || fail "mkcalib failed"
"$CS_CMD" calibrate --from "$T/fx.csr" --csv >"$T/fx.csv" 2>"$T/fx.err" ||
	{ show "$T/fx.err"; fail "calibrate --from failed"; }

# want KERNEL ARG EVENT EXPECTED MEDIAN VERDICT
want()
{
	local row

	row=$(csv_one fx "kernel=$1,arg=$2,event=$3" expected,median,verdict)
	[ "$row" = "$(printf '%s\t%s\t%s' "$4" "$5" "$6")" ] ||
		{ show "$T/fx.csv"; fail "$1 $2 $3: got '$row', want '$4 $5 $6'"; }
}
want loop 10000 INST_RETIRED:ANY_P 20000 20010 OK
want loop 10000 BR_MISP_RETIRED:ALL_BRANCHES 0 1 OK
want branch const BR_MISP_RETIRED:ALL_BRANCHES 0 0 OK
want branch random BR_MISP_RETIRED:ALL_BRANCHES 2048 4096 "SCALED x2.00"
want fault 64 perf::PAGE-FAULTS 64 64 OK
want fault 64 perf::MINOR-FAULTS 64 0 "NOT COUNTING"
want dtlb 4K perf::PAGE-FAULTS 0 24 NOISY
want cold 64 INST_RETIRED:ANY_P "" 200 "NO EXPECTATION"
# An event that did not open: never a number, whatever is expected.
want loop 10000 perf::BRANCHES 10000 "" UNSUPPORTED
want null "" perf::BRANCHES "" "" UNSUPPORTED
[ "$(csv_select "$T/fx.csv" "event=perf::BRANCHES" median | grep -c .)" -eq 0 ] ||
	fail "perf::BRANCHES has a number"
v=$(csv_one fx "kernel=ratio:cold/resident" median,verdict)
[ "$v" = "$(printf '40.00\tOK')" ] || fail "cold/resident: $v"
# No geometry with --from: the level check cannot be made.
v=$(csv_one fx "kernel=ratio:level past LLC/below LLC" verdict)
[ "$v" = UNSUPPORTED ] || fail "level check: $v"

# Preset formulas (Skylake's rows): cold(64) is about 64 misses at every
# level, resident(64) none; L2 counting twice as many is SCALED and breaks
# L1D >= L2 >= L3.
want cold 64 L1D-misses 64 64.00 OK
want cold 64 L2-misses 64 128.00 "SCALED x2.00"
want cold 64 L3-misses 64 62.00 OK
want resident 64 L1D-misses 0 0.00 OK
v=$(csv_one fx "kernel=check:misses L1D>=L2>=L3 at cold" verdict)
[ "$v" = FAIL ] || { show "$T/fx.csv"; fail "order check with L2 > L1D: $v"; }
"$CS_BUILDDIR/tests/calib/mkcalib" "$T/ok.csr" ordered || fail "mkcalib ordered failed"
"$CS_CMD" calibrate --from "$T/ok.csr" --csv >"$T/ok.csv" 2>"$T/ok.err" ||
	{ show "$T/ok.err"; fail "calibrate --from ordered failed"; }
v=$(csv_one ok "kernel=check:misses L1D>=L2>=L3 at cold" verdict)
[ "$v" = OK ] || { show "$T/ok.csv"; fail "order check, ordered: $v"; }
want_ok=$(csv_one ok "kernel=cold,arg=64,event=L2-misses" verdict)
[ "$want_ok" = OK ] || fail "ordered L2-misses: $want_ok"
v=$(csv_one ok "kernel=level,arg=64M,event=L2-misses" verdict)
[ "$v" = OK ] || { show "$T/ok.csv"; fail "ordered level 64M L2-misses: $v"; }

# Raw preset events whose meaning is known: Intel's retired loads that
# missed a level count like the formulas (cold(64): about 64).
want cold 64 MEM_LOAD_RETIRED:L1_MISS 64 64 OK
want cold 64 MEM_LOAD_RETIRED:L3_MISS 64 62 OK
want resident 64 MEM_LOAD_RETIRED:L3_MISS 0 0 OK

# level(F), footprints 16K (L1/2), 256K, 4M (between levels), 64M (past
# the last): 4096 misses (one per load, OK from 50% to 110%) at the
# levels F is past, 0 (OK up to 205, 5% of the loads) at the others.
want level 16K L1D-misses 0 0.00 OK
want level 16K MEM_LOAD_RETIRED:L3_MISS 0 0 OK
want level 256K L1D-misses 4096 3500.00 OK
want level 256K MEM_LOAD_RETIRED:L1_MISS 4096 3500 OK
want level 256K L2-misses 0 80.00 OK
want level 256K L3-misses 0 0.00 OK
want level 4M L1D-misses 4096 4096.00 OK
want level 4M L2-misses 4096 8192.00 "SCALED x2.00"
want level 4M MEM_LOAD_RETIRED:L2_MISS 4096 8192 "SCALED x2.00"
want level 4M L3-misses 0 150.00 OK
want level 64M L1D-misses 4096 4100.00 OK
want level 64M L3-misses 4096 4000.00 OK
want level 64M MEM_LOAD_RETIRED:L3_MISS 4096 4000 OK
# dtlb(4096): about 4096 walks; a DTLB event that stays 0 is NOT COUNTING.
want dtlb 4K DTLB_LOAD_MISSES:WALK_COMPLETED 4096 4000 OK
want dtlb 4K perf::DTLB-LOAD-MISSES 4096 0 "NOT COUNTING"
# No expectation where none is known.
want dtlb 4K L1D-misses "" 0.00 "NO EXPECTATION"
want level 4M DTLB_LOAD_MISSES:WALK_COMPLETED "" 0 "NO EXPECTATION"

# The table says the same.
"$CS_CMD" calibrate --from "$T/fx.csr" >"$T/fx.txt" 2>&1 || fail "table failed"
grep -Eq '^branch +random +BR_MISP_RETIRED:ALL_BRANCHES +2048 +4096 +4096 +4096 +SCALED x2.00$' \
	"$T/fx.txt" || { show "$T/fx.txt"; fail "table: no SCALED row"; }
grep -Eq '^level +4M +L2-misses +4096 +8192.0 +\(mean\) +SCALED x2.00$' "$T/fx.txt" ||
	{ show "$T/fx.txt"; fail "table: no level SCALED row"; }
grep -Eq '^dtlb +4K +perf::DTLB-LOAD-MISSES +4096 +0 +0 +0 +NOT COUNTING$' "$T/fx.txt" ||
	{ show "$T/fx.txt"; fail "table: no dtlb NOT COUNTING row"; }
grep -Eq '^loop +10000 +perf::BRANCHES +10000 +- +- +- +UNSUPPORTED$' "$T/fx.txt" ||
	{ show "$T/fx.txt"; fail "table: no UNSUPPORTED row"; }
"$CS_CMD" calibrate --from "$T/missing.csr" >/dev/null 2>&1 && fail "--from a missing file worked"

# from_status WANT ARGS...: calibrate --from ARGS exits WANT with stdout
# in $T/o.txt, stderr in $T/o.err.
from_status()
{
	local want=$1 st=0

	shift
	"$CS_CMD" calibrate "$@" >"$T/o.txt" 2>"$T/o.err" || st=$?
	[ $st -eq "$want" ] || { show "$T/o.err"; fail "calibrate $*: exit $st, want $want"; }
}

# A report file that holds no kernel (cacheshim run's): said, exit 1 (it
# printed an empty table, exit 0).
"$CS_BUILDDIR/tests/report/mkfixture" "$T" || fail "mkfixture failed"
from_status 1 --from "$T/basic.rpt"
[ "$(cat "$T/o.err")" = "cacheshim: calibrate: --from $T/basic.rpt: no calibration calls (cs_calib_*) in the file: not one kept with calibrate -o" ] ||
	{ show "$T/o.err"; fail "--from a run's file: wrong message"; }
[ ! -s "$T/o.txt" ] || { show "$T/o.txt"; fail "--from a run's file printed a table"; }

# -e picks the rows of the events and formulas named (it printed them
# all); the tsc checks only when tsc is among them.
from_status 0 --from "$T/fx.csr" --csv -e 'perf::page-faults, L2-misses'
cut -d, -f3 "$T/o.txt" | sort -u >"$T/ev.txt"
[ "$(cat "$T/ev.txt")" = "$(printf 'L2-misses\nevent\nperf::PAGE-FAULTS')" ] ||
	{ show "$T/ev.txt"; fail "--from -e: rows of other events"; }
grep -q '^ratio:' "$T/o.txt" && fail "--from -e without tsc: tsc ratios printed"
want_row=$(grep '^fault,64,perf::PAGE-FAULTS,' "$T/o.txt")
[ "$want_row" = "fault,64,perf::PAGE-FAULTS,64,64,64,64,OK" ] || fail "--from -e: fault row '$want_row'"
from_status 0 --from "$T/fx.csr" --csv -e tsc
[ "$(cut -d, -f3 "$T/o.txt" | sort -u | tr '\n' ' ')" = "event tsc " ] ||
	{ show "$T/o.txt"; fail "--from -e tsc: other rows"; }
grep -q '^ratio:cold/resident,,tsc,>=5,40.00,,,OK$' "$T/o.txt" || fail "--from -e tsc: no ratio"
# A name the file did not record, and options that measure: exit 2.
from_status 2 --from "$T/fx.csr" -e tsc,nosuch
[ "$(cat "$T/o.err")" = "cacheshim: calibrate: --from $T/fx.csr: -e 'nosuch': no such event or formula in the file" ] ||
	{ show "$T/o.err"; fail "--from -e nosuch: wrong message"; }
from_status 2 --from "$T/fx.csr" --html "$T/x.html"
[ "$(cat "$T/o.err")" = "cacheshim: calibrate: --from does not apply --html (nothing is measured)" ] ||
	{ show "$T/o.err"; fail "--from --html: wrong message"; }
[ ! -e "$T/x.html" ] || fail "--from --html wrote a file"
from_status 2 --from "$T/fx.csr" -o "$T/k.csr"
grep -qxF "cacheshim: calibrate: --from does not apply -o (nothing is measured)" "$T/o.err" ||
	fail "--from -o: wrong message"
exit 0
