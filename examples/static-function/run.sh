#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A static function of a program, called directly: measured through its
# patched entry (CACHESHIM_HOOK=both, the default), then how it was caught.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
CS=${CACHESHIM:-$root/cacheshim}

command -v "$CS" >/dev/null 2>&1 ||
	{ echo "run.sh: $CS not found: build cacheshim first (./scripts/setup)" >&2; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

${CC:-cc} -O2 -o "$out/lookup" "$here/lookup.c"
"$CS" run -q -e tsc,perf::PAGE-FAULTS -t find -o "$out/lookup.%p" -- "$out/lookup"
"$CS" report "$out"/lookup.*
"$CS" report --targets "$out"/lookup.*
