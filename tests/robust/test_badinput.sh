#!/bin/bash
# SPDX-License-Identifier: MIT
# Bad settings: CACHESHIM_EVENTS, CACHESHIM_TARGETS and CACHESHIM_OUTPUT
# empty, very long (100 KB), unknown, too many, matching nothing, with odd
# characters (newline, quotes, UTF-8, ';'), an output directory that is
# missing or not writable, perf denied by kernel.perf_event_paranoid.
# Each run: the program's stdout and exit status as without the shim,
# nothing on stderr but lines starting with "cacheshim: ", at least one
# of them saying what is wrong, and the calls still measured exactly where
# the rest of the settings allow it.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

PROG=("$R/prog_threads" 2 1000)
RUN_AS=() # a command that runs the rest as another user
CALLS=2000
plain_run plain "${PROG[@]}"
expect_status plain 0

KB100=$(head -c 102400 /dev/zero | tr '\0' x)
# 100 KB of distinct names, comma-separated.
list100()
{
	local prefix=$1

	seq 1 20000 | sed "s/^/$prefix/" | tr '\n' ',' | head -c 102400
}

bad=
# bad_run NAME REGEX [VAR=VALUE...]: runs the program with the shim and
# the given variables (CACHESHIM_QUIET unset: every line is wanted), in
# the directory $T/NAME.d (where a default report name lands); checks
# output, status, that stderr has "cacheshim: " lines only, and that one
# of them matches REGEX (grep -E; "-": stderr must be empty; "*": any).
bad_run()
{
	local name=$1 regex=$2

	shift 2
	mkdir -p "$T/$name.d"
	status=0
	(cd "$T/$name.d" && "${RUN_AS[@]}" env "$@" LD_PRELOAD="$CS_SHIM" "${PROG[@]}") \
		>"$T/$name.out" 2>"$T/$name.err" || status=$?
	expect_status $name 0
	same_output plain $name
	only_shim_lines "$T/$name.err"
	if [ "$regex" = '*' ]; then
		:
	elif [ "$regex" = - ]; then
		[ ! -s "$T/$name.err" ] || { show "$T/$name.err"; fail "$name: stderr not empty"; }
	elif ! grep -Eq -- "$regex" "$T/$name.err"; then
		show "$T/$name.err"
		fail "$name: no line matching /$regex/"
	fi
}

# want_calls NAME FILE EVENT: FILE's report has exactly CALLS calls of
# rt_leaf for EVENT.
want_calls()
{
	report_files $1 "$2" -- --by function
	want_count $1 "function=rt_leaf,event=$3" calls $CALLS
}

# no_file NAME: the run left no report file.
no_file()
{
	if [ -n "$(ls -A "$T/$1.d")" ]; then
		ls -lA "$T/$1.d" >&2
		fail "$1: a report file was made"
	fi
}

# case_run NAME REGEX WHAT VAR=VALUE...: bad_run, then WHAT is "none" (no
# report file may exist) or the events whose calls must be exact in the
# report $T/NAME.csr ("tsc", "tsc+pf" for tsc and perf::PAGE-FAULTS).
case_run()
{
	local name=$1 regex=$2 what=$3

	shift 3
	bad_run $name "$regex" "$@"
	case $what in
	none) no_file $name ;;
	tsc) want_calls $name "$T/$name.csr" tsc ;;
	tsc+pf)
		want_calls $name "$T/$name.csr" tsc
		want_count $name "function=rt_leaf,event=perf::PAGE-FAULTS" calls $CALLS
		;;
	esac
}

# check NAME CMD...: runs CMD (with set -e) in a subshell; a failure is
# recorded and the next case runs, so that one run shows every failure.
check()
{
	local name=$1 rc

	shift
	set +e
	(
		set -e
		"$@"
	)
	rc=$?
	set -e
	if [ $rc -eq 0 ]; then
		echo "ok: $name"
	else
		echo "FAIL: $name" >&2
		bad="$bad $name"
	fi
}

# --- CACHESHIM_EVENTS -----------------------------------------------------
check events-empty case_run events-empty 'CACHESHIM_EVENTS' tsc+pf \
	CACHESHIM_EVENTS= CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT="$T/events-empty.csr"
