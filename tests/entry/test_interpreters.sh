#!/bin/bash
# SPDX-License-Identifier: MIT
# Real programs with hundreds of their functions patched at the entry
# (default CACHESHIM_HOOK, i.e. both): ruby, python3 and sqlite3 each run a
# small real workload and must give byte-identical stdout, stderr and exit
# status (each workload writes to stderr and exits non-zero on purpose), with at
# least 200 functions caught at their entries and called.  Each runs twice
# under the shim, with a cold and then a warm branch-scan cache
# (XDG_CACHE_HOME in $T): both runs must patch the same functions.
# Skipped (77) only if none of the three programs is installed; a missing
# one alone is reported and skipped.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"
export XDG_CACHE_HOME=$T/cache
MIN=200

cat >"$T/work.rb" <<'RB'
# Hashes, arrays and strings (rb_hash_*, rb_ary_*, rb_str_*).
words = %w[alpha beta gamma delta epsilon zeta eta theta iota kappa]
h = Hash.new(0)
a = []
3000.times do |i|
  w = words[i % words.size] + (i % 37).to_s
  h[w] += i
  a << w.upcase.reverse
end
a.sort!
a.uniq!
s = h.keys.sort.map { |k| "#{k}=#{h[k]}" }.join(",")
puts a.size, a.first(3).inspect, s.size, s.hash.class, h.sum { |_, v| v }
puts [1, 2, 3].zip([4, 5, 6]).to_h.inspect, "x".center(11, "*")
$stderr.puts "ruby done"
exit 3
RB

cat >"$T/work.py" <<'PY'
# Dicts, lists and str (PyDict_*, PyList_*, PyUnicode_*, PyObject_*).
import sys
words = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()
d = {}
lst = []
for i in range(3000):
    w = words[i % len(words)] + str(i % 37)
    d[w] = d.get(w, 0) + i
    lst.append(w.upper()[::-1])
lst = sorted(set(lst))
s = ",".join(f"{k}={d[k]}" for k in sorted(d))
print(len(lst), lst[:3], len(s), sum(d.values()))
print(dict(zip([1, 2, 3], [4, 5, 6])), "x".center(11, "*"), repr({"a": [1, (2, 3)]}))
print("done", file=sys.stderr)
sys.exit(3)
PY

cat >"$T/work.sql" <<'SQL'
-- Tables, an index, a join, grouping, sorting and a bad statement
-- (its error goes to stderr).
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v INTEGER);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000)
INSERT INTO t SELECT i, 'n' || (i % 37), i * 7 % 1000 FROM c;
CREATE INDEX t_name ON t(name);
CREATE TABLE u AS SELECT name, sum(v) AS total, count(*) AS n FROM t GROUP BY name;
SELECT name, total, n FROM u ORDER BY total DESC LIMIT 5;
SELECT count(*), sum(t.v * u.n) FROM t JOIN u USING (name) WHERE t.v > 500;
SELECT group_concat(name, ';') FROM (SELECT DISTINCT name FROM t ORDER BY name LIMIT 8);
UPDATE t SET v = v + 1 WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT count(*), total(v), max(length(name)) FROM t;
SELECT * FROM no_such_table;
SQL

# interp NAME STATUS TARGETS CMD...: the checks above for one program,
# whose workload exits with STATUS.
interp()
{
	local name=$1 want=$2 targets=$3 run n fn

	shift 3
	plain_run $name.plain "$@"
	[ "$status" -eq "$want" ] || { show "$T/$name.plain.err"; fail "$name: the workload exits $status, want $want"; }
	[ -s "$T/$name.plain.out" ] && [ -s "$T/$name.plain.err" ] ||
		fail "$name: the workload must print to stdout and stderr"
	plain_status=$status
	for run in cold warm; do
		# No series: with hundreds of targets the shim would say on stderr
		# that series fill their quarter of the file (not this test's
		# subject), and stderr must stay the program's own.
		status=0
		CACHESHIM_QUIET=1 CACHESHIM_SERIES=0 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=$targets \
			CACHESHIM_OUTPUT=$T/$name.$run.csr LD_PRELOAD=$CS_SHIM "$@" \
			>"$T/$name.$run.out" 2>"$T/$name.$run.err" || status=$?
		[ "$status" -eq "$plain_status" ] ||
			{ show "$T/$name.$run.err"; fail "$name ($run): exit status $status, want $plain_status"; }
		same_output $name.plain $name.$run
		cmp -s "$T/$name.plain.err" "$T/$name.$run.err" || {
			diff -u "$T/$name.plain.err" "$T/$name.$run.err" >&2 || true
			fail "$name ($run): stderr differs"
		}
		targets_csv $name.$run
		report_csv $name.$run --by function
		# Functions caught at their entry, and of them those called.
		csv_select "$T/$name.$run.tgt" "" function,how |
			while IFS=$'\t' read -r fn how; do
				[ "$(how_class "$how")" = entry ] && echo "$fn"
			done | sort -u >"$T/$name.$run.entry"
		csv_select "$T/$name.$run.csv" "event=tsc" function,calls |
			awk -F '\t' '$2 > 0 { print $1 }' | sort -u >"$T/$name.$run.called"
	done
	n=$(wc -l <"$T/$name.cold.entry")
	[ "$n" -ge $MIN ] || { show "$T/$name.cold.tgt"; fail "$name: $n functions entry-patched, want >= $MIN"; }
	cmp -s "$T/$name.cold.entry" "$T/$name.warm.entry" || {
		diff "$T/$name.cold.entry" "$T/$name.warm.entry" >&2 || true
		fail "$name: a warm scan cache patches other functions than a cold one"
	}
	called=$(comm -12 "$T/$name.cold.entry" "$T/$name.cold.called" | wc -l)
	[ "$called" -ge 20 ] || fail "$name: only $called entry-patched functions were called"
	echo "$name: $n functions entry-patched, $called of them called, same output"
}

found=0
if RUBY=$(command -v ruby); then
	found=1
	interp ruby 3 'rb_ary_*,rb_hash_*,rb_str_*,rb_st_*,rb_obj_*,rb_int_*' \
		"$RUBY" --disable=gems "$T/work.rb"
else
	echo "note: no ruby"
fi
# Debian's python3, not a pyenv or venv wrapper script.
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || PY=
if [ -n "$PY" ]; then
	found=1
	interp python3 3 'PyDict_*,PyList_*,PyUnicode_*,_PyObject_*,PyObject_*,PyLong_*' \
		"$PY" -I "$T/work.py"
else
	echo "note: no python3"
fi
if SQLITE=$(command -v sqlite3); then
	found=1
	interp sqlite3 1 'sqlite3_*,sqlite3Vdbe*,sqlite3Btree*,sqlite3Pager*,sqlite3Expr*' \
		"$SQLITE" -batch :memory: ".read $T/work.sql"
else
	echo "note: no sqlite3"
fi
[ $found -eq 1 ] || { echo "SKIP: none of ruby, python3, sqlite3"; exit 77; }
