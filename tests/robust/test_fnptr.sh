#!/bin/bash
# SPDX-License-Identifier: MIT
# Function-pointer identity under GOT patching (CACHESHIM_HOOK=got, and
# what the default falls back to when a target's entry is refused):
# rt_leaf's address read from the GOT (GLOB_DAT) and the same address put
# in the program's tables by data relocations must stay equal, or a
# program comparing them fails (CPython aborted at start-up with
# PyObject_Free as the target).  Every call through any of them counts.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

N=1000
# The premise: the tables' words come from symbolic relocations of rt_leaf
# (in a writable and in a RELRO section), main's pointer from a GLOB_DAT.
relocs=$(readelf -rW "$R/prog_fnptr")
n64=$(printf '%s\n' "$relocs" | grep -c 'R_X86_64_64 .* rt_leaf' || true)
nglob=$(printf '%s\n' "$relocs" | grep -c 'R_X86_64_GLOB_DAT .* rt_leaf' || true)
[ "$n64" -eq 2 ] && [ "$nglob" -eq 1 ] ||
	fail "prog_fnptr has $n64 R_X86_64_64 and $nglob GLOB_DAT relocations of rt_leaf, want 2 and 1"

plain_run plain "$R/prog_fnptr" $N
expect_status plain 0
status=0
CACHESHIM_QUIET=1 CACHESHIM_HOOK=got CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
	CACHESHIM_OUTPUT=$T/got.csr LD_PRELOAD=$CS_SHIM "$R/prog_fnptr" $N \
	>"$T/got.out" 2>"$T/got.err" || status=$?
expect_status got 0
same_output plain got
no_shim_lines got
report_csv got --by function
want_count got "function=rt_leaf,event=tsc" calls $((4 * N))
# --targets says how: its GOT slot and the tables' two data words (it said
# "GOT (1 slot)" of a function whose calls came through data words too).
"$CS_CMD" report --targets "$T/got.csr" >"$T/got.targets" 2>&1 ||
	{ show "$T/got.targets"; fail "report --targets failed"; }
grep -q 'GOT (1 slot, 2 data words)' "$T/got.targets" ||
	{ show "$T/got.targets"; fail "--targets does not count the data words"; }
"$CS_CMD" report --targets --format csv "$T/got.csr" >"$T/got.tcsv" 2>&1
[ "$(csv_select "$T/got.tcsv" "function=rt_leaf" got_slots,data_words)" = "$(printf '1\t2')" ] ||
	{ show "$T/got.tcsv"; fail "--targets CSV: want 1 slot and 2 data words"; }
echo "CACHESHIM_HOOK=got: the tables and the GOT agree; $((4 * N)) calls counted; 1 slot and 2 data words said"

# The same program built without PIE: its PLT entry for rt_leaf is the
# function's canonical address (the tables and the pointer hold it; dlsym
# gives it).  Taken for the function, the wrapper called that entry, which
# jumps through the program's patched slot to the wrapper again: an endless
# loop.  The entry's own slot is the one patched; pointers to the entry
# are left as they are (still equal, and their calls reach the wrapper
# through that slot).
${CC:-cc} -O1 -no-pie -fno-pie -I"$CS_SRCDIR" -o "$T/fnptr_nopie" \
	"$CS_SRCDIR/tests/robust/prog_fnptr.c" -L"$R/.libs" -lcsrobust -Wl,-rpath,"$R/.libs"
plain_run plain_nopie "$T/fnptr_nopie" $N
expect_status plain_nopie 0
for hook in got both; do
	status=0
	# The shim's variables inside timeout: only the program runs with it.
	timeout -s KILL 60 env CACHESHIM_QUIET=1 CACHESHIM_HOOK=$hook CACHESHIM_EVENTS=tsc \
		CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT=$T/nopie_$hook.csr LD_PRELOAD=$CS_SHIM \
		"$T/fnptr_nopie" $N >"$T/nopie_$hook.out" 2>"$T/nopie_$hook.err" || status=$?
	expect_status nopie_$hook 0
	same_output plain_nopie nopie_$hook
	no_shim_lines nopie_$hook
	report_csv nopie_$hook --by function
	want_count nopie_$hook "function=rt_leaf,event=tsc" calls $((4 * N))
	echo "non-PIE, CACHESHIM_HOOK=$hook: $((4 * N)) calls counted, no loop"
done

# A data word the program changed is the program's: a library's hook
# starts as foo (a symbolic relocation), the program sets it to its own
# function, to bar, or to a sentinel (1), then dlopens a library (every
# dlopen runs the GOT pass again).  The pass took whatever the word held:
# it put foo's stub over the program's value (the program saw its hook
# changed, and bar's calls were counted as foo's), and read the code at
# address 1 (SIGSEGV).  Only words still holding what the loader put there
# are pointed at the stub.
cat >"$T/libhook.c" <<'C'
int foo(int x) { return x + 1; }
int bar(int x) { return x + 100; }
static int (*hook)(int) = foo; /* R_X86_64_64 against foo */
int call_hook(int x) { return hook(x); }
void set_hook(int (*f)(int)) { hook = f; }
int (*get_hook(void))(int) { return hook; }
C
cat >"$T/hook.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int foo(int), bar(int), call_hook(int);
void set_hook(int (*)(int));
int (*get_hook(void))(int);
static int mine(int x) { return x * 2; }
int main(int argc, char **argv)
{
	int which = argv[1][0] - '0';
	int (*want)(int) = which == 0 ? mine : which == 1 ? bar : (int (*)(int))1;

	(void)argc;
	printf("initial hook is foo: %d\n", get_hook() == foo);
	set_hook(want);
	printf("dlopen: %d\n", dlopen("libm.so.6", RTLD_NOW) != NULL);
	printf("hook as set: %d\n", get_hook() == want);
	if (which < 2)
		printf("call_hook(5) = %d, foo(5) = %d\n", call_hook(5), foo(5));
	return get_hook() != want;
}
C
${CC:-cc} -O1 -fPIC -shared -o "$T/libhook.so" "$T/libhook.c"
${CC:-cc} -O1 -o "$T/hook" "$T/hook.c" -L"$T" -lhook -Wl,-rpath,"$T" -ldl
for which in 0 1 2; do
	plain_run plain_hook$which "$T/hook" $which
	expect_status plain_hook$which 0
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_HOOK=got CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=foo \
		CACHESHIM_OUTPUT=$T/hook$which.csr LD_PRELOAD=$CS_SHIM "$T/hook" $which \
		>"$T/hook$which.out" 2>"$T/hook$which.err" || status=$?
	expect_status hook$which 0
	same_output plain_hook$which hook$which
	report_csv hook$which --by function
	# foo's one call from main (and none of the hook's, which is not foo).
	want_count hook$which "function=foo,event=tsc" calls $([ $which = 2 ] && echo 0 || echo 1)
	echo "a hook the program set ($which) is left as it set it"
