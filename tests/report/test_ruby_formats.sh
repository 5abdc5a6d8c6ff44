#!/bin/bash
# SPDX-License-Identifier: MIT
# End to end: one profiled run of the Ruby example (Hash#[] on a 4096-entry
# Hash) feeds every output of `cacheshim report`: table, CSV, JSON (valid
# against docs/report.schema.json when python3-jsonschema is there), the
# self-contained HTML page, histograms, series, call sites, nested (self)
# values, cold/warm, binomial and derived columns, and a diff of two runs.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

command -v ruby >/dev/null 2>&1 || { echo "SKIP: no ruby"; exit 77; }
RB=$CS_SRCDIR/examples/ruby-hash-lookup/hash_lookup.rb
L=3000

for run in a b; do
	plain_run plain$run ruby --disable-gems "$RB" --size 4096 --lookups $L
	shim_run $run tsc,perf::PAGE-FAULTS rb_hash_aref,rb_st_lookup \
		ruby --disable-gems "$RB" --size 4096 --lookups $L
	[ "$status" -eq 0 ] || { show "$T/$run.err"; fail "ruby exits $status"; }
done
# The printed timing differs from run to run: compare all but it.
for run in a b; do
	sed 's/ *[0-9.]* ns per lookup.*//' "$T/plain$run.out" >"$T/plain$run.cmp"
	sed 's/ *[0-9.]* ns per lookup.*//' "$T/$run.out" >"$T/$run.cmp"
	cmp -s "$T/plain$run.cmp" "$T/$run.cmp" || fail "ruby output differs under the shim"
done

rep()
{
	local name=$1

	shift
	"$CS_CMD" report "$@" >"$T/$name" 2>"$T/$name.err" ||
		{ show "$T/$name.err"; fail "cacheshim report $* failed"; }
	[ -s "$T/$name" ] || fail "cacheshim report $* printed nothing"
}

# CSV: every lookup is one rb_hash_aref call; the same count in both runs.
report_csv a --by function
calls=$(csv_one a "function=rb_hash_aref,event=tsc" calls)
[ "$calls" -ge $L ] || fail "rb_hash_aref: $calls calls for $L lookups"
report_csv b --by function
[ "$(csv_one b "function=rb_hash_aref,event=tsc" calls)" = "$calls" ] ||
	fail "the two runs differ in rb_hash_aref calls"

rep table "$T/a.csr"
grep -q 'rb_hash_aref' "$T/table" || fail "table lacks rb_hash_aref"
rep callsites --by callsite "$T/a.csr"
grep -q 'rb_st_lookup' "$T/callsites" || fail "call-site table lacks rb_st_lookup"
rep hist --hist --function rb_st_lookup "$T/a.csr"
grep -q 'rb_st_lookup' "$T/hist" || fail "histogram lacks rb_st_lookup"
rep series --series --format csv "$T/a.csr"
grep -q '^rb_hash_aref,tsc,' "$T/series" || fail "series lack rb_hash_aref"
rep self --self --format csv --by function "$T/a.csr"
rep views --format csv --by function --cold --binomial \
	--derive 'pf_per_kcycle={perf::PAGE-FAULTS}*1000/{tsc}' "$T/a.csr"
head -1 "$T/views" | grep -q 'bin_p' || fail "no binomial columns"
head -1 "$T/views" | grep -q 'pf_per_kcycle' || fail "no derived column"
rep diff --diff "$T/a.csr" "$T/b.csr"
grep -q 'rb_hash_aref' "$T/diff" || fail "diff lacks rb_hash_aref"

rep json --format json "$T/a.csr"
PY=
for p in /usr/bin/python3 python3; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import jsonschema' 2>/dev/null; then
		PY=$p
		break
	fi
done
if [ -n "$PY" ]; then
	"$PY" - "$CS_SRCDIR/docs/report.schema.json" "$T/json" <<'PYEOF' ||
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
doc = json.load(open(sys.argv[2]))
jsonschema.validate(doc, schema)
assert "rb_hash_aref" in json.dumps(doc)
PYEOF
		fail "JSON output does not validate"
else
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/json" ||
		fail "JSON output does not parse"
	echo "note: no jsonschema module: JSON parsed, not validated"
fi

rep html --format html "$T/a.csr"
grep -q 'rb_hash_aref' "$T/html" || fail "HTML lacks rb_hash_aref"
if grep -Eq '(src|href)="(https?:)?//' "$T/html"; then
	fail "HTML refers to something outside the file"
fi
echo "ruby: $calls rb_hash_aref calls; table, csv, json, html, hist, series, self, views, diff"
