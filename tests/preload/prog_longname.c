/* SPDX-License-Identifier: MIT */
/* Functions with names as long as C++ ones (tests/preload/test_long_names.sh):
 * two of 128 characters that differ only in their last one, past the
 * CS_TARGET_NAME_MAX - 1 bytes a report file keeps, and one of 308.
 * lname_a is called 3 times, lname_b 5 and lname_c 7.
 *
 * Usage: prog_longname */
#include <stdio.h>

#define X10 "xxxxxxxxxx"
#define X100 X10 X10 X10 X10 X10 X10 X10 X10 X10 X10
/* 126 characters. */
#define PREFIX "cs_long_" X100 "xxxxxxxxxxxxxxxxxx"
#define C100                                                 \
	"cccccccccccccccccccccccccccccccccccccccccccccccccc" \
	"cccccccccccccccccccccccccccccccccccccccccccccccccc"

static volatile int sink;

/* Called by main only, but not inlined or cloned: a function of its own,
 * whose name is what the shim looks for, long enough for an entry patch. */
#define FN(f, name, add)                                   \
	__attribute__((noipa)) int f(int x) __asm__(name); \
	__attribute__((noipa)) int f(int x)                \
	{                                                  \
		sink = x;                                  \
		return sink + (add);                       \
	}

FN(lname_a, PREFIX "_a", 1)
FN(lname_b, PREFIX "_b", 2)
FN(lname_c, "cs_long_" C100 C100 C100, 3)

int main(void)
{
	int i, s = 0;

	for (i = 0; i < 3; i++)
		s += lname_a(i);
	for (i = 0; i < 5; i++)
		s += lname_b(i);
	for (i = 0; i < 7; i++)
		s += lname_c(i);
	printf("sum %d\n", s);
	return 0;
}
