/*
 * error.c: the analyzer's one error shape (util.h): an error is said once, in one line
 * on stderr, and the code that comes back says it was said and how the command exits.
 */
#define _GNU_SOURCE /* vasprintf */
#include "analyze/util/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sd_error(enum sd_exit exit, const char *fmt, ...)
{
	va_list ap;
	char *line = NULL;

	va_start(ap, fmt);
	int n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n >= 0) { /* one write of the whole line, however long */
		fprintf(stderr, "sonde: %s\n", line);
		free(line);
	} else { /* no memory for it: the same line in pieces */
		va_start(ap, fmt);
		flockfile(stderr);
		fputs("sonde: ", stderr);
		vfprintf(stderr, fmt, ap);
		putc('\n', stderr);
		funlockfile(stderr);
		va_end(ap);
	}
	return SD_SAID(exit);
}

int sd_exit_code(int err, const char *cmd)
{
	if (err >= 0)
		return err;
	if (sd_said(err))
		return -err - SD_SAID_BASE;
	if (err == -ENOMEM)
		sd_error(SD_EXIT_IO, "%s: out of memory (give the command more memory, or fewer "
			 "streams at a time)", cmd);
	else
		sd_error(SD_EXIT_IO, "%s: %s", cmd, strerror(-err));
	return SD_EXIT_IO;
}
