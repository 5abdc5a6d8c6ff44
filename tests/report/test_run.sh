#!/bin/bash
# SPDX-License-Identifier: MIT
# cacheshim run without the real shim: mkfixture --fake-shim plays the
# program and its shim (writes a report file where CACHESHIM_OUTPUT says,
# with CACHESHIM_SESSION), so the launcher's part is tested on its own:
# the environment, finding the session's files, the summary, the exit
# status and signals, exec failures.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"

# Any loadable library will do as "the shim" here: what is checked is
# that it is preloaded, not what it does.
LIBM=$(ldd "$CS_CMD" | awk '/libm\.so/ { print $3 }')
[ -n "$LIBM" ] || LIBM=$(ldd "$MKFIXTURE" | awk '/libc\.so/ { print $3 }')
export CACHESHIM_LIB=$LIBM
unset CACHESHIM_EVENTS CACHESHIM_TARGETS CACHESHIM_OUTPUT CACHESHIM_QUIET \
	CACHESHIM_SESSION LD_PRELOAD
# A run needs targets (see below); the fake shim does not look at them.
export CACHESHIM_TARGETS=fake_fn

# The environment the program gets.
show_env='echo "P=${LD_PRELOAD-unset}|E=${CACHESHIM_EVENTS-unset}|T=${CACHESHIM_TARGETS-unset}|O=${CACHESHIM_OUTPUT-unset}|Q=${CACHESHIM_QUIET-unset}|S=${CACHESHIM_SESSION-unset}"'
# The default output pattern is made absolute (see below).
cd "$T"
run_cmd "$CS_CMD" run -q -- sh -c "$show_env"
cd - >/dev/null
expect_status $LINENO 0
grep -qE "^P=$LIBM\|E=unset\|T=fake_fn\|O=$T/cacheshim\.out\.%p\|Q=1\|S=[1-9][0-9]*\$" "$T/out" ||
	{ fail $LINENO "environment without options"; show "$T/out"; }
s1=$(sed 's/.*S=//' "$T/out")

LD_PRELOAD=/keep/me.so run_cmd "$CS_CMD" run -e tsc,perf::PAGE-FAULTS -t 'malloc,rb_*:arg2' \
	-o "$T/x.%p" -q -- sh -c "$show_env"
expect_status $LINENO 0
grep -qE "^P=$LIBM:/keep/me.so\|E=tsc,perf::PAGE-FAULTS\|T=malloc,rb_\*:arg2\|O=$T/x.%p\|Q=1\|S=[1-9][0-9]*\$" "$T/out" ||
	{ fail $LINENO "environment with options"; show "$T/out"; }
s2=$(sed 's/.*S=//' "$T/out")
[ "$s1" != "$s2" ] || fail $LINENO "two runs got the same session $s1"

# -e and -t may be repeated (like perf stat -e): the lists add up.
run_cmd "$CS_CMD" run -e tsc -e perf::PAGE-FAULTS -t a -t 'b,c' -q -- sh -c "$show_env"
expect_status $LINENO 0
grep -qE "\|E=tsc,perf::PAGE-FAULTS\|T=a,b,c\|" "$T/out" ||
	{ fail $LINENO "repeated -e and -t"; show "$T/out"; }

