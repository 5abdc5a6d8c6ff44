#!/bin/bash
# SPDX-License-Identifier: MIT
# Non-local exits: wrapped calls left by longjmp, siglongjmp (also from a
# timer signal), C++ exceptions thrown through wrapped functions of a C++
# library, a ruby exception raised in a Hash default proc inside
# rb_hash_aref (ruby's own __builtin_longjmp), and ruby Fiber switches
# inside rb_hash_aref.  The program's output and status are unchanged, the
# calls that did return are all counted, and entered - calls is exactly the
# number of calls that never returned.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

# left NAME ROUND: the number in "ROUND: X of Y calls did not return" of
# the program's stdout.
left()
{
	sed -n "s/^$2: \\([0-9]*\\) of [0-9]* calls did not return.*/\\1/p" "$T/$1.out"
}

# want_left NAME FUNCTION WANT: entered - calls - dropped of FUNCTION
# (rows of event tsc) must be WANT, and calls + dropped = entered - WANT.
want_left()
{
	local got

	got=$(not_returned "$1" "function=$2,event=tsc")
	if [ "$got" != "$3" ]; then
		show "$T/$1.csv"
		fail "'$1': $got calls of $2 did not return, want $3"
	fi
}

# --- C: longjmp, nested longjmp, siglongjmp, from a timer ---------------
N=3000
ROUNDS=50
plain_run jplain "$R/prog_jump" $N $ROUNDS
expect_status jplain 0
shim_run jump tsc rt_callback,rt_spin,rt_leaf "$R/prog_jump" $N $ROUNDS
expect_status jump 0
same_output jplain jump
spins=$(sed -n 's/^rt_spin started \([0-9]*\)$/\1/p' "$T/jump.err")
[ -n "$spins" ] || { show "$T/jump.err"; fail "prog_jump did not say how often rt_spin started"; }
lj=$(left jump longjmp)
nest=$(left jump nested)
slj=$(left jump siglongjmp)
tm=$(left jump timer)
[ "$lj" = $((N / 3)) ] && [ "$nest" = $((2 * (N / 5))) ] && [ "$slj" = $((N / 2)) ] &&
	[ "$tm" = $ROUNDS ] || { show "$T/jump.out"; fail "prog_jump's own counts are off"; }
report_csv jump --by function
want_left jump rt_callback $((lj + nest + slj + tm))
want_left jump rt_spin "$spins"
want_count jump "function=rt_callback,event=tsc" entered $((4 * N + ROUNDS))
want_count jump "function=rt_leaf,event=tsc" calls 1
echo "C: $((lj + nest + slj + tm)) rt_callback and $spins rt_spin calls left by (sig)longjmp"

# --- C++: exceptions through wrapped functions ---------------------------
plain_run xplain "$R/prog_cxx" $N
expect_status xplain 0
shim_run cxx tsc '_ZN3rtx*' "$R/prog_cxx" $N
expect_status cxx 0
same_output xplain cxx
no_shim_lines cxx
check=$(left cxx check)
apply=$(left cxx apply)
nested=$(left cxx nested)
[ "$check" = $(((N + 3) / 4)) ] && [ "$apply" = $(((N + 2) / 3)) ] &&
	[ "$nested" = $((2 * ((N + 3) / 4))) ] || { show "$T/cxx.out"; fail "prog_cxx's own counts are off"; }
report_csv cxx --by function
# rtx::check and rtx::apply, mangled.
want_left cxx _ZN3rtx5checkEl $((check + nested / 2))
want_left cxx _ZN3rtx5applyEPFllEl $((apply + nested / 2))
want_count cxx "function=_ZN3rtx5checkEl,event=tsc" entered $((2 * N))
want_count cxx "function=_ZN3rtx5applyEPFllEl,event=tsc" entered $((2 * N))
echo "C++: $((check + apply + nested)) calls left by exceptions"

# --- ruby --------------------------------------------------------------
RUBY=$(command -v ruby) || { echo "SKIP (ruby part): no ruby"; exit 0; }

# ruby_run NAME SCRIPT ARGS...: the script with and without the shim
# (target rb_hash_aref), same output; report by function in NAME.csv.
ruby_run()
{
	local name=$1 script=$CS_SRCDIR/tests/robust/$2

	shift 2
	plain_run ${name}_plain "$RUBY" --disable=gems "$script" "$@"
	expect_status ${name}_plain 0
	shim_run $name tsc rb_hash_aref "$RUBY" --disable=gems "$script" "$@"
	expect_status $name 0
	same_output ${name}_plain $name
	no_shim_lines $name
	report_csv $name --by function
}

# A default proc raising KeyError inside rb_hash_aref, rescued: each raise
# leaves one call; between two runs the returned calls differ by exactly
# the lookups that did not raise.
prev=
for m in 3000 6000; do
	ruby_run raise$m hash_raise.rb $m
	raised=$(sed -n 's/^[0-9]* lookups, \([0-9]*\) raised.*/\1/p' "$T/raise$m.out")
	[ "$raised" = $((m / 2)) ] || { show "$T/raise$m.out"; fail "hash_raise.rb: $raised raised"; }
	want_left raise$m rb_hash_aref $raised
	calls=$(csv_sum raise$m "function=rb_hash_aref,event=tsc" calls)
	if [ -n "$prev" ] && [ $((calls - prev)) -ne $(((m - raised) - (3000 - 3000 / 2))) ]; then
		fail "rb_hash_aref: $calls returned calls with m=$m, $prev with m=3000"
	fi
	prev=$calls
	echo "ruby raise: m=$m, $raised calls left by raise, $calls returned"
done

# Fiber switches inside rb_hash_aref; NF fibers end the run suspended
# inside one call each.  Returned calls: 2 per lookup through the
# generator, one per resume after the first for each waiting fiber.
NF=5
prev=
for mr in 1000:100 2000:300; do
	m=${mr%:*}
	r=${mr#*:}
	ruby_run fiber$m hash_fiber.rb $m $NF $r
	want_left fiber$m rb_hash_aref $NF
	calls=$(csv_sum fiber$m "function=rb_hash_aref,event=tsc" calls)
	if [ -n "$prev" ] && [ $((calls - prev)) -ne $((2 * (m - 1000) + NF * (r - 100))) ]; then
		fail "rb_hash_aref: $calls returned calls with m=$m r=$r, $prev with m=1000 r=100"
	fi
	prev=$calls
	echo "ruby fibers: m=$m r=$r, $NF calls suspended for good, $calls returned"
done
