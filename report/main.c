/* SPDX-License-Identifier: MIT */
/* cacheshim: dispatches to the run, report, list and calibrate subcommands. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "report/internal.h"
#include "report/calibrate.h"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *what;
} commands[] = {
	{"run", cs_cmd_run, "run a program under the shim, print a summary"},
	{"report", cs_cmd_report, "print report files as tables, CSV, JSON or HTML"},
	{"list", cs_cmd_list, "list the events libpfm4 can encode here"},
	{"calibrate", cs_cmd_calibrate, "check what each event counts on this CPU"},
};

static void usage(FILE *out)
{
	size_t i;

	fputs("usage: cacheshim [--help] [--version] COMMAND [ARGS...]\n"
	      "\n"
	      "commands:\n",
	      out);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].what);
	fputs("\n'cacheshim COMMAND --help' describes a command; see also cacheshim(1).\n", out);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	static char topname[] = "cacheshim";
	static char cmdname[64];
	size_t i;
	int c;

	/* getopt's own messages (an unknown option, a missing argument)
	 * are prefixed with argv[0]: "cacheshim:", as every other message
	 * is, not the path the program was started by. */
	if (argc > 0)
		argv[0] = topname;
	/* '+': stop at the command name, its options are its own. */
	while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return cs_util_stdout_done();
		case 'V':
			printf("cacheshim %s (report format version %u)\n", PACKAGE_VERSION,
			       CS_FORMAT_VERSION);
			return cs_util_stdout_done();
		default:
			usage(stderr);
			return CS_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return CS_EXIT_USAGE;
	}
	if (strcmp(argv[optind], "help") == 0) {
		usage(stdout);
		return cs_util_stdout_done();
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[optind], commands[i].name) == 0) {
			argc -= optind;
			argv += optind;
			/* "cacheshim: run: invalid option -- 'x'", not
			 * "run: invalid option -- 'x'". */
			snprintf(cmdname, sizeof(cmdname), "cacheshim: %s", commands[i].name);
			argv[0] = cmdname;
			/* getopt restarts from argv[1] of the command; 0 also
			 * resets glibc's internal state. */
			optind = 0;
			return commands[i].fn(argc, argv);
		}
	}
	cs_err("unknown command '%s'", argv[optind]);
	usage(stderr);
	return CS_EXIT_USAGE;
}
