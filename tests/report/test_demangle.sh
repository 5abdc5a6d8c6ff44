#!/bin/bash
# SPDX-License-Identifier: MIT
# C++ names (prog_cxx.cc, built here with g++): the tables, --hist,
# --series, --targets, --diff and the HTML page show them demangled
# (ns::twice<int>(int), call sites ns::Runner::run(int)+0x39), the event
# tables cutting them at 60 columns; --no-demangle shows them mangled; the CSV always has them
# mangled, and the JSON has both.  What cacheshim puts after a name
# ([argN:KEY], @module+0xOFF, +0xOFF) stays, and a name the file keeps
# only 127 bytes of is shown as it is.  Skipped (77) without g++.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
CXX=${CXX_FOR_TESTS:-g++}
if ! command -v "$CXX" >/dev/null 2>&1; then
	echo "SKIP: no C++ compiler ($CXX)"
	exit 77
fi
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

CS_SHIM=${CS_SHIM:-$CS_BUILDDIR/.libs/libcacheshim.so}
[ -f "$CS_SHIM" ] || { echo "no shim at $CS_SHIM" >&2; exit 99; }
unset CACHESHIM_TARGETS CACHESHIM_EVENTS CACHESHIM_OUTPUT CACHESHIM_LIB LD_PRELOAD
export LC_ALL=C

"$CXX" -O1 -o "$T/prog_cxx" "$CS_SRCDIR/tests/report/prog_cxx.cc" \
	"$CS_SRCDIR/tests/report/prog_cxx_other.cc" 2>"$T/cxx.err" ||
	{ show "$T/cxx.err"; echo "g++ failed" >&2; exit 99; }

LONG=_ZN2ns140a_function_whose_name_is_much_longer_than_the_one_hundred_and_twenty_seven_bytes_of_a_name_that_a_report_file_keeps_and_then_some_more_wordsEi
TARGETS=_ZN2ns5twiceIiEET_S1_,_ZN2ns5twiceIlEET_S1_:arg1,_ZN2ns4sameISt4pairIllEEET_S3_
TARGETS=$TARGETS,_ZNK2ns3Box3getEv,_ZN2ns4workEi,_Znwm,_ZN12_GLOBAL__N_16helperEi,$LONG
status=0
CACHESHIM_LIB=$CS_SHIM "$CS_CMD" run -q -e tsc -o "$T/cxx.csr" -t "$TARGETS" -- "$T/prog_cxx" \
	>"$T/run.out" 2>"$T/run.err" || status=$?
if [ "$status" -ne 0 ] || [ ! -s "$T/cxx.csr" ]; then
	show "$T/run.err"
	fail $LINENO "prog_cxx under the shim: status $status"
	finish
fi

# has LINE FILE TEXT / lacks LINE FILE TEXT: FILE holds TEXT (fixed) or not.
has()
{
	grep -qF -- "$3" "$2" || { fail "$1" "$(basename "$2") lacks '$3'"; show "$2"; }
}
lacks()
{
	! grep -qF -- "$3" "$2" || { fail "$1" "$(basename "$2") has '$3'"; show "$2"; }
}

# The table: demangled functions and call sites, what follows a name kept.
run_cmd "$CS_CMD" report "$T/cxx.csr"
expect_status $LINENO 0
cp "$T/out" "$T/table"
has $LINENO "$T/table" "  int ns::twice<int>(int)  "
has $LINENO "$T/table" "  ns::work(int)  "
has $LINENO "$T/table" "  ns::Box::get() const  "
has $LINENO "$T/table" "  operator new(unsigned long)  "
has $LINENO "$T/table" "  long ns::twice<long>(long)[arg1:64]  "
has $LINENO "$T/table" "  (anonymous namespace)::helper(int)@prog_cxx+0x"
has $LINENO "$T/table" "  ns::Runner::run(int)+0x"
has $LINENO "$T/table" "  other_helper(int)+0x"
lacks $LINENO "$T/table" "_ZN2ns5twice"
lacks $LINENO "$T/table" "_ZN2ns6Runner"
# Cut at 60 columns: a demangled name longer than that (its mangled one
# is 31 bytes), and the name cut at 127 bytes in the file, shown as it is.
D='std::pair<long, long> ns::same<std::pair<long, long> >(std::pair<long, long>)'
has $LINENO "$T/table" "  ${D:0:57}...  "
lacks $LINENO "$T/table" "$D"
has $LINENO "$T/table" "  ${LONG:0:57}...  "
awk 'length($0) > 0 && index($0, "...") { n = index($0, "...") + 2; if (n != 62) bad = 1 }
	END { exit bad }' "$T/table" || fail $LINENO "a name not cut at 60 columns"

