# SPDX-License-Identifier: MIT
# Sourced by tests/report/test_*.sh: writes the fixtures into a temporary
# directory $T and defines the helpers.  make check exports CS_CMD,
# CS_BUILDDIR and CS_SRCDIR (tests/Makefile.inc); run by hand, the
# defaults are those of an in-tree build.

CS_BUILDDIR=${CS_BUILDDIR:-$(pwd)}
CS_SRCDIR=${CS_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
CS_CMD=${CS_CMD:-$CS_BUILDDIR/cacheshim}
MKFIXTURE=$CS_BUILDDIR/tests/report/mkfixture

nfail=0

# fail LINE MESSAGE: records a failure of the case at LINE.
fail()
{
	echo "FAIL (line $1): $2" >&2
	nfail=$((nfail + 1))
}

# show FILE: the file, indented, for the log.
show()
{
	sed 's/^/    | /' "$1" >&2
}

# finish: exit status of the test.
finish()
{
	if [ "$nfail" -ne 0 ]; then
		echo "$nfail failure(s)" >&2
		exit 1
	fi
	echo "all passed"
	exit 0
}

for x in "$CS_CMD" "$MKFIXTURE"; do
	if [ ! -x "$x" ]; then
		echo "$x is not built" >&2
		exit 99 # a hard error: make check builds both
	fi
done

T=$(mktemp -d "${TMPDIR:-/tmp}/cs-report.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
"$MKFIXTURE" "$T" || { echo "mkfixture failed" >&2; exit 99; }

# other_run SRC DST [K]: DST a copy of the fixture SRC as another process
# would have written it (its start time K*256 ns later, K 1..255, default
# 1): a plain copy is the same process's file, which report reads once.
other_run()
{
	cp "$1" "$2" &&
		printf "\\x$(printf %02x "${3:-1}")" | dd of="$2" bs=1 seek=49 conv=notrunc 2>/dev/null
}

# run_cmd CMD ARGS...: runs CMD with stdout in $T/out, stderr in $T/err
# and its exit status in $status.
run_cmd()
{
	status=0
	"$@" >"$T/out" 2>"$T/err" || status=$?
}

# expect_status LINE WANT: the last run_cmd exited with WANT.
expect_status()
{
	if [ "$status" -ne "$2" ]; then
		fail "$1" "exit status $status, want $2"
		show "$T/err"
	fi
}

# expect_out LINE < EXPECTED: stdout of the last run_cmd is exactly stdin.
expect_out()
{
	cat >"$T/want"
	if ! diff -u "$T/want" "$T/out" >"$T/diff"; then
		fail "$1" "unexpected output"
		show "$T/diff"
	fi
}

# expect_err LINE TEXT: stderr of the last run_cmd has a line containing
# TEXT (fixed string).
expect_err()
{
	if ! grep -qF -- "$2" "$T/err"; then
		fail "$1" "stderr lacks '$2'"
		show "$T/err"
	fi
}

# expect_no_err LINE: stderr of the last run_cmd is empty.
expect_no_err()
{
	if [ -s "$T/err" ]; then
		fail "$1" "unexpected stderr"
		show "$T/err"
	fi
}

# expect_line LINE FILE TEXT: FILE has a line that is exactly TEXT.
expect_line()
{
	if ! grep -qxF -- "$3" "$2"; then
		fail "$1" "$(basename "$2") lacks the line '$3'"
		show "$2"
	fi
}

# expect_no_ctl LINE FILE: FILE has no control character but the
# newlines that end its lines, neither C0 nor C1 (U+0080..U+009F, whose
# UTF-8 is \xc2\x80..\xc2\x9f), and is valid UTF-8 (names from the file are
# printed escaped).
expect_no_ctl()
{
	if LC_ALL=C grep -q -e '[[:cntrl:]]' -e $'\xc2[\x80-\x9f]' "$2"; then
		fail "$1" "a control character in $(basename "$2")"
		show "$2"
	elif ! iconv -f UTF-8 -t UTF-8 "$2" >/dev/null 2>&1; then
		fail "$1" "$(basename "$2") is not valid UTF-8"
		show "$2"
	fi
}

CSV_HEADER='function,callsite,module,event,calls,total,mean,stddev,min,p50,p90,p99,max,entered,dropped,status,key'

# csv_pick COLUMNS: keeps the named columns (comma-separated) of the CSV
# $T/out, in that order, so that a test is not tied to the columns other
# options add.  Fields must not hold quoted commas.
csv_pick()
{
	awk -F, -v cols="$1" '
	NR == 1 { n = split(cols, c, ","); for (i = 1; i <= NF; i++) idx[$i] = i }
	{ line = ""
	  for (j = 1; j <= n; j++)
		line = line (j > 1 ? "," : "") (c[j] in idx ? $(idx[c[j]]) : "?" c[j])
	  print line }' "$T/out" >"$T/picked" && mv "$T/picked" "$T/out"
}

# schema_python: the python3 that has the jsonschema module (scripts/setup
# installs python3-jsonschema), or nothing.
schema_python()
{
	local p

	for p in python3 /usr/bin/python3; do
		if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import jsonschema' 2>/dev/null; then
			echo "$p"
			return
		fi
	done
}
