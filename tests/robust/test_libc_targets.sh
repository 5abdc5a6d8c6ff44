#!/bin/bash
# SPDX-License-Identifier: MIT
# Targets among libc's string functions (`__memset_*`, `mem*`, `*`): the
# per-call path used to call memset itself (the compiler turned its zeroing
# loops into memset calls), so with memset's implementation entry-patched
# every call recursed until the stack ran out (SIGSEGV in /bin/true; with
# two events or more, whose loops are not unrolled).
# The hot path's object must import no function at all, and programs must
# run as without the shim, with exact counts.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

# What the per-call path's object needs from outside: data and the
# trampoline's return label, never a function of libc.
hot=$CS_BUILDDIR/shim/.libs/libcshot_la-hotpath.o
[ -r "$hot" ] || fail "$hot not found"
imports=$(nm -u "$hot" | awk '{ print $2 }' |
	grep -v -x -e _GLOBAL_OFFSET_TABLE_ -e 'cs_[a-z_]*' || true)
[ -z "$imports" ] || fail "the per-call path calls outside the shim: $imports"

N=1000
plain_run plain "$R/prog_memset" $N
expect_status plain 0
run=0
for targets in '__memset_*' '__mem*' 'mem*'; do
	run=$((run + 1))
	name=libc$run
	shim_run "$name" tsc,perf::PAGE-FAULTS "$targets" "$R/prog_memset" $N
	expect_status "$name" 0
	same_output plain "$name"
	# The program's own calls only (libc calls some of them too).  With
	# `__mem*`, memcpy's implementations may refuse entry patching
	# (depends on the CPU's variant): only the run's health is checked.
	case $targets in
	__memset_*) want=$N ;;
	mem*) want=$((2 * N)) ;;
	*) continue ;;
	esac
	report_csv "$name"
	want_count "$name" "module=prog_memset,event=tsc" calls $want
done

# Everything libc and the program define, around a program that does
# nothing, and a shell pipeline.
plain_run true_plain /bin/true
shim_run true_all tsc,perf::PAGE-FAULTS '*' /bin/true
expect_status true_all 0
plain_run sh_plain sh -c 'echo a b c | tr a-z A-Z'
shim_run sh_all tsc,perf::PAGE-FAULTS '*' sh -c 'echo a b c | tr a-z A-Z'
expect_status sh_all 0
same_output sh_plain sh_all
echo "memset/memcpy targets: exact counts; '*' around /bin/true and a pipeline: same output"

# The debug file's .symtab names a versioned function with its version
# ("realpath@@GLIBC_2.3"): that is .dynsym's "realpath", one function known
# by its .dynsym name, and a pattern matching only the version's text
# ('*@*', '*.*' meant for clones such as foo.constprop.0) does not match it.
libc_debug=$(libc_debug_file)
if [ -n "$libc_debug" ]; then
	shim_run versioned tsc 'realpath,*@*' /bin/true
	expect_status versioned 0
	"$CS_CMD" report --targets --format csv "$T/versioned.csr" >"$T/versioned.tcsv" \
		2>"$T/versioned.rerr" || { show "$T/versioned.rerr"; fail "report --targets failed"; }
	! grep '@' "$T/versioned.tcsv" || fail "a versioned .symtab name became a target of its own"
	[ "$(grep -c '^realpath,' "$T/versioned.tcsv")" = 2 ] ||
		{ show "$T/versioned.tcsv"; fail "realpath: not its two versions under its .dynsym name"; }
	echo "versioned names of the debug file: the .dynsym function, under its .dynsym name"
	# An address target at a named function ("libc.so.6+0x96b20" is
	# sysmalloc): the function's name, not the address, whichever sorts
	# first.
	off=$(readelf -sW "$libc_debug" 2>/dev/null | awk '$4 == "FUNC" && $8 == "sysmalloc" { sub(/^0+/, "", $2); print $2; exit }')
	if [ -n "$off" ]; then
		shim_run byaddr tsc "libc.so.6+0x$off,sysmalloc" /bin/true
		expect_status byaddr 0
		"$CS_CMD" report --targets --format csv "$T/byaddr.csr" >"$T/byaddr.tcsv" \
			2>"$T/byaddr.rerr" || { show "$T/byaddr.rerr"; fail "report --targets failed"; }
		grep -q "^sysmalloc,.*,libc\.so\.6+0x$off," "$T/byaddr.tcsv" ||
			{ show "$T/byaddr.tcsv"; fail "sysmalloc named by its address, not its name"; }
		echo "an address target at sysmalloc: the target is called sysmalloc"
	fi
else
	echo "(no debug file for libc: the versioned-name case skipped)"
fi
