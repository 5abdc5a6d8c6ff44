#!/bin/bash
# SPDX-License-Identifier: MIT
# The code arena of a patched function of the main executable must not be
# put where the program's heap grows: without address-space randomization
# (gdb, setarch -R, kernel.randomize_va_space < 2) the break starts right
# after the executable, and an arena there made every sbrk fail (ENOMEM).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=100
# local_leaf is static: caught by its entry patch (an arena near the program).
targets=local_leaf,rt_leaf
runs=("plain:")
if setarch "$(uname -m)" -R true 2>/dev/null; then
	runs+=("norand:setarch $(uname -m) -R")
else
	echo "setarch -R not available: randomized layout only"
fi
for r in "${runs[@]}"; do
	name=${r%%:*}
	wrap=${r#*:}
	plain_run "p$name" $wrap "$R/prog_brk" $N
	expect_status "p$name" 0
	grep -q '^sbrk steps: 64$' "$T/p$name.out" || fail "p$name: sbrk fails without the shim"
	status=0
	$wrap env CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=$targets \
		CACHESHIM_OUTPUT="$T/$name.csr" LD_PRELOAD=$CS_SHIM \
		"$R/prog_brk" $N >"$T/$name.out" 2>"$T/$name.err" || status=$?
	expect_status $name 0
	same_output "p$name" $name
	no_shim_lines $name
	report_files $name "$T/$name.csr" -- --by function
	want_count $name "function=local_leaf,event=tsc" calls $((2 * N))
	want_count $name "function=rt_leaf,event=tsc" calls $((2 * N))
	echo "$name: sbrk grows the heap by 64 MB as without the shim, $((2 * N)) calls each"
done
