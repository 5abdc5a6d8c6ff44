/* SPDX-License-Identifier: MIT */
/*
 * Function-pointer identity: rt_leaf's address taken three ways must stay
 * one address under GOT patching.  The program's tables hold it from
 * symbolic data relocations (a writable one and a RELRO one), main loads
 * it from its GOT (GLOB_DAT), and the PLT calls it.  A program that checks
 * a table against the function (as CPython checks tp_free against
 * PyObject_Free at start-up) aborts when they differ.
 *
 * Usage: prog_fnptr N.  Makes N calls each through the writable table,
 * the read-only table, the GOT-loaded pointer and the PLT (4N calls), and
 * prints the sum of the results.
 */
#include <stdio.h>
#include <stdlib.h>

#include "tests/robust/robust.h"

struct ops {
	long (*leaf)(long);
};

struct ops table = {rt_leaf};
const struct ops ro_table = {rt_leaf};

int main(int argc, char **argv)
{
	long (*volatile loaded)(long) = rt_leaf;
	long i, n, sum = 0;

	if (argc != 2)
		return 2;
	n = atol(argv[1]);
	if (table.leaf != loaded || ro_table.leaf != loaded) {
		fprintf(stderr, "prog_fnptr: a table's rt_leaf differs from rt_leaf\n");
		abort();
	}
	for (i = 0; i < n; i++)
		sum += table.leaf(i) + ro_table.leaf(i) + loaded(i) + rt_leaf(i);
	printf("%ld calls: sum %ld\n", 4 * n, sum);
	return 0;
}
