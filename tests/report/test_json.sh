#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim report --format json: every fixture validates against
# docs/report.schema.json, and the values are the known ones (nested
# views, histograms, size classes, series, escaping).  Needs python3 with
# the jsonschema module (scripts/setup installs python3-jsonschema):
# skipped only when none is found.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

PY=$(schema_python)
if [ -z "$PY" ]; then
	echo "SKIP: no python3 with the jsonschema module (apt-get install python3-jsonschema)"
	exit 77
fi

# json NAME ARGS...: the report of ARGS as JSON in $T/NAME.json.
json()
{
	local name=$1

	shift
	run_cmd "$CS_CMD" report --format json "$@"
	cp "$T/out" "$T/$name.json"
}

json basic "$T/basic.rpt"
expect_status $LINENO 0
json byfn --by function "$T/basic.rpt" "$T/merge_a.rpt" "$T/merge_b.rpt"
expect_status $LINENO 0
json failed "$T/failed.rpt"
expect_status $LINENO 0
json running "$T/running.rpt"
expect_status $LINENO 0
json nested "$T/nested.rpt"
expect_status $LINENO 0
json self --self -s "$T/nested.rpt"
expect_status $LINENO 0
json series "$T/series.rpt"
expect_status $LINENO 0
json classes "$T/classes.rpt"
expect_status $LINENO 0
json keyed "$T/keyed.rpt"
expect_status $LINENO 0

read -r lshift lwin <"$T/series.expected"
"$PY" - "$CS_SRCDIR/docs/report.schema.json" "$T" "$lshift" "$lwin" <<'END' || fail $LINENO "JSON"
import json, sys
import jsonschema

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
T = sys.argv[2]
LSHIFT, LWIN = int(sys.argv[3]), int(sys.argv[4])  # series.expected
bad = 0
docs = {}
for name in ["basic", "byfn", "failed", "running", "nested", "self", "series",
             "classes", "keyed"]:
    with open("%s/%s.json" % (T, name)) as fp:
        docs[name] = d = json.load(fp)
    for e in v.iter_errors(d):
        print("%s.json: %s at %s" % (name, e.message, list(e.absolute_path)))
        bad = 1

def check(what, got, want):
    global bad
    if got != want:
        print("%s: got %r, want %r" % (what, got, want))
        bad = 1

def fn(doc, name):
    return [f for f in doc["functions"] if f["function"] == name][0]

d = docs["basic"]
check("by", d["by"], "callsite")
check("events", [e["name"] for e in d["events"]], ["tsc", "perf::PAGE-FAULTS"])
check("not returned", d["totals"]["not_returned"], 1)
m = fn(d, "malloc")
check("malloc calls", m["calls"], 8)
check("malloc callsites", [c["callsite"] for c in m["callsites"]],
      ["libfoo.so+0x20", "prog+0x1234"])
s = m["events"][0]["stats"]
check("malloc tsc", (s["calls"], s["total"], s["min"], s["max"]), (8, 3150, 10, 1000))
check("malloc hist", m["events"][0]["histogram"],
      [[10, 10, 1], [20, 20, 1], [30, 30, 1], [40, 40, 1], [50, 50, 1], [992, 1007, 3]])
check("callsite stats", m["callsites"][1]["events"][0]["stats"]["mean"], 30)
check("odd name", fn(d, 'odd,"name')["target"], 'odd,"name')
check("no nested views", "exclusive" in m["events"][0], False)

d = docs["byfn"]
check("by function", d["by"], "function")
check("one call site", [c["callsite"] for c in fn(d, "malloc")["callsites"]], ["*"])
check("no data", fn(d, "malloc")["events"][2], {"event": 2, "status": "no data"})

d = docs["failed"]
check("not counted", [e["counted"] for e in d["events"]], [True, False, True])
check("not counted status", fn(d, "fn")["events"][1], {"event": 1, "status": "not counted"})

check("incomplete", docs["running"]["files"][0]["incomplete"], True)

d = docs["nested"]
o = fn(d, "outer")["events"][0]
check("view", d["view"], "inclusive")
check("outer stats", o["stats"]["mean"], 702)
check("outer inclusive", o["inclusive"]["total"], 3510)
check("outer exclusive", (o["exclusive"]["total"], o["exclusive"]["mean"],
                          o["exclusive"]["min"], o["exclusive"]["max"]), (2210, 442, 100, 1119))
check("overhead", d["events"][0]["overhead"], 10)
check("inner plain", "exclusive" in fn(d, "inner")["events"][0], False)

