/*
 * error.c: the analyzer's one error shape (util.h): an error is said once, in one line
 * through the log sink (common/log.h; stderr in the CLI), and the code that comes back says
 * it was said and how the command exits. Also the CLI's sink itself (sd_stderr_sink).
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
	char buf[SD_LOG_LINE_MAX], *big = NULL;

	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		buf[0] = '\0';
	if (n >= (int)sizeof buf) { /* the whole line, however long (cut if no memory) */
		va_start(ap, fmt);
		if (vasprintf(&big, fmt, ap) < 0)
			big = NULL;
		va_end(ap);
	}
	sd_msg("sonde: %s", big ? big : buf);
	free(big);
	return SD_SAID(exit);
}

void sd_stderr_sink(const char *line, size_t len)
{
	(void)len;
	/* one fprintf, as the messages were printed before the sink: glibc writes the line
	 * and its newline to unbuffered stderr in one write (up to BUFSIZ bytes) */
	fprintf(stderr, "%s\n", line);
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
