/* SPDX-License-Identifier: MIT */
/* Units: @preset tokens in CACHESHIM_EVENTS (the shim's settings parser
 * keeps known presets for expansion and rejects unknown ones with one
 * line). */
#include <CUnit/Basic.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "shim/internal.h"

static const char *events_value;

static const char *fake_getenv(const char *name)
{
	if (!strcmp(name, "CACHESHIM_EVENTS"))
		return events_value;
	if (!strcmp(name, "CACHESHIM_TARGETS"))
		return "f";
	return NULL;
}

struct preset_case {
	int line;
	const char *value;
	int ret;
	unsigned n;
	const char *events[4];
	const char *log; /* a line the parser must print, or NULL for none */
};

#define UNKNOWN_L4                                                                      \
	"cacheshim: CACHESHIM_EVENTS: '@l4' is not a preset (@cache, @l1, @l2, @l3, @tlb, " \
	"@ipc, @all); ignored\n"

static const struct preset_case cases[] = {
	{__LINE__, "@cache", 0, 1, {"@cache"}, NULL},
	{__LINE__, "@cache,tsc", 0, 2, {"@cache", "tsc"}, NULL},
	{__LINE__, " @l1 , @L2,@l3,@tlb", 0, 4, {"@l1", "@L2", "@l3", "@tlb"}, NULL},
	{__LINE__, "@ipc,perf::PAGE-FAULTS,@ipc", 0, 2, {"@ipc", "perf::PAGE-FAULTS"}, NULL},
	{__LINE__, "@all", 0, 1, {"@all"}, NULL},
	{__LINE__, "@l4,tsc", -EINVAL, 1, {"tsc"}, UNKNOWN_L4},
	{__LINE__, "@", -EINVAL, 0, {NULL}, "cacheshim: CACHESHIM_EVENTS: '@' is not a preset"},
};

/* Runs the parser with stderr in a pipe; returns what it printed. */
static int parse_capturing(struct cs_settings *s, char *log, size_t len)
{
	int fd[2], saved = dup(2), ret;
	ssize_t n;

	if (pipe(fd) != 0 || saved < 0)
		return -999;
	dup2(fd[1], 2);
	ret = cs_settings_parse(s, fake_getenv);
	dup2(saved, 2);
	close(saved);
	close(fd[1]);
	n = read(fd[0], log, len - 1);
	log[n > 0 ? n : 0] = '\0';
	close(fd[0]);
	return ret;
}

static void test_preset_tokens(void)
{
	unsigned i, j;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct preset_case *c = &cases[i];
		struct cs_settings s;
		char log[1024];
		int ret, ok;

		events_value = c->value;
		ret = parse_capturing(&s, log, sizeof(log));
		ok = ret == c->ret && s.nevents == c->n;
		for (j = 0; ok && j < c->n; j++)
			ok = !strcmp(s.events[j], c->events[j]);
		if (c->log)
			ok = ok && strstr(log, c->log) && !strchr(strchr(log, '\n') + 1, '\n');
		else
			ok = ok && log[0] == '\0';
		if (!ok) {
			fprintf(stderr, "line %d: '%s' gives %d, %u events, log '%s'\n", c->line,
				c->value, ret, s.nevents, log);
			CU_FAIL("preset token");
		}
	}
}

int main(void)
{
	CU_pSuite s;
	int failed;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 99;
	s = CU_add_suite("settings: presets", NULL, NULL);
	if (!s || !CU_add_test(s, "@preset tokens", test_preset_tokens)) {
		CU_cleanup_registry();
		return 99;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = (int)CU_get_number_of_failures();
	CU_cleanup_registry();
	return failed ? 1 : 0;
}
