#!/bin/bash
# SPDX-License-Identifier: MIT
# A real interpreter: Hash#[] in Debian's ruby reaches rb_hash_aref through
# libruby's PLT, so M lookups in a script add exactly M wrapped calls.
# Skipped (77) only if ruby is absent.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

RUBY=$(command -v ruby) || { echo "SKIP: no ruby"; exit 77; }

# No allocation and no other hash lookup in the loop: the two runs differ
# by the lookups only.
cat >"$T/lookup.rb" <<'RB'
h = {}
100.times { |i| h[i] = i * 7 }
m = Integer(ARGV[0])
s = 0
i = 0
while i < m
  s += h[i % 100]
  i += 1
end
puts "#{m} lookups, sum #{s}"
RB

M1=1000
M2=5000
calls=()
for m in $M1 $M2; do
	plain_run plain$m "$RUBY" --disable=gems "$T/lookup.rb" $m
	[ "$status" -eq 0 ] || { show "$T/plain$m.err"; fail "ruby fails without the shim"; }
	shim_run shim$m tsc rb_hash_aref "$RUBY" --disable=gems "$T/lookup.rb" $m
	[ "$status" -eq 0 ] || { show "$T/shim$m.err"; fail "ruby exits $status under the shim"; }
	same_output plain$m shim$m
	no_shim_lines shim$m
	report_csv shim$m --by function
	row=$(csv_one shim$m "function=rb_hash_aref,event=tsc" calls)
	calls[$m]=$row
	echo "M=$m: $row calls of rb_hash_aref"
done
diff=$((calls[M2] - calls[M1]))
[ $diff -eq $((M2 - M1)) ] ||
	fail "rb_hash_aref calls differ by $diff, want $((M2 - M1))"
