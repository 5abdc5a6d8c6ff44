/* SPDX-License-Identifier: MIT */
/* Units: CACHESHIM_* parsing, glob matching and output path expansion. */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim/internal.h"

/* A fake environment: NULL-terminated name=value pairs. */
static const char *const *fake_env;

static const char *fake_getenv(const char *name)
{
	size_t n = strlen(name);
	const char *const *e;

	for (e = fake_env; e && *e; e++) {
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	}
	return NULL;
}

static int parse(struct cs_settings *s, const char *const *env)
{
	fake_env = env;
	return cs_settings_parse(s, fake_getenv);
}

static void test_defaults(void)
{
	static const char *const env[] = {NULL};
	struct cs_settings s;

	CU_ASSERT_EQUAL(parse(&s, env), 0);
	CU_ASSERT_EQUAL(s.ntargets, 0);
	CU_ASSERT_EQUAL(s.nevents, 0);
	CU_ASSERT_TRUE(s.events_defaulted);
	CU_ASSERT_STRING_EQUAL(s.output, "cacheshim.out.%p");
	CU_ASSERT_EQUAL(s.window, 256);
	CU_ASSERT_EQUAL(s.capacity, 256ull << 20);
	CU_ASSERT_EQUAL(s.session, 0);
}

struct target_case {
	int line;
	const char *value;
	int ret; /* 0 or -EINVAL */
	unsigned n;
	const char *glob[4];
	unsigned argn[4];
};

static const struct target_case target_cases[] = {
	{__LINE__, "rb_hash_aref", 0, 1, {"rb_hash_aref"}, {0}},
	{__LINE__, " a , b ,,c ", 0, 3, {"a", "b", "c"}, {0, 0, 0}},
	{__LINE__, "rb_hash_*,memcpy:arg3", 0, 2, {"rb_hash_*", "memcpy"}, {0, 3}},
	{__LINE__, "f:arg16", 0, 1, {"f"}, {16}},
	{__LINE__, "f:arg0", -EINVAL, 0, {NULL}, {0}},
	{__LINE__, "f:arg17", -EINVAL, 0, {NULL}, {0}},
	{__LINE__, "f:size", -EINVAL, 0, {NULL}, {0}},
	{__LINE__, "f:arg", -EINVAL, 0, {NULL}, {0}},
	{__LINE__, "f:arg2x", -EINVAL, 0, {NULL}, {0}},
	{__LINE__, ":arg1,g", -EINVAL, 1, {"g"}, {0}},
	{__LINE__, "bad;name,ok", -EINVAL, 1, {"ok"}, {0}},
	{__LINE__, "a b", -EINVAL, 0, {NULL}, {0}},
	{__LINE__, "x,x,x", 0, 1, {"x"}, {0}},
	{__LINE__, "", 0, 0, {NULL}, {0}},
	{__LINE__, ",,,", 0, 0, {NULL}, {0}},
	{__LINE__, "[a-c]?_x*", 0, 1, {"[a-c]?_x*"}, {0}},
};

static void test_targets(void)
{
	unsigned i, j;

	for (i = 0; i < sizeof(target_cases) / sizeof(target_cases[0]); i++) {
		const struct target_case *c = &target_cases[i];
		char var[512];
		const char *env[] = {var, NULL};
		struct cs_settings s;
		int ret;

		snprintf(var, sizeof(var), "CACHESHIM_TARGETS=%s", c->value);
		ret = parse(&s, env);
		if (ret != c->ret || s.ntargets != c->n)
			fprintf(stderr, "case at line %d: ret %d n %u\n", c->line, ret, s.ntargets);
		CU_ASSERT_EQUAL(ret, c->ret);
		CU_ASSERT_EQUAL(s.ntargets, c->n);
		for (j = 0; j < c->n && j < s.ntargets; j++) {
			CU_ASSERT_STRING_EQUAL(s.targets[j].glob, c->glob[j]);
			CU_ASSERT_EQUAL(s.targets[j].argn, c->argn[j]);
		}
	}
}

