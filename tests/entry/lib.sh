# SPDX-License-Identifier: MIT
# Sourced by tests/entry/test_*.sh: the helpers of tests/preload/run-test.sh
# (settings, $T, shim_run, report_csv, csv_select, csv_one, num_eq...) and
# what entry patching (issue 8) adds: runs with CACHESHIM_HOOK, the report's
# per-target table, and an independent reading of a binary's function
# entries with objdump.

. "${CS_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}/tests/preload/run-test.sh"
unset CACHESHIM_HOOK CACHESHIM_CACHE

# The programs built by make (tests/entry/Makefile.inc).
E=$CS_BUILDDIR/tests/entry

# hook_run NAME HOOK EVENTS TARGETS CMD...: shim_run with CACHESHIM_HOOK=HOOK,
# not quiet (so the refusal lines reach $T/NAME.err).
hook_run()
{
	local name=$1 hook=$2 events=$3 targets=$4

	shift 4
	status=0
	CACHESHIM_HOOK=$hook CACHESHIM_EVENTS=$events CACHESHIM_TARGETS=$targets \
		CACHESHIM_OUTPUT=$T/$name.csr LD_PRELOAD=$CS_SHIM "$@" \
		>"$T/$name.out" 2>"$T/$name.err" || status=$?
}

# targets_csv NAME: the per-target table of run NAME (`cacheshim report
# --targets --format csv`: function,module,address,how,got_slots,hidden,
# calls,reason,data_words) in $T/NAME.tgt.
targets_csv()
{
	if ! "$CS_CMD" report --targets --format csv "$T/$1.csr" >"$T/$1.tgt" \
		2>"$T/$1.terr"; then
		show "$T/$1.terr"
		fail "cacheshim report --targets --format csv $T/$1.csr failed"
	fi
}

# how_class HOW: one word for a spelling of the report's how column
# (docs/report-format.md: entry, got, got-refused, refused, none,
# entry+got), so the tests depend on the spelling here only: entry (caught
# at its entry), got (GOT slots only), fallback (entry refused, GOT slots
# instead), refused (not caught at all), none, double (entry and GOT: would
# count twice), or unknown(HOW).
how_class()
{
	case $1 in
	entry+got | got+entry) echo double ;; # both ways at once: counted twice
	none) echo none ;;
	*refused*got* | *got*refused* | *deferred*got* | *got*deferred*) echo fallback ;;
	*refused* | *deferred*) echo refused ;;
	*entry*) echo entry ;;
	*got*) echo got ;;
	*) echo "unknown($1)" ;;
	esac
}

# target_how NAME FUNCTION: the class (how_class) of FUNCTION in run NAME's
# per-target table (targets_csv first); "absent" without a row.  Several
# rows (one function name in several modules) must agree.
target_how()
{
	local hows

	hows=$(csv_select "$T/$1.tgt" "function=$2" how | sort -u) ||
		fail "cannot read $T/$1.tgt"
	case $hows in
	'') echo absent ;;
	*$'\n'*)
		show "$T/$1.tgt"
		fail "'$1': $2 is caught in several ways: $(echo $hows)"
		;;
	*) how_class "$hows" ;;
	esac
}

# target_reason NAME FUNCTION: the reason column of FUNCTION's row.
target_reason()
{
	csv_select "$T/$1.tgt" "function=$2" reason | head -n 1
}

# calls_of NAME FUNCTION: the calls (event tsc) of FUNCTION and of its
# compiler clones (FUNCTION.constprop.0, .isra.0, .part.0...) in run NAME,
# all call sites added up (report_csv NAME first); 0 without a row.
calls_of()
{
	csv_select "$T/$1.csv" "event=tsc" function,calls |
		awk -F '\t' -v f="$2" '
		$1 == f || substr($1, 1, length(f) + 1) == f "." { n += $2 }
		END { print n + 0 }'
}

# refusal_lines NAME FUNCTION: how many cacheshim: lines of run NAME's
# stderr name FUNCTION (as a whole word).
refusal_lines()
{
	grep '^cacheshim:' "$T/$1.err" | grep -cw -- "$2" || true
}

