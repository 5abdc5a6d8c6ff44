#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the example and runs it under cacheshim: every call of demo_sum and
# demo_touch is measured (TSC ticks and page faults), per call site.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
CS=${CACHESHIM:-$root/cacheshim}

command -v "$CS" >/dev/null 2>&1 ||
	{ echo "run.sh: $CS not found: build cacheshim first (./scripts/setup)" >&2; exit 1; }
cd "$here"
make -s
rm -f cacheshim.out.*
"$CS" run -e perf::PAGE-FAULTS,tsc -t 'demo_*' -o cacheshim.out.%p -- ./demo
echo
"$CS" report --by callsite cacheshim.out.*