static void test_long_values(void)
{
	static char var[70000];
	const char *env[] = {var, NULL};
	struct cs_settings s;
	size_t n;

	/* One name far over the limit, then a good one. */
	n = (size_t)snprintf(var, sizeof(var), "CACHESHIM_TARGETS=");
	memset(var + n, 'a', 5000);
	strcpy(var + n + 5000, ",good");
	CU_ASSERT_EQUAL(parse(&s, env), -EINVAL);
	CU_ASSERT_EQUAL(s.ntargets, 1);
	CU_ASSERT_STRING_EQUAL(s.targets[0].glob, "good");

	/* Names as long as C++ ones are kept whole, up to
	 * CS_TARGET_PATTERN_MAX - 1 characters (one of 130 overran a
	 * 128-byte pattern). */
	for (unsigned len = 130; len <= CS_TARGET_PATTERN_MAX; len += CS_TARGET_PATTERN_MAX - 130) {
		n = (size_t)snprintf(var, sizeof(var), "CACHESHIM_TARGETS=");
		memset(var + n, 'b', len - 1);
		strcpy(var + n + len - 1, ":arg2,good");
		CU_ASSERT_EQUAL(parse(&s, env), 0);
		CU_ASSERT_EQUAL(s.ntargets, 2);
		CU_ASSERT_EQUAL(strlen(s.targets[0].glob), len - 1);
		CU_ASSERT_EQUAL(s.targets[0].literal, len - 1);
		CU_ASSERT_EQUAL(s.targets[0].argn, 2);
		CU_ASSERT_STRING_EQUAL(s.targets[1].glob, "good");
	}
	n = (size_t)snprintf(var, sizeof(var), "CACHESHIM_TARGETS=");
	memset(var + n, 'b', CS_TARGET_PATTERN_MAX);
	strcpy(var + n + CS_TARGET_PATTERN_MAX, ",good");
	CU_ASSERT_EQUAL(parse(&s, env), -EINVAL);
	CU_ASSERT_EQUAL(s.ntargets, 1);
	CU_ASSERT_STRING_EQUAL(s.targets[0].glob, "good");

	/* More patterns than fit: the first CS_MAX_TARGET_PATTERNS are kept. */
	n = (size_t)snprintf(var, sizeof(var), "CACHESHIM_TARGETS=");
	for (unsigned i = 0; i < 100; i++)
		n += (size_t)snprintf(var + n, sizeof(var) - n, "f%u,", i);
	CU_ASSERT_EQUAL(parse(&s, env), -EINVAL);
	CU_ASSERT_EQUAL(s.ntargets, CS_MAX_TARGET_PATTERNS);
	CU_ASSERT_STRING_EQUAL(s.targets[CS_MAX_TARGET_PATTERNS - 1].glob, "f63");

	/* An output path longer than PATH_MAX falls back to the default. */
	n = (size_t)snprintf(var, sizeof(var), "CACHESHIM_OUTPUT=");
	memset(var + n, 'o', 6000);
	var[n + 6000] = '\0';
	CU_ASSERT_EQUAL(parse(&s, env), -EINVAL);
	CU_ASSERT_STRING_EQUAL(s.output, "cacheshim.out.%p");
}

static void test_events(void)
{
	static const char *const env1[] = {
		"CACHESHIM_EVENTS=tsc, perf::PAGE-FAULTS ,INST_RETIRED:ANY_P:u=1,tsc", NULL};
	static const char *const env2[] = {"CACHESHIM_EVENTS=,, ,", NULL};
	static char var[4096];
	const char *env3[] = {var, NULL};
	struct cs_settings s;
	size_t n;

	CU_ASSERT_EQUAL(parse(&s, env1), 0);
	CU_ASSERT_EQUAL(s.nevents, 3);
	CU_ASSERT_STRING_EQUAL(s.events[0], "tsc");
	CU_ASSERT_STRING_EQUAL(s.events[1], "perf::PAGE-FAULTS");
	CU_ASSERT_STRING_EQUAL(s.events[2], "INST_RETIRED:ANY_P:u=1");
	CU_ASSERT_FALSE(s.events_defaulted);

	CU_ASSERT_EQUAL(parse(&s, env2), 0);
	CU_ASSERT_EQUAL(s.nevents, 0);
	CU_ASSERT_TRUE(s.events_defaulted);

	n = (size_t)snprintf(var, sizeof(var), "CACHESHIM_EVENTS=");
	for (unsigned i = 0; i < 20; i++)
		n += (size_t)snprintf(var + n, sizeof(var) - n, "e%u,", i);
	CU_ASSERT_EQUAL(parse(&s, env3), -EINVAL);
	CU_ASSERT_EQUAL(s.nevents, CS_MAX_EVENTS);

	/* A name longer than an event name can be is rejected, not cut. */
	n = (size_t)snprintf(var, sizeof(var), "CACHESHIM_EVENTS=tsc,");
	memset(var + n, 'E', 100);
	var[n + 100] = '\0';
	CU_ASSERT_EQUAL(parse(&s, env3), -EINVAL);
	CU_ASSERT_EQUAL(s.nevents, 1);
}

