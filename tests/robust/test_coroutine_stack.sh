#!/bin/bash
# SPDX-License-Identifier: MIT
# A coroutine stack with nothing readable above its top: wrapped calls
# from the coroutine's entry function have their arguments a few bytes
# below the end.  The trampoline copied its whole 256-byte argument window
# on stacks other than the thread's and faulted (SIGSEGV) past the end;
# now the pages the window reaches into are probed first, by a system call
# no sandbox refuses: under a seccomp filter that kills at
# process_vm_readv (the first probe's call) the program died (SIGSYS).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=1000
for mode in guard unmapped guard+sandbox; do
	above=${mode%+*} sandbox=
	[ "$mode" = "$above" ] || sandbox=sandbox
	plain_run plain_$above "$R/prog_coroutine" $above $N $sandbox
	expect_status plain_$above 0
	for hook in got entry; do
		name=${mode/+/_}_$hook
		status=0
		CACHESHIM_QUIET=1 CACHESHIM_HOOK=$hook CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
			CACHESHIM_OUTPUT="$T/$name.csr" LD_PRELOAD=$CS_SHIM \
			"$R/prog_coroutine" $above $N $sandbox >"$T/$name.out" 2>"$T/$name.err" ||
			status=$?
		expect_status $name 0
		same_output plain_$above $name
		no_shim_lines $name
		report_csv $name --by function
		want_count $name "function=rt_leaf,event=tsc" calls $N
		echo "$mode, $hook: $N calls"
	done
done

# Without a stack limit glibc's range for the main thread's stack reaches
# down to the heap's end as it was at start (the kernel lays the address
# space out bottom-up then): a coroutine's stack the heap grew to since,
# ending at the heap's end, was taken for the main stack and the argument
# window copied past its top (SIGSEGV in every run).  Review helper 70.
if (ulimit -s unlimited) 2>/dev/null; then
	plain_run plain_brk bash -c 'ulimit -s unlimited && exec "$0" brk '$N "$R/prog_coroutine"
	expect_status plain_brk 0
	for hook in got entry; do
		name=brk_$hook
		status=0
		(ulimit -s unlimited &&
			CACHESHIM_QUIET=1 CACHESHIM_HOOK=$hook CACHESHIM_EVENTS=tsc \
			CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT="$T/$name.csr" \
			LD_PRELOAD=$CS_SHIM exec "$R/prog_coroutine" brk $N) \
			>"$T/$name.out" 2>"$T/$name.err" || status=$?
		expect_status $name 0
		same_output plain_brk $name
		no_shim_lines $name
		report_csv $name --by function
		want_count $name "function=rt_leaf,event=tsc" calls $N
		echo "stack from brk, no stack limit, $hook: $N calls"
	done
else
	echo "no stack limit cannot be set here (hard limit): brk case skipped"
fi
