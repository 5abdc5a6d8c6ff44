/* SPDX-License-Identifier: MIT */
/* Units: the --derive expression parser and evaluator (report/expr.c). */
#include <CUnit/Basic.h>
#include <math.h>
#include <string.h>

#include "report/internal.h"

/* Variables of the cases: a = 6, b = 3, z = 0, nc (not counted), nd (no
 * value), and {perf::PAGE-FAULTS} = 2. */
static const struct {
	const char *name;
	long double v;
	int kind;
} vars[] = {
	{"a", 6, CS_CELL_NUM},	    {"b", 3, CS_CELL_NUM},
	{"z", 0, CS_CELL_NUM},	    {"nc", 0, CS_CELL_NOT_COUNTED},
	{"nd", 0, CS_CELL_NONE},    {"perf::PAGE-FAULTS", 2, CS_CELL_NUM},
	{"x.y_1", 10, CS_CELL_NUM},
};

static const struct {
	int line;
	const char *text;
	int kind; /* enum cs_cell */
	long double want;
} cases[] = {
	{__LINE__, "1", CS_CELL_NUM, 1},
	{__LINE__, "1 + 2 * 3", CS_CELL_NUM, 7},
	{__LINE__, "(1 + 2) * 3", CS_CELL_NUM, 9},
	{__LINE__, "a / b / 2", CS_CELL_NUM, 1}, /* left to right */
	{__LINE__, "a - b - 1", CS_CELL_NUM, 2},
	{__LINE__, "-a + 10", CS_CELL_NUM, 4},
	{__LINE__, "--a", CS_CELL_NUM, 6},
	{__LINE__, "+a*-b", CS_CELL_NUM, -18},
	{__LINE__, "1000 * {perf::PAGE-FAULTS} / a", CS_CELL_NUM, 1000.0L * 2 / 6},
	{__LINE__, "2.5e2 + .5", CS_CELL_NUM, 250.5},
	{__LINE__, "x.y_1 * 2", CS_CELL_NUM, 20},
	{__LINE__, " ( a ) ", CS_CELL_NUM, 6},
	{__LINE__, "a / z", CS_CELL_NONE, 0},
	{__LINE__, "a / (b - 3)", CS_CELL_NONE, 0},
	{__LINE__, "z / z", CS_CELL_NONE, 0},
	/* Not counted wins, even where it cannot matter. */
	{__LINE__, "nc * 0", CS_CELL_NOT_COUNTED, 0},
	{__LINE__, "a / z + nc", CS_CELL_NOT_COUNTED, 0},
	{__LINE__, "nd + 1", CS_CELL_NONE, 0},
	{__LINE__, "1e5000", -1, 0}, /* out of range: a syntax error */
	{__LINE__, "", -1, 0},
	{__LINE__, "a +", -1, 0},
	{__LINE__, "a b", -1, 0},
	{__LINE__, "(a", -1, 0},
	{__LINE__, "a)", -1, 0},
	{__LINE__, "{a", -1, 0},
	{__LINE__, "{}", -1, 0},
	{__LINE__, "a ^ 2", -1, 0},
	{__LINE__, "nan", -2, 0}, /* a name, not a number: resolved later */
};

/* Values and kinds of e's variables from vars[]; 0 when one is unknown. */
static int bind(const struct cs_expr *e, long double *v, int *k)
{
	size_t i, j;

	for (i = 0; i < cs_expr_nvars(e); i++) {
		for (j = 0; j < sizeof(vars) / sizeof(vars[0]); j++)
			if (strcmp(vars[j].name, cs_expr_var(e, i)) == 0)
				break;
		if (j == sizeof(vars) / sizeof(vars[0]))
			return 0;
		v[i] = vars[j].v;
		k[i] = vars[j].kind;
	}
	return 1;
}

