#!/bin/bash
# SPDX-License-Identifier: MIT
# Tail calls between entry-patched functions must not grow the stack
# without bound (issue 8, point 5): aw_tailrec(N) jumps to its own patched
# entry N times.  Without the shim it runs in a few bytes of stack; under
# the shim each of the N + 1 entries enters the wrapper and the program
# still ends normally with the default 8 MiB stack (a frame kept per entry
# would need N times its size).  By design (docs/design.md) tail calls
# beyond the 16th in a row run inside the outer call's measurement and
# count as dropped: entered = calls + dropped = N + 1.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

PROG=$E/prog_awkward
N=1000000

# Premise: no stack growth of its own (runs with a 64 KiB stack limit).
status=0
(ulimit -s 64 && exec "$PROG" --tailrec $N) >"$T/plain.out" 2>"$T/plain.err" || status=$?
[ "$status" -eq 0 ] || fail "aw_tailrec($N) fails with a 64 KiB stack, even without the shim"
grep -qx 'aw_tailrec 0' "$T/plain.out" || fail "aw_tailrec($N) returns '$(cat "$T/plain.out")'"

hook_run shim entry tsc aw_tailrec "$PROG" --tailrec $N
[ "$status" -eq 0 ] || {
	show "$T/shim.err"
	fail "aw_tailrec($N) jumping to its patched entry exits $status (stack overflow?)"
}
same_output plain shim
report_csv shim --by function
row=$(csv_one shim "function=aw_tailrec,event=tsc" calls,entered,dropped)
IFS=$'\t' read -r calls entered dropped <<<"$row"
[ "$entered" = $((N + 1)) ] && [ $((calls + dropped)) -eq $((N + 1)) ] && [ "$calls" -ge 1 ] || {
	show "$T/shim.csv"
	fail "aw_tailrec: calls $calls, dropped $dropped, entered $entered; want entered = calls + dropped = $((N + 1))"
}
echo "aw_tailrec: $((N + 1)) entries ($calls measured, $dropped inside the outer call), stack bounded"

# The call site of a call entered by a tail jump is that of the call that
# started the chain, however long: aw_tailrec(3) is entered 4 times by one
# call in main.  Following one jump back only, the third and fourth
# entries had the trampoline's return address in libcacheshim.so as their
# call site (a C++ deleting destructor jumping to operator delete(void *,
# size_t), which jumps to operator delete(void *), showed it too).
hook_run chain entry tsc aw_tailrec "$PROG" --tailrec 3
[ "$status" -eq 0 ] || { show "$T/chain.err"; fail "aw_tailrec(3) exits $status"; }
report_csv chain
sites=$(csv_select "$T/chain.csv" "function=aw_tailrec,event=tsc" callsite,module,entered)
[ "$(printf '%s\n' "$sites" | wc -l)" -eq 1 ] && [[ $sites == main+0x*$'\t'prog_awkward$'\t'4 ]] || {
	show "$T/chain.csv"
	fail "aw_tailrec(3): want one call site, in main, entered 4 times; got: $sites"
}
echo "aw_tailrec(3): 4 entries at one call site in main"
