#!/bin/bash
# SPDX-License-Identifier: MIT
# Ruby's functions caught at their entries, calls that bypass the GOT
# included, and none counted twice.
#
# rb_hash_aref: in Debian's libruby every call reaches it through the PLT
# (h[k], opt_aref) or through the method table's pointer, read through a
# GLOB_DAT slot (h.send(:[], k)), so each hook must count each lookup once:
# CACHESHIM_HOOK=both must not add a GOT count to the entry count.
#
# rb_big_pow: a bignum raised to a negative power calls rb_big_pow through
# the PLT, which calls itself directly (call rb_big_pow, no PLT) with the
# positive power.  GOT patching sees one call per operation, entry patching
# two, the second from that direct call site.  The premise (the direct
# call) is read from libruby with objdump.
#
# Differences between two runs (M1 and M2 operations) cancel ruby's own
# start-up calls.  Skipped (77) only if ruby is absent.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

RUBY=$(command -v ruby) || { echo "SKIP: no ruby"; exit 77; }
LIB=$(ldd "$RUBY" | awk '/libruby/ { print $3 }')
[ -f "$LIB" ] || fail "ruby is not linked with a libruby ($LIB)"
MOD=$(basename "$LIB")

# The direct, non-PLT call of rb_big_pow in libruby: its return address is
# the call site the report must show under entry patching.
objdump -d --no-show-raw-insn "$LIB" >"$T/libruby.dis"
direct=$(awk '/^ *[0-9a-f]+:\tcall +[0-9a-f]+ <rb_big_pow(@@Base)?>$/ {
	sub(/:.*/, ""); print $1; exit }' "$T/libruby.dis")
[ -n "$direct" ] || fail "no direct call of rb_big_pow in $LIB: pick another function with a direct call"
# (rb_hash_aref itself has none in Debian's ruby 3.1: said, not relied on.)
echo "direct calls of rb_hash_aref in $MOD: $(grep -cE '\t(call|jmp) +[0-9a-f]+ <rb_hash_aref(@@Base)?>$' "$T/libruby.dis" || true)"
start=$(nm -D --defined-only "$LIB" | awk '$3 == "rb_big_pow" { print $1 }')
[ -n "$start" ] || fail "no rb_big_pow in $LIB"
# The report names a call site module+0xOFFSET, or function+0xOFFSET when
# a symbol covers it (here rb_big_pow itself).
site=$(printf '%s+0x%x' "$MOD" $((16#$direct + 5)))
site_sym=$(printf 'rb_big_pow+0x%x' $((16#$direct + 5 - 16#$start)))
echo "direct call of rb_big_pow at $MOD+0x$direct ($site_sym)"

cat >"$T/work.rb" <<'RB'
h = {}
100.times { |i| h[i] = i * 7 }
m = Integer(ARGV[0])
b = 2**70
s = 0
i = 0
while i < m
  s += h[i % 100]            # rb_hash_aref through the PLT
  s += h.send(:[], i % 100)  # through the method table's pointer
  s += (b ** -2).denominator.bit_length  # rb_big_pow, then itself directly
  i += 1
end
puts "#{m} rounds, sum #{s}"
RB

M1=1000
M2=3000
DM=$((M2 - M1))
declare -A calls
for m in $M1 $M2; do
	plain_run plain$m "$RUBY" --disable=gems "$T/work.rb" $m
	[ "$status" -eq 0 ] || { show "$T/plain$m.err"; fail "ruby fails without the shim"; }
	for hook in got entry both; do
		r=$hook$m
		hook_run $r $hook tsc rb_hash_aref,rb_big_pow "$RUBY" --disable=gems "$T/work.rb" $m
		[ "$status" -eq 0 ] || { show "$T/$r.err"; fail "ruby exits $status with CACHESHIM_HOOK=$hook"; }
		same_output plain$m $r
		cmp -s "$T/plain$m.err" <(grep -v '^cacheshim:' "$T/$r.err") ||
			{ show "$T/$r.err"; fail "$hook: ruby's stderr differs"; }
		report_csv $r
		for fn in rb_hash_aref rb_big_pow; do
			calls[$fn,$r]=$(calls_of $r $fn)
		done
		# The direct site's own row (entry patching only).
		# Distinct call sites of rb_hash_aref.
		calls[sites,$r]=$(csv_select "$T/$r.csv" "function=rb_hash_aref,event=tsc" callsite | sort -u | wc -l)
		calls[site,$r]=$({
			csv_select "$T/$r.csv" "function=rb_big_pow,event=tsc,callsite=$site" calls
			csv_select "$T/$r.csv" "function=rb_big_pow,event=tsc,callsite=$site_sym" calls
		})
		targets_csv $r
	done
done

for hook in got entry both; do
	want_how=$hook
	[ $hook = both ] && want_how=entry
	for fn in rb_hash_aref rb_big_pow; do
		how=$(target_how $hook$M2 $fn)
		[ "$how" = "$want_how" ] || fail "$hook: $fn is '$how', want $want_how"
	done
	d=$((calls[rb_hash_aref,$hook$M2] - calls[rb_hash_aref,$hook$M1]))
	[ $d -eq $((2 * DM)) ] ||
		fail "$hook: rb_hash_aref calls grow by $d for $DM more rounds, want $((2 * DM)) (two lookups a round)"
	d=$((calls[rb_big_pow,$hook$M2] - calls[rb_big_pow,$hook$M1]))
	want=$((2 * DM))
	[ $hook = got ] && want=$DM
	[ $d -eq $want ] || fail "$hook: rb_big_pow calls grow by $d for $DM more rounds, want $want"
	if [ $hook = got ]; then
		[ -z "${calls[site,$hook$M2]}" ] || fail "got: a row for the direct call site $site"
	else
		[ "${calls[site,$hook$M2]}" = $M2 ] ||
			fail "$hook: the direct call site $site has '${calls[site,$hook$M2]}' calls, want $M2"
	fi
	[ ${calls[sites,$hook$M2]} -ge ${calls[sites,got$M2]} ] ||
		fail "$hook: rb_hash_aref seen from ${calls[sites,$hook$M2]} call sites, fewer than through the GOT (${calls[sites,got$M2]})"
	echo "$hook: rb_hash_aref +$((2 * DM)) (${calls[sites,$hook$M2]} sites), rb_big_pow +$want (direct site: ${calls[site,$hook$M2]:-none})"
done
