#!/bin/bash
# SPDX-License-Identifier: MIT
# An event's privilege-level modifiers are kept: cs_touch_pages(k) makes k
# page faults, all of them taken in user space (the access is the
# program's), so perf::PAGE-FAULTS:u counts k per call and
# perf::PAGE-FAULTS:k (kernel only: libpfm4 sets exclude_user) and
# perf::PAGE-FAULTS:u=0 count none.  The shim used to drop libpfm4's
# exclude_user, so :k and :u=0 counted the user-space faults as well.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

k=3
N=20
# The premise, checked without the shim: k faults per call.
plain_run check "$P/prog_pages" $k $N --check
[ "$status" -eq 0 ] || { show "$T/check.out"; fail "prog_pages: not exactly $k faults per call"; }

# plm NAME EVENT WANT [kernel]: EVENT counts WANT page faults in each call.
# "kernel": EVENT counts kernel space, which a user other than root may not
# (kernel.perf_event_paranoid 2, the kernel's default): then the case is
# skipped, not failed.
plm()
{
	local name=$1 event=$2 want=$3 kernel=${4:-} row calls total min max

	shim_run "$name" "tsc,$event" cs_touch_pages "$P/prog_pages" $k $N
	[ "$status" -eq 0 ] || { show "$T/$name.err"; fail "$name: exit status $status"; }
	if [ -n "$kernel" ] &&
		grep -q "^cacheshim: event '$event' denied by kernel.perf_event_paranoid" "$T/$name.err"; then
		echo "$name: $event: kernel counting denied here (perf_event_paranoid): skipped"
		return 0
	fi
	report_csv "$name"
	row=$(csv_one "$name" "function=cs_touch_pages,event=$event" calls,total,min,max)
	IFS=$'\t' read -r calls total min max <<<"$row"
	[ "$calls" = $N ] && num_eq "$total" $((N * want)) && num_eq "$min" "$want" &&
		num_eq "$max" "$want" || {
		show "$T/$name.csv"
		fail "$name: $event: calls $calls total $total min $min max $max, want $N calls of $want"
	}
	echo "$name: $event: $want page faults per call"
}

plm user perf::PAGE-FAULTS:u $k
plm bare perf::PAGE-FAULTS $k
plm kernel perf::PAGE-FAULTS:k 0 kernel
plm none perf::PAGE-FAULTS:u=0 0
