/* log.h - one sink for sonde's messages.
 *
 * Every line sonde says to the user ("sonde: <what>: <why> (<hint>)") is made
 * by sd_msg and handed to one sink, set by whoever runs: libsonde's writer
 * (the line goes to stderr and is kept in the stream as a NOTE), the CLI
 * (stderr, in order with its other output), a unit test (kept to compare).
 * Until a sink is set, lines go to stderr by write(2). Not for signal
 * handlers: they say their few lines through the writer's _sigsafe sayers.
 */
#ifndef SONDE_LOG_H
#define SONDE_LOG_H

#include <stdarg.h>
#include <stddef.h>

/* line: the message without its newline, len bytes, NUL-terminated */
typedef void (*sd_log_sink)(const char *line, size_t len);

/* Sets the sink (NULL: stderr). long_lines: a line longer than
 * SD_LOG_LINE_MAX is made in full on the heap (the CLI's file names have
 * no bound); otherwise it is cut there (the runtime allocates nothing for
 * its messages). */
void sd_log_set(sd_log_sink sink, int long_lines);
#define SD_LOG_LINE_MAX 1024

void sd_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void sd_vmsg(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

#endif
