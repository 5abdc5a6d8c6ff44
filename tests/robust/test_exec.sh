#!/bin/bash
# SPDX-License-Identifier: MIT
# exec: the file of the old image is sealed (complete) with every call it
# made, also after an exec that failed first; the new image, which still
# has LD_PRELOAD, is profiled in a file of its own (same pid, so the name
# clashes and gets .1, .2, ...); without LD_PRELOAD it is not.  Each exec
# function the shim wraps is used once.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

# The p-variants look prog_exec up in PATH.
PATH=$R:$PATH

# chain NAME N HOW...: runs prog_exec N HOW... with and without the shim
# and checks the files of its images (image i made 2 * (N + i) calls, the
# last one N + i, and only the first IMAGES images were profiled).
chain()
{
	local name=$1 n=$2 images=$3 i f want got

	shift 3
	plain_run ${name}_plain "$R/prog_exec" $n "$@"
	expect_status ${name}_plain 0
	mkdir "$T/$name"
	status=0
	CACHESHIM_QUIET=1 CACHESHIM_EVENTS=tsc CACHESHIM_TARGETS=rt_leaf \
		CACHESHIM_OUTPUT="$T/$name/out.%p" LD_PRELOAD=$CS_SHIM \
		"$R/prog_exec" $n "$@" >"$T/$name.out" 2>"$T/$name.err" || status=$?
	expect_status $name 0
	same_output ${name}_plain $name
	no_shim_lines $name
	got=$(find "$T/$name" -type f | wc -l)
	[ "$got" -eq "$images" ] || {
		ls -l "$T/$name" >&2
		fail "$name: $got report files, want $images"
	}
	for ((i = 0; i < images; i++)); do
		if [ $i -eq 0 ]; then
			f=$(find "$T/$name" -type f -name 'out.*[0-9]' ! -name 'out.*.*')
		else
			f=$(find "$T/$name" -type f -name "out.*.$i")
		fi
		[ -n "$f" ] || fail "$name: no file for image $i"
		if [ $i -lt $(($# )) ]; then
			want=$((2 * (n + i)))
		else
			want=$((n + i))
		fi
		report_files $name$i "$f" -- --by function
		if incomplete_said $name$i; then
			show "$T/$name$i.rerr"
			fail "$name: the file of image $i ($f) is not complete"
		fi
		row=$(csv_one $name$i "function=rt_leaf,event=tsc" calls,entered)
		[ "$row" = "$want	$want" ] || {
			show "$T/$name$i.csv"
			fail "$name: image $i has calls, entered = $row, want $want"
		}
	done
	echo "$name: $*: $images images profiled, exact counts"
}

chain v 100 5 execve execv execvp execvpe
chain l 200 5 execl execlp execle fexecve
# execveat was not wrapped: the first image's file stayed RUNNING, and
# the report called it incomplete.
chain at 400 3 execveat execveat
# LD_PRELOAD dropped at the exec: the first image's file only.
chain noshim 300 1 execve-noshim

# execl with 5,000 arguments (glibc has no limit of its own; the wrapper
# refused more than 4,096 with E2BIG before).
{
	printf '#include <stdio.h>\n#include <unistd.h>\nint main(void)\n{\n'
	printf '\texecl("/bin/sh", "sh", "-c", "echo $# arguments"'
	for i in $(seq 5000); do printf ', "x"'; done
	printf ', (char *)0);\n\tperror("execl");\n\treturn 1;\n}\n'
} >"$T/many.c"
${CC:-cc} -o "$T/many" "$T/many.c"
plain_run many_plain "$T/many"
shim_run many tsc rt_leaf "$T/many"
expect_status many 0
same_output many_plain many
echo "execl with 5,000 arguments: $(cat "$T/many.out")"
