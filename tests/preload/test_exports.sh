#!/bin/bash
# SPDX-License-Identifier: MIT
# The shim runs inside other programs: it must define no global symbol but
# its own cacheshim_* ones and the wrappers it documents: dlopen and
# dlclose (modules loaded later get patched), the exec family (the report
# is finished before the process image is replaced), dlsym (its answer
# agrees with patched GOT slots), dladdr and dladdr1 (a stub stands for
# its function), pthread_create (a new thread learns
# its stack before its start routine runs), _Fork, clone and vfork (their child must not
# write into the parent's file), prctl and syscall (a seccomp filter the
# program installs: the shim makes no system call of its own after it),
# _exit and _Exit (a process leaving without exit() gets its file sealed),
# backtrace (the entry thunks' frame information is registered with
# libgcc before glibc's walks the stack: shim/unwindreg.c).  The list is
# written out here on purpose: exporting one more symbol must be a
# decision that changes this test too.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

command -v nm >/dev/null || { echo "SKIP: no nm"; exit 77; }
nm -D --defined-only "$CS_SHIM" >"$T/syms" || fail "nm -D $CS_SHIM failed"
[ -s "$T/syms" ] || fail "nm -D found no defined symbol in $CS_SHIM"

# Version definitions (CACHESHIM_x.y) show up as absolute symbols: allowed.
objdump -p "$CS_SHIM" |
	awk '/^Version definitions:/ { v = 1; next } v && NF == 0 { v = 0 }
	     v && NF >= 4 { print $4 }' >"$T/versions"

bad=0
while read -r _ type name; do
	name=${name%%@*}
	case "$name" in
	cacheshim_*|dlopen|dlclose|dlsym|dladdr|dladdr1|pthread_create|_Fork|clone|vfork|prctl|syscall) continue ;;
	_exit|_Exit) continue ;;
	backtrace) continue ;;
	execve|execv|execvp|execvpe|fexecve|execveat|execl|execlp|execle) continue ;;
	esac
	if [ "$type" = A ] && grep -qxF "$name" "$T/versions"; then
		continue
	fi
	echo "exported: $type $name" >&2
	bad=$((bad + 1))
done <"$T/syms"
[ $bad -eq 0 ] || fail "$bad symbols exported that should be hidden"
echo "exports: $(grep -cv ' A ' "$T/syms") symbols, all allowed"
