#!/bin/bash
# SPDX-License-Identifier: MIT
# `cacheshim report` of a live report file on a full disk.  A reservation
# moves header.used on before the file grows; when the growth finds the
# file system full, header.used stays past the file's end while the
# program runs, and the report called the file damaged ("truncated: the
# header says N bytes are used, the file has M").  A program makes a few
# series, fills the disk, calls more targets (their blocks cross the 4 MB
# growth step and find no room) and then runs the report of its own live
# file: it must succeed without a damage message.  Needs root and a
# loop-mounted ext4.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cd "$T"
make_fns64
make_fill_h
cat >prog.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include "fill.h"
#include "fns.h"

/* Calls f0 .. f(before-1), fills the disk (argv[2]), calls the other
 * targets, and runs argv[3] while it still runs. */
int main(int argc, char **argv)
{
	int before = atoi(argv[1]), k;
	long s = 0;

	for (k = 0; k < before; k++)
		s += fns[k](0);
	if (argc > 3)
		fill(argv[2]);
	for (k = before; k < 64; k++)
		s += fns[k](0);
	if (argc > 3 && system(argv[3]) != 0)
		return 5;
	printf("%ld\n", s);
	return 0;
}
C
cc=${CC:-cc}
$cc -O1 -shared -fPIC -o libf.so lib.c
$cc -O1 -o prog prog.c -L. -lf -Wl,-rpath,"$T" -Wl,-z,now

mount_ext4 "$T/disk"

# The report runs without the shim; the shell system() starts writes no
# file of its own (the disk is full).
live="env -u LD_PRELOAD '$CS_CMD' report '$T/disk/r.csr' >'$T/live.out' 2>'$T/live.err'"
for before in 2 8; do
	rm -f "$T/disk/fill" "$T/disk/r.csr"*
	plain_run plain ./prog $before
	expect_status plain 0
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS='f[0-9]*' \
		CACHESHIM_OUTPUT="$T/disk/r.csr" LD_PRELOAD="$CS_SHIM" \
		./prog $before "$T/disk/fill" "$live" >"$T/full$before.out" \
		2>"$T/full$before.err" || status=$?
	# The growth must really have found no room: header.used past the end.
	grep -q 'f63' "$T/live.out" && fail "before=$before: f63 recorded, the disk was not full"
	if grep -q damaged "$T/live.err" || [ $status = 5 ]; then
		show "$T/live.err"
		fail "before=$before: the report of the live file failed or called it damaged"
	fi
	expect_status "full$before" 0
	same_output plain "full$before"
done
rm -f "$T/disk/fill"
echo "the live report file on a full ext4 read without damage"
