#!/bin/bash
# SPDX-License-Identifier: MIT
# Output files: created with O_CREAT | O_EXCL | O_NOFOLLOW and mode 0600
# (whatever the umask); a file, a directory or a symlink (to a file, or
# dangling) already at the name is never written, followed or replaced:
# the shim takes NAME.1, NAME.2 ...  And in a setuid program (AT_SECURE)
# the shim stays inert: no file, no message, no effect.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=100
plain_run plain "$R/prog_threads" 0 $N
expect_status plain 0

# run_at NAME PATH: the program with the shim, report at PATH.
run_at()
{
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
		CACHESHIM_OUTPUT="$2" LD_PRELOAD=$CS_SHIM \
		"$R/prog_threads" 0 $N >"$T/$1.out" 2>"$T/$1.err" || status=$?
	expect_status $1 0
	same_output plain $1
	no_shim_lines $1
}

# is_report NAME FILE: FILE is a regular file, mode 0600, owned by us,
# with exactly N calls.
is_report()
{
	local mode

	[ -f "$2" ] && [ ! -L "$2" ] || fail "$1: no report file $2"
	mode=$(stat -c %a "$2")
	[ "$mode" = 600 ] || fail "$1: $2 has mode $mode, want 600"
	[ "$(stat -c %u "$2")" = "$(id -u)" ] || fail "$1: $2 is not ours"
	report_files $1 "$2" -- --by function
	want_count $1 "function=rt_leaf,event=tsc" calls $N
}

# Mode 0600 even with umask 0 (0666 & ~umask would be 0666).
(umask 000 && run_at umask0 "$T/umask0.csr")
is_report umask0 "$T/umask0.csr"
echo "umask 0: mode 600"

# A file of someone else's at the name: untouched, .1 used; with .1 taken
# as well, .2.
echo precious >"$T/taken.csr"
run_at taken "$T/taken.csr"
[ "$(cat "$T/taken.csr")" = precious ] || fail "an existing file was overwritten"
is_report taken "$T/taken.csr.1"
echo precious >"$T/taken2.csr"
echo precious >"$T/taken2.csr.1"
run_at taken2 "$T/taken2.csr"
[ "$(cat "$T/taken2.csr")" = precious ] && [ "$(cat "$T/taken2.csr.1")" = precious ] ||
	fail "an existing file was overwritten"
is_report taken2 "$T/taken2.csr.2"
echo "existing files: kept, .1 and .2 used"

# A planted symlink to a file: neither the link nor its target changes.
echo victim >"$T/victim"
chmod 644 "$T/victim"
ln -s "$T/victim" "$T/link.csr"
run_at link "$T/link.csr"
[ "$(cat "$T/victim")" = victim ] && [ "$(stat -c %a "$T/victim")" = 644 ] ||
	fail "the symlink's target was written"
[ "$(readlink "$T/link.csr")" = "$T/victim" ] || fail "the symlink was replaced"
is_report link "$T/link.csr.1"
# A dangling one: the file it names must not come into being.
ln -s "$T/created-through-link" "$T/dangling.csr"
run_at dangling "$T/dangling.csr"
[ ! -e "$T/created-through-link" ] || fail "a file was created through a dangling symlink"
is_report dangling "$T/dangling.csr.1"
# A directory at the name.
mkdir "$T/dir.csr"
run_at dir "$T/dir.csr"
[ -z "$(ls -A "$T/dir.csr")" ] || fail "something was written into the directory"
is_report dir "$T/dir.csr.1"
echo "symlinks (to a file, dangling) and a directory: not followed, .1 used"

# --- setuid: inert -------------------------------------------------------
# ld.so ignores LD_PRELOAD with a path in a setuid program, so the shim is
# loaded here the way it still can be: prog_secure links libcacheshim.so
# (DT_NEEDED, absolute RUNPATH, honoured under AT_SECURE).  As a plain
# program run by nobody it profiles (the control: the shim is there and
# works); setuid root and run by nobody it must leave no file and say
# nothing.  Needs root (to make a setuid-root copy), setpriv, the user
# nobody, and a filesystem that honours setuid.
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
	echo "SKIP (setuid): needs root, setpriv and the user nobody"
	exit 0
fi
# The copies find their libraries in the build tree (RUNPATH).
if ! nobody_reaches "$R/.libs/libcsrobust.so" "$CS_BUILDDIR/.libs/libcacheshim.so"; then
	echo "SKIP (setuid): the user nobody cannot read the build tree (a parent directory's mode)"
	exit 0
fi
chmod 755 "$T"
mkdir "$T/suid" "$T/out"
chmod 755 "$T/suid"
chmod 777 "$T/out"
cp "$R/prog_secure" "$T/suid/prog_secure"
cp "$R/prog_secure" "$T/suid/prog_secure_plain"
chmod 4755 "$T/suid/prog_secure"
chmod 755 "$T/suid/prog_secure_plain"
AS_NOBODY=(setpriv --reuid=nobody --regid="$(id -gn nobody)" --clear-groups --)

# nobody_run NAME PROG: PROG N as nobody with the shim's settings.
nobody_run()
{
	status=0
	"${AS_NOBODY[@]}" env CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
		CACHESHIM_OUTPUT="$T/out/$1.%p" "$2" $N >"$T/$1.out" 2>"$T/$1.err" || status=$?
	expect_status $1 0
}

