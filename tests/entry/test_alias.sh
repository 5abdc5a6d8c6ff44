#!/bin/bash
# SPDX-License-Identifier: MIT
# Two names of one function (libc's getpid and __getpid share an address):
# the entry is patched once, under one name, every call counted once, and
# neither name is reported as matching nothing.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

libc=$(ldd "$CS_SHIM" | awk '/libc\.so/ { print $3 }')
nm -D "$libc" | awk '$3 ~ /^(getpid|__getpid)@/ { print $1 }' | sort -u >"$T/addrs"
[ "$(wc -l <"$T/addrs")" = 1 ] || { echo "getpid and __getpid are not one address here"; exit 77; }

cat >"$T/pids.c" <<'C'
#include <stdio.h>
#include <unistd.h>
int main(void)
{
	long s = 0;
	for (int i = 0; i < 100; i++)
		s += getpid() > 0;
	printf("%ld\n", s);
	return 0;
}
C
${CC:-cc} -O1 -o "$T/pids" "$T/pids.c"
plain_run plain "$T/pids"
hook_run alias both tsc getpid,__getpid "$T/pids"
[ "$status" -eq 0 ] || { show "$T/alias.err"; fail "exit status $status"; }
same_output plain alias
if grep -q "matched no function" "$T/alias.err"; then
	show "$T/alias.err"
	fail "an alias was reported as matching nothing"
fi
targets_csv alias
grep -E '^(getpid|__getpid),' "$T/alias.tgt" >"$T/rows" || true
[ "$(wc -l <"$T/rows")" = 1 ] || { show "$T/alias.tgt"; fail "want one target for getpid/__getpid"; }
IFS=, read -r name _ _ how _ _ calls _ <"$T/rows"
[ "$how" = entry ] && [ "$calls" = 100 ] ||
	{ show "$T/alias.tgt"; fail "$name: how '$how', $calls calls; want entry, 100"; }
echo "getpid/__getpid: one entry patch ($name), 100 calls"
