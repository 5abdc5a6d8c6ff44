#!/bin/bash
# SPDX-License-Identifier: MIT
# Address targets on a real stripped library: Debian's libsqlite3 has no
# .symtab and (here) no debug file, so its internal functions have no name.
# The 64 (most patterns allowed) function starts listed in its
# .eh_frame_hdr that are not in .dynsym and have the most direct call
# sites are given as libsqlite3.so.0+0xOFFSET: every one must be accepted
# (caught at its entry, or refused with a reason), most caught at their
# entry, several called, and sqlite3's output byte-identical.  Skipped (77)
# if sqlite3 is absent.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

SQLITE=$(command -v sqlite3) || { echo "SKIP: no sqlite3"; exit 77; }
LIB=$(ldd "$SQLITE" | awk '/libsqlite3/ { print $3 }')
[ -f "$LIB" ] || fail "sqlite3 is not linked with libsqlite3 ($LIB)"
MOD=$(basename "$LIB")
N=64

# Premises: no .symtab, no debug file by build-id.
! readelf -SW "$LIB" | grep -q ' \.symtab ' || { echo "SKIP: $LIB is not stripped"; exit 77; }
id=$(readelf -nW "$LIB" | awk '/Build ID/ { print $3 }')
[ ! -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] ||
	{ echo "SKIP: $LIB has a debug file"; exit 77; }

readelf --debug-dump=frames "$LIB" 2>/dev/null |
	sed -n 's/.* FDE .*pc=0*\([0-9a-f]*\)\.\..*/\1/p' | sort -u >"$T/fdes"
nm -D --defined-only "$LIB" | awk '{ sub(/^0+/, "", $1); print $1 }' | sort -u >"$T/dynsym"
objdump -d --no-show-raw-insn "$LIB" |
	sed -n 's/.*\tcall \+\([0-9a-f]\+\) <.*+0x[0-9a-f]*>$/\1/p' |
	sort | uniq -c | sort -k1,1nr -k2 | awk '$1 >= 2 { print $2 }' |
	grep -xFf "$T/fdes" | grep -vxFf "$T/dynsym" | head -n $N >"$T/picked" || true
[ "$(wc -l <"$T/picked")" -eq $N ] || fail "fewer than $N internal functions with direct calls in $LIB"
targets=$(sed "s/^/$MOD+0x/" "$T/picked" | paste -sd, -)

cat >"$T/work.sql" <<'SQL'
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v INTEGER);
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 3000)
INSERT INTO t SELECT i, 'n' || (i % 37), i * 7 % 1000 FROM c;
CREATE INDEX t_name ON t(name);
SELECT name, sum(v), count(*) FROM t GROUP BY name ORDER BY 2 DESC LIMIT 5;
UPDATE t SET v = v + 1 WHERE id % 3 = 0;
DELETE FROM t WHERE id % 5 = 0;
SELECT count(*), total(v), max(length(name)) FROM t;
SQL
plain_run plain "$SQLITE" -batch :memory: ".read $T/work.sql"
[ "$status" -eq 0 ] && [ -s "$T/plain.out" ] || fail "sqlite3 fails without the shim"
status=0
CACHESHIM_QUIET=1 CACHESHIM_SERIES=0 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=$targets \
	CACHESHIM_OUTPUT=$T/shim.csr LD_PRELOAD=$CS_SHIM "$SQLITE" -batch :memory: \
	".read $T/work.sql" >"$T/shim.out" 2>"$T/shim.err" || status=$?
[ "$status" -eq 0 ] || { show "$T/shim.err"; fail "sqlite3 exits $status under the shim"; }
same_output plain shim
cmp -s "$T/plain.err" "$T/shim.err" || { show "$T/shim.err"; fail "stderr differs under the shim"; }
targets_csv shim
csv_select "$T/shim.tgt" "" address,how,calls,reason >"$T/rows"
[ "$(wc -l <"$T/rows")" -eq $N ] || { show "$T/shim.tgt"; fail "$(wc -l <"$T/rows") of $N address targets listed"; }
entry=0 called=0
while IFS=$'\t' read -r addr how calls reason; do
	case $(how_class "$how") in
	entry) entry=$((entry + 1)) ;;
	refused | fallback) [ -n "$reason" ] || fail "$addr refused without a reason" ;;
	*) fail "$addr is '$how'" ;;
	esac
	[ "$calls" -gt 0 ] && called=$((called + 1))
done <"$T/rows"
[ $entry -ge $((N * 3 / 4)) ] || fail "only $entry of $N address targets caught at their entry"
[ $called -ge 5 ] || fail "only $called of the address targets were called"
echo "$MOD: $N unnamed functions by address, $entry entry-patched, $called called, same output"
