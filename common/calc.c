/* SPDX-License-Identifier: MIT */
/* Arithmetic over named values (common/calc.h): a recursive-descent parser
 * into a fixed array of nodes, and an evaluator that keeps "not counted"
 * apart from every number. */
#include <errno.h>
#include <string.h>

#include "common/calc.h"

struct parser {
	const char *s;
	unsigned pos;
	unsigned depth;
	int err; /* first error, 0 if none */
	unsigned errpos;
	struct cs_calc *c;
};

static int fail(struct parser *p, int err)
{
	if (!p->err) {
		p->err = err;
		p->errpos = p->pos;
	}
	return -1;
}

static void skip_space(struct parser *p)
{
	while (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' || p->s[p->pos] == '\n')
		p->pos++;
}

static int is_digit(char ch)
{
	return ch >= '0' && ch <= '9';
}

static int is_name_start(char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || ch == '_';
}

static int is_name_char(char ch)
{
	return is_name_start(ch) || is_digit(ch) || ch == '.' || ch == ':';
}

static int new_node(struct parser *p, unsigned op, int a, int b)
{
	struct cs_calc_node *n;

	if (p->c->nnodes >= CS_CALC_MAX_NODES)
		return fail(p, -E2BIG);
	n = &p->c->node[p->c->nnodes];
	memset(n, 0, sizeof(*n));
	n->op = (uint8_t)op;
	n->a = (int16_t)a;
	n->b = (int16_t)b;
	return (int)p->c->nnodes++;
}

/* Decimal digits, an optional fraction and exponent, without strtod: the
 * report may run under any LC_NUMERIC. */
static int number(struct parser *p)
{
	long double v = 0, scale = 1;
	int exp = 0, esign = 1, n;
	const char *s = p->s;

	while (is_digit(s[p->pos]))
		v = v * 10 + (s[p->pos++] - '0');
	if (s[p->pos] == '.') {
		p->pos++; /* "1." and ".5" are fine; primary() saw a digit */
		while (is_digit(s[p->pos])) {
			scale /= 10;
			v += scale * (s[p->pos++] - '0');
		}
	}
	if (s[p->pos] == 'e' || s[p->pos] == 'E') {
		p->pos++;
		if (s[p->pos] == '+' || s[p->pos] == '-')
			esign = s[p->pos++] == '-' ? -1 : 1;
		if (!is_digit(s[p->pos]))
			return fail(p, -EINVAL);
		while (is_digit(s[p->pos]) && exp < 10000)
			exp = exp * 10 + (s[p->pos++] - '0');
		while (exp-- > 0)
			v = esign > 0 ? v * 10 : v / 10;
	}
	if (is_name_start(s[p->pos]))
		return fail(p, -EINVAL); /* "2x" */
	n = new_node(p, CS_CALC_NUM, -1, -1);
	if (n >= 0)
		p->c->node[n].num = v;
	return n;
}

/* Adds the name [b, b + len) to the variables (once) and makes its node. */
static int name_node(struct parser *p, const char *b, unsigned len)
{
	struct cs_calc *c = p->c;
	unsigned i, at = p->pos;
	int err = 0, n;

	for (i = 0; i < c->nvars; i++)
		if (strlen(c->var[i]) == len && memcmp(c->var[i], b, len) == 0)
			break;
	if (len == 0)
		err = -EINVAL;
	else if (len >= CS_CALC_NAME_MAX)
		err = -ENAMETOOLONG;
	else if (i == c->nvars && c->nvars >= CS_CALC_MAX_VARS)
		err = -E2BIG;
	if (err) {
		/* The error points at the name, not past it. */
		p->pos = (unsigned)(b - p->s);
		fail(p, err);
		p->pos = at;
		return -1;
	}
	if (i == c->nvars) {
		memcpy(c->var[i], b, len);
		c->var[i][len] = '\0';
		c->nvars++;
	}
	n = new_node(p, CS_CALC_VAR, -1, -1);
	if (n >= 0)
		c->node[n].var = (uint8_t)i;
	return n;
}

static int expr(struct parser *p);

static int primary(struct parser *p)
{
	const char *s = p->s;
	unsigned b;
	int n;

	skip_space(p);
	if (s[p->pos] == '(') {
		if (++p->depth > CS_CALC_MAX_DEPTH)
			return fail(p, -E2BIG);
		p->pos++;
		n = expr(p);
		if (n < 0)
			return -1;
		skip_space(p);
		if (s[p->pos] != ')')
			return fail(p, -EINVAL);
		p->pos++;
		p->depth--;
		return n;
	}
	if (is_digit(s[p->pos]) || (s[p->pos] == '.' && is_digit(s[p->pos + 1])))
		return number(p);
	if (s[p->pos] == '{') {
		b = ++p->pos;
		while (s[p->pos] && s[p->pos] != '}')
			p->pos++;
		if (!s[p->pos]) {
			p->pos = b - 1;
			return fail(p, -EINVAL); /* unterminated */
		}
		n = name_node(p, s + b, p->pos - b);
		p->pos++;
		return n;
	}
	if (is_name_start(s[p->pos])) {
		b = p->pos;
		while (is_name_char(s[p->pos]))
			p->pos++;
		return name_node(p, s + b, p->pos - b);
	}
	return fail(p, -EINVAL);
}

static int unary(struct parser *p)
{
	int n;

	skip_space(p);
	if (p->s[p->pos] == '-' || p->s[p->pos] == '+') {
		int neg = p->s[p->pos] == '-';

		if (++p->depth > CS_CALC_MAX_DEPTH)
			return fail(p, -E2BIG);
		p->pos++;
		n = unary(p);
		p->depth--;
		if (n < 0 || !neg)
			return n;
		return new_node(p, CS_CALC_NEG, n, -1);
	}
	return primary(p);
}

static int term(struct parser *p)
{
	int l = unary(p), r;
	char op;

	while (l >= 0) {
		skip_space(p);
		op = p->s[p->pos];
		if (op != '*' && op != '/')
			break;
		p->pos++;
		r = unary(p);
		if (r < 0)
			return -1;
		l = new_node(p, op == '*' ? CS_CALC_MUL : CS_CALC_DIV, l, r);
	}
	return l;
}

static int expr(struct parser *p)
{
	int l = term(p), r;
	char op;

	while (l >= 0) {
		skip_space(p);
		op = p->s[p->pos];
		if (op != '+' && op != '-')
			break;
		p->pos++;
		r = term(p);
		if (r < 0)
			return -1;
		l = new_node(p, op == '+' ? CS_CALC_ADD : CS_CALC_SUB, l, r);
	}
	return l;
}

int cs_calc_parse(const char *text, struct cs_calc *c, unsigned *errpos)
{
	struct parser p = {.s = text, .c = c};
	int root;

	memset(c, 0, sizeof(*c));
	root = expr(&p);
	if (root >= 0) {
		skip_space(&p);
		if (p.s[p.pos] != '\0')
			fail(&p, -EINVAL); /* trailing text: "a b", "a)" */
	}
	if (p.err || root < 0) {
		if (errpos)
			*errpos = p.errpos;
		return p.err ? p.err : -EINVAL;
	}
	c->root = (unsigned)root;
	return 0;
}

static struct cs_calc_value eval(const struct cs_calc *c, unsigned i,
				 const struct cs_calc_value *vars)
{
	const struct cs_calc_node *n = &c->node[i];
	struct cs_calc_value a, b, r = {CS_CALC_OK, 0};

	switch (n->op) {
	case CS_CALC_NUM:
		r.v = n->num;
		return r;
	case CS_CALC_VAR:
		return vars[n->var];
	case CS_CALC_NEG:
		a = eval(c, (unsigned)n->a, vars);
		a.v = -a.v;
		return a;
	default:
		break;
	}
	a = eval(c, (unsigned)n->a, vars);
	b = eval(c, (unsigned)n->b, vars);
	if (a.status != CS_CALC_OK || b.status != CS_CALC_OK) {
		/* Not counted wins over undefined: the input is missing. */
		r.status = a.status == CS_CALC_NOT_COUNTED || b.status == CS_CALC_NOT_COUNTED
				   ? CS_CALC_NOT_COUNTED
				   : CS_CALC_UNDEFINED;
		return r;
	}
	switch (n->op) {
	case CS_CALC_ADD:
		r.v = a.v + b.v;
		break;
	case CS_CALC_SUB:
		r.v = a.v - b.v;
		break;
	case CS_CALC_MUL:
		r.v = a.v * b.v;
		break;
	case CS_CALC_DIV:
		if (b.v == 0)
			r.status = CS_CALC_UNDEFINED;
		else
			r.v = a.v / b.v;
		break;
	default:
		r.status = CS_CALC_UNDEFINED;
		break;
	}
	return r;
}

struct cs_calc_value cs_calc_eval(const struct cs_calc *c, const struct cs_calc_value *vars)
{
	struct cs_calc_value r = {CS_CALC_NOT_COUNTED, 0};
	unsigned i;

	/* Any input not counted makes the result not counted, even where the
	 * arithmetic would not look at it (0 * x, an undefined branch). */
	for (i = 0; i < c->nvars; i++)
		if (vars[i].status == CS_CALC_NOT_COUNTED)
			return r;
	if (c->nnodes == 0)
		return r;
	return eval(c, c->root, vars);
}

/* Collects the names of the sum rooted at node i; 0 when it is not a sum
 * of names. */
static int sum_of(const struct cs_calc *c, unsigned i, unsigned *vars, unsigned *n)
{
	const struct cs_calc_node *nd = &c->node[i];
	unsigned k;

	if (nd->op == CS_CALC_ADD)
		return sum_of(c, (unsigned)nd->a, vars, n) && sum_of(c, (unsigned)nd->b, vars, n);
	if (nd->op != CS_CALC_VAR)
		return 0;
	for (k = 0; k < *n; k++)
		if (vars[k] == nd->var)
			return 0; /* a + a: not a sum of distinct inputs */
	vars[(*n)++] = nd->var;
	return 1;
}

int cs_calc_is_sum(const struct cs_calc *c, unsigned *vars)
{
	unsigned n = 0;

	if (c->nnodes == 0 || !sum_of(c, c->root, vars, &n))
		return 0;
	return n == c->nvars;
}

int cs_calc_var(const struct cs_calc *c, const char *name)
{
	unsigned i;

	for (i = 0; i < c->nvars; i++)
		if (strcmp(c->var[i], name) == 0)
			return (int)i;
	return -1;
}
