#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim report --targets: how each target's calls were caught (entry
# patch, GOT slots, neither), why entry patching was refused, merged over
# processes; two static functions of one name kept apart everywhere; bad
# refusal blocks are damage.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

run_cmd "$CS_CMD" report --targets "$T/targets.rpt"
expect_status $LINENO 0
expect_no_err $LINENO
expect_out $LINENO <<'END'
targets
  function   module       address             how caught                  hidden  calls  reason
  both       libfoo.so.1  libfoo.so.1+0x4000  entry + GOT (1 slot)                    1
  hash_aref  libfoo.so.1  libfoo.so.1+0x1130  entry                                   5
  helper     prog         prog+0x1600         entry                       hidden      2
  helper     prog         prog+0x1700         entry                       hidden      5
  malloc     libfoo.so.1  libfoo.so.1+0x2000  GOT (3 slots)                           4
  st_lookup  libfoo.so.1  libfoo.so.1+0x3000  GOT (entry refused)                     1  a direct branch lands inside the patched bytes (+0x3)
  tiny       prog         prog+0x1500         not caught (entry refused)  hidden      0  shorter than the patch (3 bytes)
  unhooked   ?            0x400070            not caught                              0

8 targets: 4 entry-patched, 1 through GOT only, 2 refused (of which 1 caught by GOT), 1 not caught
END

run_cmd "$CS_CMD" report --targets --format csv "$T/targets.rpt"
expect_status $LINENO 0
expect_no_err $LINENO
expect_out $LINENO <<'END'
function,module,address,how,got_slots,hidden,calls,reason,data_words
both,/nonexistent/libfoo.so.1,libfoo.so.1+0x4000,entry+got,1,0,1,,0
hash_aref,/nonexistent/libfoo.so.1,libfoo.so.1+0x1130,entry,0,0,5,,0
helper,/nonexistent/prog,prog+0x1600,entry,0,1,2,,0
helper,/nonexistent/prog,prog+0x1700,entry,0,1,5,,0
malloc,/nonexistent/libfoo.so.1,libfoo.so.1+0x2000,got,3,0,4,,0
st_lookup,/nonexistent/libfoo.so.1,libfoo.so.1+0x3000,got-refused,2,0,1,a direct branch lands inside the patched bytes (+0x3),0
tiny,/nonexistent/prog,prog+0x1500,refused,0,1,0,shorter than the patch (3 bytes),0
unhooked,,0x400070,none,0,0,0,,0
END

# Two processes loaded at other addresses: one row per function (offsets
# in their modules match), calls added, a repeated reason shown once, a
# new one added (given twice in the second file), the same reason at
# other places each shown.
run_cmd "$CS_CMD" report --targets -f csv "$T/targets.rpt" "$T/targets_b.rpt"
expect_status $LINENO 0
expect_out $LINENO <<'END'
function,module,address,how,got_slots,hidden,calls,reason,data_words
both,/nonexistent/libfoo.so.1,libfoo.so.1+0x4000,entry+got,1,0,1,,0
hash_aref,/nonexistent/libfoo.so.1,libfoo.so.1+0x1130,entry,0,0,10,,0
helper,/nonexistent/prog,prog+0x1600,entry,0,1,4,,0
helper,/nonexistent/prog,prog+0x1700,entry,0,1,10,,0
malloc,/nonexistent/libfoo.so.1,libfoo.so.1+0x2000,got,3,0,8,,0
st_lookup,/nonexistent/libfoo.so.1,libfoo.so.1+0x3000,got-refused,2,0,2,a direct branch lands inside the patched bytes (+0x3),0
tiny,/nonexistent/prog,prog+0x1500,refused,0,1,0,shorter than the patch (3 bytes); loop instruction in the patched bytes (+0x1); loop instruction in the patched bytes (+0x20); loop instruction in the patched bytes (+0x30); loop instruction in the patched bytes (+0x40); loop instruction in the patched bytes (+0x50),0
unhooked,,0x400070,none,0,0,0,,0
END

