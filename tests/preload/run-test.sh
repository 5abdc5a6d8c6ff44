# SPDX-License-Identifier: MIT
# Sourced by tests/preload/test_*.sh: settings, a temporary directory and
# helpers to run a program under the shim and read the report as CSV.
#
# make check exports CS_SHIM, CS_CMD, CS_BUILDDIR, CS_SRCDIR, CS_TESTLIBS
# (tests/Makefile.inc).  Run by hand from the build directory, as in
# `bash tests/preload/test_abi.sh`, the defaults below assume an in-tree
# build.

CS_BUILDDIR=${CS_BUILDDIR:-$PWD}
CS_SRCDIR=${CS_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
CS_SHIM=${CS_SHIM:-$CS_BUILDDIR/.libs/libcacheshim.so}
CS_CMD=${CS_CMD:-$CS_BUILDDIR/cacheshim}
CS_TESTLIBS=${CS_TESTLIBS:-$CS_BUILDDIR/tests/preload/.libs}
export CS_BUILDDIR CS_SRCDIR CS_SHIM CS_CMD CS_TESTLIBS

# The test programs (real executables with an rpath to CS_TESTLIBS).
P=$CS_BUILDDIR/tests/preload

# Nothing of the caller's environment may change what the shim does.
unset CACHESHIM_TARGETS CACHESHIM_EVENTS CACHESHIM_OUTPUT CACHESHIM_WINDOW \
	CACHESHIM_CAPACITY_MB CACHESHIM_SESSION CACHESHIM_QUIET CACHESHIM_LIB \
	LD_PRELOAD
export LC_ALL=C

T=$(mktemp -d "${TMPDIR:-/tmp}/cs-$(basename "$0" .sh).XXXXXX")
trap 'rm -rf "$T"' EXIT

# fail MESSAGE...: reports the failure and ends the test.
fail()
{
	echo "FAIL: $*" >&2
	exit 1
}

# show FILE: prints a file of the test into the log, marked.
show()
{
	echo "---- $(basename "$1") ----" >&2
	cat "$1" >&2 || true
	echo "----" >&2
}

[ -x "$CS_SHIM" ] || [ -f "$CS_SHIM" ] || fail "no shim at $CS_SHIM"

# shim_run NAME EVENTS TARGETS CMD...: runs CMD with the shim preloaded
# (the variables set directly, not through the launcher), quietly, the
# report in $T/NAME.csr, stdout in $T/NAME.out, stderr in $T/NAME.err.
# Sets $status to CMD's exit status.
shim_run()
{
	local name=$1 events=$2 targets=$3

	shift 3
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=$events \
		CACHESHIM_TARGETS=$targets CACHESHIM_OUTPUT=$T/$name.csr \
		LD_PRELOAD=$CS_SHIM "$@" >"$T/$name.out" 2>"$T/$name.err" ||
		status=$?
}

# plain_run NAME CMD...: the same without the shim.
plain_run()
{
	local name=$1

	shift
	status=0
	"$@" >"$T/$name.out" 2>"$T/$name.err" || status=$?
}

# same_output A B: stdout of runs A and B must be identical.
same_output()
{
	if ! cmp -s "$T/$1.out" "$T/$2.out"; then
		diff -u "$T/$1.out" "$T/$2.out" >&2 || true
		show "$T/$2.err"
		fail "stdout of '$2' differs from '$1'"
	fi
}

# no_shim_lines NAME: a run that should have gone smoothly printed no
# cacheshim: line (the runs are quiet, so only errors would print).
no_shim_lines()
{
	if grep -q '^cacheshim:' "$T/$1.err"; then
		show "$T/$1.err"
		fail "'$1' printed cacheshim: lines"
	fi
}

# report_csv NAME [ARGS...]: the report of run NAME as CSV in $T/NAME.csv
# (more ARGS, e.g. --by function, go to `cacheshim report`).
report_csv()
{
	local name=$1

	shift
	if ! "$CS_CMD" report --format csv "$@" "$T/$name.csr" \
		>"$T/$name.csv" 2>"$T/$name.rerr"; then
		show "$T/$name.rerr"
		fail "cacheshim report $* $T/$name.csr failed"
	fi
}

# csv_select FILE FILTER COLUMNS: prints, tab-separated, the COLUMNS
# (comma-separated header names) of every row of the CSV FILE matching
# FILTER (comma-separated name=value, all must hold; empty: every row).
# Quoted fields ("a,b", "say ""x""") are understood.
csv_select()
{
	awk -v filter="$2" -v cols="$3" '
	function split_csv(line, f,    n, i, c, field, inq) {
		n = 0; field = ""; inq = 0
		sub(/\r$/, "", line)
		for (i = 1; i <= length(line); i++) {
			c = substr(line, i, 1)
			if (inq) {
				if (c == "\"") {
					if (substr(line, i + 1, 1) == "\"") {
						field = field "\""; i++
					} else {
						inq = 0
					}
				} else {
					field = field c
				}
			} else if (c == "\"") {
				inq = 1
			} else if (c == ",") {
				f[++n] = field; field = ""
			} else {
				field = field c
			}
		}
		f[++n] = field
		return n
	}
	NR == 1 {
		nh = split_csv($0, h)
		for (i = 1; i <= nh; i++)
			col[h[i]] = i
		nf = filter == "" ? 0 : split(filter, fl, ",")
		for (i = 1; i <= nf; i++) {
			eq = index(fl[i], "=")
			fname[i] = substr(fl[i], 1, eq - 1)
			fval[i] = substr(fl[i], eq + 1)
			if (!(fname[i] in col)) {
				print "csv_select: no column " fname[i] > "/dev/stderr"
				exit 2
			}
		}
		nc = split(cols, cl, ",")
		for (i = 1; i <= nc; i++) {
			if (!(cl[i] in col)) {
				print "csv_select: no column " cl[i] > "/dev/stderr"
				exit 2
			}
		}
		next
	}
	{
		split_csv($0, f)
		for (i = 1; i <= nf; i++) {
			v = f[col[fname[i]]]
			# NAME@*: NAME, or NAME@WHERE (a function of a name other
			# modules have too is labelled with its module).
			if (fval[i] ~ /@\*$/) {
				b = substr(fval[i], 1, length(fval[i]) - 2)
				if (v != b && index(v, b "@") != 1)
					next
			} else if (v != fval[i])
				next
		}
		out = ""
		for (i = 1; i <= nc; i++)
			out = out (i > 1 ? "\t" : "") f[col[cl[i]]]
		print out
	}' "$1"
}

# csv_one NAME FILTER COLUMNS: like csv_select on $T/NAME.csv, but exactly
# one row must match.
csv_one()
{
	local rows

	rows=$(csv_select "$T/$1.csv" "$2" "$3") ||
		fail "cannot read $T/$1.csv"
	if [ -z "$rows" ] || [ "$(printf '%s\n' "$rows" | wc -l)" -ne 1 ]; then
		show "$T/$1.csv"
		fail "'$1': want exactly one CSV row with $2"
	fi
	printf '%s\n' "$rows"
}

# num_eq A B: A and B are the same number (the report may print "3" or
# "3.000" for a mean).
num_eq()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a !~ /^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$/) exit 1
		exit !(a + 0 == b + 0)
	}'
}

# is_num A: A is a number.
is_num()
{
	num_eq "$1" "$1"
}

# need_cxx: CXX is the C++ compiler of the tests (CXX_FOR_TESTS, else g++),
# or the test is skipped.
need_cxx()
{
	CXX=${CXX_FOR_TESTS:-g++}
	if ! command -v "$CXX" >/dev/null 2>&1; then
		echo "SKIP: no C++ compiler ($CXX)"
		exit 77
	fi
}
