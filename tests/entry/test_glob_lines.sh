#!/bin/bash
# SPDX-License-Identifier: MIT
# What the shim says about the functions a glob matched but could not
# wrap: one line per pattern, not one per function.  python3 under '*'
# said ~7,600 lines (4,300 refused entries and ~30 never-wrapped functions
# in each of its 35 processes under a pyenv wrapper).  A name given as such
# keeps its own line; `cacheshim run` (CACHESHIM_UNMATCHED=run) counts the
# refused targets in its summary, so the shim leaves the glob's line out.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

# Two functions whose entries intruder jumps into (refused: a direct branch
# elsewhere lands inside the patched bytes), one it does not.
cat >"$T/vic.S" <<'S'
	.text
	.globl victim_a, victim_b, victim_ok, intruder
	.type victim_a,@function
	.p2align 4
victim_a:
	movl %edi, %eax
.La:
	addl $3, %eax
	nopl 0(%rax,%rax,1)
	ret
	.size victim_a, .-victim_a
	.type victim_b,@function
	.p2align 4
victim_b:
	movl %edi, %eax
.Lb:
	addl $5, %eax
	nopl 0(%rax,%rax,1)
	ret
	.size victim_b, .-victim_b
	.type victim_ok,@function
	.p2align 4
victim_ok:
	leal 7(%rdi), %eax
	nopl 0(%rax,%rax,1)
	nopl 0(%rax,%rax,1)
	ret
	.size victim_ok, .-victim_ok
	.type intruder,@function
	.p2align 4
intruder:
	testl %edi, %edi
	jz .La
	jmp .Lb
	.size intruder, .-intruder
	.globl LONGNAME, intruder2
	.type LONGNAME,@function
	.p2align 4
LONGNAME:
	movl %edi, %eax
.Lc:
	addl $9, %eax
	nopl 0(%rax,%rax,1)
	ret
	.size LONGNAME, .-LONGNAME
	.type intruder2,@function
	.p2align 4
intruder2:
	jmp .Lc
	.size intruder2, .-intruder2
	.section .note.GNU-stack,"",@progbits
S
# A function whose name is longer than the 127 bytes a report file keeps
# of it, its entry refused too.
long=long_$(printf '%*s' 130 '' | tr ' ' x)_end
sed -i "s/LONGNAME/$long/g" "$T/vic.S"
cat >"$T/main.c" <<'C'
#include <setjmp.h>
#include <stdio.h>
int victim_a(int), victim_b(int), victim_ok(int), intruder(int);
int main(void)
{
	jmp_buf jb;
	long s = 0;
	for (int i = 0; i < 100; i++)
		s += victim_a(i) + victim_b(i) + victim_ok(i);
	s += intruder(0) + intruder(1);
	if (!setjmp(jb))
		longjmp(jb, 1);
	printf("%ld\n", s);
	return 0;
}
C
${CC:-cc} -shared -o "$T/libvic.so" "$T/vic.S"
${CC:-cc} -O1 -o "$T/main" "$T/main.c" -L"$T" -lvic -Wl,-rpath,"$T"
plain_run plain "$T/main"
[ "$status" -eq 0 ] || { show "$T/plain.err"; fail "the program fails without the shim"; }

# lines NAME REGEX: how many of run NAME's stderr lines match.
lines()
{
	grep -c -- "$2" "$T/$1.err" || true
}

# want_lines NAME REGEX N WHAT: N of run NAME's stderr lines match REGEX.
want_lines()
{
	local n

	n=$(lines "$1" "$2")
	[ "$n" = "$3" ] || { show "$T/$1.err"; fail "$1: $n lines $4, want $3"; }
}

# A glob: one line for both refused entries, no line per function.
hook_run glob both tsc 'victim_*' "$T/main"
[ "$status" -eq 0 ] || { show "$T/glob.err"; fail "glob: exit status $status"; }
same_output plain glob
want_lines glob "^cacheshim: target 'victim_\*': the entries of 2 functions not patched ('victim_[ab]': a direct branch elsewhere in the module lands inside the patched bytes; \.\.\.); their GOT slots are used instead; cacheshim report --targets shows each one's reason$" 1 "summing up"
want_lines glob "^cacheshim: entry of " 0 "per function"
# Still refused and caught by their GOT slots, each call counted.
targets_csv glob
for fn in victim_a victim_b; do
	[ "$(target_how glob $fn)" = fallback ] || { show "$T/glob.tgt"; fail "glob: $fn is not refused with GOT slots"; }
	n=$(csv_select "$T/glob.tgt" "function=$fn" calls)
	[ "$n" = 100 ] || { show "$T/glob.tgt"; fail "glob: $fn $n calls, want 100"; }
