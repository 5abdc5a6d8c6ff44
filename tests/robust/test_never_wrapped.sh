#!/bin/bash
# SPDX-License-Identifier: MIT
# Functions no call-through wrapper may stand in front of: setjmp returns
# twice, vfork's child returns on its parent's stack.  Named as targets
# (and matched by broad globs), they are never wrapped: the program runs as
# without the shim, one line says why, and the other targets are counted.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

cat >"$T/twice.c" <<'C'
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static jmp_buf env;

static void __attribute__((noinline)) bounce(int i)
{
	longjmp(env, i + 1);
}

int main(void)
{
	volatile int n = 0;
	int i, status;

	for (i = 0; i < 50; i++) {
		if (setjmp(env) == 0)
			bounce(i);
		n++;
	}
	for (i = 0; i < 5; i++) {
		pid_t p = vfork();

		if (p == 0)
			_exit(i);
		waitpid(p, &status, 0);
		n += WEXITSTATUS(status);
	}
	printf("%d %d\n", n, (int)(getpid() > 0));
	return 0;
}
C
${CC:-cc} -O1 -o "$T/twice" "$T/twice.c"
plain_run plain "$T/twice"
expect_status plain 0
for hook in both got entry; do
	status=0
	CACHESHIM_HOOK=$hook CACHESHIM_EVENTS=tsc \
		CACHESHIM_TARGETS='_setjmp,*setjmp*,vfork,__vfork,getpid' CACHESHIM_OUTPUT=$T/$hook.csr \
		LD_PRELOAD=$CS_SHIM "$T/twice" >"$T/$hook.out" 2>"$T/$hook.err" || status=$?
	expect_status $hook 0
	same_output plain $hook
	if [ $hook != got ]; then
		grep -q "^cacheshim: '_setjmp' returns twice, looks at its caller or is not entered by a call: never wrapped$" \
			"$T/$hook.err" || { show "$T/$hook.err"; fail "$hook: no line for _setjmp"; }
	fi
	report_csv $hook --by function
	want_count $hook "function=getpid,event=tsc" calls 1
	for fn in _setjmp setjmp vfork __vfork; do
		got=$(csv_sum $hook "function=$fn,event=tsc" entered)
		[ "$got" = 0 ] || fail "$hook: $fn wrapped ($got calls entered)"
	done
	echo "$hook: setjmp and vfork never wrapped, getpid counted once"
done

# A name of vfork no pattern of the list matches: glibc's debug file calls
# it __libc_vfork too.  Found at the function's address among the module's
# other names (the pass over its symbols that bounds each candidate).
libc_debug=$(libc_debug_file)
if [ -n "$libc_debug" ]; then
	status=0
	CACHESHIM_HOOK=entry CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS='__libc_vfork,getpid' \
		CACHESHIM_OUTPUT=$T/alias.csr LD_PRELOAD=$CS_SHIM "$T/twice" >"$T/alias.out" \
		2>"$T/alias.err" || status=$?
	expect_status alias 0
	same_output plain alias
	grep -q "^cacheshim: '__libc_vfork' returns twice, looks at its caller or is not entered by a call: never wrapped$" \
		"$T/alias.err" || { show "$T/alias.err"; fail "no line for __libc_vfork"; }
	report_csv alias --by function
	want_count alias "function=getpid,event=tsc" calls 1
	echo "__libc_vfork (an alias of vfork) never wrapped"
else
	echo "(no debug file for libc: the alias case skipped)"
fi

# The program's entry point: the loader jumps there with the kernel's
# initial stack (argc where a return address would be).  Wrapped, the
# program read its arguments from the wrapper's frame (prog_threads saw
# the wrong argc and printed its usage).  Named _start, or under any name
# (-e picks another; found by its address, AT_ENTRY).
cat >"$T/entry.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++)
		printf("argv[%d]=%s\n", i, argv[i]);
	return argc;
}

/* An entry point of another name: what _start does, through glibc's own. */
extern void _start(void);
void other_entry(void)
{
	__asm__ volatile("jmp _start");
}
C
${CC:-cc} -O1 -o "$T/entry" "$T/entry.c"
${CC:-cc} -O1 -Wl,-e,other_entry -o "$T/entry2" "$T/entry.c"
for prog in entry entry2; do
	plain_run plain_$prog "$T/$prog" one two
	[ "$status" = 3 ] || fail "$prog without the shim: status $status, want 3"
	status=0
	CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS='_start,other_entry' \
		CACHESHIM_OUTPUT=$T/$prog.csr LD_PRELOAD=$CS_SHIM "$T/$prog" one two \
		>"$T/shim_$prog.out" 2>"$T/shim_$prog.err" || status=$?
	[ "$status" = 3 ] || { show "$T/shim_$prog.err"; fail "$prog: status $status, want 3"; }
	same_output plain_$prog shim_$prog
	grep -q "^cacheshim: '_start' returns twice, looks at its caller or is not entered by a call: never wrapped$" \
		"$T/shim_$prog.err" || { show "$T/shim_$prog.err"; fail "$prog: no line for _start"; }
	if [ $prog = entry2 ]; then
		grep -q "^cacheshim: 'other_entry' returns twice, looks at its caller or is not entered by a call: never wrapped$" \
			"$T/shim_$prog.err" || { show "$T/shim_$prog.err"; fail "$prog: other_entry wrapped"; }
	fi
	echo "$prog: the entry point is never wrapped"