# --function selects targets by name.
run_cmd "$CS_CMD" report --targets -f csv --function 'h*' "$T/targets.rpt"
expect_status $LINENO 0
expect_out $LINENO <<'END'
function,module,address,how,got_slots,hidden,calls,reason,data_words
hash_aref,/nonexistent/libfoo.so.1,libfoo.so.1+0x1130,entry,0,0,5,,0
helper,/nonexistent/prog,prog+0x1600,entry,0,1,2,,0
helper,/nonexistent/prog,prog+0x1700,entry,0,1,5,,0
END

# The two helpers: in process b both are called from prog+0x2300, which
# must stay two rows (they were one row when rows were keyed by name),
# labelled by where each function is.
run_cmd "$CS_CMD" report -f csv --event tsc --function helper "$T/targets_b.rpt"
expect_status $LINENO 0
csv_pick function,callsite,calls,total
expect_out $LINENO <<'END'
function,callsite,calls,total
helper@prog+0x1600,prog+0x2300,2,22
helper@prog+0x1700,prog+0x2300,5,150
END
run_cmd "$CS_CMD" report -f csv --by function --event tsc --function helper \
	"$T/targets.rpt" "$T/targets_b.rpt"
expect_status $LINENO 0
csv_pick function,calls,total
expect_out $LINENO <<'END'
function,calls,total
helper@prog+0x1600,4,44
helper@prog+0x1700,10,300
END
# A name used once keeps its plain label.
run_cmd "$CS_CMD" report -f csv --by function --event tsc --function malloc "$T/targets.rpt"
csv_pick function,calls
expect_out $LINENO <<'END'
function,calls
malloc,4
END

# So are their series.
run_cmd "$CS_CMD" report --series -f csv "$T/targets_b.rpt"
expect_status $LINENO 0
csv_pick target,event,first_call,mean
grep -v PAGE-FAULTS "$T/out" >"$T/tsc" && mv "$T/tsc" "$T/out"
expect_out $LINENO <<'END'
target,event,first_call,mean
helper@prog+0x1600,tsc,1,60
helper@prog+0x1600,tsc,2,61
helper@prog+0x1600,tsc,3,62
helper@prog+0x1700,tsc,1,70
helper@prog+0x1700,tsc,2,71
helper@prog+0x1700,tsc,3,72
END

# The table says, once at the end, that some targets were refused.
run_cmd "$CS_CMD" report "$T/targets.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '2 targets refused entry patching (cacheshim report --targets shows why)'
expect_line $LINENO "$T/out" '  helper@prog+0x1600  prog+0x2300         prog             2    11       1   10   10   12   12   12     22'
[ "$(tail -n 1 "$T/out")" = '2 targets refused entry patching (cacheshim report --targets shows why)' ] ||
	fail $LINENO "the refused line is not the last one"
# ...and not when none was.
run_cmd "$CS_CMD" report "$T/basic.rpt"
grep -q "refused" "$T/out" && { fail $LINENO "refused line without refused targets"; show "$T/out"; }
run_cmd "$CS_CMD" report --targets "$T/basic.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '3 targets: 0 entry-patched, 3 through GOT only, 0 refused (of which 0 caught by GOT)'

# --targets goes with table, CSV and JSON only.
for bad in "-f html" "--series" "--hist"; do
	# shellcheck disable=SC2086 # two words on purpose
	run_cmd "$CS_CMD" report --targets $bad "$T/targets.rpt"
	expect_status $LINENO 2
	expect_err $LINENO "--targets prints a table, CSV or JSON"
done

