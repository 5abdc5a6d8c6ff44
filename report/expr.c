/* SPDX-License-Identifier: MIT */
/* The expressions of --derive: a small recursive-descent parser. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report/internal.h"

/*
 * Why not Debian's libmatheval: it is GPL-3 (cacheshim is MIT), its lexer
 * echoes characters it does not know to stdout (which would corrupt the
 * CSV), names such as e and pi are its constants, and an event name like
 * perf::PAGE-FAULTS needs quoting it cannot do.  What --derive needs is
 * four operators, so it is done here.
 *
 *   expr   := term (('+' | '-') term)*
 *   term   := unary (('*' | '/') unary)*
 *   unary  := '-' unary | '+' unary | atom
 *   atom   := NUMBER | NAME | '{' anything but braces '}' | '(' expr ')'
 */

enum op { OP_NUM, OP_VAR, OP_NEG, OP_ADD, OP_SUB, OP_MUL, OP_DIV };

struct node {
	enum op op;
	long double num; /* OP_NUM */
	size_t var; /* OP_VAR */
	int l, r; /* operand nodes, -1 none */
};

struct cs_expr {
	struct node *n;
	size_t nn, cap;
	int root;
	char **vars;
	size_t nvars;
};

struct parser {
	const char *text, *p;
	struct cs_expr *e;
	char *err;
	size_t errlen;
	int failed; /* -EINVAL or -ENOMEM once something went wrong */
	unsigned depth;
};

#define MAX_DEPTH 200 /* parentheses nested deeper are refused, not a stack overflow */

