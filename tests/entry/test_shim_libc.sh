#!/bin/bash
# SPDX-License-Identifier: MIT
# libc functions the shim itself calls (close, write, read, open, mmap,
# munmap) as targets.  GOT patching never saw the shim's own calls (its GOT
# is not patched); an entry patch in libc does, and must leave them out:
# the program's calls counted exactly, nothing added to its stderr (quiet),
# with every hook.  (Until main's 0ba0759, with close entry-patched, the
# shim's own close of its report at exit entered the wrapper, was dropped
# and printed "cacheshim: report file full (CACHESHIM_CAPACITY_MB)..." on
# the program's stderr despite CACHESHIM_QUIET=1.)
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

CC=${CC_FOR_TESTS:-gcc}
K=25
cat >"$T/io.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	int k = atoi(argv[1]), i, fd;
	long n = 0;
	char c;

	for (i = 0; i < k; i++) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		fd = open("/dev/zero", O_RDONLY);
		n += read(fd, &c, 1);
		n += write(2, "", 0) + 1;
		close(fd);
		munmap(p, 4096);
	}
	printf("%ld\n", n);
	fprintf(stderr, "done\n");
	return 0;
}
C
$CC -O2 -o "$T/io" "$T/io.c" || fail "cannot build io"
plain_run plain "$T/io" $K
[ "$status" -eq 0 ] && grep -qx $((2 * K)) "$T/plain.out" || fail "io fails without the shim"
for hook in got entry both; do
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_HOOK=$hook CACHESHIM_EVENTS=tsc \
		CACHESHIM_TARGETS=close,write,read,open,mmap,munmap CACHESHIM_OUTPUT=$T/$hook.csr \
		LD_PRELOAD=$CS_SHIM "$T/io" $K >"$T/$hook.out" 2>"$T/$hook.err" || status=$?
	[ "$status" -eq 0 ] || { show "$T/$hook.err"; fail "$hook: io exits $status"; }
	same_output plain $hook
	cmp -s "$T/plain.err" "$T/$hook.err" || { show "$T/$hook.err"; fail "$hook: stderr differs"; }
	report_csv $hook --by function
	for fn in close read mmap munmap; do
		got=$(calls_of $hook $fn)
		[ "$got" = $K ] || { show "$T/$hook.csv"; fail "$hook: $fn: $got calls, want $K"; }
	done
	echo "$hook: the program's calls counted exactly, stderr its own"
done
