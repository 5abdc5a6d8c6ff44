#!/bin/bash
# SPDX-License-Identifier: MIT
# dlsym is wrapped (its answer for a GOT-hooked target is the target's
# stub), but glibc takes the caller's scope and records the caller's
# dependency from the return address: answered from inside the shim,
# dlsym(RTLD_DEFAULT) in a plugin loaded RTLD_LOCAL missed the plugin's
# own library, and a library found that way became undeletable (dlclose
# left it loaded, its destructor ran at exit) — with any targets at all.
# Now RTLD_DEFAULT, RTLD_NEXT and names of no GOT-hooked target go to the
# real dlsym by a jump (with the caller's return address); only a
# module's handle asked for a GOT-hooked target's name is answered with
# the stub.  (Asked through the main program's handle for RTLD_DEFAULT, a
# library the plugin looked up was unloaded under it: SIGSEGV.)  An alias
# at a target's address keeps its own (real) address; dladdr of a stub
# answers for its function at the stub's address; the shim's own lookups
# (libq's own PLT slot of q_fn) leave libq unloadable.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cd "$T"
cat >dep.c <<'C'
long dep_fn(long x) { return x * 3 + 1; }
C
cat >plugdep.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
long dep_fn(long);
void *plug_lookup(const char *name) { return dlsym(RTLD_DEFAULT, name); }
long plug_call(long x) { return dep_fn(x); } /* a GOT slot of dep_fn */
C
cat >plug.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
long q_fn(long), q_alias(long);
void *plug_lookup(const char *name) { return dlsym(RTLD_DEFAULT, name); }
long plug_call(long x) { return q_fn(x); } /* a GOT slot of q_fn */
void *plug_alias(void) { return (void *)&q_alias; } /* and of its alias */
C
cat >q.c <<'C'
#include <stdio.h>
long q_fn(long x) { return x - 1; }
long q_alias(long x) __attribute__((alias("q_fn")));
long q_call(long x) { return q_fn(x) + 1; } /* libq's own PLT slot of q_fn */
__attribute__((destructor)) static void fini(void) { printf("libq destructor\n"); fflush(stdout); }
C
cat >main.c <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	void *dep = dlopen("./libplugdep.so", RTLD_NOW | RTLD_LOCAL);
	void *(*lookup)(const char *) = dep ? (void *(*)(const char *))dlsym(dep, "plug_lookup") : 0;
	long (*f)(long) = lookup ? (long (*)(long))lookup("dep_fn") : 0;
	printf("plugin's own library: dep_fn %s", f ? "found" : "NULL\n");
	if (f)
		printf(", dep_fn(2) = %ld\n", f(2));
	void *(*dep_lookup)(const char *) = lookup;
	void *q = dlopen("./libq.so", RTLD_NOW | RTLD_GLOBAL);
	long (*qc)(long) = (long (*)(long))dlsym(q, "q_call");
	printf("q_call(3) = %ld\n", qc(3));
	void *p = dlopen("./libplug.so", RTLD_NOW | RTLD_LOCAL);
	lookup = (void *(*)(const char *))dlsym(p, "plug_lookup");
	printf("global library: q_fn %s\n", lookup("q_fn") ? "found" : "NULL");
	/* A GOT-hooked target's answer for a handle is its stub: dladdr
	 * answers for the function, at the stub's address. */
	Dl_info di;
	char *qf = dlsym(q, "q_fn");
	printf("dladdr: %s", dladdr(qf, &di) && strstr(di.dli_fname, "libq.so") ? "libq" : "failed");
	printf(", %s", di.dli_saddr == qf ? "the symbol's address" : "another address");
	printf(", inside: %s\n", dladdr(qf + 1, &di) && di.dli_saddr == qf ? "the same" : "not");
	void *(*alias)(void) = (void *(*)(void))dlsym(p, "plug_alias");
	printf("alias: %s\n", dlsym(q, "q_alias") == alias() ? "same" : "differs");
	dlclose(p);
	dlclose(q);
	printf("after dlclose: libq %s\n",
	       dlopen("./libq.so", RTLD_NOW | RTLD_NOLOAD) ? "still loaded" : "unloaded");
	/* A plugin's RTLD_DEFAULT lookup keeps what it found loaded. */
	q = dlopen("./libq.so", RTLD_NOW | RTLD_GLOBAL);
	long (*kept)(long) = (long (*)(long))dep_lookup("q_fn");
	dlclose(q);
	printf("looked up by a plugin, then closed: libq %s",
	       dlopen("./libq.so", RTLD_NOW | RTLD_NOLOAD) ? "still loaded" : "unloaded");
	fflush(stdout);
	printf(", q_fn(5) = %ld\n", kept(5));
	fflush(stdout);
	return f ? 0 : 3;
}
C
cc=${CC:-cc}
$cc -shared -fPIC -o libdep.so dep.c
$cc -shared -fPIC -o libplugdep.so plugdep.c -Wl,--no-as-needed -L. -ldep -Wl,-rpath,"$T" -ldl
$cc -shared -fPIC -o libplug.so plug.c -ldl
$cc -shared -fPIC -o libq.so q.c
$cc -o main main.c -ldl

