#!/bin/bash
# SPDX-License-Identifier: MIT
# `cacheshim run` says once, at the end, which targets matched no function
# in any of the program's processes; each process said it at start
# before (a shell script's every process: ~70 lines for a python3 run
# through a pyenv wrapper, review helper 56).  The shim leaves it to the
# launcher (CACHESHIM_UNMATCHED=run) unless the user set that variable.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

# Three processes: the shell and two runs of prog_exit (cs_inner twice
# each, exit 3); the shell goes on and exits 0.
script='"$1" 2 exit; "$1" 2 exit; exit 0'
TARGETS='cs_inner,nosuch_fn,cs_inn*,nosuch_*'

# run_unmatched NAME [run options]: cacheshim run of the script in $T/NAME.d.
run_unmatched()
{
	local name=$1

	shift
	mkdir "$T/$name.d"
	status=0
	(cd "$T/$name.d" && CACHESHIM_LIB=$CS_SHIM "$CS_CMD" run -e tsc -t "$TARGETS" "$@" -- \
		sh -c "$script" sh "$P/prog_exit") >"$T/$name.out" 2>"$T/$name.err" || status=$?
	[ "$status" -eq 0 ] || { show "$T/$name.err"; fail "$name: status $status, want 0"; }
}

# want_lines NAME WANT REGEX: exactly WANT lines of NAME's stderr match
# REGEX (grep -E).
want_lines()
{
	local n

	n=$(grep -cE -- "$3" "$T/$1.err" || true)
	[ "$n" = "$2" ] || { show "$T/$1.err"; fail "$1: $n lines match /$3/, want $2"; }
}

for q in "" -q; do
	name=run${q:--}
	run_unmatched $name $q
	for t in nosuch_fn 'nosuch_\*'; do
		want_lines $name 1 "^cacheshim: warning: run: target '$t' matched no function in any of the program's processes\$"
	done
	want_lines $name 2 "matched no function"
	"$CS_CMD" report --format csv --by function "$T/$name.d"/cacheshim.out.* >"$T/$name.csv"
	row=$(csv_one $name "function=cs_inner,event=tsc" calls)
	[ "$row" = 4 ] || { show "$T/$name.csv"; fail "$name: cs_inner $row calls, want 4"; }
	echo "run $q: one line per unmatched target at the end, for 3 processes"
done

# Without -e, the default events' line is said once for the run, as the
# run's notes are (each of the 3 processes said it).
mkdir "$T/defaults.d"
status=0
(cd "$T/defaults.d" && env -u CACHESHIM_EVENTS CACHESHIM_LIB=$CS_SHIM "$CS_CMD" run -t cs_inner -- \
	sh -c "$script" sh "$P/prog_exit") >"$T/defaults.out" 2>"$T/defaults.err" || status=$?
[ "$status" -eq 0 ] || { show "$T/defaults.err"; fail "defaults: status $status, want 0"; }
want_lines defaults 1 "CACHESHIM_EVENTS not set or names no event; measuring "
echo "run without -e: the default events said once for 3 processes"

# The user's own choice stands: each process says it, the launcher not.
CACHESHIM_UNMATCHED=1 run_unmatched own
want_lines own 3 "^cacheshim: target 'nosuch_fn' matched no function in any loaded module \(yet\)\$"
want_lines own 0 "^cacheshim: warning: run: target"
echo "CACHESHIM_UNMATCHED=1: each of the 3 processes says it at start"

# A target listed twice (once with :argN) is said once, as the shim takes
# it once; MODULE+0xOFFSET targets are said too, by module and offset: the
# shim left them to the launcher, which skipped them, so that one naming no
# function was said by no one (review helper 58).
# (nm comes with binutils, which the build needs: an exit here skipped
# the cases below too.)
command -v nm >/dev/null || fail "nm not found (binutils)"
off=$(nm -D --defined-only "$CS_TESTLIBS/libcstarget.so" | awk '$3 == "cs_inner" { print $1 }')
[ -n "$off" ] || fail "cs_inner not in libcstarget.so's dynamic symbols"
off=$(printf '0x%x' "$((16#$off))")
TARGETS="libcstarget.so+$off,nosuch_fn,nosuch_fn:arg1,libcs*.so+$off,libnosuch.so+$off"
run_unmatched addr -q
want_lines addr 1 "^cacheshim: warning: run: target 'nosuch_fn' matched no function in any of the program's processes\$"
want_lines addr 1 "^cacheshim: warning: run: target 'libnosuch.so\\+$off' matched no function in any of the program's processes\$"
want_lines addr 2 "matched no function"
"$CS_CMD" report --format csv --by function "$T/addr.d"/cacheshim.out.* >"$T/addr.csv"
row=$(csv_select "$T/addr.csv" "event=tsc" calls | awk '{ n += $1 } END { print n + 0 }')
[ "$row" = 4 ] || { show "$T/addr.csv"; fail "addr: $row calls of libcstarget.so+$off, want 4"; }
echo "address targets: the one naming no function said once; a target listed twice said once"

