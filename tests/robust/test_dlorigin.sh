#!/bin/bash
# SPDX-License-Identifier: MIT
# dlopen resolves a name on behalf of its caller: a bare name along the
# caller's DT_RUNPATH, $ORIGIN as the caller's directory.  Through the
# shim's dlopen wrapper the caller looked like libcacheshim, and both
# failed (the program exited 1).  Both must load, and the plugin's calls
# be counted.
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

mkdir -p "$T/bin/sub"
cp "$R/.libs/libcsplug.so" "$T/bin/sub/libplugx.so"
cat >"$T/host.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
long rt_leaf(long x);
int main(int argc, char **argv)
{
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	long (*run)(long);

	if (!h) {
		printf("dlopen: %s\n", dlerror());
		return 1;
	}
	run = (long (*)(long))dlsym(h, "plug_run");
	printf("plug_run(10) = %ld, rt_leaf(1) = %ld\n", run ? run(10) : -1, rt_leaf(1));
	return 0;
}
C
${CC:-cc} -o "$T/bin/host" "$T/host.c" -ldl -L"$R/.libs" -lcsrobust \
	-Wl,--enable-new-dtags,-rpath,"$R/.libs:\$ORIGIN/sub"
n=0
for name in libplugx.so '$ORIGIN/sub/libplugx.so' '${ORIGIN}/sub/libplugx.so'; do
	n=$((n + 1))
	plain_run plain$n "$T/bin/host" "$name"
	expect_status plain$n 0
	shim_run origin$n tsc plug_leaf,rt_leaf "$T/bin/host" "$name"
	expect_status origin$n 0
	same_output plain$n origin$n
	report_csv origin$n
	want_count origin$n "function=plug_leaf,event=tsc" calls 10
	echo "dlopen(\"$name\"): loaded as without the shim, 10 calls of plug_leaf"
done
