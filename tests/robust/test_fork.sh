#!/bin/bash
# SPDX-License-Identifier: MIT
# fork: each child re-opens its counters and writes a file of its own,
# without the calls its parent made before the fork; `cacheshim report`
# merges the files and `cacheshim run` prints one table for the whole
# process tree.  A parent and 8 children making 1,000 calls each: exactly
# 9,000.  _Fork and clone: their children run unmeasured, the parent's file holds
# only the parent's calls.  vfork: a child that execs (the parent's memory is shared until
# then) leaves the parent's file intact, and so does one whose exec fails;
# their calls before the exec are not the parent's (they were: N + 2).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

K=8
N=1000

# --- fork, files merged by `cacheshim report` -------------------------
plain_run plain "$R/prog_fork" fork $K $N
expect_status plain 0
mkdir "$T/fork"
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc,perf::PAGE-FAULTS CACHESHIM_TARGETS=rt_leaf \
	CACHESHIM_OUTPUT="$T/fork/out.%p" LD_PRELOAD=$CS_SHIM \
	"$R/prog_fork" fork $K $N >"$T/fork.out" 2>"$T/fork.err" || status=$?
expect_status fork 0
same_output plain fork
no_shim_lines fork
nfiles=$(find "$T/fork" -type f | wc -l)
[ "$nfiles" -eq $((K + 1)) ] || fail "$nfiles report files, want $((K + 1)) (parent and $K children)"
# Each process has its own N, no more: a child counting its parent's
# calls made before the fork would have more.
for f in "$T"/fork/out.*; do
	report_files one "$f" -- --by function
	want_count one "function=rt_leaf,event=tsc" calls $N
	want_count one "function=rt_leaf,event=perf::PAGE-FAULTS" calls $N
	! incomplete_said one || { show "$T/one.rerr"; fail "$f is incomplete"; }
done
report_files merged "$T"/fork/out.* -- --by function
want_count merged "function=rt_leaf,event=tsc" calls $(((K + 1) * N))
want_count merged "function=rt_leaf,event=tsc" entered $(((K + 1) * N))
want_count merged "function=rt_leaf,event=perf::PAGE-FAULTS" calls $(((K + 1) * N))
echo "fork: $nfiles files, $(((K + 1) * N)) calls merged"

# --- fork under `cacheshim run`: one table for the tree ----------------
mkdir "$T/run"
status=0
"$CS_CMD" run -e tsc -t rt_leaf -o "$T/run/out.%p" -- "$R/prog_fork" fork $K $N \
	>"$T/run.out" 2>"$T/run.err" || status=$?
expect_status run 0
same_output plain run
# The summary table (on stderr) has one rt_leaf row, with all the calls.
rows=$(awk '$1 == "rt_leaf"' "$T/run.err")
if [ "$(printf '%s\n' "$rows" | grep -c .)" -ne 1 ] ||
	[ "$(printf '%s\n' "$rows" | awk '{ print $2 }')" != $(((K + 1) * N)) ]; then
	show "$T/run.err"
	fail "cacheshim run: want one rt_leaf row with $(((K + 1) * N)) calls"
fi
grep -q "$((K + 1)) report files" "$T/run.err" || {
	show "$T/run.err"
	fail "cacheshim run: the summary does not say it merged $((K + 1)) files"
}
echo "cacheshim run: one table, $(((K + 1) * N)) calls"
# Through a shell that forks and leaves by _exit (dash with a command
# after the program): the shell's own file, with no call in it, is not
# finished, and every such run said "is incomplete" about it.
mkdir "$T/runsh"
status=0
"$CS_CMD" run -e tsc -t rt_leaf -o "$T/runsh/out.%p" -- \
	sh -c '"$0" fork 1 10; true' "$R/prog_fork" >"$T/runsh.out" 2>"$T/runsh.err" || status=$?
expect_status runsh 0
grep -q "^  rt_leaf *20 " "$T/runsh.err" || { show "$T/runsh.err"; fail "sh -c: want 20 calls of rt_leaf"; }
grep -q incomplete "$T/runsh.err" && { show "$T/runsh.err"; fail "sh -c: a file that recorded nothing is called incomplete"; }
echo "cacheshim run through sh -c: 20 calls, nothing called incomplete"

