#!/bin/bash
# SPDX-License-Identifier: MIT
# dlopen/dlclose: a module loaded after start is hooked before dlopen
# returns, both its calls into modules loaded before (rt_leaf) and its
# calls through its own PLT to its own functions (plug_leaf).  Three
# copies of one plugin (plugA, plugB, plugC) are loaded one after the
# other, each unloaded before the next, so that they land at the same
# address; then plugA once more.  The report must keep them apart: one row
# per plugin, with exactly the calls made while that plugin was loaded
# (plugA: its two loads added up).  Done for RTLD_NOW | RTLD_LOCAL (what
# plugin hosts use), RTLD_NOW | RTLD_GLOBAL and RTLD_LAZY | RTLD_LOCAL.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=1000
for p in A B C; do
	cp "$R/.libs/libcsplug.so" "$T/plug$p.so"
done
PLUGINS="$T/plugA.so $T/plugB.so $T/plugC.so $T/plugA.so"
# Load i makes N * (i + 1) calls of each function.
WANT_A=$((N + 4 * N))
WANT_B=$((2 * N))
WANT_C=$((3 * N))

bad=
for mode in now-local now-global lazy-local; do
	plain_run plain_$mode "$R/prog_dl" $N $mode $PLUGINS
	expect_status plain_$mode 0
	shim_run $mode tsc rt_leaf,plug_leaf "$R/prog_dl" $N $mode $PLUGINS
	expect_status $mode 0
	same_output plain_$mode $mode
	# Only the program's own "load ..." lines and shim lines on stderr
	# (the shim says plug_leaf matched nothing at start: true then).
	if grep -v -e '^load ' -e '^cacheshim: ' "$T/$mode.err" >&2; then
		fail "$mode: unexpected lines on stderr"
	fi
	grep -q 'same address' "$T/$mode.err" ||
		echo "note: $mode: no plugin was loaded at the address of the one before"
	report_csv $mode
	errors=
	for fn in plug_leaf rt_leaf; do
		for p in A:$WANT_A B:$WANT_B C:$WANT_C; do
			got=$(csv_sum $mode "function=$fn@*,module=plug${p%:*}.so,event=tsc" calls)
			[ "$got" = "${p#*:}" ] ||
				errors="$errors $fn@plug${p%:*}=$got(want ${p#*:})"
		done
	done
	# The program's own calls, before and after each dlclose.
	got=$(csv_sum $mode "function=rt_leaf,module=prog_dl,event=tsc" calls)
	[ "$got" = 4 ] || errors="$errors rt_leaf@prog_dl=$got(want 4)"
	if [ -n "$errors" ]; then
		show "$T/$mode.csv"
		echo "FAIL: $mode: wrong counts:$errors" >&2
		bad="$bad $mode"
	else
		echo "$mode: plugA $WANT_A, plugB $WANT_B, plugC $WANT_C calls of each target"
	fi
done
[ -z "$bad" ] || fail "dlopen modes with wrong counts:$bad"
