#!/bin/bash
# SPDX-License-Identifier: MIT
# Targets without a dynamic symbol (issue 8, point 1), on the C corpus built
# by gcc -O2 as a PIE:
#  - stripped, its .symtab in a separate file found by .gnu_debuglink:
#    every cp_* function still found, caught at its entry, counted exactly;
#  - stripped, no debug file: the names are gone, and an address target
#    corpus+0xOFFSET is accepted at a function start listed in
#    .eh_frame_hdr (cp_add: counted exactly) but not one byte further;
#  - prog_awkward: aw_len4 (assembly without CFI, so no FDE) is no
#    address target, main (an FDE start) is, called once;
#  - two static functions of the same name in two files are two targets;
#  - a stripped library loaded by a symbolic link from another directory:
#    its debug file, named by .gnu_debuglink, lies next to the real file
#    only, and its static function is found there (counted exactly), with
#    /proc (the real path from the open file) and, where a mount namespace
#    can hide it, without (realpath(3); no entry is patched there).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

K=30
CC=${CC_FOR_TESTS:-gcc}
mkdir -p "$T/full" "$T/dl" "$T/st"
$CC -O2 -w -fPIE -pie -o "$T/full/corpus" "$CS_SRCDIR/tests/entry/corpus.c" ||
	fail "cannot build the corpus"
plain_run plain "$T/full/corpus" $K
[ "$status" -eq 0 ] || fail "corpus fails without the shim"
grep '^calls ' "$T/plain.out" >"$T/counts"
nm --defined-only "$T/full/corpus" | awk '$3 ~ /^cp_/ { print $3 }' | sort >"$T/syms"
[ "$(wc -l <"$T/syms")" -ge 15 ] || fail "the corpus has $(wc -l <"$T/syms") cp_ functions"
# Entries objdump finds unsafe (cp_walk's loop starts at its entry) are
# refused wherever the names come from, and their calls not seen.
expected_refusals "$T/full/corpus" cp_ | awk '{ print $1 }' >"$T/unsafe"
unsafe() { grep -qx "$1" "$T/unsafe"; }

# total_calls RUN: the tsc calls of every row of RUN's report.
total_calls()
{
	report_csv "$1"
	csv_select "$T/$1.csv" "event=tsc" calls | awk '{ n += $1 } END { print n + 0 }'
}

# ---- stripped, with a debug file found by .gnu_debuglink ----
(cd "$T/dl" && objcopy --only-keep-debug "$T/full/corpus" corpus.debug &&
	objcopy --strip-all --add-gnu-debuglink=corpus.debug "$T/full/corpus" corpus) ||
	fail "objcopy fails"
# Premise: no .symtab left, the link is there.
readelf -SW "$T/dl/corpus" >"$T/dl.sections"
! grep -q ' \.symtab ' "$T/dl.sections" || fail "the stripped corpus still has a .symtab"
grep -q ' \.gnu_debuglink ' "$T/dl.sections" || fail "no .gnu_debuglink in the stripped corpus"
hook_run dl entry tsc 'cp_*' "$T/dl/corpus" $K
[ "$status" -eq 0 ] || { show "$T/dl.err"; fail "the stripped corpus exits $status under the shim"; }
same_output plain dl
report_csv dl --by function
targets_csv dl
while read -r fn; do
	how=$(target_how dl "$fn")
	case $fn in *.cold) continue ;; esac # a fragment, no function (test_corpus.sh)
	if unsafe "$fn"; then
		[ "$how" = refused ] || { show "$T/dl.tgt"; fail "debuglink: $fn is '$how', want refused"; }
		continue
	fi
	[ "$how" = entry ] || { show "$T/dl.tgt"; fail "debuglink: $fn is '$how', want entry"; }
done <"$T/syms"
while read -r _ fn want; do
	unsafe "$fn" && continue
	got=$(calls_of dl "$fn")
	[ "$got" = "$want" ] || { show "$T/dl.csv"; fail "debuglink: $fn: $got calls, want $want"; }
done <"$T/counts"
echo "debuglink: $(wc -l <"$T/syms") functions found in corpus.debug, counted exactly" \
	"($(wc -l <"$T/unsafe") refused)"

# ---- stripped, no debug file: address targets ----
strip --strip-all -o "$T/st/corpus" "$T/full/corpus"
hook_run stnames entry tsc 'cp_*' "$T/st/corpus" $K
[ "$status" -eq 0 ] || fail "the stripped corpus exits $status under the shim"
[ "$(total_calls stnames)" = 0 ] || fail "names found in a stripped corpus without debug file"