done

# dlsym: under GOT patching its answer for a target, asked a module's
# handle, is the stub too, so that it equals the address the program takes
# (Ruby compares an extension's dlsym(handle, "ruby_xmalloc") with
# &ruby_xmalloc, and refused to load every extension under
# CACHESHIM_HOOK=got).  RTLD_DEFAULT is glibc's alone (the caller's scope
# and dependency; see test_dlsym_scope.sh): its answer is the function
# itself, whose calls count only with the entry patched (got: 2 calls of
# 3, both: 3).  RTLD_NEXT keeps its meaning, the object after the
# caller's: a library wrapping puts finds libc's (asked from the shim, it
# would find itself: endless recursion).
cat >"$T/libwrapputs.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
int puts(const char *s)
{
	int (*next)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "puts");

	return next ? next(s) : -1;
}
C
cat >"$T/dlsym.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
long rt_leaf(long);
int main(void)
{
	long (*loaded)(long) = rt_leaf;
	void *h = dlopen(NULL, RTLD_NOW);
	long (*found)(long) = (long (*)(long))dlsym(RTLD_DEFAULT, "rt_leaf");
	long (*byhandle)(long) = (long (*)(long))dlsym(h, "rt_leaf");

	puts(byhandle == loaded ? "dlsym agrees" : "dlsym differs");
	printf("%ld %ld %ld\n", loaded(1), found(2), byhandle(3));
	return byhandle != loaded;
}
C
${CC:-cc} -O1 -fPIC -shared -o "$T/libwrapputs.so" "$T/libwrapputs.c" -ldl
${CC:-cc} -O1 -o "$T/dlsym" "$T/dlsym.c" -L"$T" -lwrapputs -L"$R/.libs" -lcsrobust \
	-Wl,-rpath,"$T" -Wl,-rpath,"$R/.libs" -ldl
plain_run plain_dlsym "$T/dlsym"
expect_status plain_dlsym 0
for hook_calls in got:2 both:3; do
	hook=${hook_calls%:*} calls=${hook_calls#*:}
	status=0
	timeout -s KILL 60 env CACHESHIM_QUIET=1 CACHESHIM_HOOK=$hook CACHESHIM_EVENTS=tsc \
		CACHESHIM_TARGETS=rt_leaf CACHESHIM_OUTPUT=$T/dlsym_$hook.csr LD_PRELOAD=$CS_SHIM \
		"$T/dlsym" >"$T/dlsym_$hook.out" 2>"$T/dlsym_$hook.err" || status=$?
	expect_status dlsym_$hook 0
	same_output plain_dlsym dlsym_$hook
	report_csv dlsym_$hook --by function
	want_count dlsym_$hook "function=rt_leaf,event=tsc" calls $calls
	echo "CACHESHIM_HOOK=$hook: dlsym of a handle agrees with the program's address, RTLD_NEXT as without the shim"
done

# A library variable the program uses directly (a copy relocation): the
# program's copy of hookv was made from the library's, foo's address and
# all, before the shim ran; the pass pointed the library's original (no
# longer used) at foo's stub, so the program's hookv == foo was false.
cat >"$T/libcopy.c" <<'C'
int foo(int x) { return x + 1; }
int (*hookv)(int) = foo;
C
cat >"$T/copy.c" <<'C'
#include <stdio.h>
extern int (*hookv)(int);
int foo(int);
int main(void)
{
	int (*f)(int) = foo;

	printf("hookv is foo: %d; %d %d\n", hookv == f, hookv(1), f(2));
	return hookv != f;
}
C
${CC:-cc} -O1 -fPIC -shared -o "$T/libcopy.so" "$T/libcopy.c"
${CC:-cc} -O1 -o "$T/copy" "$T/copy.c" -L"$T" -lcopy -Wl,-rpath,"$T"
readelf -rW "$T/copy" | grep -q 'R_X86_64_COPY .* hookv' ||
	fail "the premise: no copy relocation of hookv in the program"
plain_run plain_copy "$T/copy"
expect_status plain_copy 0
status=0
CACHESHIM_QUIET=1 CACHESHIM_HOOK=got CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=foo \
	CACHESHIM_OUTPUT=$T/copy.csr LD_PRELOAD=$CS_SHIM "$T/copy" \
	>"$T/copy.out" 2>"$T/copy.err" || status=$?
expect_status copy 0
same_output plain_copy copy
report_csv copy --by function
want_count copy "function=foo,event=tsc" calls 2
echo "copy relocation: the program's copy agrees with the GOT, 2 calls counted"
