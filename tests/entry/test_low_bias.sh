#!/bin/bash
# SPDX-License-Identifier: MIT
# A library loaded below the address it was linked at (linked with
# -Ttext-segment high up): its load bias is "negative", i.e. wraps around
# 2^64.  Both passes must still work: the entry pass refuses victim, whose
# bytes intruder jumps into (it once patched it, and the jump crashed the
# program), and the GOT pass catches the program's PLT calls of victim (it
# once followed the library's dynamic pointers into the void: SIGSEGV).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

cat >"$T/vic.S" <<'S'
	.text
	.globl victim
	.type victim,@function
	.p2align 4
victim:
	.cfi_startproc
	movl %edi, %eax
.Lmid:
	addl $3, %eax
	nopl 0(%rax,%rax,1)
	ret
	.cfi_endproc
	.size victim, .-victim
	.globl intruder
	.type intruder,@function
	.p2align 4
intruder:
	.cfi_startproc
	movl %edi, %eax
	jmp .Lmid
	.cfi_endproc
	.size intruder, .-intruder
	.section .note.GNU-stack,"",@progbits
S
cat >"$T/main.c" <<'C'
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <string.h>
int victim(int), intruder(int);
static int bias(struct dl_phdr_info *i, size_t s, void *d)
{
	(void)s;
	if (i->dlpi_name && strstr(i->dlpi_name, "libvic"))
		*(unsigned long *)d = (unsigned long)i->dlpi_addr;
	return 0;
}
int main(void)
{
	unsigned long b = 0;
	long s = 0;
	for (int i = 0; i < 1000; i++)
		s += victim(i);
	s += intruder(1);
	dl_iterate_phdr(bias, &b);
	fprintf(stderr, "bias %lx\n", b);
	printf("%ld\n", s);
	return 0;
}
C
${CC:-cc} -shared -Wl,--build-id -Wl,-Ttext-segment=0x800000000000 -o "$T/libvic.so" "$T/vic.S"
${CC:-cc} -O1 -o "$T/main" "$T/main.c" -L"$T" -lvic -Wl,-rpath,"$T"
plain_run plain "$T/main"
[ "$status" -eq 0 ] || { show "$T/plain.err"; fail "the program fails without the shim"; }
b=$(sed -n 's/^bias //p' "$T/plain.err")
case $b in
[89a-f]???????????????) ;;
*) echo "SKIP: the library loaded at bias $b, not below its link address"; exit 77 ;;
esac

for hook in entry both; do
	CACHESHIM_CACHE=0 hook_run $hook $hook tsc victim "$T/main"
	[ "$status" -eq 0 ] || { show "$T/$hook.err"; fail "CACHESHIM_HOOK=$hook: exit status $status"; }
	same_output plain $hook
	grep -q "entry of 'victim' in .*libvic.so not patched: a direct branch elsewhere in the module lands inside the patched bytes" "$T/$hook.err" ||
		{ show "$T/$hook.err"; fail "CACHESHIM_HOOK=$hook: victim's entry not refused"; }
done
# Refused at its entry, caught by its GOT slot: the program's 1000 calls.
targets_csv both
grep '^victim,' "$T/both.tgt" >"$T/row" || true
IFS=, read -r _ _ _ how _ _ calls _ <"$T/row"
[ "$(how_class "$how")" = fallback ] && [ "$calls" = 1000 ] ||
	{ show "$T/both.tgt"; fail "victim: how '$how', $calls calls; want entry refused, GOT, 1000"; }
echo "bias $b: victim refused at its entry, its 1000 PLT calls caught by the GOT slot"
