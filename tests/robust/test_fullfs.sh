#!/bin/bash
# SPDX-License-Identifier: MIT
# A report file on a file system with little room (a small tmpfs): the
# first fallocate asked for a whole 4 MB growth step, and its ENOSPC was
# taken for "fallocate not supported": the file became a sparse 256 MB one
# and the first store into a page the file system could not back killed
# the program with SIGBUS (exit 135).  The program must run as without
# the shim; with 2 MB free every call is recorded, with 64 KB what fits.
# The same on a kernel without MADV_POPULATE_WRITE (before Linux 5.14,
# emulated by a seccomp filter): the file's pages are allocated whole
# there, and the shim found that out only after its first growth had
# allocated a step's last page, then asked for the whole 4 MB step at once
# and ran unprofiled with no report file.  Needs root to mount the tmpfs
# (skipped otherwise).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=1000
mkdir "$T/fs"
if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=64k tmpfs "$T/fs" 2>/dev/null; then
	echo "SKIP: cannot mount a tmpfs (not root?)"
	exit 77
fi
cleanup_add "umount '$T/fs' 2>/dev/null"

plain_run plain "$R/prog_memset" $N
expect_status plain 0
# Only the program runs with the shim, under the filter if any.
for kernel in new old; do
	how=
	[ $kernel = new ] || how="$R/prog_nosyscall nopopulate"
	for size in 64k 2m; do
		name=fs$size$kernel
		rm -f "$T/fs"/*
		mount -o remount,size=$size "$T/fs"
		status=0
		$how env CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=memset \
			CACHESHIM_OUTPUT="$T/fs/r.%p" LD_PRELOAD="$CS_SHIM" \
			"$R/prog_memset" $N >"$T/$name.out" 2>"$T/$name.err" || status=$?
		expect_status $name 0
		same_output plain $name
		report_files $name "$T"/fs/r.*
		if [ $size = 2m ]; then
			want_count $name "function=memset,module=prog_memset,event=tsc" calls $N
		fi
	done
done
echo "report on a 64 KB and a 2 MB tmpfs, with and without MADV_POPULATE_WRITE: the program ran as without the shim; 2 MB: $N calls"
