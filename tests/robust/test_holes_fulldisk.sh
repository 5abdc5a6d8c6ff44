#!/bin/bash
# SPDX-License-Identifier: MIT
# A failed exec on a full disk, after the seal punched out the series
# windows no call reached (shim/output.c, punch_unused).  The exec fails,
# the file is unsealed, the disk fills, and the program calls its target
# on past the windows it has: the next windows are mapped in over the
# holes, which the file system cannot fill now.  The mapping fails, and
# falling back to touching the pages (as for a disk file without holes)
# was a SIGBUS in the program; the windows it has must merge instead.
# Needs root and a loop-mounted ext4.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cd "$T"
make_fill_h
echo 'long h_fn(long x) { return x + 1; }' >h.c
cat >main.c <<'C'
#include <stdio.h>
#include <unistd.h>
#include "fill.h"
long h_fn(long);
/* One call site for every call: its block and series exist before the
 * disk fills. */
__attribute__((noinline)) static long call(long i)
{
	long r = h_fn(i);

	__asm__ volatile("");
	return r;
}

int main(int argc, char **argv)
{
	long s = 0, i;

	(void)argc;
	for (i = 0; i < 100; i++)
		s += call(i);
	execl("/nonexistent/program", "x", (char *)0);
	fill(argv[1]);
	/* Past the 16 windows of 16 calls mapped in at first. */
	for (i = 0; i < 1000; i++)
		s += call(i);
	printf("sum %ld\n", s);
	return 0;
}
C
cc=${CC:-cc}
$cc -shared -fPIC -o libh.so h.c
$cc -o main main.c -L. -lh -Wl,-rpath,"$T"

mount_ext4 "$T/disk"

rm -f "$T/disk/fill"
plain_run plain ./main "$T/disk/fill"
expect_status plain 0
rm -f "$T/disk/fill"
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=h_fn \
	CACHESHIM_OUTPUT="$T/disk/r.csr" LD_PRELOAD="$CS_SHIM" \
	./main "$T/disk/fill" >"$T/full.out" 2>"$T/full.err" || status=$?
rm -f "$T/disk/fill"
expect_status full 0
same_output plain full
report_files full "$T/disk/r.csr"
want_count full "function=h_fn,event=tsc" calls 1100
"$CS_CMD" report --series --format csv "$T/disk/r.csr" >"$T/full.series" 2>"$T/full.serr" ||
	{ show "$T/full.serr"; fail "report --series refused the file"; }
got=$(csv_select "$T/full.series" "target=h_fn,event=tsc" calls | awk '{ n += $1 } END { print n + 0 }')
[ "$got" = 1100 ] || { show "$T/full.series"; fail "the series holds $got calls, want 1100"; }
echo "a failed exec, a full disk, calls past the windows: 1100 calls, no SIGBUS"