plain_run plain ./main
expect_status plain 0
grep -q 'dep_fn found, dep_fn(2) = 7' "$T/plain.out" && grep -q 'libq unloaded' "$T/plain.out" &&
	grep -q 'closed: libq still loaded, q_fn(5) = 4' "$T/plain.out" ||
	{ show "$T/plain.out"; fail "premise: the program alone finds dep_fn, unloads libq, keeps it for a plugin"; }
# printf: a target that is not looked up (the jump); dep_fn, q_fn: the
# looked-up names are GOT-hooked targets (the shim's own lookup).
for targets in printf dep_fn,q_fn; do
	name=t_${targets//[^a-z]/_}
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_HOOK=got CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=$targets \
		CACHESHIM_OUTPUT="$T/$name.csr" LD_PRELOAD=$CS_SHIM ./main \
		>"$T/$name.out" 2>"$T/$name.err" || status=$?
	expect_status $name 0
	same_output plain $name
	# Only the start-up's word that the targets are not loaded yet.
	grep -v "matched no function in any loaded module (yet)" "$T/$name.err" >"$T/$name.rest" || true
	[ ! -s "$T/$name.rest" ] || { show "$T/$name.err"; fail "$name: the shim said more"; }
	echo "targets $targets: same output as without the shim"
done
# The second run did look these names up through the shim: they were
# GOT-hooked targets (their slots in the plugins point at stubs).
"$CS_CMD" report --targets "$T/t_dep_fn_q_fn.csr" >"$T/targets.txt" 2>&1 || true
for fn in dep_fn q_fn; do
	awk -v f=$fn '$1 == f && /GOT/' "$T/targets.txt" | grep -q . ||
		{ show "$T/targets.txt"; fail "premise: $fn is not a GOT-hooked target"; }
done

# dlsym and dlopen named as targets ('dlsym,dlopen,dl*'): they find their
# caller by the return address, which would be the trampoline's
# (dlsym(RTLD_NEXT) in another preload library answered its own function):
# never wrapped, said for each name (a glob alone, which matches them as a
# matter of course, says nothing: tests/entry/test_glob_lines.sh).
status=0
CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS='dlsym,dlopen,dl*' \
	CACHESHIM_OUTPUT="$T/dl.csr" LD_PRELOAD=$CS_SHIM ./main >"$T/dl.out" 2>"$T/dl.err" || status=$?
expect_status dl 0
same_output plain dl
for fn in dlsym dlopen; do
	grep -q "^cacheshim: '$fn' returns twice, looks at its caller or is not entered by a call: never wrapped$" \
		"$T/dl.err" || { show "$T/dl.err"; fail "no word that $fn is never wrapped"; }
done
"$CS_CMD" report --targets --format csv "$T/dl.csr" >"$T/dl.tgt" 2>&1 ||
	{ show "$T/dl.tgt"; fail "report --targets failed"; }
for fn in dlsym dlopen dlvsym dlmopen; do
	! grep -q "^$fn," "$T/dl.tgt" || { show "$T/dl.tgt"; fail "$fn is a target"; }
done
echo "targets dlsym,dlopen,dl*: dlsym and dlopen never wrapped, same output"