# Bad refusal blocks are damage: exit 1, the message, the rest reported.
# LINE FILE MESSAGE
damaged=(
	$LINENO refusal_nul.rpt "reason is not NUL-terminated"
	$LINENO refusal_size.rpt "144 bytes, 136 expected"
	$LINENO refusal_orphan.rpt "refers to target 42, which does not exist"
)
for ((i = 0; i < ${#damaged[@]}; i += 3)); do
	line=${damaged[i]} file=$T/${damaged[i + 1]} msg=${damaged[i + 2]}
	for fmt in table csv json; do
		run_cmd "$CS_CMD" report --targets -f $fmt "$file"
		expect_status "$line" 1
		expect_err "$line" "cacheshim: $file: damaged: refusal block at offset "
		expect_err "$line" "$msg; the report shows what could be read"
		grep -q "st_lookup" "$T/out" || { fail "$line" "no report of what was read"; show "$T/out"; }
	done
done

# JSON: every document has the targets, as the schema says.
PY=
for p in python3 python; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import jsonschema' 2>/dev/null; then
		PY=$p
		break
	fi
done
run_cmd "$CS_CMD" report --targets -f json "$T/targets.rpt" "$T/targets_b.rpt"
expect_status $LINENO 0
if [ -z "$PY" ]; then
	echo "no python3 with jsonschema: the JSON targets are not checked"
else
	"$PY" - "$CS_SRCDIR/docs/report.schema.json" "$T/out" <<'END' || fail $LINENO "JSON"
import json, sys
import jsonschema

v = jsonschema.Draft202012Validator(json.load(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
bad = 0
for e in v.iter_errors(d):
    print("%s at %s" % (e.message, list(e.absolute_path)))
    bad = 1
got = [(t["function"], t["address"], t["how"], t["got_slots"], t["hidden"], t["calls"],
        [(r["why"], r["offset"]) for r in t["refusals"]]) for t in d["targets"]]
want = [
    ("both", "libfoo.so.1+0x4000", "entry+got", 1, False, 1, []),
    ("hash_aref", "libfoo.so.1+0x1130", "entry", 0, False, 10, []),
    ("helper", "prog+0x1600", "entry", 0, True, 4, []),
    ("helper", "prog+0x1700", "entry", 0, True, 10, []),
    ("malloc", "libfoo.so.1+0x2000", "got", 3, False, 8, []),
    ("st_lookup", "libfoo.so.1+0x3000", "got-refused", 2, False, 2,
     [("a direct branch lands inside the patched bytes", 3)]),
    ("tiny", "prog+0x1500", "refused", 0, True, 0,
     [("shorter than the patch (3 bytes)", 0)] +
     [("loop instruction in the patched bytes", o) for o in (1, 0x20, 0x30, 0x40, 0x50)]),
    ("unhooked", "0x400070", "none", 0, False, 0, []),
]
if got != want:
    print("targets: %r" % got)
    bad = 1
if d["targets"][7]["module"] is not None or d["targets"][0]["module"] != "/nonexistent/libfoo.so.1":
    print("modules: %r" % [t["module"] for t in d["targets"]])
    bad = 1
fns = sorted(f["function"] for f in d["functions"])
if "helper@prog+0x1600" not in fns or "helper@prog+0x1700" not in fns:
    print("functions: %r" % fns)
    bad = 1
sys.exit(bad)
END
fi

# Control characters in names, module paths and reasons (ctl.rpt) are
# written as escapes in the table, its columns as wide as the escaped
# text; the CSV quotes them as they are.
run_cmd "$CS_CMD" report --targets "$T/ctl.rpt"
expect_status $LINENO 0
expect_out $LINENO <<'EOF'
targets
  function           module    address        how caught           hidden  calls  reason
  \x1b[31mred\x7f    ?         0x400020       GOT (0 slots)                    1
  new\nline          ?         0x400010       GOT (0 slots)                    1
  ti\x1b]0;x\x07tle  li\tb.so  li\tb.so+0x30  GOT (entry refused)              0  a\rb\x1b[Kc (+0x2)

3 targets: 0 entry-patched, 2 through GOT only, 1 refused (of which 1 caught by GOT)
EOF
expect_no_ctl $LINENO "$T/out"
run_cmd "$CS_CMD" report --targets -f csv "$T/ctl.rpt"
expect_status $LINENO 0
expect_line $LINENO "$T/out" '"new'

finish