static void test_cases(void)
{
	long double v[16], got;
	struct cs_expr *e;
	char err[256];
	size_t i;
	int ret, k[16], kind;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		ret = cs_expr_parse(cases[i].text, &e, err, sizeof(err));
		if (cases[i].kind == -1) {
			CU_ASSERT_EQUAL(ret, -EINVAL);
			CU_ASSERT(err[0] != '\0');
			if (ret != -EINVAL)
				printf("\nline %d: '%s' parsed\n", cases[i].line, cases[i].text);
			if (ret == 0)
				cs_expr_free(e);
			continue;
		}
		CU_ASSERT_EQUAL_FATAL(ret, 0);
		if (cases[i].kind == -2) {
			CU_ASSERT_FALSE(bind(e, v, k));
			cs_expr_free(e);
			continue;
		}
		CU_ASSERT_FATAL(bind(e, v, k));
		kind = cs_expr_eval(e, v, k, &got);
		CU_ASSERT_EQUAL(kind, cases[i].kind);
		if (kind == CS_CELL_NUM)
			CU_ASSERT(fabsl(got - cases[i].want) < 1e-12L);
		if (kind != cases[i].kind ||
		    (kind == CS_CELL_NUM && fabsl(got - cases[i].want) >= 1e-12L))
			printf("\nline %d: '%s': kind %d value %Lg\n", cases[i].line, cases[i].text,
			       kind, got);
		cs_expr_free(e);
	}
}

static void test_variables(void)
{
	struct cs_expr *e;
	char err[256];

	/* Distinct names, in order of first appearance. */
	CU_ASSERT_EQUAL_FATAL(cs_expr_parse("b*a + {b} - a/{tsc}", &e, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cs_expr_nvars(e), 3);
	CU_ASSERT_STRING_EQUAL(cs_expr_var(e, 0), "b");
	CU_ASSERT_STRING_EQUAL(cs_expr_var(e, 1), "a");
	CU_ASSERT_STRING_EQUAL(cs_expr_var(e, 2), "tsc");
	cs_expr_free(e);
}

static void test_errors(void)
{
	char deep[1200], err[256];
	struct cs_expr *e;
	size_t i;

	/* The message says where. */
	CU_ASSERT_EQUAL(cs_expr_parse("a + * b", &e, err, sizeof(err)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "unexpected '*' at position 5 of 'a + * b'");
	/* Nesting is bounded, not a stack overflow. */
	for (i = 0; i < 500; i++)
		deep[i] = '(';
	deep[i++] = '1';
	for (; i < 1001; i++)
		deep[i] = ')';
	deep[i] = '\0';
	CU_ASSERT_EQUAL(cs_expr_parse(deep, &e, err, sizeof(err)), -EINVAL);
	CU_ASSERT(strstr(err, "nested too deeply") != NULL);
	memset(deep, '-', 600);
	strcpy(deep + 600, "1");
	CU_ASSERT_EQUAL(cs_expr_parse(deep, &e, err, sizeof(err)), -EINVAL);
}

static void test_derive_parse(void)
{
	struct cs_derive d;
	char err[256];

	CU_ASSERT_EQUAL(cs_derive_parse("ratio = a/b", &d, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(d.name, "ratio");
	CU_ASSERT_STRING_EQUAL(d.text, " a/b");
	cs_derive_free(&d, 1);
	CU_ASSERT_EQUAL(cs_derive_parse("a/b", &d, err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(cs_derive_parse("9x=1", &d, err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(cs_derive_parse("a-b=1", &d, err, sizeof(err)), -EINVAL);
	CU_ASSERT_EQUAL(cs_derive_parse("p99=1", &d, err, sizeof(err)), -EINVAL);
	CU_ASSERT(strstr(err, "p99 is the name of a column") != NULL);
	CU_ASSERT_EQUAL(cs_derive_parse("x=(", &d, err, sizeof(err)), -EINVAL);
	CU_ASSERT(strncmp(err, "--derive x: ", 12) == 0);
}

int main(void)
{
	CU_pSuite s;
	unsigned fails;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return CU_get_error();
	s = CU_add_suite("report_expr", NULL, NULL);
	CU_add_test(s, "table of expressions", test_cases);
	CU_add_test(s, "variables in order", test_variables);
	CU_add_test(s, "errors say where; nesting bounded", test_errors);
	CU_add_test(s, "NAME=EXPR", test_derive_parse);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
