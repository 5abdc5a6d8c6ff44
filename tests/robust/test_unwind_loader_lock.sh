#!/bin/bash
# SPDX-License-Identifier: MIT
# The trampoline's personality routine runs inside the program's unwind,
# which takes none of the loader's locks (libgcc finds frame information
# by glibc's lock-free _dl_find_object).  It asked the loader there
# (dladdr on every measured frame passed, dlopen at the first): a thread
# throwing through a target while holding a mutex that a library's
# constructor, run by another thread's dlopen (the loader's lock held),
# waited for hung both threads for ever; without the shim the exception
# is caught and the program ends (review helper 91).
set -eu
. "${CS_SRCDIR:-$(dirname "$0")/../..}/tests/robust/robust-test.sh"

need_cxx
cc=${CC:-cc}
cd "$T"
cat >ctor.c <<'C'
#include <pthread.h>
extern pthread_mutex_t held;
/* Waits, inside the loader's lock, for the mutex the main thread holds. */
__attribute__((constructor)) static void waits(void)
{
	pthread_mutex_lock(&held);
	pthread_mutex_unlock(&held);
}
C
cat >prog.cc <<'C'
#include <cstdio>
#include <dlfcn.h>
#include <pthread.h>
#include <stdexcept>
#include <unistd.h>

extern "C" {
pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
__attribute__((noinline)) int thrower(int x)
{
	if (x)
		throw std::runtime_error("thrower");
	return 0;
}
}

static void *opener(void *lib)
{
	std::printf("dlopen %s\n", dlopen((const char *)lib, RTLD_NOW) ? "ok" : "failed");
	return nullptr;
}

int main(int argc, char **argv)
{
	int caught = 0;
	pthread_t t;

	(void)argc;
	try {
		thrower(1);
	} catch (const std::exception &) {
		caught++;
	}
	pthread_mutex_lock(&held);
	pthread_create(&t, nullptr, opener, argv[1]);
	usleep(300000); /* the constructor is waiting, the loader's lock held */
	try {
		thrower(1);
	} catch (const std::exception &) {
		caught++;
	}
	pthread_mutex_unlock(&held);
	pthread_join(t, nullptr);
	std::printf("caught %d\n", caught);
	return 0;
}
C
"$cc" -shared -fPIC -o libctor.so ctor.c
"$CXX" -O2 -rdynamic -o prog prog.cc -ldl -pthread
plain_run plain ./prog "$T/libctor.so"
expect_status plain 0
hang_run shim thrower "a throw through a target while another thread's dlopen waits" \
	./prog "$T/libctor.so"
expect_status shim 0
same_output plain shim
"$CS_CMD" report --by function --format csv "$T/shim.csr" >"$T/shim.csv" 2>"$T/shim.rerr" ||
	fail "cacheshim report failed"
want_count shim "function=thrower" entered 2
echo "a throw through a target does not wait for the loader's lock"