struct num_case {
	int line;
	const char *var;
	int ret;
	unsigned window;
	uint64_t capacity;
};

static const struct num_case num_cases[] = {
	{__LINE__, "CACHESHIM_WINDOW=0", 0, 0, 256ull << 20},
	{__LINE__, "CACHESHIM_WINDOW=100", 0, 112, 256ull << 20},
	{__LINE__, "CACHESHIM_WINDOW=4096", 0, 4096, 256ull << 20},
	{__LINE__, "CACHESHIM_WINDOW=4097", -EINVAL, 256, 256ull << 20},
	{__LINE__, "CACHESHIM_WINDOW=-1", -EINVAL, 256, 256ull << 20},
	{__LINE__, "CACHESHIM_WINDOW=12k", -EINVAL, 256, 256ull << 20},
	{__LINE__, "CACHESHIM_WINDOW=", -EINVAL, 256, 256ull << 20},
	{__LINE__, "CACHESHIM_CAPACITY_MB=8", 0, 256, 8ull << 20},
	{__LINE__, "CACHESHIM_CAPACITY_MB=0", -EINVAL, 256, 256ull << 20},
	{__LINE__, "CACHESHIM_CAPACITY_MB=99999999999999999999", -EINVAL, 256, 256ull << 20},
	{__LINE__, "CACHESHIM_SESSION=x1", -EINVAL, 256, 256ull << 20},
};

static void test_numbers(void)
{
	unsigned i;

	for (i = 0; i < sizeof(num_cases) / sizeof(num_cases[0]); i++) {
		const struct num_case *c = &num_cases[i];
		const char *env[] = {c->var, NULL};
		struct cs_settings s;
		int ret = parse(&s, env);

		if (ret != c->ret || s.window != c->window || s.capacity != c->capacity)
			fprintf(stderr, "case at line %d failed\n", c->line);
		CU_ASSERT_EQUAL(ret, c->ret);
		CU_ASSERT_EQUAL(s.window, c->window);
		CU_ASSERT_EQUAL(s.capacity, c->capacity);
	}
}

static void test_session_and_quiet(void)
{
	static const char *const env[] = {"CACHESHIM_SESSION=18446744073709551615",
					  "CACHESHIM_QUIET=1", NULL};
	static const char *const env0[] = {"CACHESHIM_QUIET=0", NULL};
	struct cs_settings s;

	CU_ASSERT_EQUAL(parse(&s, env), 0);
	CU_ASSERT_EQUAL(s.session, UINT64_MAX);
	CU_ASSERT_TRUE(s.quiet);
	CU_ASSERT_EQUAL(parse(&s, env0), 0);
	CU_ASSERT_FALSE(s.quiet);
}

/* CACHESHIM_UNMATCHED: 1 by default, 0 and cacheshim run's "run" turn
 * the start-up lines off, anything else is refused (the default kept). */
static void test_unmatched(void)
{
	static const char *const none[] = {NULL};
	static const char *const zero[] = {"CACHESHIM_UNMATCHED=0", NULL};
	static const char *const one[] = {"CACHESHIM_UNMATCHED=1", NULL};
	static const char *const run[] = {"CACHESHIM_UNMATCHED=run", NULL};
	static const char *const bad[] = {"CACHESHIM_UNMATCHED=yes", NULL};
	struct cs_settings s;

	CU_ASSERT_EQUAL(parse(&s, none), 0);
	CU_ASSERT_TRUE(s.say_unmatched);
	CU_ASSERT_FALSE(s.launcher);
	CU_ASSERT_EQUAL(parse(&s, zero), 0);
	CU_ASSERT_FALSE(s.say_unmatched);
	CU_ASSERT_FALSE(s.launcher);
	CU_ASSERT_EQUAL(parse(&s, one), 0);
	CU_ASSERT_TRUE(s.say_unmatched);
	CU_ASSERT_FALSE(s.launcher);
	/* cacheshim run's: it also says the notes and a glob's refusals. */
	CU_ASSERT_EQUAL(parse(&s, run), 0);
	CU_ASSERT_FALSE(s.say_unmatched);
	CU_ASSERT_TRUE(s.launcher);
	CU_ASSERT_EQUAL(parse(&s, bad), -EINVAL);
	CU_ASSERT_TRUE(s.say_unmatched);
	CU_ASSERT_FALSE(s.launcher);
}

