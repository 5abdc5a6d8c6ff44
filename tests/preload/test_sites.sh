#!/bin/bash
# SPDX-License-Identifier: MIT
# One function called from two call sites: one row per site, each with its
# own exact call count; --by function adds them up.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@" # bash features below
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/preload/run-test.sh"

A=1000
B=17
plain_run plain "$P/prog_sites" $A $B
[ "$status" -eq 0 ] || fail "prog_sites exits $status without the shim"
shim_run shim tsc cs_inner "$P/prog_sites" $A $B
[ "$status" -eq 0 ] || { show "$T/shim.err"; fail "prog_sites exits $status"; }
same_output plain shim
no_shim_lines shim

report_csv shim
csv_select "$T/shim.csv" "function=cs_inner,event=tsc" calls,callsite |
	sort -n >"$T/rows"
if [ "$(wc -l <"$T/rows")" -ne 2 ]; then
	show "$T/shim.csv"
	fail "want two cs_inner rows (two call sites), got $(wc -l <"$T/rows")"
fi
{
	IFS=$'\t' read -r calls_b site_b
	IFS=$'\t' read -r calls_a site_a
} <"$T/rows"
[ "$calls_a" = $A ] && [ "$calls_b" = $B ] || {
	show "$T/shim.csv"
	fail "call counts per site are $calls_b and $calls_a, want $B and $A"
}
[ "$site_a" != "$site_b" ] || fail "both sites are '$site_a'"
# If the report names the caller, it must be the right one.
case "$site_a$site_b" in
*site_a*|*site_b*)
	case "$site_a" in *site_a*) ;; *) fail "$A calls from '$site_a', want site_a" ;; esac
	case "$site_b" in *site_b*) ;; *) fail "$B calls from '$site_b', want site_b" ;; esac
	;;
esac
echo "sites: '$site_a' $calls_a calls, '$site_b' $calls_b calls"

report_csv shim --by function
row=$(csv_one shim "function=cs_inner,event=tsc" calls,callsite)
IFS=$'\t' read -r calls site <<<"$row"
[ "$calls" = $((A + B)) ] || fail "--by function: $calls calls, want $((A + B))"
[ "$site" = '*' ] || fail "--by function: call site '$site', want '*'"
