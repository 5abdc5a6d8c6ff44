#!/bin/bash
# SPDX-License-Identifier: MIT
# The C corpus (corpus.c): static functions called directly, compiled now
# by gcc and clang at -O0..-O3 and -Os, as PIE, non-PIE and a -fPIC shared
# library (linked, or loaded by dlopen: patched before dlopen returns),
# plain, with -fcf-protection=full and with -fpatchable-function-entry=5,0
# and =16,8.  Not the whole cross product
# (160 builds, over a minute): see the build list below.
#
# For each build, under CACHESHIM_HOOK=entry: the same stdout and status as
# unprofiled; every cp_* function (compiler clones included) caught at its
# entry and counted exactly (cold fragments, foo.cold, never caught), except those whose entry objdump shows to be
# unsafe (expected_refusals in lib.sh), which must be refused; cp_touch's
# perf::PAGE-FAULTS exact per call.  One tolerance: at -O0 a jump table's
# bound may be spilled to the stack (clang) or computed in a form the
# relocator does not follow, so refusing a function with an indirect jump
# (cp_switch) is accepted there, and said.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

SRC=$CS_SRCDIR/tests/entry
K=40
PAGES=3
compilers="gcc"
command -v clang >/dev/null && compilers="gcc clang" || echo "note: no clang, gcc only"
OPTS=(-O0 -O1 -O2 -O3 -Os)
MODES=(pie nopie shared dlopen)
FLAGS=("" "-fcf-protection=full" "-fpatchable-function-entry=5,0"
	"-fpatchable-function-entry=16,8")

# Per compiler, every (-O level, link mode) pair, the flag set rotating
# with both: so every (-O level, flag set) pair is covered too, per
# compiler (40 builds with two compilers, about 20 s).
builds=()
ci=0
for cc in $compilers; do
	for oi in 0 1 2 3 4; do
		for mi in 0 1 2 3; do
			builds+=("$cc ${OPTS[oi]} ${MODES[mi]} $(((oi + mi + ci) % 4))")
		done
	done
	ci=$((ci + 1))
done

# build DIR CC OPT MODE FLAGS: compiles the corpus into DIR/corpus (and
# DIR/libcorpus.so for MODE shared and dlopen); prints the module holding
# cp_*.
build()
{
	local d=$1 cc=$2 opt=$3 mode=$4 flags=$5

	mkdir -p "$d"
	case $mode in
	pie) $cc $opt $flags -w -fPIE -pie -o "$d/corpus" "$SRC/corpus.c" ;;
	nopie) $cc $opt $flags -w -fno-pie -no-pie -o "$d/corpus" "$SRC/corpus.c" ;;
	shared)
		$cc $opt $flags -w -fPIC -shared -DCORPUS_LIB -o "$d/libcorpus.so" \
			"$SRC/corpus.c" &&
			$cc $opt $flags -w -fPIE -pie -o "$d/corpus" "$SRC/corpus_main.c" \
				-L"$d" -lcorpus -Wl,-rpath,"$d"
		;;
	dlopen)
		$cc $opt $flags -w -fPIC -shared -DCORPUS_LIB -o "$d/libcorpus.so" \
			"$SRC/corpus.c" &&
			$cc $opt $flags -w -fPIE -pie -D_GNU_SOURCE -DCORPUS_DLOPEN -o "$d/corpus" \
				"$SRC/corpus_main.c" -ldl
		;;
	esac >"$d/cc.log" 2>&1 || { show "$d/cc.log"; fail "$cc $opt $mode $flags: build fails"; }
	[ -f "$d/libcorpus.so" ] && echo "$d/libcorpus.so" || echo "$d/corpus"
}

# Failures of the shim are collected build by build (all of them are worth
# seeing at once); a broken premise still ends the test at once.
nfail=0
bad()
{
	echo "FAIL: $*" >&2
	nfail=$((nfail + 1))
}