done

# More never-wrapped functions in one module than a fixed list of their
# addresses held (16): each has an alias of another name that a pattern
# matches (as glibc's __GI___clone3 is clone3), and none of the aliases may
# be wrapped, whichever order the module's tables list them in.
never17="setjmp _setjmp __setjmp sigsetjmp __sigsetjmp savectx getcontext __getcontext
	swapcontext __swapcontext vfork __vfork clone __clone __clone_internal clone3 __clone3"
k=0
for fn in $never17; do
	k=$((k + 1))
	echo "long $fn(long x) { return x * 3 + $k; }"
	echo "long alias_$fn(long) __attribute__((alias(\"$fn\")));"
done >"$T/many.c"
echo 'long touch(long x) { return x + 1; }' >>"$T/many.c"
${CC:-cc} -O1 -fPIC -shared -fno-builtin -o "$T/libmany.so" "$T/many.c"
cat >"$T/usemany.c" <<'C'
#include <stdio.h>
long touch(long);
int main(void)
{
	printf("%ld\n", touch(1));
	return 0;
}
C
${CC:-cc} -O1 -o "$T/usemany" "$T/usemany.c" -L"$T" -lmany -Wl,-rpath,"$T"
plain_run many_plain "$T/usemany"
expect_status many_plain 0
status=0
CACHESHIM_HOOK=entry CACHESHIM_EVENTS=tsc \
	CACHESHIM_TARGETS='*setjmp*,savectx,*context,*vfork,*clone*,alias_*,touch' \
	CACHESHIM_OUTPUT=$T/many.csr LD_PRELOAD=$CS_SHIM "$T/usemany" >"$T/many.out" \
	2>"$T/many.err" || status=$?
expect_status many 0
same_output many_plain many
"$CS_CMD" report --targets --format csv "$T/many.csr" >"$T/many.tcsv" 2>"$T/many.rerr" ||
	{ show "$T/many.rerr"; fail "report --targets of many.csr failed"; }
grep -q '^touch,' "$T/many.tcsv" || { show "$T/many.tcsv"; fail "many: touch is no target"; }
! grep '^alias_.*libmany\.so' "$T/many.tcsv" || fail "many: an alias of a never-wrapped function was wrapped"
echo "17 never-wrapped functions in one module: none of their aliases wrapped"

# One name, many functions: a global vfork and 40 static ones of other
# files (.symtab lists each).  The exact target is said once (it was said
# for each of them), and the list of names said grows past 41 entries.
for k in $(seq 40); do
	printf 'static long vfork(long x) { return x * %d + 1; }\nlong use%d(long x) { return vfork(x); }\n' \
		$k $k >"$T/nv$k.c"
done
printf 'long vfork(long x) { return x + 7; }\nlong touch(long x) { return x + 1; }\n' >"$T/nvg.c"
${CC:-cc} -O0 -fPIC -shared -fno-builtin -o "$T/libnv.so" "$T"/nv[0-9]*.c "$T/nvg.c"
printf '#include <stdio.h>\nlong touch(long);\nlong use3(long);\nint main(void) { printf("%%ld %%ld\\n", touch(1), use3(2)); return 0; }\n' >"$T/usenv.c"
${CC:-cc} -O1 -o "$T/usenv" "$T/usenv.c" -L"$T" -lnv -Wl,-rpath,"$T"
plain_run nv_plain "$T/usenv"
expect_status nv_plain 0
status=0
CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=vfork,touch CACHESHIM_OUTPUT=$T/nv.csr \
	LD_PRELOAD=$CS_SHIM "$T/usenv" >"$T/nv.out" 2>"$T/nv.err" || status=$?
expect_status nv 0
same_output nv_plain nv
[ "$(grep -c "^cacheshim: 'vfork' returns twice" "$T/nv.err")" = 1 ] ||
	{ show "$T/nv.err"; fail "nv: vfork not said once"; }
report_csv nv --by function
want_count nv "function=touch,event=tsc" calls 1
echo "41 functions named vfork: said once"