d = docs["self"]
o = fn(d, "outer")["events"][0]
check("self view", (d["view"], d["overhead_subtracted"]), ("exclusive", True))
check("self stats", (o["stats"]["total"], o["stats"]["mean"]), (2130, 426))
check("self inclusive", o["inclusive"]["total"], 3430)
check("self hist", o["histogram"],
      [[100, 101, 1], [110, 111, 1], [400, 407, 1], [496, 503, 1], [1088, 1119, 1]])

d = docs["series"]
lines = [(l["target"], d["events"][l["event"]]["name"], l["tid"], l["shift"], len(l["windows"]))
         for l in d["series"]]
check("series lines", lines,
      [("grow", "tsc", 900, 0, 3), ("grow", "tsc", 901, 1, 2),
       ("grow", "perf::PAGE-FAULTS", 900, 0, 3), ("grow", "perf::PAGE-FAULTS", 901, 1, 2),
       ("long", "tsc", 900, LSHIFT, LWIN), ("long", "perf::PAGE-FAULTS", 900, LSHIFT, LWIN),
       ("lookup", "tsc", None, 2, 5), ("lookup", "perf::PAGE-FAULTS", None, 2, 5)])
w = d["series"][6]["windows"][0]
check("lookup window", w, {"first_call": 1, "last_call": 4, "calls": 8, "mean": 20,
                           "p50": 10, "p99": 30, "min": 10, "max": 30, "first_tsc": 1001})
check("long means", sorted(set(x["mean"] for x in d["series"][4]["windows"])), [100, 200, 300])

d = docs["classes"]
check("classes", [(f["key"], f["key_class"], f["argn"]) for f in d["functions"]],
      [(0, "0", 1), (1, "1", 1), (2, "2-3", 1), (4, "4-7", 1)])
check("class calls", [f["calls"] for f in d["functions"]], [1, 1, 3, 2])
check("keyed", [f["key_class"] for f in docs["keyed"]["functions"]], ["64-127", "128-255"])
check("no series", docs["keyed"]["series"], [])
sys.exit(bad)
END

# Names are escaped: <, > and & never appear raw, so the document can sit
# in an HTML page; bytes that are not UTF-8 become \u00XX.
json escape "$T/escape.rpt"
expect_status $LINENO 0
grep -q '[<>&]' "$T/escape.json" && fail $LINENO "raw <, > or & in the JSON"
"$PY" - "$T/escape.json" <<'END' || fail $LINENO "escaping"
import json, sys
d = json.load(open(sys.argv[1]))
ok = (d["files"][0]["program"] == "/usr/bin/a<b>&\u00ff\u0001c" and
      d["functions"][0]["target"] == '</script><b>x"y\\' and
      d["functions"][0]["callsites"][0]["module"] == "\u00e9t\u00e9")
if not ok:
    print(d["files"][0]["program"], d["functions"][0]["target"],
          d["functions"][0]["callsites"][0]["module"])
sys.exit(0 if ok else 1)
END

# --sort and --top cut and order tables and CSV only: asked with JSON or
# HTML they are refused, never silently ignored.
for f in json html; do
	for o in "--top 3" "--sort calls"; do
		run_cmd "$CS_CMD" report $o -f $f "$T/escape.rpt"
		expect_status $LINENO 2
		expect_err $LINENO "report: --sort and --top order and cut the table and the CSV; --format $f holds every row and event (select with --function, --module)"
	done
done

# Options JSON and HTML do not apply are refused too, never ignored.
for f in json html; do
	run_cmd "$CS_CMD" report --event tsc --binomial -f $f "$T/escape.rpt"
	expect_status $LINENO 2
	expect_err $LINENO "report: --format $f does not apply --event, --binomial"
	[ -s "$T/out" ] && fail $LINENO "--format $f --event: a report"
done

# The shim's set-up time: the thread blocks' sum, per file and in all; a
# thread block of an earlier writer's size has none and is no damage.
json setup "$T/setup.rpt"
expect_status $LINENO 0
expect_no_err $LINENO
"$PY" - "$T/setup.json" <<'END' || fail $LINENO "setup_ticks"
import json, sys
d = json.load(open(sys.argv[1]))
ok = d["files"][0]["setup_ticks"] == 1234 and d["totals"]["setup_ticks"] == 1234
if not ok:
    print(d["files"][0].get("setup_ticks"), d["totals"].get("setup_ticks"))
sys.exit(0 if ok else 1)
END
run_cmd "$CS_CMD" report "$T/setup.rpt"
expect_status $LINENO 0
expect_no_err $LINENO
expect_line $LINENO "$T/out" "set-up:   1234 TSC ticks spent by the shim making call sites and blocks; what ran inside measured calls is taken off their tsc"
run_cmd "$CS_CMD" report "$T/basic.rpt"
grep -q '^set-up:' "$T/out" && fail $LINENO "a set-up line without set-up time"

finish