# expected_refusals BINARY PREFIX: the functions named PREFIX* in BINARY
# whose entry cannot be patched safely, found with objdump alone (not the
# shim's decoder): the window is the whole instructions covering 5 bytes
# from the entry (after a leading endbr64); refused when a direct branch (or
# rip-relative lea) anywhere in the binary lands strictly inside it, when it
# holds loop/jrcxz/xbegin, when the function ends inside it and what
# follows is not int3/nop padding, or when a conditional jump of the
# function's own lands on its entry (at or before the window: a loop whose
# head is the entry).  Prints "NAME WHY", one per line.
expected_refusals()
{
	{
		nm -S --defined-only "$1" | awk -v p="$2" '
			NF == 4 && ($3 == "t" || $3 == "T") && index($4, p) == 1 {
				print "F", $1, $2, $4 }'
		objdump -d -w "$1" | awk -F '\t' '
			/^ *[0-9a-f]+:\t/ && NF >= 3 {
				a = $1; sub(/^ */, "", a); sub(/:$/, "", a)
				n = split($2, b, " ")
				print "I", a, n, $3
			}'
	} | awk '
	function hex(s,    i, c, v) {
		v = 0; s = tolower(s)
		for (i = 1; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)) - 1
			v = v * 16 + c
		}
		return v
	}
	$1 == "F" { nf++; fa[nf] = hex($2); fsz[nf] = hex($3); fname[nf] = $4; next }
	$1 == "I" {
		ni++; ia[ni] = hex($2); il[ni] = $3
		m = $0; sub(/^I [0-9a-f]+ [0-9]+ /, "", m); im[ni] = m
		at[ia[ni]] = ni
		# direct branch target, or a rip-relative address in the comment
		if (match(m, /^(bnd |notrack )?(j[a-z]+|call|loop[a-z]*|jrcxz|jecxz|xbegin) +[0-9a-f]+ </)) {
			t = substr(m, RSTART, RLENGTH); sub(/ <$/, "", t); sub(/.* /, "", t)
			tg[++nt] = hex(t); tsrc[nt] = ia[ni]
			tcond[nt] = m ~ /^(bnd |notrack )?(j[a-z]+|loop[a-z]*) / && m !~ /^(bnd |notrack )?jmp /
		} else if (match(m, /# [0-9a-f]+ </)) {
			t = substr(m, RSTART + 2, RLENGTH - 4)
			tg[++nt] = hex(t); tsrc[nt] = ia[ni]; tcond[nt] = 0
		}
		next
	}
	END {
		for (f = 1; f <= nf; f++) {
			if (!(fa[f] in at)) { print fname[f], "no-instruction-at-start"; continue }
			i = at[fa[f]]
			if (im[i] ~ /^endbr64/) i++
			lo = ia[i]; hi = lo; why = ""
			while (hi - lo < 5 && i <= ni) {
				if (im[i] ~ /^(loop|jrcxz|jecxz|xbegin)/) why = "loop/jrcxz/xbegin"
				if (ia[i] >= fa[f] + fsz[f] && im[i] !~ /^(int3|nop|xchg +%ax,%ax|data16|cs nop)/)
					why = "short-no-padding"
				hi = ia[i] + il[i]; i++
			}
			for (k = 1; k <= nt; k++) {
				if (tg[k] > lo && tg[k] < hi) why = "branch-into-window"
				if (why == "" && tcond[k] && tg[k] >= fa[f] && tg[k] <= lo &&
				    tsrc[k] >= fa[f] && tsrc[k] < fa[f] + fsz[f])
					why = "loop-at-entry"
			}
			if (why != "") print fname[f], why
		}
	}'
}

# indirect_jumpers BINARY PREFIX: the functions named PREFIX* in BINARY
# holding an indirect jmp through a register (a jump table, typically),
# one name per line.
indirect_jumpers()
{
	objdump -d -w --no-show-raw-insn "$1" | awk -v p="$2" '
		/^[0-9a-f]+ <.*>:$/ {
			f = $2; gsub(/[<>:]/, "", f); next
		}
		index(f, p) == 1 && /\t(notrack |bnd )?jmp +\*%r/ { print f }' | sort -u
}
