#!/bin/bash
# SPDX-License-Identifier: MIT
# Call-site and nested blocks carved from per-thread arenas of the report
# file (shim/output.c): two threads with 48 call sites each (several
# arenas per thread, carved while the other thread carves its own), and
# the same killed by SIGKILL at the end; and 48 threads with two call
# sites each in a 2 MB file, which arenas must not fill.  Every call is in the report with
# its exact count, nothing reads as damaged, and in the file itself every
# site block starts on a 64-byte line and the unused ends of the arenas
# are padding blocks.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

# blocks FILE: "offset type size" of every block of a report file, walked
# as a reader does (from 4096 up to header.used).
blocks()
{
	local f=$1 used off=4096 type size

	used=$(od -An -t u8 -j 24 -N 8 "$f" | tr -d ' ')
	used=$((used & 0x7fffffffffffffff))
	while [ $off -lt $used ]; do
		read -r type size < <(od -An -t u4 -j $off -N 8 "$f")
		[ "$size" -gt 0 ] || break
		echo "$off $type $size"
		off=$((off + size))
	done
}

for how in exit:0 kill:137; do
	want=${how#*:}
	how=${how%:*}
	plain_run plain_$how "$R/prog_arena" 2 48 $how
	expect_status plain_$how $want
	shim_run arena_$how tsc rt_leaf,rt_ping,rt_pong "$R/prog_arena" 2 48 $how
	expect_status arena_$how $want
	same_output plain_$how arena_$how
	no_shim_lines arena_$how
	report_csv arena_$how
	if grep -q 'damaged' "$T/arena_$how.rerr"; then
		show "$T/arena_$how.rerr"
		fail "$how: the report reads as damaged"
	fi

	# Site i of each thread: i + 1 calls, so each row (both threads) 2(i + 1).
	csv_select "$T/arena_$how.csv" "function=rt_leaf,event=tsc" calls | sort -n >"$T/counts"
	seq 2 2 96 >"$T/want"
	if ! cmp -s "$T/counts" "$T/want"; then
		show "$T/arena_$how.csv"
		fail "$how: rt_leaf calls per call site are $(tr '\n' ' ' <"$T/counts"), want 2 4 .. 96"
	fi
	want_count arena_$how "function=rt_ping,event=tsc" calls 6
	want_count arena_$how "function=rt_pong,event=tsc" calls 4

	blocks "$T/arena_$how.csr" >"$T/blocks"
	nsites=$(awk '$2 == 3' "$T/blocks" | wc -l)
	npads=$(awk '$2 == 8' "$T/blocks" | wc -l)
	# Padding of 64 bytes or more: not a gap before an aligned block but
	# the unused end of an arena.
	nends=$(awk '$2 == 8 && $3 >= 64' "$T/blocks" | wc -l)
	nnested=$(awk '$2 == 5' "$T/blocks" | wc -l)
	misaligned=$(awk '$2 == 3 && $1 % 64' "$T/blocks" | wc -l)
	# 48 rt_leaf sites, rt_ping's and rt_pong's (3 of them) per thread,
	# plus the calibration target's (the main thread).
	[ "$nsites" -ge 102 ] || fail "$how: $nsites site blocks in the file, want at least 102"
	[ "$misaligned" = 0 ] || {
		awk '$2 == 3 && $1 % 64' "$T/blocks" >&2
		fail "$how: $misaligned site blocks not on a 64-byte line"
	}
	[ "$nnested" -ge 4 ] || fail "$how: $nnested nested blocks, want at least 4"
	# Each thread filled more than one arena (48 sites of 9,344 bytes),
	# leaving the ends unused.
	[ "$nends" -ge 2 ] || fail "$how: $nends arena ends (padding of 64 bytes or more), want 2 or more"
	echo "$how: status $want; 96 call sites exact; $nsites site blocks (64-byte lines), $nnested nested, $npads padding ($nends arena ends)"
done

# A thread's first blocks are reserved alone: 48 threads with two call
# sites each fit a 2 MB file (96 site blocks of 9 KB); with an arena per
# thread from its first block on they did not, and calls were lost.
plain_run plain_small "$R/prog_arena" 48 2 exit
CACHESHIM_CAPACITY_MB=2 CACHESHIM_SERIES=0 shim_run small tsc rt_leaf "$R/prog_arena" 48 2 exit
expect_status small 0
same_output plain_small small
no_shim_lines small
report_csv small
want_count small "function=rt_leaf,event=tsc" calls 144
if grep -qE 'lost|not recorded|full' "$T/small.rerr"; then
	show "$T/small.rerr"
	fail "48 threads x 2 call sites in 2 MB: calls lost"
fi
echo "48 threads x 2 call sites in a 2 MB file: 144 calls, none lost"