# A relative CACHESHIM_OUTPUT of the environment (passed on as it is): a
# process that changed directory writes its file where the launcher does
# not look, and the launcher said cs_inner, wrapped in that process,
# "matched no function in the program" (review helper 58).  Then each
# process says it at start, as without the launcher.
mkdir "$T/rel.d" "$T/rel.d/sub"
status=0
(cd "$T/rel.d" && CACHESHIM_OUTPUT=rel.%p CACHESHIM_LIB=$CS_SHIM "$CS_CMD" run -q -e tsc \
	-t cs_inner,nosuch_fn -- sh -c 'cd sub && "$1" 2 exit' sh "$P/prog_exit") \
	>"$T/rel.out" 2>"$T/rel.err" || status=$?
[ "$status" -eq 3 ] || { show "$T/rel.err"; fail "rel: status $status, want 3"; }
want_lines rel 0 "run: target 'cs_inner'"
want_lines rel 2 "^cacheshim: target 'nosuch_fn' matched no function in any loaded module \(yet\)\$"
echo "a relative CACHESHIM_OUTPUT: each process says it at start, the launcher not"

# A cacheshim run inside another: the inner one inherits the outer's
# CACHESHIM_UNMATCHED=run, which is no choice of the user's: its files are
# another session's, which the outer run does not read, so the inner run
# says its own targets that matched nothing (before, with 0 inherited,
# nobody did; review helper 58).
mkdir "$T/nest.d"
status=0
(cd "$T/nest.d" && CACHESHIM_LIB=$CS_SHIM "$CS_CMD" run -q -e tsc -t nosuch_outer -- \
	"$CS_CMD" run -q -e tsc -t cs_inner,nosuch_inner -- "$P/prog_exit" 2 exit) \
	>"$T/nest.out" 2>"$T/nest.err" || status=$?
[ "$status" -eq 3 ] || { show "$T/nest.err"; fail "nested: status $status, want 3"; }
want_lines nest 1 "^cacheshim: warning: run: target 'nosuch_inner' matched no function in the program\$"
want_lines nest 1 "nosuch_outer"
want_lines nest 0 "cs_inner"
echo "cacheshim run inside cacheshim run: each says its own unmatched targets once"

# A target wrapped as a compiler clone (gcc -O2 makes the static function
# st_touch into st_touch.constprop.0): the shim wraps it for 'st_touch',
# so the launcher said nothing matched it (review helper 87).
CC=${CC_FOR_TESTS:-gcc}
cat >"$T/clone.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
static __attribute__((noinline)) int st_touch(size_t k)
{
	volatile char *p = malloc(k * 64);
	int s = 0;

	for (size_t i = 0; i < k * 64; i++)
		s += p[i] = (char)i;
	free((void *)p);
	return s;
}
int main(void)
{
	int s = 0;

	for (int i = 0; i < 5; i++)
		s += st_touch(2);
	printf("%d\n", s);
	return 0;
}
C
$CC -O2 -o "$T/clone" "$T/clone.c"
if nm "$T/clone" | grep -q ' st_touch\.constprop\.[0-9]*$'; then
	mkdir "$T/clone.d"
	status=0
	(cd "$T/clone.d" && CACHESHIM_LIB=$CS_SHIM "$CS_CMD" run -q -e tsc -t st_touch,nosuch_fn -- \
		"$T/clone") >"$T/clone.out" 2>"$T/clone.err" || status=$?
	[ "$status" -eq 0 ] || { show "$T/clone.err"; fail "clone: status $status, want 0"; }
	want_lines clone 0 "target 'st_touch'"
	want_lines clone 1 "^cacheshim: warning: run: target 'nosuch_fn' matched no function in the program\$"
	"$CS_CMD" report --format csv --by function "$T/clone.d"/cacheshim.out.* >"$T/clone.csv"
	row=$(csv_select "$T/clone.csv" "event=tsc" calls | awk '{ n += $1 } END { print n + 0 }')
	[ "$row" = 5 ] || { show "$T/clone.csv"; fail "clone: $row calls of st_touch, want 5"; }
	echo "a target wrapped as its clone (st_touch.constprop.0) is not said to match nothing"
else
	echo "SKIP (clone case): $CC made no st_touch.constprop clone"
fi
