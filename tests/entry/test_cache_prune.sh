#!/bin/bash
# SPDX-License-Identifier: MIT
# The branch-scan cache stays bounded: writing a module's file removes the
# least recently used ones beyond 256 (a cache hit refreshes a file's
# mtime) and temporary files of writers that died over an hour ago, and
# never touches anything that is not one of its own regular files (other
# names, symlinks).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/entry/lib.sh"

export XDG_CACHE_HOME=$T/cache
d=$XDG_CACHE_HOME/cacheshim
mkdir -p "$d"
now=$(date +%s)
fake() { printf '%s/branches-%040x.bin' "$d" "$1"; }
# 300 files of other modules, used 10 days ago and later, oldest first.
for i in $(seq 1 300); do
	echo x >"$(fake $i)"
	touch -d "@$((now - 864000 + i * 60))" "$(fake $i)"
done
echo x >"$d/branches-aa.bin.123.tmp"
touch -d "@$((now - 7200))" "$d/branches-aa.bin.123.tmp" # a writer that died
echo x >"$d/branches-bb.bin.456.tmp"                     # one writing now
echo keep >"$d/notes.txt"
echo victim >"$T/victim"
touch -d "@$((now - 999999))" "$T/victim"
ln -s "$T/victim" "$d/branches-$(printf '%040x' 999).bin"

R=$CS_BUILDDIR/tests/robust
plain_run plain "$R/prog_threads" 0 100
[ "$status" -eq 0 ] || fail "prog_threads fails without the shim"
hook_run cold both tsc rt_leaf "$R/prog_threads" 0 100
[ "$status" -eq 0 ] || { show "$T/cold.err"; fail "cold: exit status $status"; }
same_output plain cold

bins=$(find "$d" -maxdepth 1 -type f -name 'branches-*.bin' | wc -l)
[ "$bins" = 256 ] || fail "$bins cache files after the write, want 256"
# The one written now is kept, and the 300 + 1 - 256 = 45 oldest went.
new=$(find "$d" -maxdepth 1 -type f -name 'branches-*.bin' -newer "$d/branches-bb.bin.456.tmp" | wc -l)
[ "$new" -ge 1 ] || fail "the file written by this run is gone"
for i in $(seq 1 45); do [ ! -e "$(fake $i)" ] || fail "old file $i was kept"; done
for i in $(seq 46 300); do [ -e "$(fake $i)" ] || fail "file $i was removed, newer than the 45 oldest"; done
[ ! -e "$d/branches-aa.bin.123.tmp" ] || fail "a dead writer's temporary file was kept"
[ -e "$d/branches-bb.bin.456.tmp" ] || fail "a live writer's temporary file was removed"
[ "$(cat "$d/notes.txt")" = keep ] || fail "another file in the directory was touched"
[ -L "$d/branches-$(printf '%040x' 999).bin" ] && [ "$(cat "$T/victim")" = victim ] ||
	fail "a symlink in the cache directory, or what it names, was touched"
echo "cold run: 256 files kept (45 least recently used removed), dead temporary removed, others untouched"

# A hit refreshes the file's mtime: the program's module is the most
# recently used again even after its file is made to look old.
mine=$(find "$d" -maxdepth 1 -type f -name 'branches-*.bin' -newer "$d/branches-bb.bin.456.tmp")
touch -d "@$((now - 1728000))" $mine
hook_run warm both tsc rt_leaf "$R/prog_threads" 0 100
[ "$status" -eq 0 ] || { show "$T/warm.err"; fail "warm: exit status $status"; }
same_output plain warm
[ "$(stat -c %Y $mine)" -ge "$now" ] || fail "a cache hit did not refresh the file's mtime"
echo "warm run: the file used is marked as used"
