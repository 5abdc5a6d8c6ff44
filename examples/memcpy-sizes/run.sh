#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memcpy cost per call by copy size: the target memcpy:arg3 keys memcpy's
# histograms by the size class of its third argument.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
CS=${CACHESHIM:-$root/cacheshim}

command -v "$CS" >/dev/null 2>&1 ||
	{ echo "run.sh: $CS not found: build cacheshim first (./scripts/setup)" >&2; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# -fno-builtin: keep memcpy a call through the PLT (gcc would inline it).
${CC:-cc} -O2 -fno-builtin -o "$out/copy" "$here/copy.c"
"$CS" run -q -e tsc,perf::PAGE-FAULTS -t memcpy:arg3 -o "$out/copy.%p" -- "$out/copy"
"$CS" report --by key --event tsc "$out"/copy.*