# A library LD_PRELOAD cannot hold, or none there: said before running.
CACHESHIM_LIB="$T/no such.so" run_cmd "$CS_CMD" run -q -- sh -c 'echo ran'
expect_status $LINENO 1
expect_err $LINENO "LD_PRELOAD cannot hold a path with a space or a colon"
[ -s "$T/out" ] && fail $LINENO "the program ran without its library"
CACHESHIM_LIB="$T/nosuch.so" run_cmd "$CS_CMD" run -q -- sh -c 'echo ran'
expect_status $LINENO 1
expect_err $LINENO "run: cannot preload $T/nosuch.so: No such file or directory"
# Files ld.so cannot preload: it said so and ran the program unmeasured.
# elf_head FILE CLASS TYPE MACHINE: an ELF header's first 20 bytes.
elf_head()
{
	local c t m

	c=$(printf '\\%03o' "$2") t=$(printf '\\%03o' "$3") m=$(printf '\\%03o' "$4")
	printf "\\177ELF$c\\001\\001\\000\\000\\000\\000\\000\\000\\000\\000\\000$t\\000$m\\000" >"$1"
}
elf_head "$T/exec.so" 2 2 62   # ELFCLASS64, ET_EXEC, EM_X86_64
elf_head "$T/i386.so" 1 3 3    # ELFCLASS32, ET_DYN, EM_386
elf_head "$T/arm.so" 2 3 183   # ELFCLASS64, ET_DYN, EM_AARCH64
printf 'root:x:0:0::/root:/bin/sh\n' >"$T/passwd"
for bad in "$T:a directory, not a library" "/dev/null:not a regular file" \
	"$T/passwd:not an ELF file" "$T/i386.so:not an x86-64 ELF file" \
	"$T/arm.so:not an x86-64 ELF file" "$T/exec.so:not a shared library"; do
	CACHESHIM_LIB=${bad%%:*} run_cmd "$CS_CMD" run -q -- sh -c 'echo ran'
	expect_status $LINENO 1
	[ "$(cat "$T/err")" = "cacheshim: run: cannot preload ${bad%%:*}: ${bad#*:}" ] ||
		{ fail $LINENO "CACHESHIM_LIB=${bad%%:*}: not '${bad#*:}'"; show "$T/err"; }
	[ -s "$T/out" ] && fail $LINENO "CACHESHIM_LIB=${bad%%:*}: the program ran"
done

