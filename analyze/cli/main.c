/*
 * main.c: the `sonde` command line: a table of subcommands, each in its own cmd_*.c.
 * Exit codes are the named enum sd_exit (util/util.h), listed by `sonde --help`; a
 * command's result becomes one through sd_exit_code, here only. Messages go through
 * sonde's one log sink (common/log.h), set here: util's sd_stderr_sink.
 */
#include "analyze/cli/cli.h"
#include "format/format.h"

#include <string.h>

#ifndef SONDE_VERSION_STRING
#define SONDE_VERSION_STRING "0"
#endif

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args, *summary;
} commands[] = {
	{ "run", sd_cmd_run, "[-e SPEC]... [-F HZ] [-o DIR] -- CMD [ARGS]",
	  "run CMD with the sampler preloaded; write streams to DIR" },
	{ "report", sd_cmd_report, "[OPTIONS] PATH...",
	  "merge, symbolize and summarize streams (files or directories)" },
	{ "diff", sd_cmd_diff, "[OPTIONS] A B",
	  "compare two profiles: each row's share in A and B, delta and ratio" },
	{ "archive", sd_cmd_archive, "[-o FILE] DIR",
	  "pack a profile and its modules' symbols into one file for another machine" },
	{ "dump", sd_cmd_dump, "FILE", "print every record of one stream as JSON lines" },
	{ "events", sd_cmd_events, "[--all] [--format text|csv|json]",
	  "list the sampling sources and counters that work here, and why others do not" },
};

static void help(FILE *out)
{
	fputs("usage: sonde COMMAND [ARGS]\n       sonde help COMMAND\n\ncommands:\n", out);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  sonde %-7s %-44s %s\n", commands[i].name, commands[i].args,
			commands[i].summary);
	fprintf(out, "\n'sonde COMMAND --help' describes each command's options.\n\n"
		"exit codes:\n"
		"  %d  ok\n"
		"  %d  usage: bad command line\n"
		"  %d  I/O: a file or directory could not be read or written\n"
		"  %d  bad input: not a sonde stream, corrupt, or nothing usable to report\n"
		"  sonde run exits with CMD's status (128+N if killed by signal N, 127 if CMD "
		"cannot be run)\n", SD_EXIT_OK, SD_EXIT_USAGE, SD_EXIT_IO, SD_EXIT_BADINPUT);
}

int main(int argc, char **argv)
{
	sd_log_set(sd_stderr_sink, 1); /* every message on stdio's stderr, however long */
	if (argc < 2) {
		help(stderr);
		return SD_EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		if (argc > 2 && !strcmp(cmd, "help")) { /* sonde help CMD: sonde CMD --help */
			char *sub_argv[] = { argv[2], "--help", NULL };
			for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
				if (!strcmp(argv[2], commands[i].name))
					return sd_exit_code(commands[i].fn(2, sub_argv), commands[i].name);
			return sd_exit_code(sd_error(SD_EXIT_USAGE, "help: %s: no such command (see "
						     "'sonde --help')", argv[2]), "help");
		}
		help(stdout);
		return SD_EXIT_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("sonde %s (stream format %d)\n", SONDE_VERSION_STRING, SD_FORMAT_VERSION);
		return SD_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name))
			return sd_exit_code(commands[i].fn(argc - 1, argv + 1), commands[i].name);
	const char *near = sd_nearest(cmd, commands, sizeof(commands) / sizeof(commands[0]),
				      sizeof(commands[0]));
	if (near)
		return sd_exit_code(sd_error(SD_EXIT_USAGE, "%s: unknown command (did you mean '%s'? "
					     "see 'sonde --help')", cmd, near), cmd);
	return sd_exit_code(sd_error(SD_EXIT_USAGE, "%s: unknown command (see 'sonde --help')",
				     cmd), cmd);
}