done
[ "$(target_how glob victim_ok)" = entry ] || { show "$T/glob.tgt"; fail "glob: victim_ok not patched at its entry"; }
echo "victim_*: one line for its 2 refused entries; both still counted (100 calls each)"

# A glob that matches the long name past the 127 bytes kept of it: its
# refusal is the glob's too (it was said on a line of its own: the
# pattern was found again from the cut name, which '*_end' does not match).
hook_run long both tsc '*_end' "$T/main"
same_output plain long
want_lines long "^cacheshim: target '\*_end': the entries of 1 function not patched ('long_x*': a direct branch elsewhere in the module lands inside the patched bytes); their GOT slots are used instead; cacheshim report --targets shows each one's reason$" 1 "summing up"
want_lines long "^cacheshim: entry of " 0 "per function"
echo "*_end: the refusal of a function whose name is cut in the file is the glob's line"

# Names given as such: a line each, as before.
hook_run names both tsc 'victim_a,victim_b' "$T/main"
same_output plain names
for fn in victim_a victim_b; do
	want_lines names "^cacheshim: entry of '$fn' in .*libvic.so not patched: a direct branch elsewhere in the module lands inside the patched bytes (at +0x[0-9a-f]*); its GOT slots are used instead$" 1 "for $fn"
done
echo "victim_a,victim_b: a line each"

# Under cacheshim run: nothing from the shim; the summary counts them.
status=0
(cd "$T" && "$CS_CMD" run -e tsc -t 'victim_*' -o "$T/run.csr" -- "$T/main") \
	>"$T/run.out" 2>"$T/run.err" || status=$?
[ "$status" -eq 0 ] || { show "$T/run.err"; fail "run: exit status $status"; }
same_output plain run
want_lines run "^cacheshim: " 0 "from the shim"
want_lines run "^2 targets refused entry patching (cacheshim report --targets shows why)$" 1 "counting the 2 refused targets"
echo "cacheshim run -t 'victim_*': the summary counts the 2 refused targets, the shim says nothing"

# Functions that are never wrapped: a glob that matches other functions too
# says nothing of them; one that matches only them says so; a name given
# as such gets its line.
hook_run never both tsc '_setjmp,*setjmp*,victim_*' "$T/main"
same_output plain never
want_lines never "^cacheshim: '_setjmp' returns twice, looks at its caller or is not entered by a call: never wrapped$" 1 "for _setjmp"
want_lines never "^cacheshim: target '\*setjmp\*' matched only functions that are never wrapped ('[_a-z]*setjmp[_a-z]*'\(, \.\.\.\)\?: they return twice, look at their caller or are not entered by a call)$" 1 "for *setjmp*"
want_lines never "never wrapped" 2 "about never-wrapped functions"
hook_run never2 both tsc '*jmp*,victim_*' "$T/main"
same_output plain never2
want_lines never2 "never wrapped" 0 "about never-wrapped functions"
targets_csv never2
for fn in setjmp _setjmp __sigsetjmp; do
	[ "$(target_how never2 $fn)" = absent ] || { show "$T/never2.tgt"; fail "never2: $fn is a target"; }
done
echo "never-wrapped functions: said for a name and a glob matching only them, not for a broader glob"

# The summary of cacheshim run: the rows of largest total (20 by default,
# --top N; python3 under '*' printed 2,200), how many more said.
for top in 2 0 default; do
	status=0
	if [ $top = default ]; then
		(cd "$T" && "$CS_CMD" run -e tsc -t 'victim_*' -o "$T/top$top.csr" -- "$T/main") \
			>"$T/top$top.out" 2>"$T/top$top.err" || status=$?
	else
		(cd "$T" && "$CS_CMD" run --top $top -e tsc -t 'victim_*' -o "$T/top$top.csr" -- "$T/main") \
			>"$T/top$top.out" 2>"$T/top$top.err" || status=$?
	fi
	[ "$status" -eq 0 ] || { show "$T/top$top.err"; fail "run --top $top: exit status $status"; }
	rows=$(grep -cE '^  victim_(a|b|ok) ' "$T/top$top.err" || true)
	more=$(grep -c '^  \.\.\. and 1 more (cacheshim run --top 0, or cacheshim report, shows them all)$' "$T/top$top.err" || true)
	case $top in
	2) want="2 1" ;;
	*) want="3 0" ;;
	esac
	[ "$rows $more" = "$want" ] || { show "$T/top$top.err"; fail "run --top $top: $rows rows and $more 'more' lines, want $want"; }
done
echo "cacheshim run --top 2: 2 of the 3 functions and '... and 1 more'; --top 0 and the default: all 3"