# A library name without a slash is ld.so's to find (LD_LIBRARY_PATH, its
# cache): not looked for in the current directory.  A relative path is
# passed on absolute: a program that changes directory before running a
# child would lose the shim in the child.
CACHESHIM_LIB=${LIBM##*/} LD_LIBRARY_PATH=${LIBM%/*} run_cmd "$CS_CMD" run -q -- \
	sh -c 'echo "P=$LD_PRELOAD"'
expect_status $LINENO 0
expect_out $LINENO <<<"P=${LIBM##*/}"
(cd "${LIBM%/*}" && CACHESHIM_LIB=./${LIBM##*/} "$CS_CMD" run -q -- \
	sh -c 'cd / && echo "P=$LD_PRELOAD"') >"$T/out" 2>"$T/err"
expect_out $LINENO <<<"P=$(realpath "$LIBM")"

# Long options, and everything after PROG is PROG's.
run_cmd "$CS_CMD" run --events=tsc --quiet sh -c 'echo "$0 $1 $CACHESHIM_EVENTS"' -e x
expect_status $LINENO 0
expect_out $LINENO <<<"-e x tsc"

# The summary: the session's files only, merged per function, on stderr.
mkdir "$T/runs"
cp "$T/basic.rpt" "$T/runs/cacheshim.out.1" # another session: ignored
echo "not a report" >"$T/runs/cacheshim.out.2"
run_cmd "$CS_CMD" run -o "$T/runs/cacheshim.out.%p" -- "$MKFIXTURE" --fake-shim 3
expect_status $LINENO 3
expect_err $LINENO "cacheshim summary of $MKFIXTURE (1 report file in $T/runs)"
expect_err $LINENO "program:  /usr/bin/fake"
grep -qE '^  fake_fn +2 +13 +1 +12 +12 +14 +14 +14 +26$' "$T/err" ||
	{ fail $LINENO "no fake_fn row in the summary"; show "$T/err"; }
grep -q malloc "$T/err" && fail $LINENO "a file of another session was used"
[ -s "$T/out" ] && fail $LINENO "the summary is not on stderr"
[ "$(ls "$T/runs" | wc -l)" -eq 3 ] || fail $LINENO "want 3 files in $T/runs"

# A copy the program made of its file, under a name the pattern matches
# (r.%p matches r.PID.copy): the same process's file, read once (its
# calls were counted twice).
mkdir "$T/cp"
run_cmd "$CS_CMD" run -o "$T/cp/r.%p" -- sh -c \
	'"$1" --fake-shim 0 & p=$!; wait $p; cp "$2/r.$p" "$2/r.$p.copy"' sh "$MKFIXTURE" "$T/cp"
expect_status $LINENO 0
expect_err $LINENO "(1 report file in $T/cp)"
grep -qE '^  fake_fn +2 +13 +1 +12 +12 +14 +14 +14 +26$' "$T/err" ||
	{ fail $LINENO "fake_fn's calls counted twice"; show "$T/err"; }
grep -qE "run: $T/cp/r\.[0-9]+\.copy is a copy of $T/cp/r\.[0-9]+ \(the file of the same process, pid [0-9]+\): read once" "$T/err" ||
	{ fail $LINENO "the copy not said"; show "$T/err"; }

# A snapshot of the file taken while the program ran (state running),
# under a name that sorts first: the finished file is read, not the
# snapshot (which lacks the calls made since; the file was skipped as its
# copy).
mkdir "$T/snap"
run_cmd "$CS_CMD" run -o "$T/snap/r.%p" -- sh -c \
	'"$1" --fake-shim 0 & p=$!; wait $p; cp "$2/r.$p" "$2/r.0snap" &&
	printf "\000\001" | dd of="$2/r.0snap" bs=1 seek=31 conv=notrunc 2>/dev/null' \
	sh "$MKFIXTURE" "$T/snap"
expect_status $LINENO 0
expect_err $LINENO "(1 report file in $T/snap)"
grep -qE "run: $T/snap/r\.0snap is a copy of $T/snap/r\.[0-9]+ \(the file of the same process, pid [0-9]+\): read once" "$T/err" ||
	{ fail $LINENO "the snapshot not said, or read"; show "$T/err"; }
grep -q incomplete "$T/err" && { fail $LINENO "the snapshot was read"; show "$T/err"; }

# The default output pattern: the current directory.
(cd "$T/runs" && "$CS_CMD" run -- "$MKFIXTURE" --fake-shim 0) >"$T/out" 2>"$T/err"
status=$?
expect_status $LINENO 0
expect_err $LINENO "(1 report file in $T/runs)"

# A program that changes directory before the shim opens its file: the
# launcher passes the default pattern and a relative -o as absolute
# names (with a '%' of the directory doubled), so the files land, and are
# found, where the launcher was started.
mkdir "$T/cd%p" "$T/cd%p/sub" "$T/away"
(cd "$T/cd%p" && "$CS_CMD" run -- sh -c 'cd "$0" && exec "$1" --fake-shim 0' "$T/away" \
	"$MKFIXTURE") >"$T/out" 2>"$T/err"
status=$?
expect_status $LINENO 0
expect_err $LINENO "(1 report file in $T/cd%p)"
ls "$T/cd%p"/cacheshim.out.* >/dev/null 2>&1 || fail $LINENO "no report file in $T/cd%p"
(cd "$T/cd%p" && "$CS_CMD" run -o sub/r.%p -- sh -c 'cd "$0" && exec "$1" --fake-shim 0' \
	"$T/away" "$MKFIXTURE") >"$T/out" 2>"$T/err"
status=$?
expect_status $LINENO 0
expect_err $LINENO "(1 report file in $T/cd%p/sub)"
[ -z "$(ls "$T/away")" ] || fail $LINENO "a report file landed in the program's directory"
# A current directory whose absolute name is longer than PATH_MAX
# (getcwd fails), or below an unreadable parent: the pattern stays
# relative there, as before patterns were made absolute (the run was
# refused: "cannot get the current directory").
mkdir "$T/deep"
(cd "$T/deep" && for i in $(seq 1 45); do
	d=$(printf 'd%0100d' "$i")
	mkdir "$d" && cd "$d" || exit 9
done && "$CS_CMD" run -- "$MKFIXTURE" --fake-shim 0 && ls cacheshim.out.* >/dev/null) \
	>"$T/out" 2>"$T/err"
status=$?
expect_status $LINENO 0
expect_err $LINENO "(1 report file in .)"
# A CACHESHIM_OUTPUT of the user's own is passed on as it is.
CACHESHIM_OUTPUT=rel.%p run_cmd "$CS_CMD" run -q -- sh -c 'echo "$CACHESHIM_OUTPUT"'
expect_out $LINENO <<<"rel.%p"

# Only files named by the output pattern are looked at (a directory like
# /tmp may hold thousands of others): glob characters in it are literal,
# %p and %e stand for anything, and a taken name's .N suffix is allowed.
# A file of this session under another name (a child that set its own
# CACHESHIM_OUTPUT) is not collected.
mkdir "$T/names"
touch "$T/names/r[1]*?.x" # taken: the fake shim writes r[1]*?.x.1
run_cmd "$CS_CMD" run -o "$T/names/r[1]*?.x" -- sh -c \
	'CACHESHIM_OUTPUT=$0/other.%p "$1" --fake-shim 0 && "$1" --fake-shim 0' "$T/names" "$MKFIXTURE"
expect_status $LINENO 0
[ -f "$T/names/r[1]*?.x.1" ] || fail $LINENO "the fake shim did not write r[1]*?.x.1"
ls "$T/names"/other.* >/dev/null 2>&1 || fail $LINENO "the fake shim did not write other.PID"
expect_err $LINENO "cacheshim summary of sh (1 report file in $T/names)"
grep -qE '^  fake_fn +2 ' "$T/err" || { fail $LINENO "fake_fn: not 2 calls"; show "$T/err"; }
# %e of a program whose name starts with '.': the file's name does too.
cp "$MKFIXTURE" "$T/.hidden-prog"
mkdir "$T/names3"
run_cmd "$CS_CMD" run -o "$T/names3/%e.%p" -- "$T/.hidden-prog" --fake-shim 0
expect_status $LINENO 0
expect_err $LINENO "(1 report file in $T/names3)"
mkdir "$T/names2"
run_cmd "$CS_CMD" run -o "$T/names2/%e-%%-%p.csr" -- "$MKFIXTURE" --fake-shim 0
expect_status $LINENO 0
expect_err $LINENO "(1 report file in $T/names2)"

# Exit statuses pass through; -q prints no summary.
for want in 0 1 42 255; do
	run_cmd "$CS_CMD" run -q -o "$T/q.%p" -- "$MKFIXTURE" --fake-shim $want
	expect_status $LINENO $want
	expect_no_err $LINENO
done

# A program killed by a signal: cacheshim dies of the same signal, after
# the summary (the file is marked running: the shim did not finish).
ulimit -c 0 # no core of mkfixture's SIGSEGV
for sig in TERM KILL SEGV; do
	num=$(kill -l $sig)
	run_cmd "$CS_CMD" run -o "$T/sig.%p" -- "$MKFIXTURE" --fake-shim -$num
	expect_status $LINENO $((128 + num))
	expect_err $LINENO "is incomplete (program still running or did not exit cleanly)"
	expect_err $LINENO "fake_fn"
done
# With -q nothing is said of it (the warning was printed under -q).
run_cmd "$CS_CMD" run -q -o "$T/sigq.%p" -- "$MKFIXTURE" --fake-shim -$(kill -l KILL)
expect_status $LINENO $((128 + $(kill -l KILL)))
expect_no_err $LINENO

# Killed, its file running, with a snapshot taken while it ran under a
# name that sorts first, no block reserved since: alike by their headers,
# the file, which had entered the call made since, is read (the snapshot
# was, and the file skipped as its copy).
mkdir "$T/killsnap"
run_cmd env CS_FAKE_SNAPSHOT="$T/killsnap/r.0snap" "$CS_CMD" run -o "$T/killsnap/r.%p" -- \
	"$MKFIXTURE" --fake-shim -9
expect_status $LINENO 137
expect_err $LINENO "(1 report file in $T/killsnap)"
grep -qE '^  fake_fn +2 +13 ' "$T/err" || { fail $LINENO "the snapshot was read"; show "$T/err"; }
grep -qE "run: $T/killsnap/r\.0snap is a copy of $T/killsnap/r\.[0-9]+ \(the file of the same process, pid [0-9]+\): read once" "$T/err" ||
	{ fail $LINENO "the snapshot not said"; show "$T/err"; }

# Killed by a signal glibc keeps for itself (32 and 33: its raise and
# sigaction refuse them; a program of another libc may die of one): the
# launcher still dies of it, not exit 128+N (perl tells the two apart).
# Not when they come ignored (as under some make check harnesses): glibc
# cannot set them back, and the program would not die of them either.
death_sig() { perl -e 'system { $ARGV[0] } @ARGV; print $? & 127, "\n"' -- "$@"; }
ignored=$(awk '/^SigIgn:/ { print $2 }' /proc/self/status)
for num in 32 33; do
	[ $(( 0x${ignored:-0} >> (num - 1) & 1 )) = 0 ] || continue
	run_cmd death_sig "$CS_CMD" run -q -- sh -c "kill -$num \$\$"
	[ "$(cat "$T/out")" = $num ] ||
		fail $LINENO "program killed by signal $num: the launcher died of signal $(cat "$T/out")"
done

# ^C goes to the program; cacheshim waits and reports.
run_cmd "$CS_CMD" run -q -- sh -c 'kill -INT $PPID; sleep 0.2; exit 4'
expect_status $LINENO 4

# Programs that cannot be run.
run_cmd "$CS_CMD" run -- "$T/nonexistent"
expect_status $LINENO 127
expect_err $LINENO "cacheshim: run: cannot run $T/nonexistent: No such file or directory"
run_cmd "$CS_CMD" run -- no-such-program-cacheshim
expect_status $LINENO 127
run_cmd "$CS_CMD" run -- "$T/basic.rpt"
expect_status $LINENO 126
expect_err $LINENO "Permission denied"
# A directory: said as a shell says it (exec said "Permission denied").
mkdir -p "$T/adir"
run_cmd "$CS_CMD" run -- "$T/adir"
expect_status $LINENO 126
expect_err $LINENO "cacheshim: run: cannot run $T/adir: Is a directory"

# Signals sent to the launcher reach the program (kill on the launcher
# used to leave the program running on its own): the program ends by the
# signal, and the launcher's status says so.  The program writes its pid
# first, so that the test can tell whether it is still there.  Not a
# signal the test started with ignored (HUP under nohup): the program
# inherits that and lives on, as it would without cacheshim.
for sig in TERM HUP USR1; do
	[ $(( 0x${ignored:-0} >> ($(kill -l $sig) - 1) & 1 )) = 0 ] || continue
	rm -f "$T/sig.pid"
	(cd "$T" && exec "$CS_CMD" run -q -o "$T/sig.%p" -- sh -c 'echo $$ >"$0"; exec sleep 30' "$T/sig.pid") &
	launcher=$!
	for _ in $(seq 100); do [ -s "$T/sig.pid" ] && break; sleep 0.05; done
	[ -s "$T/sig.pid" ] || fail $LINENO "$sig: the program did not start"
	kill -$sig $launcher
	status=0
	wait $launcher || status=$?
	want=$((128 + $(kill -l $sig)))
	[ "$status" = $want ] || fail $LINENO "$sig: the launcher exited with $status, want $want"
	if kill -0 "$(cat "$T/sig.pid")" 2>/dev/null; then
		kill -KILL "$(cat "$T/sig.pid")"
		fail $LINENO "$sig: the program outlived the launcher"
	fi
done

# Started with SIGCHLD ignored (inherited through exec, as from a parent
# that ignores it): the launcher still waits for its program, passes its
# status on and prints the summary (waitpid failed with ECHILD: exit 1,
# no summary), and the program still starts with SIGCHLD ignored, as it
# would without cacheshim.
ign_chld() { perl -e '$SIG{CHLD} = "IGNORE"; exec { $ARGV[0] } @ARGV or exit 127' -- "$@"; }
run_cmd ign_chld "$CS_CMD" run -o "$T/chld.%p" -- "$MKFIXTURE" --fake-shim 3
expect_status $LINENO 3
expect_err $LINENO "fake_fn"
grep -q "waitpid" "$T/err" && { fail $LINENO "SIGCHLD ignored: waitpid failed"; show "$T/err"; }
run_cmd ign_chld "$CS_CMD" run -q -- cat /proc/self/status
expect_status $LINENO 0
ign=$(awk '/^SigIgn:/ { print $2 }' "$T/out")
[ $(( 0x${ign:-0} >> 16 & 1 )) = 1 ] || fail $LINENO "SIGCHLD not ignored in the program (SigIgn ${ign:-?})"

# Usage errors.
run_cmd "$CS_CMD" run
expect_status $LINENO 2
expect_err $LINENO "cacheshim: run: no program given"
run_cmd "$CS_CMD" run --bogus true
expect_status $LINENO 2
expect_err $LINENO "usage: cacheshim run"
# getopt's own messages are prefixed cacheshim: as every other is (they
# began "run: invalid option", from the command's argv[0]).
expect_err $LINENO "cacheshim: run: unrecognized option '--bogus'"
run_cmd "$CS_CMD" run -t
expect_status $LINENO 2
expect_err $LINENO "cacheshim: run: option requires an argument -- 't'"
run_cmd "$CS_CMD" report -Z
expect_status $LINENO 2
expect_err $LINENO "cacheshim: report: invalid option -- 'Z'"
run_cmd "$CS_CMD" -Z
expect_status $LINENO 2
expect_err $LINENO "cacheshim: invalid option -- 'Z'"

# Nothing to measure, or an option that names nothing: the shim would
# say "not profiling" (or measure its default events) and the summary find
# no file.  Refused before the program runs.
CACHESHIM_TARGETS= run_cmd "$CS_CMD" run -- sh -c 'echo ran'
expect_status $LINENO 2
expect_err $LINENO "run: no functions to measure: give -t NAME (or set CACHESHIM_TARGETS)"
[ "$(wc -l <"$T/err")" -eq 1 ] || { fail $LINENO "not one line"; show "$T/err"; }
[ -s "$T/out" ] && fail $LINENO "the program ran"
(unset CACHESHIM_TARGETS && run_cmd "$CS_CMD" run -- sh -c 'echo ran' && exit $status)
status=$?
expect_status $LINENO 2
CACHESHIM_TARGETS=' , ' run_cmd "$CS_CMD" run -- sh -c 'echo ran'
expect_status $LINENO 2
run_cmd "$CS_CMD" run -t '' -- sh -c 'echo ran'
expect_status $LINENO 2
expect_err $LINENO "run: -t '' names no function"
[ -s "$T/out" ] && fail $LINENO "the program ran"
run_cmd "$CS_CMD" run -e ' ,' -- sh -c 'echo ran'
expect_status $LINENO 2
expect_err $LINENO "run: -e ' ,' names no event"
[ -s "$T/out" ] && fail $LINENO "the program ran"

# refused LINE OPTION VALUE MESSAGE: `run OPTION VALUE` (or, for OPTION
# VAR=, VALUE in the environment variable VAR) is refused before the
# program runs, with MESSAGE as its one line (escaped) and exit status 2.
refused()
{
	if [ "${2%=}" != "$2" ]; then
		run_cmd env "$2$3" "$CS_CMD" run -- sh -c 'echo ran'
	else
		run_cmd "$CS_CMD" run "$2" "$3" -- sh -c 'echo ran'
	fi
	expect_status "$1" 2
	expect_err "$1" "$4"
	[ "$(wc -l <"$T/err")" -eq 1 ] || { fail "$1" "not one line"; show "$T/err"; }
	expect_no_ctl "$1" "$T/err"
	[ -s "$T/out" ] && fail "$1" "the program ran"
}

# An event name libpfm4 does not know (the shim would leave it out and
# measure less than asked), an unknown preset, a name longer than the
# shim takes: refused before the run.  A known hardware event is not,
# even where no PMU can count it: the shim says so when it starts.
refused $LINENO -e nosuch_event "run: -e: event 'nosuch_event': event not found (\`cacheshim list\` shows the events known here)"
refused $LINENO -e "tsc, perf::NO_SUCH" "run: -e: event 'perf::NO_SUCH':"
refused $LINENO -e @bogus "run: -e: '@bogus' is not a preset (@cache, @l1, @l2, @l3, @tlb, @ipc, @all)"
refused $LINENO -e "perf::$(printf '%*s' 70 '' | tr ' ' A)" "is longer than 63 characters"
refused $LINENO CACHESHIM_EVENTS= nosuch_event "run: CACHESHIM_EVENTS: event 'nosuch_event': event not found"
# More than the 16 events the shim keeps (it dropped the rest with a line
# in the program's stderr); a name listed twice counts once.
ev16=tsc,perf::PAGE-FAULTS,perf::MINOR-FAULTS,perf::MAJOR-FAULTS,perf::CONTEXT-SWITCHES
ev16=$ev16,perf::CPU-MIGRATIONS,perf::TASK-CLOCK,perf::CPU-CLOCK,perf::CYCLES
ev16=$ev16,perf::INSTRUCTIONS,perf::BRANCHES,perf::BRANCH-MISSES,perf::CACHE-MISSES
ev16=$ev16,perf::CACHE-REFERENCES,perf::BUS-CYCLES,perf::DTLB-LOADS
refused $LINENO -e "$ev16,perf::DTLB-LOAD-MISSES" "cacheshim: run: -e: more than 16 events ('perf::DTLB-LOAD-MISSES' and later)"
refused $LINENO CACHESHIM_EVENTS= "$ev16,@cache" "cacheshim: run: CACHESHIM_EVENTS: more than 16 events ('@cache' and later)"
run_cmd "$CS_CMD" run -q -e "$ev16,tsc" -t nosuch_fn -- sh -c 'echo ran'
expect_status $LINENO 0
expect_line $LINENO "$T/out" ran
run_cmd "$CS_CMD" run -q -e 'tsc,perf::CYCLES,perf::PAGE-FAULTS:u,@cache' -- sh -c 'echo ran'
expect_status $LINENO 0
expect_out $LINENO <<<"ran"

# A target entry the shim would ignore (common/targetspec.c), or more
# distinct patterns than it takes: refused before the run, where the
# run used to go on measuring less than asked, or nothing.
refused $LINENO -t 'fn:bad' "run: -t: 'fn:bad': expected NAME or NAME:argN"
refused $LINENO -t 'fn:arg17' "run: -t: 'fn:arg17': N in :argN must be 1..16"
refused $LINENO -t 'ok, bad name' "run: -t: 'bad name': not a function name or glob"
# A demangled C++ name: the line says C++ names are given mangled (review
# helper 90: 'expected NAME or NAME:argN' alone left a C++ user guessing).
cxxhint=" (C++ names are given mangled, as nm(1) lists them without -C: _ZN2ns3Foo3barEv, not ns::Foo::bar())"
refused $LINENO -t 'ns::Foo::bar()' "run: -t: 'ns::Foo::bar()': expected NAME or NAME:argN$cxxhint"
refused $LINENO -t 'operator new' "run: -t: 'operator new': not a function name or glob$cxxhint"
refused $LINENO -t ':arg1' "run: -t: ':arg1': no function name"
refused $LINENO -t 'lib.so+0xzz' "run: -t: 'lib.so+0xzz': neither a function name nor MODULE+0xOFFSET"
refused $LINENO -t "$(seq -f 'f%g' 1 65 | paste -sd,)" "run: -t: more than 64 functions or patterns"
refused $LINENO CACHESHIM_TARGETS= 'x:arg0' "run: CACHESHIM_TARGETS: 'x:arg0': N in :argN must be 1..16"
# 64 distinct patterns (62 names, :argN, an address), a repeat: taken.
run_cmd "$CS_CMD" run -q -t "$(seq -f 'f%g' 1 62 | paste -sd,),f1,g:arg16,lib.so+0x1f" \
	-- sh -c 'echo ran'
expect_status $LINENO 0
expect_out $LINENO <<<"ran"

# What the user typed is quoted escaped, as names are in the report
# (control characters, C1 controls, bytes that are not UTF-8): a newline
# split the message, an escape sequence reached the terminal.
refused $LINENO -t $'ok,a\x1bb\xc2\x9bc' "run: -t: 'a\x1bb\xc2\x9bc': not a function name or glob"
refused $LINENO -e $'@x\ny\xff' "run: -e: '@x\ny\xff' is not a preset (@cache,"
refused $LINENO -e $'\n' "run: -e '\n' names no event"
refused $LINENO --hook $'got\x1b[2J' "run: --hook 'got\x1b[2J' is not entry, got or both"
refused $LINENO --top x "run: --top wants a number of rows (0: all), not 'x'"
refused $LINENO --top -1 "run: --top wants a number of rows (0: all), not '-1'"
refused $LINENO --top '' "run: --top wants a number of rows (0: all), not ''"
run_cmd "$CS_CMD" run -o "$T/no"$'\n\xc2\x85'"dir/x.%p" -- sh -c 'echo ran'
expect_status $LINENO 1
expect_err $LINENO "run: --output '$T/no\n\xc2\x85dir/x.%p': cannot create files in $T/no\n\xc2\x85dir: No such file or directory"
expect_no_ctl $LINENO "$T/err"
run_cmd "$CS_CMD" run -- "$T/no"$'\x1b[2J\xc2\x9b'"such"
expect_status $LINENO 127
expect_err $LINENO "cacheshim: run: cannot run $T/no\x1b[2J\xc2\x9bsuch: No such file or directory"
expect_no_ctl $LINENO "$T/err"
# The summary's line names the program and the directory as given.
mkdir "$T/odd"$'\t\xc2\x85'"dir"
cp "$MKFIXTURE" "$T/odd"$'\x1b'"prog"
run_cmd "$CS_CMD" run -o "$T/odd"$'\t\xc2\x85'"dir/r.%p" -- "$T/odd"$'\x1b'"prog" --fake-shim 0
expect_status $LINENO 0
expect_err $LINENO "cacheshim summary of $T/odd\x1bprog (1 report file in $T/odd\t\xc2\x85dir)"
expect_no_ctl $LINENO "$T/err"

# %e in the directory of -o: the shim's program name (/proc/self/exe) is
# not the launcher's guess for a symlink or a script, so it is refused
# before the program runs; %%e is a literal and fine.
ln -s "$MKFIXTURE" "$T/linked"
run_cmd "$CS_CMD" run -o "$T/d_%e/r.%p" -- "$T/linked" --fake-shim 0
expect_status $LINENO 2
expect_err $LINENO "run: --output '$T/d_%e/r.%p': %e (the program name) may only be in the file name, not in the directory"
[ -e "$T/d_mkfixture" ] || [ -e "$T/d_linked" ] && fail $LINENO "the program ran"
# %p there too: documented as not allowed, and now refused up front.
run_cmd "$CS_CMD" run -o "$T/d%p/x" -- sh -c 'echo ran'
expect_status $LINENO 2
expect_err $LINENO "run: --output '$T/d%p/x': %p (the pid) may only be in the file name, not in the directory"
[ -s "$T/out" ] && fail $LINENO "the program ran"

# An output the shim could not create, or would replace by its default
# name: one line, and the program is not run.
out_cases=(
	$LINENO 1 "$T/nodir/x.%p" "run: --output '$T/nodir/x.%p': cannot create files in $T/nodir: No such file or directory"
	$LINENO 1 "$T/basic.rpt/x.%p" "run: --output '$T/basic.rpt/x.%p': cannot create files in $T/basic.rpt: Not a directory"
	$LINENO 2 "$T/$(printf '%*s' 4100 '' | tr ' ' a)" "run: --output is 41"
	$LINENO 2 "$T/$(printf '%*s' 256 '' | tr ' ' a)" "the file name is longer than 255 characters"
	$LINENO 2 "$T/" "run: --output '$T/' has no file name after its last '/'"
)
for ((i = 0; i < ${#out_cases[@]}; i += 4)); do
	run_cmd "$CS_CMD" run -o "${out_cases[i + 2]}" -- sh -c 'echo ran'
	expect_status "${out_cases[i]}" "${out_cases[i + 1]}"
	expect_err "${out_cases[i]}" "${out_cases[i + 3]}"
	[ "$(wc -l <"$T/err")" -eq 1 ] || { fail "${out_cases[i]}" "not one line"; show "$T/err"; }
	[ -s "$T/out" ] && fail "${out_cases[i]}" "the program ran"
done
# A relative -o is measured once made absolute.
(cd "$T" && "$CS_CMD" run -o "$(printf '%*s' 4090 '' | tr ' ' a)" -- sh -c 'echo ran') \
	>"$T/out" 2>"$T/err"
expect_err $LINENO "characters long once made absolute; the shim takes at most 4095"
[ -s "$T/out" ] && fail $LINENO "the program ran"
# 255 characters with %p and %e counted as one each is not too long.
mkdir "$T/long"
run_cmd "$CS_CMD" run -q -o "$T/long/%p%e$(printf '%*s' 253 '' | tr ' ' a)" -- sh -c 'echo ran'
expect_out $LINENO <<<"ran"
# The same checks for a CACHESHIM_OUTPUT of the environment.
CACHESHIM_OUTPUT=nodir/x.%p run_cmd "$CS_CMD" run -- sh -c 'echo ran'
expect_status $LINENO 1
expect_err $LINENO "run: CACHESHIM_OUTPUT 'nodir/x.%p': cannot create files in nodir: No such file or directory"
if [ "$(id -u)" -ne 0 ]; then
	mkdir "$T/ro" && chmod 555 "$T/ro"
	run_cmd "$CS_CMD" run -o "$T/ro/x.%p" -- sh -c 'echo ran'
	expect_status $LINENO 1
	expect_err $LINENO "cannot create files in $T/ro: Permission denied"
	[ -s "$T/out" ] && fail $LINENO "the program ran"
fi

mkdir "$T/d_%e"
run_cmd "$CS_CMD" run -o "$T/d_%%e/r.%p" -- "$T/linked" --fake-shim 0
expect_status $LINENO 0
expect_err $LINENO "(1 report file in $T/d_%e)"

finish
