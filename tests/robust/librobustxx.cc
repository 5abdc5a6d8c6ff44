// SPDX-License-Identifier: MIT
// libcsrobustxx.so: C++ functions that throw, or let exceptions through.
#include <stdexcept>
#include <string>

#include "tests/robust/robustxx.h"

long rtx::check(long v)
{
	if (v % 4 == 0)
		throw std::invalid_argument("multiple of 4: " + std::to_string(v));
	return 3 * v;
}

long rtx::apply(long (*fn)(long), long v)
{
	return fn(v) + 1;
}