check events-100k case_run events-100k 'CACHESHIM_EVENTS.*longer' tsc+pf \
	CACHESHIM_EVENTS="$KB100" CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT="$T/events-100k.csr"
# 100 KB of unknown names: 16 are kept, none counts: tsc must be measured
# instead (the documented fallback), not nothing.
check events-100k-list case_run events-100k-list 'more than 16 events' \
	tsc \
	CACHESHIM_EVENTS="$(list100 nosuchevent)" CACHESHIM_TARGETS=rt_leaf \
	CACHESHIM_OUTPUT="$T/events-100k-list.csr"
check events-unknown case_run events-unknown "'perf::NO-SUCH-EVENT'" tsc \
	CACHESHIM_EVENTS=tsc,perf::NO-SUCH-EVENT CACHESHIM_TARGETS=rt_leaf \
	CACHESHIM_OUTPUT="$T/events-unknown.csr"
EV20=tsc,perf::PAGE-FAULTS,perf::TASK-CLOCK,perf::CONTEXT-SWITCHES,perf::MINOR-FAULTS
EV20=$EV20,perf::MAJOR-FAULTS,perf::CPU-MIGRATIONS,perf::CPU-CLOCK,perf::PAGE-FAULTS:u
EV20=$EV20,perf::TASK-CLOCK:u,perf::CONTEXT-SWITCHES:u,perf::MINOR-FAULTS:u
EV20=$EV20,perf::MAJOR-FAULTS:u,perf::CPU-MIGRATIONS:u,perf::CPU-CLOCK:u,perf::PAGE-FAULTS:k
EV20=$EV20,perf::TASK-CLOCK:k,perf::CONTEXT-SWITCHES:k,perf::MINOR-FAULTS:k,perf::CPU-CLOCK:k
check events-20 case_run events-20 'more than 16 events' tsc+pf \
	CACHESHIM_EVENTS=$EV20 CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT="$T/events-20.csr"
check events-odd case_run events-odd 'CACHESHIM_EVENTS|event' tsc \
	CACHESHIM_EVENTS=$'tsc,perf::PAGE\n-FAULTS,"tsc",\'x\',\xc3\xa9v\xc3\xa9nement,a;b' \
	CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT="$T/events-odd.csr"

# --- CACHESHIM_TARGETS ----------------------------------------------------
check targets-empty case_run targets-empty 'CACHESHIM_TARGETS' none \
	CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS= CACHESHIM_OUTPUT="$T/targets-empty.d/x.csr"
check targets-100k case_run targets-100k 'CACHESHIM_TARGETS.*longer' none \
	CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS="$KB100" \
	CACHESHIM_OUTPUT="$T/targets-100k.d/x.csr"
check targets-100k-list case_run targets-100k-list 'more than 64' tsc \
	CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS="rt_leaf,$(list100 no_such_function_)" \
	CACHESHIM_OUTPUT="$T/targets-100k-list.csr"
check targets-nomatch case_run targets-nomatch "'no_such_fn\\*' matched no" tsc \
	CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS='rt_leaf,no_such_fn*' \
	CACHESHIM_OUTPUT="$T/targets-nomatch.csr"
check targets-odd case_run targets-odd 'CACHESHIM_TARGETS' tsc \
	CACHESHIM_EVENTS=tsc \
	CACHESHIM_TARGETS=$'rt_leaf,rt_\nleaf,"rt_leaf",\'rt_leaf\',f\xc3\xa9,a;b,:arg1' \
	CACHESHIM_OUTPUT="$T/targets-odd.csr"

# --- CACHESHIM_WINDOW ----------------------------------------------------
# A window below the default is said once (what a function reading past it
# gets is garbage, and nothing else would show it); the default is not.
window_said()
{
	local name=$1 want=$2 n

	shift 2
	case_run $name "$([ "$want" = 1 ] && echo 'CACHESHIM_WINDOW=0: a wrapped function' || echo '*')" \
		tsc CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT="$T/$name.csr" "$@"
	n=$(grep -c 'CACHESHIM_WINDOW=' "$T/$name.err" || true)
	[ "$n" = "$want" ] || { show "$T/$name.err"; fail "$name: $n window lines, want $want"; }
}
check window-0 window_said window-0 1 CACHESHIM_WINDOW=0
check window-0-quiet window_said window-0-quiet 0 CACHESHIM_WINDOW=0 CACHESHIM_QUIET=1
check window-256 window_said window-256 0 CACHESHIM_WINDOW=256