add=$(awk '$3 == "cp_add" { print $1 }' <(nm "$T/full/corpus"))
[ -n "$add" ] || fail "no cp_add in the corpus"
# Premise: an FDE starts at cp_add, none at cp_add + 1.
readelf --debug-dump=frames "$T/full/corpus" 2>/dev/null |
	sed -n 's/.* FDE .*pc=0*\([0-9a-f]*\)\.\..*/\1/p' >"$T/fdes"
grep -qx "$(printf %x $((16#$add)))" "$T/fdes" ||
	fail "no FDE starts at cp_add (0x$add)"
! grep -qx "$(printf %x $((16#$add + 1)))" "$T/fdes" || fail "an FDE starts at cp_add + 1"
want=$(awk '$2 == "cp_add" { print $3 }' "$T/counts")

target=$(printf 'corpus+0x%x' $((16#$add)))
hook_run addr entry tsc "$target" "$T/st/corpus" $K
[ "$status" -eq 0 ] || { show "$T/addr.err"; fail "$target: exits $status"; }
same_output plain addr
got=$(total_calls addr)
[ "$got" = "$want" ] || { show "$T/addr.csv"; fail "address target $target: $got calls, want $want"; }

bad=$(printf 'corpus+0x%x' $((16#$add + 1)))
hook_run badaddr entry tsc "$bad" "$T/st/corpus" $K
[ "$status" -eq 0 ] || { show "$T/badaddr.err"; fail "$bad: exits $status"; }
same_output plain badaddr
[ "$(total_calls badaddr)" = 0 ] || fail "address target $bad (no function start) was patched"
grep '^cacheshim:' "$T/badaddr.err" | grep -qi -- "${bad#corpus+}" ||
	{ show "$T/badaddr.err"; fail "no cacheshim: line says why $bad is not a target"; }
echo "address targets: $target counted $want times, $bad refused"

# ---- prog_awkward: no FDE for assembly without CFI ----
PROG=$E/prog_awkward
nm "$PROG" >"$T/awk.nm"
len4=$(awk '$3 == "aw_len4" { print $1 }' "$T/awk.nm")
main=$(awk '$3 == "main" { print $1 }' "$T/awk.nm")
readelf --debug-dump=frames "$PROG" 2>/dev/null |
	sed -n 's/.* FDE .*pc=0*\([0-9a-f]*\)\.\..*/\1/p' >"$T/awk.fdes"
grep -qx "$(printf %x $((16#$main)))" "$T/awk.fdes" || fail "no FDE starts at main"
! grep -qx "$(printf %x $((16#$len4)))" "$T/awk.fdes" || fail "an FDE starts at aw_len4"
plain_run awkplain "$PROG" 5
[ "$status" -eq 0 ] || fail "prog_awkward fails without the shim"
hook_run awkaddr entry tsc "$(printf 'prog_awkward+0x%x,prog_awkward+0x%x' $((16#$main)) $((16#$len4)))" \
	"$PROG" 5
[ "$status" -eq 0 ] || { show "$T/awkaddr.err"; fail "prog_awkward exits $status with address targets"; }
same_output awkplain awkaddr
got=$(total_calls awkaddr)
[ "$got" = 1 ] || { show "$T/awkaddr.csv"; fail "prog_awkward: $got calls of main and aw_len4 by address, want 1 (main only)"; }
echo "prog_awkward: main accepted by address, aw_len4 (no FDE) not"

# ---- two static functions of one name ----
cat >"$T/dup1.c" <<'EOF'
#include <stdio.h>
long run2(long k);
static volatile long sink;
__attribute__((noinline)) static long cp_dup(long x) { sink++; return x + 1; }
int main(int argc, char **argv)
{
	long k = 100, i, s = 0;
	for (i = 0; i < k; i++)
		s += cp_dup(i);
	printf("%ld %ld\n", s, run2(2 * k));
	return 0;
}
EOF
cat >"$T/dup2.c" <<'EOF'
static volatile long sink;
__attribute__((noinline)) static long cp_dup(long x) { sink--; return x * 2; }
long run2(long k)
{
	long i, s = 0;
	for (i = 0; i < k; i++)
		s += cp_dup(i);
	return s;
}
EOF
$CC -O2 -fPIE -pie -o "$T/dup" "$T/dup1.c" "$T/dup2.c" || fail "cannot build dup"
[ "$(nm "$T/dup" | grep -c ' t cp_dup$')" -eq 2 ] || fail "dup has not two local cp_dup"
plain_run dupplain "$T/dup"
hook_run dup entry tsc cp_dup "$T/dup"
[ "$status" -eq 0 ] || { show "$T/dup.err"; fail "dup exits $status"; }
same_output dupplain dup
report_csv dup
calls=$(csv_select "$T/dup.csv" "event=tsc" function,calls |
	awk -F '\t' '$1 ~ /cp_dup/ { print $2 }' | sort -n | tr '\n' ' ')
[ "$calls" = "100 200 " ] || { show "$T/dup.csv"; fail "cp_dup rows: calls '$calls', want '100 200 '"; }
targets_csv dup
rows=$(csv_select "$T/dup.tgt" "" function,address,how | awk -F '\t' '$1 ~ /cp_dup/')
[ "$(printf '%s\n' "$rows" | cut -f2 | sort -u | wc -l)" -eq 2 ] ||
	{ show "$T/dup.tgt"; fail "the targets table does not list two cp_dup at two addresses"; }
printf '%s\n' "$rows" | while IFS=$'\t' read -r fn _ how; do
	[ "$(how_class "$how")" = entry ] || fail "dup: $fn is '$how', want entry"
done
echo "two local cp_dup: two targets, 100 and 200 calls"

# ---- a library by a symbolic link, its debug file next to the real one ----
mkdir -p "$T/real" "$T/lnk"
cat >"$T/sl.c" <<'EOF'
static volatile long sink;
__attribute__((noinline)) static long sl_inner(long x) { sink++; return x + 2; }
long sl_run(long k)
{
	long i, s = 0;
	for (i = 0; i < k; i++)
		s += sl_inner(i);
	return s;
}
EOF
cat >"$T/slmain.c" <<'EOF'
#include <stdio.h>
long sl_run(long);
int main(void) { printf("%ld\n", sl_run(77)); return 0; }
EOF
$CC -O2 -shared -fPIC -Wl,-soname,libsl.so.1 -o "$T/real/libsl.so.1.0" "$T/sl.c" ||
	fail "cannot build libsl"
(cd "$T/real" && objcopy --only-keep-debug libsl.so.1.0 libsl.debug &&
	objcopy --strip-all --add-gnu-debuglink=libsl.debug libsl.so.1.0) || fail "objcopy fails"
ln -s ../real/libsl.so.1.0 "$T/lnk/libsl.so.1"
$CC -o "$T/slmain" "$T/slmain.c" "$T/lnk/libsl.so.1" -Wl,-rpath,"$T/lnk" || fail "cannot build slmain"
# Premise: the library is loaded by the link's path, without a .symtab,
# and no debug file is next to the link.
ldd "$T/slmain" | grep -q "$T/lnk/libsl.so.1" || fail "slmain does not load libsl from lnk/"
! readelf -SW "$T/real/libsl.so.1.0" | grep -q ' \.symtab ' || fail "libsl still has a .symtab"
[ ! -e "$T/lnk/libsl.debug" ] || fail "a debug file next to the link"
plain_run slplain "$T/slmain"
hook_run sl entry tsc sl_inner "$T/slmain"
[ "$status" -eq 0 ] || { show "$T/sl.err"; fail "slmain exits $status"; }
same_output slplain sl
report_csv sl
[ "$(calls_of sl sl_inner)" = 77 ] || { show "$T/sl.csv"; show "$T/sl.err"; fail "sl_inner: want 77 calls"; }
noproc="no mount namespace: not tried without /proc"
if unshare -m true 2>/dev/null; then
	status=0
	unshare -m sh -c 'mount -t tmpfs none /proc && exec "$@"' sh \
		env CACHESHIM_HOOK=entry CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=sl_inner \
		CACHESHIM_OUTPUT="$T/slnp.csr" LD_PRELOAD="$CS_SHIM" "$T/slmain" \
		>"$T/slnp.out" 2>"$T/slnp.err" || status=$?
	[ "$status" -eq 0 ] || { show "$T/slnp.err"; fail "slmain exits $status without /proc"; }
	same_output slplain slnp
	# Without /proc no entry is patched (whether a thread blocks SIGTRAP
	# cannot be seen), so found is all that can be asked: a target,
	# refused with that reason, not a name matching nothing.
	targets_csv slnp
	[ "$(target_how slnp sl_inner)" = refused ] ||
		{ show "$T/slnp.tgt"; show "$T/slnp.err"; fail "sl_inner without /proc: not found"; }
	noproc="found also without /proc"
fi
echo "a library by a symbolic link: sl_inner found in the real file's debug file, 77 calls ($noproc)"
