#!/bin/bash
# SPDX-License-Identifier: MIT
# The assembly corpus (awkward.S): hidden functions of the program, called
# directly, so only entry patching sees them.  Under CACHESHIM_HOOK=entry
# each patchable one is counted exactly, its entry holds a jmp (after an
# endbr64 if it has one), and the program's results, register sentinels
# included, do not change; the unsafe ones are refused, once each on stderr
# and in the report, and left as they were.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

PROG=$E/prog_awkward
K=200
# Must be refused: a 2-byte function followed at once by another function
# (and entered by its calls at +2), a branch into the first bytes from
# aw_intruder, jrcxz, loop and xbegin in the window, an indirect jump that
# is no jump table.
REFUSED=" aw_short2 aw_victim aw_jrcxz aw_loop aw_xbegin aw_indjmp "
refused() { case $REFUSED in *" $1 "*) return 0 ;; esac; return 1; }
ENDBR=" aw_endbr aw_ident_endbr "

# ---- premises, without the shim ----
# The register check catches every kind of clobber it claims to.
plain_run selftest "$PROG" --selftest
[ "$status" -eq 0 ] || { show "$T/selftest.out"; fail "the register check misses clobbers"; }
plain_run plain "$PROG" $K
[ "$status" -eq 0 ] || { show "$T/plain.out"; fail "prog_awkward fails without the shim"; }
grep '^calls ' "$T/plain.out" >"$T/counts"
[ "$(wc -l <"$T/counts")" -eq 25 ] || fail "prog_awkward printed $(wc -l <"$T/counts") counts, want 25"
names=$(awk '{ print $2 }' "$T/counts")

# The layout the verdicts rely on, read from the binary: 1..4-byte functions
# followed by int3, aw_after_short right after the 2 bytes of aw_short2,
# endbr64 where expected; and objdump (not the shim) finds exactly the
# branch/jrcxz/size refusals.
nm -S --defined-only "$PROG" >"$T/nm"
sym() { awk -v n="$1" '$NF == n { print $1, $2 }' "$T/nm"; }
for n in 1 2 3 4; do
	read -r addr size <<<"$(sym aw_len$n)"
	[ $((16#$size)) -eq $n ] || fail "aw_len$n is $((16#$size)) bytes, want $n"
done
read -r a_short _ <<<"$(sym aw_short2)"
read -r a_after _ <<<"$(sym aw_after_short)"
[ $((16#$a_after - 16#$a_short)) -eq 2 ] || fail "aw_after_short is not 2 bytes after aw_short2"
plain_run peek "$PROG" --peek $names
[ "$status" -eq 0 ] || fail "prog_awkward --peek fails"
grep -q '^aw_len1 c3 cc cc cc cc ' "$T/peek.out" || fail "aw_len1 is not ret + int3 padding"
grep -q '^aw_len4 8d 47 01 c3 cc ' "$T/peek.out" || fail "aw_len4 is not lea, ret + int3 padding"
for f in $ENDBR; do
	grep -q "^$f f3 0f 1e fa " "$T/peek.out" || fail "$f does not start with endbr64"
done
expected_refusals "$PROG" aw_ | awk '{ print $1 }' | sort >"$T/objdump-refused"
printf '%s\n' aw_jrcxz aw_loop aw_short2 aw_victim aw_xbegin >"$T/want-refused"
cmp -s "$T/objdump-refused" "$T/want-refused" || {
	show "$T/objdump-refused"
	fail "objdump finds other unsafe entries than $(echo $(cat "$T/want-refused"))"
}

# check_counts RUN: exact calls for every patchable function, none for the
# refused ones (no GOT slot catches them either).
check_counts()
{
	local run=$1 fn want got

	report_csv "$run" --by function
	while read -r _ fn want; do
		got=$(calls_of "$run" "$fn")
		refused "$fn" && want=0
		[ "$got" = "$want" ] || {
			show "$T/$run.csv"
			fail "$run: $fn: $got calls in the report, want $want"
		}
	done <"$T/counts"
}

# ---- CACHESHIM_HOOK=entry ----
hook_run entry entry tsc 'aw_*' "$PROG" $K
[ "$status" -eq 0 ] || { show "$T/entry.out"; show "$T/entry.err"; fail "prog_awkward exits $status under the shim"; }
same_output plain entry
check_counts entry
targets_csv entry
for fn in $names; do
	how=$(target_how entry "$fn")
	lines=$(refusal_lines entry "$fn")
	if refused "$fn"; then
		[ "$how" = refused ] || { show "$T/entry.tgt"; fail "entry: $fn is '$how', want refused"; }
		why=$(target_reason entry "$fn")
		# The reason names the problem (loosely: the words may change).
		case $fn in
		aw_victim) want='*branch*' ;;
		aw_jrcxz) want='*jrcxz*' ;;
		aw_loop) want='*loop*' ;;
		aw_xbegin) want='*xbegin*' ;;
		aw_indjmp) want='*indirect*' ;;
		aw_short2) want='*short*' ;;
		*) want='?*' ;;
		esac
		# shellcheck disable=SC2053 # a glob on purpose
		[[ $why == $want ]] || fail "entry: $fn refused for '$why', want a reason like '$want'"
		# Said in the glob's one line (the first of them by name).
		[ "$lines" -le 1 ] || { show "$T/entry.err"; fail "entry: $lines cacheshim: lines name $fn, want at most 1"; }
	else
		[ "$how" = entry ] || { show "$T/entry.tgt"; fail "entry: $fn is '$how', want entry"; }
		# The table's calls column agrees with the call sites' rows.
		tcalls=$(csv_select "$T/entry.tgt" "function=$fn" calls)
		[ "$tcalls" = "$(calls_of entry "$fn")" ] ||
			fail "entry: --targets says $fn had '$tcalls' calls, the sites $(calls_of entry "$fn")"
		[ "$lines" -eq 0 ] || { show "$T/entry.err"; fail "entry: stderr names $fn, which was patched"; }
	fi
