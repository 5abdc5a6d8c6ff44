#!/bin/bash
# SPDX-License-Identifier: MIT
# CACHESHIM_HOOK=both: an exported function whose entry must be refused
# (jrcxz in the window) is still caught through its GOT slot, an exported
# patchable one at its entry and not also through its GOT slot (no double
# count).  With entry only, the refused one is not caught at all; with got
# only, both are caught through the GOT.  A library and program made here:
# the calls go through the program's PLT.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

CC=${CC_FOR_TESTS:-gcc}
K=500
cat >"$T/fb.S" <<'EOF'
	.text
	.globl fb_jrcxz
	.type fb_jrcxz, @function
	/* int fb_jrcxz(int x): x != 0; jrcxz in the window: refused */
fb_jrcxz:
	movl %edi, %ecx
	jrcxz 1f
	movl $1, %eax
	ret
1:	xorl %eax, %eax
	ret
	.size fb_jrcxz, . - fb_jrcxz
	.p2align 4, 0xcc
	.globl fb_plain
	.type fb_plain, @function
	/* int fb_plain(int x): x + 1; patchable */
fb_plain:
	leal 1(%rdi), %eax
	nopl 0(%rax,%rax,1)
	ret
	.size fb_plain, . - fb_plain
	.section .note.GNU-stack, "", @progbits
EOF
cat >"$T/main.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int fb_jrcxz(int x);
int fb_plain(int x);
int main(int argc, char **argv)
{
	long k = atol(argv[1]), i, a = 0, b = 0;
	for (i = 0; i < k; i++) {
		a += fb_jrcxz((int)(i % 3));
		b += fb_plain((int)i);
	}
	printf("%ld %ld\n", a, b);
	return 0;
}
EOF
$CC -shared -fPIC -o "$T/libfb.so" "$T/fb.S" &&
	$CC -O2 -o "$T/fb" "$T/main.c" -L"$T" -lfb -Wl,-rpath,"$T" ||
	fail "cannot build libfb.so and its program"
# Premise: the program calls both through its PLT (JUMP_SLOT relocations).
for f in fb_jrcxz fb_plain; do
	readelf -rW "$T/fb" | grep -q "JUMP_SLOT .* $f + 0\$" || fail "fb calls $f without its PLT"
done
plain_run plain "$T/fb" $K
[ "$status" -eq 0 ] || fail "fb fails without the shim"
grep -qx "$((K - (K + 2) / 3)) $((K * (K + 1) / 2))" "$T/plain.out" ||
	fail "fb prints '$(cat "$T/plain.out")'"

# hook, then how and calls of fb_jrcxz and fb_plain.
while read -r hook how_j calls_j how_p calls_p; do
	hook_run $hook $hook tsc 'fb_*' "$T/fb" $K
	[ "$status" -eq 0 ] || { show "$T/$hook.err"; fail "$hook: fb exits $status"; }
	same_output plain $hook
	report_csv $hook --by function
	targets_csv $hook
	for x in "fb_jrcxz $how_j $calls_j" "fb_plain $how_p $calls_p"; do
		read -r fn want_how want_calls <<<"$x"
		how=$(target_how $hook $fn)
		got=$(calls_of $hook $fn)
		[ "$how" = "$want_how" ] && [ "$got" = "$want_calls" ] || {
			show "$T/$hook.tgt"
			fail "$hook: $fn is '$how' with $got calls, want $want_how with $want_calls"
		}
	done
	echo "$hook: fb_jrcxz $how_j ($calls_j calls), fb_plain $how_p ($calls_p calls)"
done <<EOF
both fallback $K entry $K
entry refused 0 entry $K
got got $K got $K
EOF
# The refusal line says the GOT slots take over (both), once.
[ "$(refusal_lines both fb_jrcxz)" -eq 1 ] || { show "$T/both.err"; fail "both: fb_jrcxz's refusal not said once"; }
grep '^cacheshim:' "$T/both.err" | grep -w fb_jrcxz | grep -qi got ||
	{ show "$T/both.err"; fail "both: the refusal of fb_jrcxz does not say its GOT slots are used"; }
