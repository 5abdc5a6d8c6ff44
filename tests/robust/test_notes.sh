#!/bin/bash
# SPDX-License-Identifier: MIT
# The shim's notes: the lines it says once per process about what its
# report file lacks and why (here: more call sites than CACHESHIM_MAX_SITES,
# the rest counted in an overflow row) are kept in the file, so that
# `cacheshim report` says them where the numbers are read (table, JSON,
# HTML).  A forked child, whose file is a new one, says and keeps its own
# (it said nothing: the flag was the parent's).  Under `cacheshim run`,
# which says each note once for all of the run's processes at the end, the
# processes leave them out (python3 under '*' through a pyenv wrapper said
# the same two lines in each of its 35 processes).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cd "$T"
cat >lib.c <<'C'
int note_fn(int x) { return x + 1; }
C
# note_fn from two call sites in the parent, then a forked child calls it
# from two more call sites ("both") or one ("one"); prints the sums.
cat >main.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
int note_fn(int);
int main(int argc, char **argv)
{
	int s = note_fn(1), status = 0;
	pid_t pid;

	s += note_fn(2);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int c = note_fn(3);

		if (argc > 1 && !strcmp(argv[1], "both"))
			c += note_fn(4);
		printf("child %d\n", c);
		return 0;
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
		return 1;
	printf("parent %d\n", s);
	return 0;
}
C
${CC:-cc} -shared -fPIC -o libnote.so lib.c
${CC:-cc} -O0 -o main main.c -L. -lnote -Wl,-rpath,"$T"

note="more than 1 call site (CACHESHIM_MAX_SITES); further ones are counted in an overflow row per function"

# lines FILE TEXT: how many lines of FILE are exactly TEXT.
lines()
{
	grep -cxF -- "$2" "$1" || true
}

plain_run plain ./main both
expect_status plain 0

# Preloaded: each process says its note and keeps it in its own file.
mkdir pre
status=0
CACHESHIM_MAX_SITES=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=note_fn \
	CACHESHIM_OUTPUT="$T/pre/n.%p" LD_PRELOAD=$CS_SHIM ./main both \
	>pre.out 2>pre.err || status=$?
expect_status pre 0
same_output plain pre
n=$(lines pre.err "cacheshim: $note")
[ "$n" = 2 ] || { show pre.err; fail "preloaded: $n note lines, want 2 (parent and child)"; }
[ "$(ls pre | wc -l)" = 2 ] || fail "preloaded: $(ls pre | wc -l) report files, want 2"
for f in pre/*; do
	"$CS_CMD" report "$f" >one.txt 2>&1 || { show one.txt; fail "report $f failed"; }
	grep -q "^notes of the shim" one.txt && [ "$(lines one.txt "  $note")" = 1 ] ||
		{ show one.txt; fail "$f: the note is not in the report's table"; }
done
"$CS_CMD" report pre/* >both.txt 2>&1 || { show both.txt; fail "report of both files failed"; }
[ "$(lines both.txt "  $note")" = 1 ] || { show both.txt; fail "both files: the note is not said once, without a file count"; }
"$CS_CMD" report --format json pre/* >both.json 2>&1 || { show both.json; fail "report --format json failed"; }
python3 - "$note" both.json <<'PY' || fail "JSON notes"
import json, sys
d = json.load(open(sys.argv[2]))
want = [{"text": sys.argv[1], "files": 2}]
if d["notes"] != want:
    sys.exit("notes %r, want %r" % (d["notes"], want))
PY
"$CS_CMD" report --format html pre/* >both.html 2>&1 || { show both.html; fail "report --format html failed"; }
grep -qF "$note" both.html || fail "HTML: the note is not in the page"
# Every call still counted: 2 rows per file (1 call site + overflow).
report_files csv pre/*
want_count csv "function=note_fn,event=tsc" calls 4
want_count csv "function=note_fn,event=tsc,callsite=[overflow]" calls 2
echo "preloaded: the note said by the parent and the forked child, kept in both files, in table, JSON and HTML"

# cacheshim run: said once for both processes, at the end, -q or not.
for q in "" -q; do
	mkdir run$q
	status=0
	CACHESHIM_MAX_SITES=1 "$CS_CMD" run $q -e tsc -t note_fn -o "$T/run$q/n.%p" -- ./main both \
		>run$q.out 2>run$q.err || status=$?
	expect_status run$q 0
	same_output plain run$q
	n=$(lines run$q.err "cacheshim: $note")
	[ "$n" = 1 ] || { show run$q.err; fail "run $q: $n note lines, want 1"; }
	n=$(grep -c "^cacheshim: " run$q.err || true)
	[ "$n" = 1 ] || { show run$q.err; fail "run $q: $n cacheshim: lines, want 1"; }
	! grep -q "^notes of the shim" run$q.err || { show run$q.err; fail "run $q: the summary says the notes again"; }
done
# Held by one file of two: said with the count.
mkdir run1
status=0
CACHESHIM_MAX_SITES=1 "$CS_CMD" run -q -e tsc -t note_fn -o "$T/run1/n.%p" -- ./main one \
	>run1.out 2>run1.err || status=$?
expect_status run1 0
n=$(lines run1.err "cacheshim: $note [1 of 2 files]")
[ "$n" = 1 ] || { show run1.err; fail "run (child with one call site): $n note lines with '[1 of 2 files]', want 1"; }
echo "cacheshim run: the note said once for both processes (with -q too), '[1 of 2 files]' when only the parent's file holds it"
