#!/bin/bash
# SPDX-License-Identifier: MIT
# The series windows of the report file that no call reached are given
# back to the file system when the file is sealed (shim/output.c,
# punch_unused): a series block reserves 256 windows (~330 KB with one
# event), and a process making 100 calls uses 8 of them.  On a disk file
# system the file grew by fallocate, so each short process kept ~1 MB on
# disk (a shell loop of 3,000 processes, malloc and free as targets:
# 3.3 GB).  Checked here, by the file's allocated size against its length,
# after a normal exit, after _exit, and for the file of a process image
# that exec'd; and that every count stays exact: in the report, in the
# series over time, and when an exec fails and the program goes on calling
# (the windows it needs then are mapped into the holes).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cc=${CC:-cc}
cd "$T"
# Premise: this file system makes holes (ext4, xfs, btrfs, tmpfs do).
head -c 65536 /dev/zero >probe
if ! fallocate -p -o 0 -l 65536 probe 2>/dev/null || [ "$(stat -c %b probe)" != 0 ]; then
	echo "SKIP: $T's file system does not punch holes"
	exit 77
fi
echo 'long h_fn(long x) { return x + 1; }' >h.c
cat >main.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
long h_fn(long);
int main(int argc, char **argv)
{
	long s = 0, i, n = atol(argv[1]);

	for (i = 0; i < n; i++)
		s += h_fn(i);
	printf("sum %ld\n", s);
	fflush(stdout);
	if (!strcmp(argv[2], "_exit"))
		_exit(0);
	if (!strcmp(argv[2], "exec"))
		execl("/bin/true", "true", (char *)0);
	if (!strcmp(argv[2], "badexec")) {
		execl("/nonexistent/program", "x", (char *)0);
		for (i = 0; i < 1000; i++)
			s += h_fn(i);
		printf("after a failed exec: sum %ld\n", s);
	}
	return 0;
}
C
$cc -shared -fPIC -o libh.so h.c
$cc -o main main.c -L. -lh -Wl,-rpath,"$T"

# allocated NAME: bytes the report file of run NAME has on disk.
allocated() { echo $(($(stat -c '%b * %B' "$T/$1.csr"))); }

for how in exit _exit exec badexec; do
	plain_run plain_$how ./main 100 $how
	expect_status plain_$how 0
	shim_run $how tsc h_fn ./main 100 $how
	expect_status $how 0
	same_output plain_$how $how
	want=100
	[ $how = badexec ] && want=1100
	report_csv $how
	want_count $how "function=h_fn,event=tsc" calls $want
	# The series over time holds every call too (read from the holes as
	# zeros where no window was mapped in).
	"$CS_CMD" report --series --format csv "$T/$how.csr" >"$T/$how.series" 2>"$T/$how.serr" ||
		{ show "$T/$how.serr"; fail "$how: report --series refused the file"; }
	got=$(csv_select "$T/$how.series" "target=h_fn,event=tsc" calls | awk '{ n += $1 } END { print n + 0 }')
	[ "$got" = $want ] || { show "$T/$how.series"; fail "$how: the series holds $got calls, want $want"; }
	size=$(stat -c %s "$T/$how.csr") used=$(allocated $how)
	if [ $how = badexec ]; then
		echo "$how: $want calls; $used of $size bytes on disk"
		continue
	fi
	# 248 windows of ~1.3 KB never held anything: over 256 KB less on
	# disk than the file's length (before: about equal).
	[ $((size - used)) -gt $((256 << 10)) ] ||
		fail "$how: $used of $size bytes allocated, want over 256 KB less"
	echo "$how: $want calls, exact in the series too; $used of $size bytes on disk"
done

# At most 16 holes a seal (each a journal transaction on ext4, ~50 us at
# the exit): 20 targets called 100 times each leave 20 series blocks, of
# which the first 16 are punched; the other 4 keep their windows.  One
# block's hole is what the single target's file above gave back.
per=$(($(stat -c %s "$T/exit.csr") - $(allocated exit)))
{
	for k in $(seq 0 19); do echo "long m_fn$k(long x) { return x + $k; }"; done
} >m.c
{
	for k in $(seq 0 19); do echo "long m_fn$k(long);"; done
	echo 'int main(void) { long s = 0, i;'
	echo '	for (i = 0; i < 100; i++) {'
	for k in $(seq 0 19); do echo "		s += m_fn$k(i);"; done
	echo '	}'
	echo '	return s == 0;'
	echo '}'
} >many.c
$cc -shared -fPIC -o libm20.so m.c
$cc -o many many.c -L. -lm20 -Wl,-rpath,"$T"
shim_run many tsc 'm_fn*' ./many
expect_status many 0
report_csv many
want_count many "event=tsc" calls 2000
freed=$(($(stat -c %s "$T/many.csr") - $(allocated many)))
# 16 holes of one block's size each (a page more or less apiece).
[ "$freed" -gt $((16 * per - 16 * 4096)) ] && [ "$freed" -lt $((17 * per - 17 * 4096)) ] ||
	fail "many: $freed bytes given back, want 16 blocks' worth ($((16 * per)))"
echo "20 targets: 2000 calls; 16 of 20 series blocks punched ($freed bytes given back)"
