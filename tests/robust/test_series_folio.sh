#!/bin/bash
# SPDX-License-Identifier: MIT
# Holes in a report file on a disk file system.  Series windows no call
# reached were holes everywhere; on ext4 with large folios (Linux 6.16+)
# a reader of the live file reads ahead into folios that span a hole and
# pages the shim writes, and a write fault on such a page reserves blocks
# for the whole folio: on a full disk the program got a SIGBUS at a store
# into a page that was allocated all along.  A program makes a few series,
# reads its live report file as `cacheshim report` would, fills the disk
# and calls more targets (new blocks next to the old series' windows);
# it must run as without the shim.  Needs root and a loop-mounted ext4.
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

int main(int argc, char **argv)
{
	int before = atoi(argv[1]), k;
	long s = 0;

	for (k = 0; k < before; k++)
		s += fns[k](0);
	if (argc > 3) {
		read_through(argv[2]);
		fill(argv[3]);
	}
	for (k = before; k < before + 8; k++)
		s += fns[k](0);
	printf("%ld\n", s);
	return 0;
}
C
cc=${CC:-cc}
$cc -O1 -shared -fPIC -o libf.so lib.c
$cc -O1 -o prog prog.c -L. -lf -Wl,-rpath,"$T" -Wl,-z,now

mount_ext4 "$T/disk"

# Where the new blocks fall against the old series' holes depends on how
# many series there are: several counts (the SIGBUS came at 6 and 7).
for before in 2 3 4 5 6 7 8 9; do
	rm -f "$T/disk/fill" "$T/disk/r$before.csr"
	plain_run plain ./prog $before
	expect_status plain 0
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS='f*' \
		CACHESHIM_OUTPUT="$T/disk/r$before.csr" LD_PRELOAD="$CS_SHIM" \
		./prog $before "$T/disk/r$before.csr" "$T/disk/fill" >"$T/full$before.out" \
		2>"$T/full$before.err" || status=$?
	expect_status "full$before" 0
	same_output plain "full$before"
done
rm -f "$T/disk/fill"
echo "no SIGBUS with a live reader on a full ext4"
