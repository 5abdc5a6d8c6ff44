# SPDX-License-Identifier: MIT
# Sourced by tests/robust/test_*.sh: the preload tier's helpers
# (tests/preload/run-test.sh: $T, shim_run, plain_run, same_output,
# report_csv, csv_select, csv_one, fail, show) plus what the robustness
# tests need on top: several report files at once, sums over CSV rows,
# extra clean-up on exit.

. "${CS_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/preload/run-test.sh"

# The robustness test programs (real executables with an rpath).
R=$CS_BUILDDIR/tests/robust

# Clean-up commands run at exit before $T is removed (cleanup_add CMD).
CS_CLEANUP=
cleanup_add()
{
	CS_CLEANUP="$1; $CS_CLEANUP"
}
trap 'eval "$CS_CLEANUP"; rm -rf "$T"' EXIT

# nobody_reaches FILE...: whether the user nobody may read every FILE
# (needs root and setpriv).  A build tree under /root (mode 700 on
# Debian) is out of its reach: the cases run as nobody are skipped then,
# not failed (review helper 69, a fresh clone in /root/cacheshim).
nobody_reaches()
{
	setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups -- \
		sh -c 'for f; do [ -r "$f" ] || exit 1; done' sh "$@" 2>/dev/null
}

# hang_run NAME TARGETS WHAT CMD...: CMD with the shim (tsc, TARGETS, the
# file $T/NAME.csr; stdout and stderr in $T/NAME.out and .err), killed
# after 60 s: a hang fails with WHAT.  The variables are set inside
# timeout, so that only CMD runs with the shim.  Sets $status.
hang_run()
{
	local name=$1 targets=$2 what=$3

	shift 3
	status=0
	timeout 60 env CACHESHIM_QUIET=1 CACHESHIM_UNMATCHED=0 CACHESHIM_EVENTS=tsc \
		CACHESHIM_TARGETS="$targets" CACHESHIM_OUTPUT="$T/$name.csr" LD_PRELOAD="$CS_SHIM" \
		"$@" >"$T/$name.out" 2>"$T/$name.err" || status=$?
	[ "$status" != 124 ] || fail "hung (killed after 60 s): $what"
}

# No core files from the crash tests.
ulimit -c 0 2>/dev/null || true

# make_fns64: in the current directory, lib.c with 64 targets f0..f63
# (long fK(long x) returns x + K) and fns.h declaring them and an array
# fns[64] of them, for tests that call many targets in turn.
make_fns64()
{
	local i

	for i in $(seq 0 63); do echo "long f$i(long x) { return x + $i; }"; done >lib.c
	{
		for i in $(seq 0 63); do echo "long f$i(long);"; done
		echo 'long (*const fns[64])(long) = {'
		for i in $(seq 0 63); do echo "	f$i,"; done
		echo '};'
	} >fns.h
}

# make_fill_h: in the current directory, fill.h with fill(PATH), which
# writes PATH until its file system is full (exit 3 if it cannot open it,
# 4 if writing stops for another reason), and read_through(PATH), which
# reads PATH to its end as a reader of a live report file does, for the
# test programs that fill a file system under the shim.
make_fill_h()
{
	cat >fill.h <<'C'
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static void fill(const char *path)
{
	static char buf[65536];
	size_t chunk;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (fd < 0)
		exit(3);
	for (chunk = sizeof(buf); chunk; chunk /= 16)
		while (write(fd, buf, chunk) == (ssize_t)chunk)
			;
	if (errno != ENOSPC)
		exit(4);
	fsync(fd);
	close(fd);
}

static void read_through(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}
C
}

# mount_ext4 DIR: a 64 MB ext4 image loop-mounted on DIR (made), unmounted
# at exit; exits 77 (skipped) where that cannot be done (not root, no
# mkfs.ext4, no loop device).
mount_ext4()
{
	mkdir -p "$1"
	if [ "$(id -u)" != 0 ] || ! command -v mkfs.ext4 >/dev/null ||
		! truncate -s 64M "$T/disk.img" || ! mkfs.ext4 -q -F "$T/disk.img" >/dev/null 2>&1 ||
		! mount -o loop "$T/disk.img" "$1" 2>/dev/null; then
		echo "SKIP: cannot mount an ext4 image (not root, no loop device?)"
		exit 77
	fi
	cleanup_add "umount '$1' 2>/dev/null"
}