nobody_run control "$T/suid/prog_secure_plain"
grep -q '^AT_SECURE 0,' "$T/control.out" || { show "$T/control.out"; fail "control run is secure?"; }
f=$(find "$T/out" -name 'control.*')
[ -n "$f" ] || { show "$T/control.err"; fail "control: the linked shim made no report"; }
report_files control "$f" -- --by function
want_count control "function=rt_leaf,event=tsc" calls $N

nobody_run setuid "$T/suid/prog_secure"
if ! grep -q '^AT_SECURE 1,' "$T/setuid.out"; then
	echo "SKIP (setuid): the setuid copy does not run with AT_SECURE (nosuid mount?)"
	exit 0
fi
# Same output as the control, apart from the AT_SECURE flag itself.
[ "$(sed 's/^AT_SECURE 1,//' "$T/setuid.out")" = "$(sed 's/^AT_SECURE 0,//' "$T/control.out")" ] ||
	fail "setuid: output differs"
[ ! -s "$T/setuid.err" ] || { show "$T/setuid.err"; fail "setuid: the shim said something"; }
[ -z "$(find "$T/out" -name 'setuid.*')" ] || fail "setuid: a report file was made"
echo "setuid: inert (no file, no message); control run as nobody: $N calls"

# Started with stderr closed, the program's first open() gets descriptor 2:
# the shim's messages must not land in the program's file (they did).  The
# message here: more call sites than CACHESHIM_MAX_SITES.
cat >"$T/fd2.c" <<'C'
#include <fcntl.h>
#include <unistd.h>
long rt_leaf(long x);
int main(int argc, char **argv)
{
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);

	rt_leaf(1); /* two call sites */
	rt_leaf(2);
	return write(fd, "DATA\n", 5) == 5 && close(fd) == 0 ? 0 : 1;
}
C
${CC:-cc} -o "$T/fd2" "$T/fd2.c" -L"$R/.libs" -lcsrobust -Wl,-rpath,"$R/.libs"
for closed in no yes; do
	status=0
	if [ $closed = yes ]; then
		CACHESHIM_MAX_SITES=1 CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT="$T/fd2.%p" \
			LD_PRELOAD="$CS_SHIM" "$T/fd2" "$T/fd2-$closed.data" 2>&- || status=$?
	else
		CACHESHIM_MAX_SITES=1 CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT="$T/fd2.%p" \
			LD_PRELOAD="$CS_SHIM" "$T/fd2" "$T/fd2-$closed.data" 2>"$T/fd2.err" || status=$?
		grep -q '^cacheshim: .*call site' "$T/fd2.err" ||
			{ show "$T/fd2.err"; fail "fd2: no message about call sites with stderr open"; }
	fi
	[ "$status" = 0 ] || fail "fd2 (stderr closed: $closed): status $status"
	[ "$(cat "$T/fd2-$closed.data")" = DATA ] ||
		{ show "$T/fd2-$closed.data"; fail "fd2 (stderr closed: $closed): the program's file holds more than its data"; }
done
echo "stderr closed at start: the shim's message stayed out of the program's file"

# A call made after the shim's destructor sealed the file (stdio flushing
# a pipe inside exit()) cannot get a new call site: it is counted as not
# recorded, and the file is not "full" (that message was printed).
cat >"$T/flush.c" <<'C'
#include <stdio.h>
int main(void)
{
	printf("flushed at exit\n"); /* one write(2), inside exit() */
	return 0;
}
C
${CC:-cc} -o "$T/flush" "$T/flush.c"
status=0
CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=write CACHESHIM_OUTPUT="$T/flush.csr" \
	LD_PRELOAD="$CS_SHIM" "$T/flush" 2>"$T/flush.err" | cat >"$T/flush.out" || status=$?
[ "$status" = 0 ] || fail "flush: status $status"
[ "$(cat "$T/flush.out")" = "flushed at exit" ] || fail "flush: output differs"
if grep -q 'file full' "$T/flush.err"; then
	show "$T/flush.err"
	fail "flush: 'file full' said of a file that was sealed, not full"
fi
"$CS_CMD" report "$T/flush.csr" >"$T/flush.rep"
grep -qx 'calls not recorded (report file sealed (at exit, or during an exec)): 1' "$T/flush.rep" ||
	{ show "$T/flush.rep"; fail "flush: the call after sealing is not counted as not recorded"; }
echo "a call after the file was sealed: counted as not recorded, no 'file full'"

# An address-space limit (ulimit -v): the report's mapping took 256 MB of
# it, and a program allocating what fits without the shim failed with it.
cat >"$T/as.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
	size_t mb = (size_t)atol(argv[1]);
	char *p = malloc(mb << 20);

	if (!p)
		return 3;
	memset(p, 1, mb << 20);
	printf("%zu MB, %zu\n", mb, strlen(argv[1]));
	return 0;
}
C
${CC:-cc} -o "$T/as" "$T/as.c"
status=0
(ulimit -v 400000 && "$T/as" 250) >"$T/as_plain.out" || status=$?
[ "$status" = 0 ] || fail "as: the plain run failed ($status): the test's limit does not fit here"
status=0
(ulimit -v 400000 && CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=strlen \
	CACHESHIM_OUTPUT="$T/as.csr" LD_PRELOAD="$CS_SHIM" "$T/as" 250) >"$T/as.out" || status=$?
[ "$status" = 0 ] || fail "as: status $status under the shim with ulimit -v 400000 (3: malloc failed)"
cmp -s "$T/as_plain.out" "$T/as.out" || fail "as: output differs"
"$CS_CMD" report --format csv "$T/as.csr" | grep -q '^strlen,' || fail "as: strlen's call not in the report"
echo "ulimit -v 400000: a 250 MB allocation fits with the shim too, and the call is recorded"
