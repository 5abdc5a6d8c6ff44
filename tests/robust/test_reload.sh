#!/bin/bash
# SPDX-License-Identifier: MIT
# A library loaded, called through a dlsym pointer and unloaded 5,000
# times, with a target in it: every call is measured, the function is one
# target and one row, and neither the report nor the program's memory
# grows with the loads.  Before: each load's entry stubs took a 1 MB step
# of address space near it and a page of memory (after ~1,700 loads no
# step was left within 2 GB, and later loads' functions were refused); each load was a new target
# (after ~4,000 loads the table of 4,096 was full and the rest went
# unmeasured, one line on stderr); the module table filled at 2,048 (later
# loads had no module); and every dlclose made each thread start a new
# site table, so the same call site got a new 9 KB block and 16 KB of
# thread memory at every load (~100 MB of report and of memory for 3,000
# loads).
#
# The second part: 300 call sites of a target in the program, each called
# once between dlopen/dlclose rounds of an unrelated library, 40 rounds:
# the call sites keep their blocks across the dlcloses.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=5000
cd "$T"
cat >t.c <<'C'
long t_use(long x) { return 2 * x; }
C
cat >main.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	long s = 0;
	struct rusage ru;

	for (int i = 0; i < n; i++) {
		void *h = dlopen("./libt.so", RTLD_NOW | RTLD_LOCAL);
		long (*u)(long) = (long (*)(long))dlsym(h, "t_use");

		s += u(i);
		dlclose(h);
	}
	printf("sum %ld\n", s);
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "maxrss %ld\n", ru.ru_maxrss);
	return 0;
}
C
cc=${CC:-cc}
$cc -shared -fPIC -o libt.so t.c
$cc -o main main.c -ldl

# maxrss KB of a run (the program prints it last on stderr).
maxrss() { awk '$1 == "maxrss" { print $2 }' "$T/$1.err"; }

plain_run plain ./main $N
expect_status plain 0
shim_run churn tsc t_use ./main $N
expect_status churn 0
# Not same_output: the last stderr line (maxrss) differs.
cmp -s "$T/plain.out" "$T/churn.out" || fail "stdout differs under the shim"
report_csv churn
want_count churn "function=t_use,event=tsc" calls $N
rows=$(csv_select "$T/churn.csv" "function=t_use,event=tsc" calls | wc -l)
[ "$rows" -eq 1 ] || { show "$T/churn.csv"; fail "t_use in $rows rows, want 1 (one call site)"; }
"$CS_CMD" report --targets --format csv "$T/churn.csr" >"$T/targets.csv" 2>"$T/targets.err"
targets=$(grep -c '^t_use,' "$T/targets.csv" || true)
[ "$targets" -eq 1 ] || { show "$T/targets.csv"; fail "t_use is $targets targets, want 1"; }
size=$(stat -c %s "$T/churn.csr")
[ "$size" -lt $((8 << 20)) ] || fail "report file $size bytes after $N loads, want under 8 MB"
plain_rss=$(maxrss plain) rss=$(maxrss churn)
[ $((rss - plain_rss)) -lt $((8 << 10)) ] ||
	fail "max RSS $rss KB under the shim against $plain_rss KB without, want under 8 MB more"
echo "$N loads: $N calls in one row of one target; report $size bytes; RSS $rss KB ($plain_rss without)"

# Second part: call sites in the program across dlcloses.
SITES=300 ROUNDS=40
{
	echo '#include <dlfcn.h>'
	echo '#include <stdio.h>'
	echo '#include <stdlib.h>'
	echo 'long t_use(long);'
	echo 'int main(int argc, char **argv)'
	echo '{'
	echo '	long s = 0;'
	echo "	for (int r = 0; r < $ROUNDS; r++) {"
	echo '		void *h = dlopen("./libu.so", RTLD_NOW | RTLD_LOCAL);'
	echo '		if (!h) return 1;'
	echo '		dlclose(h);'
	for i in $(seq $SITES); do
		echo "		s += t_use($i);"
	done
	echo '	}'
	echo '	printf("sum %ld\n", s);'
	echo '	return 0;'
	echo '}'
} >sites.c
echo 'int u_other(int x) { return x; }' >u.c
$cc -shared -fPIC -o libu.so u.c
$cc -shared -fPIC -o libt2.so t.c
$cc -O0 -o sites sites.c -L. -lt2 -Wl,-rpath,"$T" -ldl
plain_run plain_sites ./sites
expect_status plain_sites 0
shim_run sites tsc t_use ./sites
expect_status sites 0
same_output plain_sites sites
report_csv sites
want_count sites "function=t_use,event=tsc" calls $((SITES * ROUNDS))
rows=$(csv_select "$T/sites.csv" "function=t_use,event=tsc" calls | wc -l)
[ "$rows" -eq $SITES ] || fail "t_use in $rows rows, want $SITES call sites"
size=$(stat -c %s "$T/sites.csr")
# 300 site blocks of ~9 KB: ~3 MB.  Before: one per call site and round.
[ "$size" -lt $((8 << 20)) ] ||
	fail "report file $size bytes for $SITES call sites over $ROUNDS dlcloses, want under 8 MB"