# jump_run TARGETS SERIES PROG ARGS...: PROG ARGS (a program whose signal
# handler siglongjmps out of it, printing "jumps J" to stderr at the end)
# without the shim, then under it (event tsc, CACHESHIM_SERIES=SERIES,
# empty for the default) as run "jump" into $T/jump.csr: a hang fails
# (killed after 120 s), status and stdout must be as without the shim,
# and it must have jumped more than 100 times.  Sets $jumps.
jump_run()
{
	local targets=$1 series=$2

	shift 2
	plain_run plain "$@"
	expect_status plain 0
	status=0
	CACHESHIM_QUIET=1 timeout 120 env CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS="$targets" \
		${series:+CACHESHIM_SERIES=$series} CACHESHIM_OUTPUT="$T/jump.csr" \
		LD_PRELOAD="$CS_SHIM" "$@" >"$T/jump.out" 2>"$T/jump.err" || status=$?
	[ "$status" -ne 124 ] || fail "$1 hung under the shim (killed after 120 s)"
	expect_status jump 0
	same_output plain jump
	jumps=$(sed -n 's/^jumps \([0-9]*\)$/\1/p' "$T/jump.err")
	[ -n "$jumps" ] && [ "$jumps" -gt 100 ] ||
		{ show "$T/jump.err"; fail "too few jumps ($jumps) to test anything"; }
}

# expect_status NAME WANT: run NAME ended with status WANT ($status).
expect_status()
{
	if [ "$status" -ne "$2" ]; then
		show "$T/$1.err"
		fail "'$1' exited with status $status, want $2"
	fi
}

# report_files NAME FILE... [-- ARGS...]: `cacheshim report --format csv
# ARGS FILE...` into $T/NAME.csv, its stderr into $T/NAME.rerr.
report_files()
{
	local name=$1 files=() args=()

	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		files+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	args=("$@")
	if ! "$CS_CMD" report --format csv "${args[@]}" "${files[@]}" \
		>"$T/$name.csv" 2>"$T/$name.rerr"; then
		show "$T/$name.rerr"
		fail "cacheshim report ${args[*]} ${files[*]} failed"
	fi
}

# csv_sum NAME FILTER COLUMN: the sum of COLUMN over the rows of
# $T/NAME.csv that match FILTER (0 when none does).
csv_sum()
{
	csv_select "$T/$1.csv" "$2" "$3" | awk '{ s += $1 } END { printf "%d\n", s }'
}

# want_count NAME FILTER COLUMN WANT: csv_sum must be WANT.
want_count()
{
	local got

	got=$(csv_sum "$1" "$2" "$3")
	if [ "$got" != "$4" ]; then
		show "$T/$1.csv"
		fail "'$1': $3 of rows $2 add up to $got, want $4"
	fi
}

# not_returned NAME FILTER: entered - calls - dropped summed over the
# rows matching FILTER (use one event so that rows are not counted twice).
not_returned()
{
	csv_select "$T/$1.csv" "$2" entered,calls,dropped |
		awk -F'\t' '{ s += $1 - $2 - $3 } END { printf "%d\n", s }'
}

# incomplete_said NAME: `cacheshim report` said the file is incomplete.
incomplete_said()
{
	grep -qi 'incomplete' "$T/$1.rerr"
}

# only_shim_lines FILE: every line of FILE starts with "cacheshim:".
only_shim_lines()
{
	if grep -qv '^cacheshim: ' "$1"; then
		show "$1"
		fail "$(basename "$1"): a line that does not start with 'cacheshim: '"
	fi
}

# libc_debug_file: the path of libc's separate debug file (libc6-dbg) if it
# is readable here, else nothing.
libc_debug_file()
{
	local f
	f=$(${CC:-cc} -print-file-name=libc.so.6 | xargs readlink -f | xargs readelf -n 2>/dev/null |
		awk '/Build ID/ { print "/usr/lib/debug/.build-id/" substr($3, 1, 2) "/" substr($3, 3) ".debug" }')
	if [ -n "$f" ] && [ -r "$f" ]; then
		echo "$f"
	fi
}
