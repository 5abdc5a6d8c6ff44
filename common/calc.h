/* SPDX-License-Identifier: MIT */
/* Arithmetic over named values: the formulas of the presets (and any other
 * expression over event values).  A parsed expression is a small fixed-size
 * tree; nothing allocates, nothing prints, so any part of cacheshim can
 * use it.
 *
 * Syntax: numbers (12, 0.5, 1e3), names, + - * / and parentheses, unary
 * minus.  A name is [A-Za-z_][A-Za-z0-9_.:]* or anything but '}' between
 * braces: {perf::PAGE-FAULTS}.
 *
 * Evaluation propagates "not counted": if any name's value is not
 * counted, so is the result, whatever the arithmetic (0 * x included):
 * a value that was never measured must never turn into a number.  A
 * division by zero gives CS_CALC_UNDEFINED.
 */
#ifndef CACHESHIM_COMMON_CALC_H
#define CACHESHIM_COMMON_CALC_H

#include <stdint.h>

#define CS_CALC_MAX_NODES 64u
#define CS_CALC_MAX_VARS 16u
#define CS_CALC_NAME_MAX 64u /* bytes of a name incl. its NUL */
#define CS_CALC_MAX_DEPTH 32u /* nested parentheses and unary minus */

enum cs_calc_op {
	CS_CALC_NUM = 1,
	CS_CALC_VAR,
	CS_CALC_ADD,
	CS_CALC_SUB,
	CS_CALC_MUL,
	CS_CALC_DIV,
	CS_CALC_NEG,
};

struct cs_calc_node {
	uint8_t op; /* enum cs_calc_op */
	uint8_t var; /* CS_CALC_VAR: index into cs_calc.var */
	int16_t a, b; /* operands: node indexes */
	long double num; /* CS_CALC_NUM */
};

/* A parsed expression.  Names are numbered in the order of their first
 * appearance; the caller supplies one value per name. */
struct cs_calc {
	struct cs_calc_node node[CS_CALC_MAX_NODES];
	unsigned nnodes;
	unsigned root;
	char var[CS_CALC_MAX_VARS][CS_CALC_NAME_MAX];
	unsigned nvars;
};

/* cs_calc_value.status */
enum cs_calc_status {
	CS_CALC_OK = 0,
	CS_CALC_NOT_COUNTED = 1, /* an input was not counted */
	CS_CALC_UNDEFINED = 2, /* division by zero */
};

struct cs_calc_value {
	int status; /* enum cs_calc_status */
	long double v; /* valid when status is CS_CALC_OK */
};

/* Parses text into *c.  Returns 0, or -EINVAL (syntax), -E2BIG (too many
 * nodes, names or nesting levels) or -ENAMETOOLONG, with *errpos (when not
 * NULL) set to the byte offset of the problem. */
int cs_calc_parse(const char *text, struct cs_calc *c, unsigned *errpos);

/* Evaluates c with vars[i] the value of name i (c->nvars of them). */
struct cs_calc_value cs_calc_eval(const struct cs_calc *c, const struct cs_calc_value *vars);

/* Returns 1 when c is a plain sum of distinct names (a single name
 * included) and stores their indexes in vars (c->nvars of them, in
 * order), else 0.  Such a formula's total is the sum of its inputs'
 * totals, exactly. */
int cs_calc_is_sum(const struct cs_calc *c, unsigned *vars);

/* Returns the index of name in c, or -1. */
int cs_calc_var(const struct cs_calc *c, const char *name);

#endif /* CACHESHIM_COMMON_CALC_H */