echo "$SITES call sites x $ROUNDS dlcloses: $((SITES * ROUNDS)) calls in $SITES rows; report $size bytes"

# Third part, where a mount namespace can be made (root): without /proc
# the shim cannot see whether another thread blocks SIGTRAP, so a loaded
# library's entry patch is deferred and refused (its GOT slots are used):
# said once for the function, not once per load (before: a line on stderr
# and a refusal block at each of the 200 loads).
if unshare -m true 2>/dev/null; then
	status=0
	unshare -m sh -c 'mount -t tmpfs none /proc && exec "$@"' sh \
		env CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=t_use CACHESHIM_OUTPUT="$T/noproc.csr" \
		LD_PRELOAD="$CS_SHIM" ./main 200 >"$T/noproc.out" 2>"$T/noproc.err" || status=$?
	expect_status noproc 0
	[ "$(cat "$T/noproc.out")" = "sum $((200 * 199))" ] || fail "wrong sum without /proc"
	lines=$(grep -c "entry of 't_use' .* not patched" "$T/noproc.err" || true)
	[ "$lines" -eq 1 ] || { show "$T/noproc.err"; fail "$lines refusal lines for 200 loads, want 1"; }
	"$CS_CMD" report --targets --format csv "$T/noproc.csr" >"$T/noproc.csv" 2>"$T/noproc.rerr" ||
		{ show "$T/noproc.rerr"; fail "report of the run without /proc refused"; }
	grep -q '^t_use,.*,refused,' "$T/noproc.csv" || { show "$T/noproc.csv"; fail "t_use not refused"; }
	echo "without /proc: 200 loads, the refusal said once"
else
	echo "no mount namespace here: the run without /proc is not tried"
fi

# Fourth part: call sites inside the reloaded library (a review helper's
# case).  The plugin calls u_fn of another library, which it brings in
# and which goes with it, through its PLT, 2,000 loads: one row, and the
# report does not grow with the loads (before: a new 9 KB site block per
# load, 19 MB for 1,000 loads).
L=2000
echo 'volatile long usink; long u_fn(long x) { usink += x; return x + 3; }' >u2.c
cat >plug.c <<'C'
long u_fn(long);
long plug_call(long x) { return u_fn(x) + 1; }
C
cat >plugmain.c <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	int n = atoi(argv[1]);
	long s = 0;

	for (int i = 0; i < n; i++) {
		void *h = dlopen("./libplug.so", RTLD_NOW | RTLD_LOCAL);
		long (*c)(long) = (long (*)(long))dlsym(h, "plug_call");

		s += c(i);
		dlclose(h);
	}
	printf("sum %ld\n", s);
	return 0;
}
C
$cc -shared -fPIC -o libu2.so u2.c
$cc -shared -fPIC -o libplug.so plug.c -L. -lu2 -Wl,-rpath,"$T"
$cc -o plugmain plugmain.c -ldl
plain_run plain_plug ./plugmain $L
expect_status plain_plug 0
shim_run plug tsc u_fn ./plugmain $L
expect_status plug 0
same_output plain_plug plug
report_csv plug
want_count plug "function=u_fn,event=tsc" calls $L
rows=$(csv_select "$T/plug.csv" "function=u_fn,event=tsc" calls | wc -l)
[ "$rows" -eq 1 ] || { show "$T/plug.csv"; fail "u_fn in $rows rows, want 1 (one call site)"; }
size=$(stat -c %s "$T/plug.csr")
[ "$size" -lt $((8 << 20)) ] ||
	fail "report file $size bytes after $L loads of a plugin calling u_fn, want under 8 MB"
echo "$L loads of a plugin calling a target: $L calls in one row; report $size bytes"