# --- CACHESHIM_OUTPUT -----------------------------------------------------
# Empty or too long: one line, and the default name in the current
# directory.
output_default()
{
	local name=$1 f

	shift
	bad_run $name 'CACHESHIM_OUTPUT is' CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf "$@"
	f=$(find "$T/$name.d" -type f -name 'cacheshim.out.[0-9]*')
	[ -n "$f" ] && [ "$(find "$T/$name.d" -type f | wc -l)" -eq 1 ] || {
		ls -lA "$T/$name.d" >&2
		fail "$name: want one cacheshim.out.PID file"
	}
	want_calls $name "$f" tsc
}
check output-empty output_default output-empty CACHESHIM_OUTPUT=
check output-100k output_default output-100k CACHESHIM_OUTPUT="$T/$KB100"

# A directory ("dir/"): the file was named ".1" in it; now the default
# name there, said.
output_dir()
{
	local name=$1 f

	mkdir -p "$T/$name.out.d"
	bad_run $name "CACHESHIM_OUTPUT '.*/' has no file name after its last '/'; writing " \
		CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT="$T/$name.out.d/"
	f=$(find "$T/$name.out.d" -type f)
	case $f in
	"$T/$name.out.d/cacheshim.out."[0-9]*) ;;
	*)
		ls -lA "$T/$name.out.d" >&2
		fail "$name: want one cacheshim.out.PID file in the directory"
		;;
	esac
	want_calls $name "$f" tsc
}
check output-dir output_dir output-dir

check output-nodir case_run output-nodir 'cannot create report file' none \
	CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT="$T/output-nodir.d/no/x.csr"
check output-notdir case_run output-notdir 'cannot create report file' none \
	CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT="$T/plain.out/x.csr"
check output-odd-nodir case_run output-odd-nodir 'cannot create report file' none \
	CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
	CACHESHIM_OUTPUT=$'/nonexistent/"a"\n\'b\';c \xc3\xa9/x.%p'

# Odd but valid characters: the file gets exactly that name (pid
# expanded), and nothing is said.
output_odd()
{
	local odd=$'a\nb "q" \'s\' \xc3\xa9;x' f

	bad_run output-odd - CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
		CACHESHIM_OUTPUT="$T/output-odd.d/$odd.%p"
	f=$(find "$T/output-odd.d" -type f -name "$odd.[0-9]*")
	[ -n "$f" ] && [ "$(find "$T/output-odd.d" -type f -printf x)" = x ] || {
		ls -lbA "$T/output-odd.d" >&2
		fail "output-odd: want one file named after the pattern"
	}
	want_calls output-odd "$f" tsc
}
check output-odd output_odd

# --- as an unprivileged user ------------------------------------------------
# Root may write anywhere and count anything: the next cases run the
# program as nobody (setpriv), so they need root and setpriv.
AS_NOBODY=
NOBODY_AWAY= # root, but nobody cannot reach the build tree
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	if nobody_reaches "$R/prog_threads" "$R/.libs/libcsrobust.so" "$CS_SHIM"; then
		AS_NOBODY=(setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups --)
		chmod 755 "$T"
	else
		NOBODY_AWAY="the user nobody cannot read $R or $CS_SHIM (a parent directory's mode)"
	fi
fi

# nobody_run NAME REGEX [VAR=VALUE...]: bad_run as nobody, in a directory
# nobody may write to.
nobody_run()
{
	local name=$1 rc=0

	mkdir -p "$T/$name.d"
	chmod 777 "$T/$name.d"
	RUN_AS=("${AS_NOBODY[@]}")
	bad_run "$@" || rc=$?
	RUN_AS=()
	return $rc
}