static void test_series(void)
{
	static const char *const none[] = { NULL };
	static const char *const off[] = { "CACHESHIM_SERIES=0", NULL };
	static const char *const one[] = { "CACHESHIM_SERIES=1", NULL };
	static const char *const many[] = { "CACHESHIM_SERIES=65536", NULL };
	static const char *const bad[] = { "CACHESHIM_SERIES=3", NULL };
	static const char *const big[] = { "CACHESHIM_SERIES=131072", NULL };
	static const char *const neg[] = { "CACHESHIM_SERIES=-16", NULL };
	struct cs_settings s;

	CU_ASSERT_EQUAL(parse(&s, none), 0);
	CU_ASSERT_EQUAL(s.series, 16);
	CU_ASSERT_EQUAL(parse(&s, off), 0);
	CU_ASSERT_EQUAL(s.series, 0);
	CU_ASSERT_EQUAL(parse(&s, one), 0);
	CU_ASSERT_EQUAL(s.series, 1);
	CU_ASSERT_EQUAL(parse(&s, many), 0);
	CU_ASSERT_EQUAL(s.series, 65536);
	CU_ASSERT_EQUAL(parse(&s, bad), -EINVAL);
	CU_ASSERT_EQUAL(s.series, 16);
	CU_ASSERT_EQUAL(parse(&s, big), -EINVAL);
	CU_ASSERT_EQUAL(s.series, 16);
	CU_ASSERT_EQUAL(parse(&s, neg), -EINVAL);
	CU_ASSERT_EQUAL(s.series, 16);
}

static void test_match(void)
{
	static const char *const env[] = {"CACHESHIM_TARGETS=rb_hash_*,memcpy:arg3,st_[a-l]ookup",
					  NULL};
	struct cs_settings s;

	CU_ASSERT_EQUAL(parse(&s, env), 0);
	CU_ASSERT_EQUAL(cs_settings_match(&s, "rb_hash_aref"), 0);
	CU_ASSERT_EQUAL(cs_settings_match(&s, "rb_hash_"), 0);
	CU_ASSERT_EQUAL(cs_settings_match(&s, "rb_hasha"), -1);
	CU_ASSERT_EQUAL(cs_settings_match(&s, "memcpy"), 1);
	CU_ASSERT_EQUAL(cs_settings_match(&s, "memcpy:arg3"), -1);
	CU_ASSERT_EQUAL(cs_settings_match(&s, "st_lookup"), 2);
	CU_ASSERT_EQUAL(cs_settings_match(&s, "st_mookup"), -1);
	CU_ASSERT_EQUAL(cs_settings_match(&s, ""), -1);
}

static void test_output_path(void)
{
	char out[64];

	CU_ASSERT_EQUAL(cs_settings_output_path("cacheshim.out.%p", 4242, "ruby", out, sizeof(out)),
			0);
	CU_ASSERT_STRING_EQUAL(out, "cacheshim.out.4242");
	CU_ASSERT_EQUAL(cs_settings_output_path("/tmp/%e-%p.%%p%x%", 7, "ruby", out, sizeof(out)),
			0);
	CU_ASSERT_STRING_EQUAL(out, "/tmp/ruby-7.%p%x%");
	CU_ASSERT_EQUAL(cs_settings_output_path("%e%e%e%e%e%e%e%e%e%e%e%e%e", 1, "abcdefgh", out,
						sizeof(out)),
			-ENAMETOOLONG);
	CU_ASSERT_EQUAL(cs_settings_output_path("", 1, "x", out, sizeof(out)), 0);
	CU_ASSERT_STRING_EQUAL(out, "");
}

int main(void)
{
	CU_pSuite suite;
	unsigned failed;

	/* The parser logs rejected values on stderr: expected here. */
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite("settings", NULL, NULL);
	CU_add_test(suite, "defaults", test_defaults);
	CU_add_test(suite, "targets", test_targets);
	CU_add_test(suite, "long values", test_long_values);
	CU_add_test(suite, "events", test_events);
	CU_add_test(suite, "numbers", test_numbers);
	CU_add_test(suite, "session and quiet", test_session_and_quiet);
	CU_add_test(suite, "unmatched", test_unmatched);
	CU_add_test(suite, "series", test_series);
	CU_add_test(suite, "glob matching", test_match);
	CU_add_test(suite, "output path", test_output_path);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
