/* log.c - the one sink for sonde's messages (log.h). */
#define _GNU_SOURCE /* vasprintf */
#include "common/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sd_log_sink sink;
static int long_ok;

void sd_log_set(sd_log_sink s, int long_lines)
{
	sink = s;
	long_ok = long_lines;
}

static void put(const char *line, size_t len)
{
	if (sink) {
		sink(line, len);
		return;
	}
	/* one write by name, not common/sys.h: tests/fault's shim fails
	 * sonde's messages */
	char buf[SD_LOG_LINE_MAX + 1];
	ssize_t w;
	if (len < sizeof buf) {
		memcpy(buf, line, len);
		buf[len] = '\n';
		w = write(STDERR_FILENO, buf, len + 1);
	} else {
		w = write(STDERR_FILENO, line, len);
		w = write(STDERR_FILENO, "\n", 1);
	}
	(void)w;
}

void sd_vmsg(const char *fmt, va_list ap)
{
	char buf[SD_LOG_LINE_MAX];
	va_list again;
	va_copy(again, ap);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	if (n < 0) {
		va_end(again);
		return;
	}
	char *big = NULL;
	if ((size_t)n >= sizeof buf && long_ok && vasprintf(&big, fmt, again) < 0)
		big = NULL;
	va_end(again);
	if (big) {
		put(big, (size_t)n);
		free(big);
	} else {
		put(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
	}
}

void sd_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sd_vmsg(fmt, ap);
	va_end(ap);
}