# --- _Fork: no fork handler runs in its child -------------------------
# The child of _Fork (glibc 2.34) cannot set up a file of its own (it may
# be a signal handler's child) and runs unmeasured.  Before, its calls
# were measured into the parent's file (shared memory): K * N calls more
# in the parent's rows, torn by two processes' unlocked updates.
plain_run fplain "$R/prog_fork" _Fork $K $N
expect_status fplain 0
mkdir "$T/Fork"
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
	CACHESHIM_OUTPUT="$T/Fork/out.%p" LD_PRELOAD=$CS_SHIM \
	"$R/prog_fork" _Fork $K $N >"$T/Fork.out" 2>"$T/Fork.err" || status=$?
expect_status Fork 0
same_output fplain Fork
no_shim_lines Fork
nfiles=$(find "$T/Fork" -type f | wc -l)
[ "$nfiles" -eq 1 ] || fail "_Fork: $nfiles report files, want 1 (the parent's)"
report_files Fork "$T"/Fork/out.* -- --by function
want_count Fork "function=rt_leaf,event=tsc" calls $N
want_count Fork "function=rt_leaf,event=tsc" entered $N
! incomplete_said Fork || { show "$T/Fork.rerr"; fail "_Fork: the parent's file is incomplete"; }
echo "_Fork: the parent's file has its own $N calls, its $K children none"

# --- clone: a new process, no fork handler runs in its child ------------
# glibc's clone without CLONE_VM makes a process as _Fork does, and its
# child ran measured into the parent's file: 5,000 calls where the parent
# made 1,000.  Its start routine is now entered through the shim, which
# turns measuring off in the child first.
plain_run cplain "$R/prog_fork" clone $K $N
expect_status cplain 0
mkdir "$T/clone"
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
	CACHESHIM_OUTPUT="$T/clone/out.%p" LD_PRELOAD=$CS_SHIM \
	"$R/prog_fork" clone $K $N >"$T/clone.out" 2>"$T/clone.err" || status=$?
expect_status clone 0
same_output cplain clone
no_shim_lines clone
nfiles=$(find "$T/clone" -type f | wc -l)
[ "$nfiles" -eq 1 ] || fail "clone: $nfiles report files, want 1 (the parent's)"
report_files clone "$T"/clone/out.* -- --by function
want_count clone "function=rt_leaf,event=tsc" calls $N
want_count clone "function=rt_leaf,event=tsc" entered $N
! incomplete_said clone || { show "$T/clone.rerr"; fail "clone: the parent's file is incomplete"; }
echo "clone: the parent's file has its own $N calls, its $K children none"

# --- fork with glibc's and the shim's own calls as targets --------------
# A child's calls before the shim's atfork child handler switched it to a
# file of its own (glibc's post-fork code; the handler's own errno read)
# were measured into the parent's file, shared memory: the parent's file
# held a row called from the shim (after_fork_child), and calls of the
# child entered there and never returned.  Every file must hold only its
# own process's calls: rt_leaf exact, nothing called from the shim, no
# call left unreturned.
mkdir "$T/forkg"
status=0
CACHESHIM_QUIET=1 CACHESHIM_HOOK=entry CACHESHIM_EVENTS=tsc \
	CACHESHIM_TARGETS='rt_leaf,*fork*,__errno_location' \
	CACHESHIM_OUTPUT="$T/forkg/out.%p" LD_PRELOAD=$CS_SHIM \
	"$R/prog_fork" fork $K $N >"$T/forkg.out" 2>"$T/forkg.err" || status=$?
expect_status forkg 0
same_output plain forkg
report_files forkg "$T"/forkg/out.*
want_count forkg "function=rt_leaf,event=tsc" calls $(((K + 1) * N))
grep -q 'libcacheshim' "$T/forkg.csv" && { show "$T/forkg.csv"; fail "a call made by the shim is in a report"; }
for f in "$T"/forkg/out.*; do
	"$CS_CMD" report -f csv "$f" >/dev/null 2>"$T/forkg1.err" || { show "$T/forkg1.err"; fail "$f: report failed"; }
	grep -q 'did not return' "$T/forkg1.err" && { show "$T/forkg1.err"; fail "$f: calls that did not return"; }
done
echo "fork with *fork* and __errno_location wrapped: each file its own process's calls"

