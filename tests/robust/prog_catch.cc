// SPDX-License-Identifier: MIT
// A wrapped function that catches an exception thrown by a wrapped
// function it called, then calls a third wrapped one through a helper
// (deeper than the abandoned call): its exclusive values must still lose
// that call.  Page faults make the values exact: cx::outer touches 1
// fresh page itself, cx::inner 4, cx::middle none (it throws).
#include <alloca.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <sys/mman.h>

static char *fresh(int pages)
{
	void *p = mmap(nullptr, (size_t)pages * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		std::exit(3);
	return (char *)p;
}

static void touch(char *p, int pages)
{
	for (int i = 0; i < pages; i++)
		((volatile char *)p)[(long)i * 4096] = 1;
}

// The stack the run will use, faulted in before any measured call.
extern "C" __attribute__((noinline)) void prewarm()
{
	char *b = (char *)alloca(256 * 1024);
	std::memset(b, 0, 256 * 1024);
	__asm__ volatile("" : : "r"(b) : "memory");
}

namespace cx {
__attribute__((noinline)) long inner(char *p)
{
	touch(p, 4);
	return 4;
}
__attribute__((noinline)) long middle(int i)
{
	if (i >= 0)
		throw std::runtime_error("middle");
	return i;
}
}

__attribute__((noinline)) long helper(char *p, int depth)
{
	char *pad = (char *)alloca(depth);
	__asm__ volatile("" : : "r"(pad) : "memory");
	return cx::inner(p);
}

namespace cx {
__attribute__((noinline)) long outer(char *p, char *q, int depth)
{
	long r = 0;

	touch(p, 1);
	try {
		r += middle(1);
	} catch (const std::exception &) {
		r += 100;
	}
	return r + helper(q, depth);
}
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? std::atoi(argv[1]) : 20;
	long s = 0;

	prewarm();
	// The first throw loads and sets up the unwinder: not measured.
	try {
		throw std::runtime_error("warm");
	} catch (const std::exception &) {
	}
	for (int i = 0; i < n; i++)
		s += cx::outer(fresh(1), fresh(4), 16 + 512 * (i % 4));
	std::printf("%d calls, sum %ld\n", n, s);
	return 0;
}
