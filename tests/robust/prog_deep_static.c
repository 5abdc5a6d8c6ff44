/* SPDX-License-Identifier: MIT */
/* Deep direct recursion of a static function on the default stack: only
 * entry patching sees these calls.  The program alone needs about a third
 * of an 8 MiB stack; with every level in the wrapper it would need far
 * more, so the shim must stop measuring before the stack runs out.
 *
 * Usage: prog_deep_static DEPTH.  Prints the sum of 0..DEPTH. */
#include <stdio.h>
#include <stdlib.h>

static long __attribute__((noinline, noclone)) down(long n)
{
	volatile long pad[2] = {n, 0};

	if (n == 0)
		return 0;
	return pad[0] + down(n - 1) + pad[1];
}

int main(int argc, char **argv)
{
	long depth = argc > 1 ? atol(argv[1]) : 0;

	printf("down(%ld) = %ld\n", depth, down(depth));
	return 0;
}