done
# One line for the glob's 6 refusals (tests/entry/test_glob_lines.sh).
lines=$(grep -c "^cacheshim: target 'aw_\*': the entries of 6 functions not patched ('aw_[a-z0-9_]*': .*); cacheshim report --targets shows each one's reason$" "$T/entry.err" || true)
[ "$lines" -eq 1 ] || { show "$T/entry.err"; fail "entry: $lines lines for the 6 refusals of aw_*, want 1"; }
lines=$(grep -c "^cacheshim: entry of" "$T/entry.err" || true)
[ "$lines" -eq 0 ] || { show "$T/entry.err"; fail "entry: $lines lines for single refusals, want 0"; }
echo "entry: $(($(wc -l <"$T/counts") - 6)) functions counted exactly, 6 refused (said in one line)"

# The code as it is in memory under the shim: a jmp rel32 at each patched
# entry (after endbr64), the refused ones untouched.
hook_run epeek entry tsc 'aw_*' "$PROG" --peek $names
[ "$status" -eq 0 ] || fail "prog_awkward --peek exits $status under the shim"
for fn in $names; do
	was=$(grep "^$fn " "$T/peek.out")
	now=$(grep "^$fn " "$T/epeek.out")
	if refused "$fn"; then
		# Its own bytes only (what follows aw_short2 is aw_after_short).
		read -r _ size <<<"$(sym "$fn")"
		nb=$((16#$size < 9 ? 16#$size : 9))
		[ "$(cut -d' ' -f1-$((nb + 1)) <<<"$now")" = "$(cut -d' ' -f1-$((nb + 1)) <<<"$was")" ] ||
			fail "refused $fn was changed: '$was' -> '$now'"
	else
		case $ENDBR in
		*" $fn "*) pat="^$fn f3 0f 1e fa e9 " ;;
		*) pat="^$fn e9 " ;;
		esac
		grep -q "$pat" <<<"$now" || fail "patched $fn: '$now', want a jmp rel32 ('$pat')"
	fi
done

# ---- CACHESHIM_HOOK=got: nothing is entry-patched, nothing counted ----
hook_run got got tsc 'aw_*' "$PROG" $K
[ "$status" -eq 0 ] || { show "$T/got.err"; fail "prog_awkward exits $status with CACHESHIM_HOOK=got"; }
same_output plain got
report_csv got --by function
for fn in $names; do
	[ "$(calls_of got "$fn")" = 0 ] || fail "got: $fn counted, but no GOT slot reaches it"
done
hook_run gpeek got tsc 'aw_*' "$PROG" --peek $names
cmp -s "$T/peek.out" "$T/gpeek.out" || {
	diff -u "$T/peek.out" "$T/gpeek.out" >&2 || true
	fail "CACHESHIM_HOOK=got changed function entries"
}

# ---- the default (both), quiet: the same counts, no refusal lines ----
status=0
CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS='aw_*' \
	CACHESHIM_OUTPUT=$T/both.csr LD_PRELOAD=$CS_SHIM "$PROG" $K \
	>"$T/both.out" 2>"$T/both.err" || status=$?
[ "$status" -eq 0 ] || { show "$T/both.err"; fail "prog_awkward exits $status (default hook)"; }
same_output plain both
no_shim_lines both
check_counts both
targets_csv both
for fn in $REFUSED; do
	how=$(target_how both "$fn")
	case $how in refused | fallback) ;; *) fail "both: $fn is '$how', want refused" ;; esac
done
echo "got: no entry touched; both: same counts as entry"