# --no-demangle: the names as they are.
run_cmd "$CS_CMD" report --no-demangle "$T/cxx.csr"
expect_status $LINENO 0
has $LINENO "$T/out" "  _ZN2ns5twiceIiEET_S1_  "
has $LINENO "$T/out" "  _ZN2ns5twiceIlEET_S1_[arg1:64]  "
has $LINENO "$T/out" "  _ZN12_GLOBAL__N_16helperEi@prog_cxx+0x"
has $LINENO "$T/out" "  _ZN2ns6Runner3runEi+0x"
lacks $LINENO "$T/out" "ns::"

# The CSV is the same either way: mangled names, for scripts.
run_cmd "$CS_CMD" report --format csv "$T/cxx.csr"
expect_status $LINENO 0
cp "$T/out" "$T/csv"
run_cmd "$CS_CMD" report --format csv --no-demangle "$T/cxx.csr"
cmp -s "$T/csv" "$T/out" || fail $LINENO "the CSV changes with --no-demangle"
has $LINENO "$T/csv" "_ZN2ns5twiceIiEET_S1_,_ZN2ns6Runner3runEi+0x"
has $LINENO "$T/csv" "_Znwm,"
lacks $LINENO "$T/csv" "ns::"

# JSON: the raw names where they were, the demangled ones beside them
# where they differ ('<' and '>' are \u escapes); none with --no-demangle.
run_cmd "$CS_CMD" report --format json "$T/cxx.csr"
expect_status $LINENO 0
cp "$T/out" "$T/json"
has $LINENO "$T/json" '"function":"_ZN2ns5twiceIiEET_S1_","function_demangled":"int ns::twice\u003cint\u003e(int)"'
has $LINENO "$T/json" '"function":"_Znwm","function_demangled":"operator new(unsigned long)"'
has $LINENO "$T/json" '"callsite_demangled":"ns::Runner::run(int)+0x'
has $LINENO "$T/json" '"target":"_ZN2ns4workEi","target_demangled":"ns::work(int)"'
lacks $LINENO "$T/json" "\"function\":\"${LONG:0:127}\",\"function_demangled\""
run_cmd "$CS_CMD" report --format json --no-demangle "$T/cxx.csr"
lacks $LINENO "$T/out" "_demangled"
PY=$(schema_python)
if [ -n "$PY" ]; then
	"$PY" - "$CS_SRCDIR/docs/report.schema.json" "$T/json" <<'END' || fail $LINENO "JSON schema"
import json, sys
import jsonschema

jsonschema.Draft202012Validator(json.load(open(sys.argv[1]))).validate(json.load(open(sys.argv[2])))
END
fi

# The HTML page: its data have the demangled names, and its script
# shows them.
run_cmd "$CS_CMD" report --format html "$T/cxx.csr"
expect_status $LINENO 0
has $LINENO "$T/out" '"function_demangled":"int ns::twice\u003cint\u003e(int)"'
has $LINENO "$T/out" "f.function_demangled || f.function"

# --hist, --series, --targets and --diff tables.
run_cmd "$CS_CMD" report --hist "$T/cxx.csr"
has $LINENO "$T/out" "  ns::work(int): 3 calls"
run_cmd "$CS_CMD" report --series "$T/cxx.csr"
has $LINENO "$T/out" "ns::work(int), tsc: "
run_cmd "$CS_CMD" report --targets "$T/cxx.csr"
has $LINENO "$T/out" "  ns::Box::get() const  "
has $LINENO "$T/out" "  $D  " # whole, as these tables show names
run_cmd "$CS_CMD" report --targets --no-demangle "$T/cxx.csr"
has $LINENO "$T/out" "  _ZNK2ns3Box3getEv  "
run_cmd "$CS_CMD" report --diff "$T/cxx.csr" "$T/cxx.csr"
expect_status $LINENO 0
has $LINENO "$T/out" "  ns::work(int)  "
has $LINENO "$T/out" "  $D  "
run_cmd "$CS_CMD" report --diff "$T/cxx.csr" "$T/cxx.csr" --format csv
has $LINENO "$T/out" "_ZN2ns4workEi,*,*,tsc,"

# --function matches the name as the file has it or demangled.
for glob in 'ns::work*' '_ZN2ns4work*'; do
	run_cmd "$CS_CMD" report --format csv --by function --function "$glob" "$T/cxx.csr"
	expect_status $LINENO 0
	n=$(grep -c '^_ZN2ns4workEi,' "$T/out")
	[ "$n" -eq 1 ] && [ "$(wc -l <"$T/out")" -eq 2 ] ||
		{ fail $LINENO "--function '$glob'"; show "$T/out"; }
done
run_cmd "$CS_CMD" report --targets --function '*::Box::*' "$T/cxx.csr"
has $LINENO "$T/out" "1 target:"
# --sort function: by the name shown.
run_cmd "$CS_CMD" report --by function --sort function "$T/cxx.csr"
expect_status $LINENO 0
last=$(awk '/^  function/ { t = 1; next } t && !NF { exit } t { l = $0 } END { print l }' "$T/out")
case $last in
"  std::pair<long, long> ns::same"*) ;;
*) fail $LINENO "--sort function: last row '$last'" ;;
esac

finish
