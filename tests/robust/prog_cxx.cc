// SPDX-License-Identifier: MIT
// C++ exceptions thrown through wrapped functions and caught by callers.
//
// Usage: prog_cxx N.  Three rounds of N calls, each printing how many
// wrapped calls an exception left:
//   check   rtx::check throws itself for every fourth value;
//   apply   rtx::apply's callback throws an int through it for every
//           third value;
//   nested  rtx::apply's callback calls rtx::check, whose exception crosses
//           both wrapped frames (two per throw).
// The exceptions are caught in main; the report must show exactly the
// printed number of calls that did not return.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "tests/robust/robustxx.h"

static long throw_every3(long v)
{
	if (v % 3 == 0)
		throw int(v);
	return v;
}

static long call_check(long v)
{
	return rtx::check(v) + 5;
}

int main(int argc, char **argv)
{
	long n, i, s, left;

	if (argc != 2) {
		std::fprintf(stderr, "usage: %s N\n", argv[0]);
		return 2;
	}
	n = std::atol(argv[1]);

	for (i = 0, s = 0, left = 0; i < n; i++) {
		try {
			s += rtx::check(i);
		} catch (const std::invalid_argument &e) {
			left++;
		}
	}
	std::printf("check: %ld of %ld calls did not return, sum %ld\n", left, n, s);

	for (i = 0, s = 0, left = 0; i < n; i++) {
		try {
			s += rtx::apply(throw_every3, i);
		} catch (int v) {
			left++;
		}
	}
	std::printf("apply: %ld of %ld calls did not return, sum %ld\n", left, n, s);

	for (i = 0, s = 0, left = 0; i < n; i++) {
		try {
			s += rtx::apply(call_check, i);
		} catch (const std::exception &e) {
			left += 2;
		}
	}
	std::printf("nested: %ld of %ld calls did not return, sum %ld\n", left, 2 * n, s);
	return 0;
}
