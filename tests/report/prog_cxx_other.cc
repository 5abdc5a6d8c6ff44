// SPDX-License-Identifier: MIT
// The second (anonymous namespace)::helper(int) of prog_cxx: two
// functions of one name, labelled name@module+0xOFF by the report.
#define NOINLINE __attribute__((noinline))

// A body long enough for the shim to patch its entry.
static inline void spin()
{
	for (volatile int i = 0; i < 4; i = i + 1)
		;
}

namespace
{
NOINLINE int helper(int x)
{
	spin();
	return x * 5;
}
} // namespace

NOINLINE int other_helper(int x)
{
	return helper(x);
}
