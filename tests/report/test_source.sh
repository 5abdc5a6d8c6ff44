#!/bin/bash
# SPDX-License-Identifier: MIT
# Source lines of call sites (the source column) from a program built
# with -g, and a program moved or renamed after its run found again by
# --search-path (same name, or same build id) or --debug-dir.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/report/report-test.sh"
PROG=$CS_BUILDDIR/tests/report/prog_lines

# prog_lines records three call sites of its own, each on its own line,
# and writes "prog_lines.c:LINE" for each into lines.expected.
mkdir "$T/bin" "$T/moved" "$T/renamed" "$T/debug"
cp "$PROG" "$T/bin/prog_lines"
"$T/bin/prog_lines" "$T/lines.rpt" "$T/lines.expected" || { echo "prog_lines failed" >&2; exit 99; }
mapfile -t want <"$T/lines.expected"

# lines_in LINE: the table shows the three source lines, by base name, in
# a source column next to the symbolized call sites.
lines_in()
{
	local w

	for w in "${want[@]}"; do
		grep -qE "^  lines_target +main\+0x[0-9a-f]+ +prog_lines +$w +" "$T/out" ||
			{ fail "$1" "no row with $w"; show "$T/out"; }
	done
}

run_cmd "$CS_CMD" report "$T/lines.rpt"
expect_status $LINENO 0
grep -qE '^  function +callsite +module +source +calls' "$T/out" ||
	fail $LINENO "no source column"
lines_in $LINENO

# CSV: the full path the compiler saw (relative names joined to the
# compilation directory).
run_cmd "$CS_CMD" report -f csv "$T/lines.rpt"
expect_status $LINENO 0
csv_pick source
for w in "${want[@]}"; do
	grep -qE "^/.*/$w\$" "$T/out" || { fail $LINENO "no CSV source .../$w"; show "$T/out"; }
done

# Stripped after the run, its debug file named by .gnu_debuglink in .debug/
# next to it (as binutils makes them): the lines come from there.
if command -v objcopy >/dev/null && command -v strip >/dev/null; then
	mkdir -p "$T/dl/.debug"
	cp "$PROG" "$T/dl/prog_lines"
	"$T/dl/prog_lines" "$T/dl.rpt" "$T/dl.expected" || { echo "prog_lines failed" >&2; exit 99; }
	objcopy --only-keep-debug "$T/dl/prog_lines" "$T/dl/.debug/prog_lines.dbg"
	strip -g "$T/dl/prog_lines"
	objcopy --add-gnu-debuglink="$T/dl/.debug/prog_lines.dbg" "$T/dl/prog_lines"
	env -u DEBUGINFOD_URLS "$CS_CMD" report "$T/dl.rpt" >"$T/out" 2>"$T/err"
	lines_in $LINENO
	mv "$T/dl/.debug/prog_lines.dbg" "$T/dl/.debug/elsewhere.dbg"
	env -u DEBUGINFOD_URLS "$CS_CMD" report -f csv "$T/dl.rpt" >"$T/out" 2>"$T/err"
	csv_pick callsite,source
	grep -qE '^main\+0x[0-9a-f]+,$' "$T/out" || { fail $LINENO "debug file gone: still a source"; show "$T/out"; }
	# No debug file here, no debuginfod server configured: libdebuginfod
	# (with libcurl, GnuTLS ... behind it) is not even loaded (ld.so's
	# LD_DEBUG=files lists what is).
	env -u DEBUGINFOD_URLS LD_DEBUG=files "$CS_CMD" report "$T/dl.rpt" >/dev/null 2>"$T/lddebug"
	grep -q 'libdebuginfod' "$T/lddebug" &&
		fail $LINENO "libdebuginfod loaded without DEBUGINFOD_URLS"
fi

# --by function has no call sites, so no source.
run_cmd "$CS_CMD" report --by function "$T/lines.rpt"
grep -q 'source' "$T/out" && fail $LINENO "source column with --by function"