if [ -n "${AS_NOBODY[*]}" ]; then
	# An existing directory nobody may not write to.
	mkdir "$T/ro"
	check output-unwritable nobody_run output-unwritable \
		'cannot create report file.*Permission denied' \
		CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT="$T/ro/x.%p"
	check output-unwritable-empty eval '[ -z "$(ls -A "$T/ro")" ] || fail "a file in $T/ro"'
elif [ -n "$NOBODY_AWAY" ]; then
	echo "SKIP (output-unwritable): $NOBODY_AWAY"
else
	# Not root: a directory without write permission stops us too.
	mkdir "$T/ro"
	chmod 555 "$T/ro"
	check output-unwritable case_run output-unwritable \
		'cannot create report file.*Permission denied' none \
		CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT="$T/ro/x.%p"
fi

# perf denied by kernel.perf_event_paranoid: at 2 and above an unprivileged
# user may not count kernel mode (an event with :k).  The line must name
# the sysctl and the run go on with tsc.  Needs a non-root user (nobody)
# and paranoid >= 2: raised to 2 for the test if it is lower and can be
# written (and restored on exit).
PARANOID=/proc/sys/kernel/perf_event_paranoid
old=$(cat $PARANOID 2>/dev/null || echo unknown)
if [ -n "$NOBODY_AWAY" ]; then
	echo "SKIP (perf-denied, paranoid3): $NOBODY_AWAY"
elif [ -z "${AS_NOBODY[*]}" ]; then
	echo "SKIP (perf-denied): needs root, setpriv and the user nobody"
elif [ "$old" = unknown ]; then
	echo "SKIP (perf-denied): no $PARANOID"
else
	if [ "$old" -lt 2 ]; then
		if echo 2 2>/dev/null >$PARANOID; then
			cleanup_add "echo $old >$PARANOID"
		fi
	fi
	if [ "$(cat $PARANOID)" -lt 2 ]; then
		echo "SKIP (perf-denied): perf_event_paranoid is $(cat $PARANOID) and cannot be raised"
	else
		perf_denied()
		{
			nobody_run perf-denied 'perf_event_paranoid' \
				CACHESHIM_EVENTS=perf::PAGE-FAULTS:k CACHESHIM_TARGETS=rt_leaf \
				CACHESHIM_OUTPUT="$T/perf-denied.d/x.csr"
			grep -q 'measuring tsc instead' "$T/perf-denied.err" || {
				show "$T/perf-denied.err"
				fail "perf-denied: no fallback to tsc said"
			}
			want_calls perf-denied "$T/perf-denied.d/x.csr" tsc
			row=$(csv_one perf-denied "function=rt_leaf,event=perf::PAGE-FAULTS:k" status)
			[ "$row" = "not counted" ] || fail "perf-denied: the :k event is '$row'"
		}
		check perf-denied perf_denied
	fi
	# Paranoid 3: Debian's kernels then deny every unprivileged user, other
	# kernels treat it as 2.  Either the event is denied (and said so, with
	# tsc instead) or it counts: never silence, never a wrong count.
	if echo 3 2>/dev/null >$PARANOID; then
		cleanup_add "echo $old >$PARANOID"
		paranoid3()
		{
			nobody_run paranoid3 '*' \
				CACHESHIM_EVENTS=perf::PAGE-FAULTS CACHESHIM_TARGETS=rt_leaf \
				CACHESHIM_OUTPUT="$T/paranoid3.d/x.csr"
			if grep -q perf_event_paranoid "$T/paranoid3.err"; then
				grep -q 'measuring tsc instead' "$T/paranoid3.err" ||
					fail "paranoid3: no fallback to tsc said"
				want_calls paranoid3 "$T/paranoid3.d/x.csr" tsc
				echo "paranoid 3: denied, measured tsc"
			else
				[ ! -s "$T/paranoid3.err" ] || fail "paranoid3: unexpected lines"
				want_calls paranoid3 "$T/paranoid3.d/x.csr" perf::PAGE-FAULTS
				echo "paranoid 3: this kernel lets nobody count user mode"
			fi
		}
		check paranoid3 paranoid3
		echo "$old" >$PARANOID
	else
		echo "SKIP (paranoid3): $PARANOID is not writable"
	fi
fi

[ -z "$bad" ] || fail "cases that failed:$bad"