n=0
clone_checked=
for b in "${builds[@]}"; do
	read -r cc opt mode fi <<<"$b"
	flags=${FLAGS[fi]}
	n=$((n + 1))
	what="$cc $opt $mode ${flags:-plain}"
	d=$T/b$n
	mod=$(build "$d" "$cc" "$opt" "$mode" "$flags")

	# Premises, without the shim: the program works and each cp_touch call
	# faults exactly PAGES pages; recursion is still a call at machine level.
	plain_run plain$n "$d/corpus" $K $PAGES --check
	[ "$status" -eq 0 ] || { show "$T/plain$n.out"; fail "$what: fails without the shim"; }
	objdump -d "$mod" | awk '/^[0-9a-f]+ <cp_rec>:/ { f = 1; next } /^$/ { f = 0 }
		f && /call.*<cp_rec>/ { found = 1 } END { exit !found }' ||
		fail "$what: cp_rec does not call itself"
	grep '^calls ' "$T/plain$n.out" >"$T/counts$n"
	nm --defined-only "$mod" | awk '$2 ~ /^[tT]$/ && $3 ~ /^cp_/ { print $3 }' |
		sort >"$T/syms$n"
	clones=$(grep -E '\.(constprop|isra|part)\.|\.cold$' "$T/syms$n" | tr '\n' ' ' || true)
	expected_refusals "$mod" cp_ >"$T/unsafe$n"
	indirect_jumpers "$mod" cp_ >"$T/indirect$n"

	hook_run shim$n entry perf::PAGE-FAULTS,tsc 'cp_*' "$d/corpus" $K $PAGES
	if [ "$status" -ne 0 ]; then
		show "$T/shim$n.out"
		show "$T/shim$n.err"
		bad "$what: exits $status under the shim"
		continue
	fi
	cmp -s "$T/plain$n.out" "$T/shim$n.out" || bad "$what: stdout differs under the shim"
	report_csv shim$n --by function
	targets_csv shim$n

	# Every cp_* symbol: caught at its entry, or refused if objdump says so
	# (and then named once on stderr).
	while read -r fn; do
		how=$(target_how shim$n "$fn")
		case $fn in *.cold)
			# A cold fragment is no function: never caught as one.
			case $how in entry | got | double) bad "$what: fragment $fn is '$how'" ;; esac
			continue
			;;
		esac
		case $how in refused | fallback)
			[ "$(refusal_lines shim$n "$fn")" -eq 1 ] ||
				bad "$what: $fn refused, but not named once on stderr"
			;;
		esac
		if grep -q "^$fn " "$T/unsafe$n"; then
			case $how in refused | fallback) ;; *)
				bad "$what: $fn is '$how', but objdump sees an unsafe entry: $(grep "^$fn " "$T/unsafe$n")" ;;
			esac
		elif [ "$how" != entry ] && [ $opt = -O0 ] && grep -qx "$fn" "$T/indirect$n"; then
			echo "  note: $what: $fn (jump table) refused: $(target_reason shim$n "$fn")"
		else
			[ "$how" = entry ] ||
				bad "$what: $fn is '$how', want entry ($(target_reason shim$n "$fn"))"
		fi
	done <"$T/syms$n"

	# Exact counts, a function and its clones added up (unless one of them
	# was refused: then its calls are not seen at all).
	while read -r _ fn want; do
		grep -q "^$fn[ .]" "$T/unsafe$n" && continue
		got=$(calls_of shim$n "$fn")
		if [ "$got" != "$want" ]; then
			case $(target_how shim$n "$fn") in
			entry) bad "$what: $fn: $got calls, want $want" ;;
			*) echo "  ($what: $fn not caught at its entry, $got calls: see above)" ;;
			esac
		fi
	done <"$T/counts$n"

	if ! grep -q '^cp_touch ' "$T/unsafe$n"; then
		row=$(csv_select "$T/shim$n.csv" "function=cp_touch,event=perf::PAGE-FAULTS" calls,min,max)
		IFS=$'\t' read -r calls min max <<<"$row"
		[ "$calls" = $K ] && num_eq "$min" $PAGES && num_eq "$max" $PAGES ||
			bad "$what: cp_touch page faults: calls '$calls' min '$min' max '$max', want $K x $PAGES"
	fi

	# Once, where gcc made a clone: the plain name as the only target
	# catches it, and the report names the clone.
	case "$clones" in *cp_scale.constprop.*)
		if [ -z "$clone_checked" ]; then
			clone=$(grep '^cp_scale\.constprop\.' "$T/syms$n" | head -n 1)
			hook_run clone$n entry tsc cp_scale "$d/corpus" $K $PAGES
			[ "$status" -eq 0 ] || bad "$what: exits $status with target cp_scale"
			report_csv clone$n --by function
			row=$(csv_select "$T/clone$n.csv" "function=$clone,event=tsc" calls)
			[ "$row" = $K ] || bad "$what: target cp_scale: $clone has '$row' calls, want $K"
			clone_checked=1
		fi
		;;
	esac
	nunsafe=$(wc -l <"$T/unsafe$n")
	echo "$what: $(wc -l <"$T/syms$n") functions (clones: ${clones:-none}), $nunsafe refused as expected"
done
[ -n "$clone_checked" ] || echo "note: no build made cp_scale.constprop.*: clone naming not checked"
[ $nfail -eq 0 ] || fail "$nfail failures in ${#builds[@]} builds (above)"