# Moved after the run: module+offset and no source, unless told where.
mv "$T/bin/prog_lines" "$T/moved/prog_lines"
run_cmd "$CS_CMD" report -f csv "$T/lines.rpt"
csv_pick callsite,source
grep -qE '^prog_lines\+0x[0-9a-f]+,$' "$T/out" || { fail $LINENO "moved: not module+offset"; show "$T/out"; }
run_cmd "$CS_CMD" report --search-path "$T/moved" "$T/lines.rpt"
expect_status $LINENO 0
lines_in $LINENO

# Renamed too: only the build id says it is the same program (the whole
# tree under the directory is searched).
mkdir -p "$T/renamed/deep/er"
mv "$T/moved/prog_lines" "$T/renamed/deep/er/other-name"
echo "not ELF" >"$T/renamed/prog_lines"
mkdir "$T/nothing-here"
run_cmd "$CS_CMD" report --search-path "$T/nothing-here" --search-path "$T/renamed" "$T/lines.rpt"
expect_status $LINENO 0
lines_in $LINENO

# A file of the same name but another build is not taken for it.
cp "$CS_BUILDDIR/tests/report/mkviews" "$T/moved/prog_lines"
run_cmd "$CS_CMD" report -f csv --search-path "$T/moved" "$T/lines.rpt"
csv_pick callsite,source
grep -qE '^prog_lines\+0x[0-9a-f]+,$' "$T/out" || { fail $LINENO "wrong build taken"; show "$T/out"; }

# The debug file of the build, by build id, has the symbols and lines.
id=$(readelf -n "$T/renamed/deep/er/other-name" | awk '/Build ID/ { print $3 }')
if [ -n "$id" ]; then
	mkdir -p "$T/debug/.build-id/${id:0:2}"
	cp "$T/renamed/deep/er/other-name" "$T/debug/.build-id/${id:0:2}/${id:2}.debug"
	run_cmd "$CS_CMD" report --debug-dir "$T/debug" "$T/lines.rpt"
	expect_status $LINENO 0
	lines_in $LINENO
fi


# A library loaded through a symbolic link in another directory, stripped
# after the run, its debug file in .debug/ next to the real file (where
# libdwfl also looks, through the link): its call site's line is found.
CS_SHIM=${CS_SHIM:-$CS_BUILDDIR/.libs/libcacheshim.so}
CC=${CC:-cc}
if command -v objcopy >/dev/null && command -v strip >/dev/null && command -v "$CC" >/dev/null; then
	mkdir -p "$T/sl/real/.debug" "$T/sl/bin"
	printf '#include <stdlib.h>\nlong sl_caller(long x)\n{\n\treturn labs(x) + 1;\n}\n' >"$T/sl/caller.c"
	printf 'long sl_caller(long);\nint main(void)\n{\n\treturn sl_caller(-3) == 4 ? 0 : 1;\n}\n' >"$T/sl/main.c"
	"$CC" -g -O1 -fno-builtin -shared -fPIC -o "$T/sl/real/libslcaller.so" "$T/sl/caller.c"
	ln -s ../real/libslcaller.so "$T/sl/bin/libslcaller.so"
	"$CC" -g -O1 -o "$T/sl/bin/prog" "$T/sl/main.c" -L"$T/sl/bin" -lslcaller -Wl,-rpath,"$T/sl/bin"
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=labs CACHESHIM_OUTPUT="$T/sl.rpt" \
		LD_PRELOAD=$CS_SHIM "$T/sl/bin/prog" || fail $LINENO "the symlink program failed"
	objcopy --only-keep-debug "$T/sl/real/libslcaller.so" "$T/sl/real/.debug/libslcaller.so.debug"
	strip -g "$T/sl/real/libslcaller.so"
	objcopy --add-gnu-debuglink="$T/sl/real/.debug/libslcaller.so.debug" "$T/sl/real/libslcaller.so"
	env -u DEBUGINFOD_URLS "$CS_CMD" report -f csv "$T/sl.rpt" >"$T/out" 2>"$T/err"
	csv_pick callsite,source
	grep -qE '^sl_caller\+0x[0-9a-f]+,/.*caller\.c:4$' "$T/out" ||
		{ fail $LINENO "library through a symlink: no caller.c:4"; show "$T/out"; }
fi
finish