# --- vfork: a child that execs a profiled program, one whose exec fails --
M=500
plain_run vplain "$R/prog_fork" vfork $N "$R/prog_threads" 0 $M
expect_status vplain 0
mkdir "$T/vfork"
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
	CACHESHIM_OUTPUT="$T/vfork/out.%p" LD_PRELOAD=$CS_SHIM \
	"$R/prog_fork" vfork $N "$R/prog_threads" 0 $M >"$T/vfork.out" 2>"$T/vfork.err" ||
	status=$?
expect_status vfork 0
same_output vplain vfork
no_shim_lines vfork
nfiles=$(find "$T/vfork" -type f | wc -l)
[ "$nfiles" -eq 2 ] || fail "vfork: $nfiles report files, want 2 (parent, exec'd child)"
counts=
for f in "$T"/vfork/out.*; do
	report_files one "$f" -- --by function
	[ ! -s "$T/one.rerr" ] || { show "$T/one.rerr"; fail "vfork: report of $f complains"; }
	row=$(csv_one one "function=rt_leaf,event=tsc" calls,entered)
	counts="$counts ${row%%	*}"
	[ "${row%%	*}" = "${row##*	}" ] || fail "vfork: $f has calls, entered = $row"
done
counts=$(echo $counts | tr ' ' '\n' | sort -n | tr '\n' ' ')
[ "$counts" = "$M $N " ] || fail "vfork: per-file calls are $counts, want $M (child) and $N (parent)"
echo "vfork: parent $N calls, exec'd child $M calls, both files complete"

# --- vfork from a thread not set up yet; clone(CLONE_VM | CLONE_VFORK) ---
# A new thread whose first target calls are its vfork child's: the child
# set the thread up (state in shared memory, perf descriptors of its own)
# and its calls were measured into the parent's file (3 * N where the
# threads made 2 * N); the parent thread's calls were then all dropped,
# its perf descriptors being the child's.  clone(CLONE_VM | CLONE_VFORK)
# children's calls were measured as the calling thread's.
plain_run vtplain "$R/prog_fork" vfork-thread $N
expect_status vtplain 0
mkdir "$T/vt"
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc,perf::PAGE-FAULTS CACHESHIM_TARGETS=rt_leaf \
	CACHESHIM_OUTPUT="$T/vt/out.%p" LD_PRELOAD=$CS_SHIM \
	"$R/prog_fork" vfork-thread $N >"$T/vt.out" 2>"$T/vt.err" || status=$?
expect_status vt 0
same_output vtplain vt
no_shim_lines vt
nfiles=$(find "$T/vt" -type f | wc -l)
[ "$nfiles" -eq 1 ] || fail "vfork-thread: $nfiles report files, want 1 (the parent's)"
report_files vt "$T"/vt/out.* -- --by function
want_count vt "function=rt_leaf,event=tsc" entered $((2 * N))
want_count vt "function=rt_leaf,event=tsc" calls $((2 * N))
want_count vt "function=rt_leaf,event=perf::PAGE-FAULTS" calls $((2 * N))
echo "vfork and clone(CLONE_VM | CLONE_VFORK) from fresh threads: the parent's $((2 * N)) calls only"

# --- _Fork in a library's constructor, which runs before the shim's ---
# The wrapper's real _Fork was only looked up in the shim's constructor:
# before it, _Fork failed with ENOSYS (with or without targets).
cat >"$T/early.c" <<'C'
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
__attribute__((constructor)) static void early(void)
{
	int st;
	pid_t p = _Fork();

	if (p == 0)
		_exit(7);
	if (p < 0 || waitpid(p, &st, 0) != p) {
		perror("early _Fork");
		return;
	}
	printf("early _Fork: child status %d\n", WEXITSTATUS(st));
}
C
printf 'int main(void) { return 0; }\n' >"$T/early_main.c"
${CC:-cc} -shared -fPIC -o "$T/libearly.so" "$T/early.c"
${CC:-cc} -o "$T/early_main" "$T/early_main.c" -L"$T" -Wl,--no-as-needed -learly -Wl,-rpath,"$T"
plain_run eplain "$T/early_main"
expect_status eplain 0
grep -q '^early _Fork: child status 7$' "$T/eplain.out" || { show "$T/eplain.out"; fail "premise: _Fork in a constructor"; }
shim_run early tsc rt_leaf "$T/early_main"
expect_status early 0
same_output eplain early
echo "_Fork in a library constructor before the shim's: works"