static void perr(struct parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void perr(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (ps->failed)
		return;
	ps->failed = -EINVAL;
	if (!ps->err || !ps->errlen)
		return;
	va_start(ap, fmt);
	n = vsnprintf(ps->err, ps->errlen, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < ps->errlen)
		snprintf(ps->err + n, ps->errlen - (size_t)n, " at position %zu of '%s'",
			 (size_t)(ps->p - ps->text) + 1, ps->text);
}

static int add_node(struct parser *ps, enum op op, int l, int r)
{
	struct cs_expr *e = ps->e;
	struct node *nn;

	if (ps->failed)
		return -1;
	if (e->nn == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 16;
		nn = realloc(e->n, e->cap * sizeof(*nn));
		if (!nn) {
			ps->failed = -ENOMEM;
			return -1;
		}
		e->n = nn;
	}
	memset(&e->n[e->nn], 0, sizeof(e->n[e->nn]));
	e->n[e->nn].op = op;
	e->n[e->nn].l = l;
	e->n[e->nn].r = r;
	return (int)e->nn++;
}

static void skip_space(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n')
		ps->p++;
}

/* Returns the index of variable name[0, len), adding it when new. */
static size_t var_index(struct parser *ps, const char *name, size_t len)
{
	struct cs_expr *e = ps->e;
	char **nv, *s;
	size_t i;

	for (i = 0; i < e->nvars; i++)
		if (strlen(e->vars[i]) == len && memcmp(e->vars[i], name, len) == 0)
			return i;
	s = strndup(name, len);
	nv = s ? realloc(e->vars, (e->nvars + 1) * sizeof(*nv)) : NULL;
	if (!nv) {
		free(s);
		ps->failed = -ENOMEM;
		return 0;
	}
	e->vars = nv;
	e->vars[e->nvars] = s;
	return e->nvars++;
}

static int is_name_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(char c)
{
	return is_name_start(c) || (c >= '0' && c <= '9') || c == '.';
}

static int parse_expr(struct parser *ps);

static int parse_atom(struct parser *ps)
{
	const char *start;
	char *end;
	int n;

	skip_space(ps);
	if (*ps->p == '(') {
		ps->p++;
		n = parse_expr(ps);
		skip_space(ps);
		if (*ps->p != ')') {
			perr(ps, "')' expected");
			return -1;
		}
		ps->p++;
		return n;
	}
	if (*ps->p == '{') {
		start = ++ps->p;
		while (*ps->p && *ps->p != '}' && *ps->p != '{')
			ps->p++;
		if (*ps->p != '}') {
			perr(ps, "'}' expected");
			return -1;
		}
		if (ps->p == start) {
			perr(ps, "empty name in braces");
			return -1;
		}
		n = add_node(ps, OP_VAR, -1, -1);
		if (n >= 0)
			ps->e->n[n].var = var_index(ps, start, (size_t)(ps->p - start));
		ps->p++;
		return n;
	}
	if (is_name_start(*ps->p)) {
		start = ps->p;
		while (is_name_char(*ps->p))
			ps->p++;
		n = add_node(ps, OP_VAR, -1, -1);
		if (n >= 0)
			ps->e->n[n].var = var_index(ps, start, (size_t)(ps->p - start));
		return n;
	}
	if ((*ps->p >= '0' && *ps->p <= '9') || *ps->p == '.') {
		errno = 0;
		/* strtold would also take "inf", "nan" and hex: only plain
		 * decimals reach here, as the first character shows. */
		long double v = strtold(ps->p, &end);

		if (end == ps->p || errno == ERANGE || !isfinite(v)) {
			perr(ps, "bad number");
			return -1;
		}
		ps->p = end;
		n = add_node(ps, OP_NUM, -1, -1);
		if (n >= 0)
			ps->e->n[n].num = v;
		return n;
	}
	if (*ps->p)
		perr(ps, "unexpected '%c'", *ps->p);
	else
		perr(ps, "unexpected end");
	return -1;
}

static int parse_unary(struct parser *ps)
{
	int n;

	skip_space(ps);
	if (*ps->p == '-' || *ps->p == '+') {
		char c = *ps->p++;

		if (++ps->depth > MAX_DEPTH) {
			perr(ps, "nested too deeply");
			return -1;
		}
		n = parse_unary(ps);
		ps->depth--;
		return c == '-' ? add_node(ps, OP_NEG, n, -1) : n;
	}
	return parse_atom(ps);
}

static int parse_term(struct parser *ps)
{
	int l = parse_unary(ps), r;
	char c;

	for (;;) {
		skip_space(ps);
		c = *ps->p;
		if (ps->failed || (c != '*' && c != '/'))
			return l;
		ps->p++;
		r = parse_unary(ps);
		l = add_node(ps, c == '*' ? OP_MUL : OP_DIV, l, r);
	}
}

static int parse_expr(struct parser *ps)
{
	int l, r;
	char c;

	if (++ps->depth > MAX_DEPTH) {
		perr(ps, "nested too deeply");
		return -1;
	}
	l = parse_term(ps);
	for (;;) {
		skip_space(ps);
		c = *ps->p;
		if (ps->failed || (c != '+' && c != '-'))
			break;
		ps->p++;
		r = parse_term(ps);
		l = add_node(ps, c == '+' ? OP_ADD : OP_SUB, l, r);
	}
	ps->depth--;
	return l;
}

int cs_expr_parse(const char *text, struct cs_expr **out, char *err, size_t errlen)
{
	struct parser ps = {.text = text, .p = text, .err = err, .errlen = errlen};

	*out = NULL;
	ps.e = calloc(1, sizeof(*ps.e));
	if (!ps.e)
		return -ENOMEM;
	ps.e->root = parse_expr(&ps);
	skip_space(&ps);
	if (!ps.failed && *ps.p)
		perr(&ps, "unexpected '%c'", *ps.p);
	if (ps.failed) {
		if (ps.failed == -ENOMEM && err && errlen)
			snprintf(err, errlen, "out of memory");
		cs_expr_free(ps.e);
		return ps.failed;
	}
	*out = ps.e;
	return 0;
}

size_t cs_expr_nvars(const struct cs_expr *e)
{
	return e->nvars;
}

const char *cs_expr_var(const struct cs_expr *e, size_t i)
{
	return e->vars[i];
}

/* Returns enum cs_cell. */
static int eval(const struct cs_expr *e, int i, const long double *vals, const int *kinds,
		long double *out)
{
	const struct node *n = &e->n[i];
	long double a = 0, b = 0;
	int k;

	switch (n->op) {
	case OP_NUM:
		*out = n->num;
		return CS_CELL_NUM;
	case OP_VAR:
		*out = vals[n->var];
		return kinds[n->var];
	default:
		break;
	}
	k = eval(e, n->l, vals, kinds, &a);
	if (k != CS_CELL_NUM)
		return k;
	if (n->op == OP_NEG) {
		*out = -a;
		return CS_CELL_NUM;
	}
	k = eval(e, n->r, vals, kinds, &b);
	if (k != CS_CELL_NUM)
		return k;
	switch (n->op) {
	case OP_ADD:
		*out = a + b;
		break;
	case OP_SUB:
		*out = a - b;
		break;
	case OP_MUL:
		*out = a * b;
		break;
	default:
		if (b == 0.0L)
			return CS_CELL_NONE;
		*out = a / b;
		break;
	}
	return CS_CELL_NUM;
}

int cs_expr_eval(const struct cs_expr *e, const long double *vals, const int *kinds,
		 long double *out)
{
	size_t i;
	int k, none = 0;

	*out = 0;
	/* Not counted wins over everything, whatever the arithmetic. */
	for (i = 0; i < e->nvars; i++) {
		if (kinds[i] == CS_CELL_NOT_COUNTED)
			return CS_CELL_NOT_COUNTED;
		if (kinds[i] != CS_CELL_NUM)
			none = 1;
	}
	if (none)
		return CS_CELL_NONE;
	k = eval(e, e->root, vals, kinds, out);
	if (k == CS_CELL_NUM && !isfinite(*out))
		return CS_CELL_NONE;
	return k;
}

void cs_expr_free(struct cs_expr *e)
{
	size_t i;

	if (!e)
		return;
	for (i = 0; i < e->nvars; i++)
		free(e->vars[i]);
	free(e->vars);
	free(e->n);
	free(e);
}

int cs_derive_parse(const char *arg, struct cs_derive *d, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	size_t len;
	int ret;

	memset(d, 0, sizeof(*d));
	if (!eq) {
		snprintf(err, errlen, "--derive '%s': NAME=EXPR expected", arg);
		return -EINVAL;
	}
	len = (size_t)(eq - arg);
	while (len && (arg[len - 1] == ' ' || arg[len - 1] == '\t'))
		len--;
	if (len == 0 || len >= sizeof(d->name) || !is_name_start(arg[0])) {
		snprintf(err, errlen,
			 "--derive '%s': bad name (a letter or _, then letters, digits, _)", arg);
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		if (!is_name_start(arg[i]) && !(arg[i] >= '0' && arg[i] <= '9')) {
			snprintf(err, errlen,
				 "--derive '%s': bad name (a letter or _, then letters, digits, _)",
				 arg);
			return -EINVAL;
		}
	}
	memcpy(d->name, arg, len);
	d->name[len] = '\0';
	if (cs_view_column(d->name, NULL) >= 0) {
		snprintf(err, errlen, "--derive '%s': %s is the name of a column", arg, d->name);
		return -EINVAL;
	}
	d->text = eq + 1;
	if (!d->text[strspn(d->text, " \t\n")]) {
		snprintf(err, errlen, "--derive %s: no expression after '='", d->name);
		return -EINVAL;
	}
	ret = cs_expr_parse(d->text, &d->expr, err, errlen);
	if (ret == -EINVAL) {
		char msg[512];

		snprintf(msg, sizeof(msg), "%s", err);
		snprintf(err, errlen, "--derive %s: %s", d->name, msg);
	}
	return ret;
}

int cs_derive_resolve(struct cs_derive *d, size_t n, const struct cs_report *r, char *err,
		      size_t errlen)
{
	size_t i, k, j, e;
	const char *name;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i; j++) {
			if (strcmp(d[j].name, d[i].name) == 0) {
				snprintf(err, errlen, "--derive %s is given twice", d[i].name);
				return -EINVAL;
			}
		}
		/* Expressions find events first: the column could never be
		 * named in one. */
		for (e = 0; e < r->nevents; e++) {
			if (cs_event_same(r->events[e].name, d[i].name)) {
				snprintf(err, errlen, "--derive %s: %s is the name of an event",
					 d[i].name, d[i].name);
				return -EINVAL;
			}
		}
		free(d[i].var);
		d[i].var = calloc(cs_expr_nvars(d[i].expr) + 1, sizeof(*d[i].var));
		if (!d[i].var)
			return -ENOMEM;
		for (k = 0; k < cs_expr_nvars(d[i].expr); k++) {
			name = cs_expr_var(d[i].expr, k);
			/* The first event of that name; then earlier columns. */
			for (e = 0; e < r->nevents; e++)
				/* As files merge them: case aside, a software
				 * event's other names. */
				if (r->events[e].occurrence == 0 &&
				    cs_event_same(r->events[e].name, name))
					break;
			if (e < r->nevents) {
				d[i].var[k] = (long)e;
				continue;
			}
			for (j = 0; j < i; j++)
				if (strcmp(d[j].name, name) == 0)
					break;
			if (j < i) {
				d[i].var[k] = -1 - (long)j;
				continue;
			}
			snprintf(err, errlen,
				 "--derive %s: no event or earlier derived column named '%s' "
				 "(events: write odd names in braces, {perf::PAGE-FAULTS})",
				 d[i].name, name);
			return -EINVAL;
		}
	}
	return 0;
}

void cs_derive_free(struct cs_derive *d, size_t n)
{
	size_t i;

	for (i = 0; d && i < n; i++) {
		cs_expr_free(d[i].expr);
		free(d[i].var);
		d[i].expr = NULL;
		d[i].var = NULL;
	}
}
