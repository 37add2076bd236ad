/* say.c - the `sonde:` lines said from signal context: a source throttled, a
 * new thread's clock without a descriptor or refused. Each is built in a
 * fixed buffer, written to stderr with one write and into the stream as a
 * NOTE, once per source or process.
 *
 * Called from the handler (handler.c) and from ordinary context (sources.c,
 * start.c): async-signal-safe, no stdio.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/sys.h"
#include "sampler/sampler.h"

/* Appends text or a number to a fixed buffer. async-signal-safe. */
static size_t put_sigsafe(char *buf, size_t at, size_t cap, const char *s)
{
	while (*s && at + 1 < cap)
		buf[at++] = *s++;
	buf[at] = 0;
	return at;
}

static size_t put_uint_sigsafe(char *buf, size_t at, size_t cap, uint64_t v)
{
	char d[24], num[24];
	int n = 0;
	do {
		d[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && n < 23);
	for (int i = 0; i < n; i++)
		num[i] = d[n - 1 - i];
	num[n] = 0;
	return put_sigsafe(buf, at, cap, num);
}

static size_t put_period_sigsafe(char *buf, size_t at, size_t cap, uint64_t ns)
{
	const char *unit = "ns";
	if (ns % 1000000000u == 0) {
		ns /= 1000000000u;
		unit = "s";
	} else if (ns % 1000000u == 0) {
		ns /= 1000000u;
		unit = "ms";
	} else if (ns % 1000u == 0) {
		ns /= 1000u;
		unit = "us";
	}
	char d[24];
	int n = 0;
	do {
		d[n++] = (char)('0' + ns % 10);
		ns /= 10;
	} while (ns && n < 23);
	char num[24];
	for (int i = 0; i < n; i++)
		num[i] = d[n - 1 - i];
	num[n] = 0;
	at = put_sigsafe(buf, at, cap, num);
	return put_sigsafe(buf, at, cap, unit);
}

/* One `sonde:` line of n bytes in buf (capacity cap): into the stream as a
 * NOTE and onto stderr. async-signal-safe. */
static void say_line_sigsafe(char *buf, size_t n, size_t cap)
{
	sd_writer_note(buf);
	n = put_sigsafe(buf, n, cap, "\n");
	/* by name, as every message of sonde's: tests/fault's shim fails it
	 * (sd_writer_vsay) */
	ssize_t w = write(STDERR_FILENO, buf, n);
	(void)w;
}

/* "sonde: SPEC" of source src at the start of buf: the length written.
 * async-signal-safe. */
static size_t source_head_sigsafe(char *buf, size_t len, int src)
{
	size_t n = put_sigsafe(buf, 0, len, "sonde: ");
	return put_sigsafe(buf, n, len, sd_rt.cfg.sources[src].spec);
}

void sd_say_throttled_sigsafe(int src, uint64_t period_ns)
{
	if (atomic_exchange(&sd_rt.throttle_said[src], 1))
		return;
	char buf[400];
	size_t n = source_head_sigsafe(buf, sizeof buf, src);
	n = put_sigsafe(buf, n, sizeof buf,
			": sampling takes too large a part of each period here, throttled: the "
			"period is raised on each thread that falls behind (first to ");
	n = put_period_sigsafe(buf, n, sizeof buf, period_ns);
	n = put_sigsafe(buf, n, sizeof buf,
			"), samples are weighted so totals stay exact (use a longer period; "
			"see SONDE_SAMPLE in docs/ENV.md)");
	say_line_sigsafe(buf, n, sizeof buf);
}

void sd_say_nofd_sigsafe(int src, int share)
{
	if (atomic_exchange(&sd_rt.nofd_said, 1))
		return;
	char buf[400];
	size_t n = source_head_sigsafe(buf, sizeof buf, src);
	if (share) {
		n = put_sigsafe(buf, n, sizeof buf,
				": no file descriptor left for a perf_event task clock within sonde's "
				"share of RLIMIT_NOFILE (");
		n = put_uint_sigsafe(buf, n, sizeof buf, (uint64_t)sd_rt.fd_share);
		n = put_sigsafe(buf, n, sizeof buf, " of ");
		n = put_uint_sigsafe(buf, n, sizeof buf, (uint64_t)sd_rt.fd_limit);
		n = put_sigsafe(buf, n, sizeof buf, ")");
	} else {
		n = put_sigsafe(buf, n, sizeof buf,
				": no file descriptor left for a perf_event task clock (RLIMIT_NOFILE)");
	}
	n = put_sigsafe(buf, n, sizeof buf,
			"; threads from now on may sample with a POSIX CPU-time timer (raise ulimit "
			"-n for exact rates)");
	say_line_sigsafe(buf, n, sizeof buf);
}

/* perf_event refused for a new thread's clock after the probe at start
 * worked (a seccomp filter or perf_event_paranoid set since, no memory):
 * the thread samples on a POSIX timer (sources.c). Said once.
 * async-signal-safe (strerrordesc_np reads a table). */
void sd_say_refused_sigsafe(int src, int err)
{
	if (atomic_exchange(&sd_rt.refused_said, 1))
		return;
	const char *why = strerrordesc_np(err);
	char buf[400];
	size_t n = source_head_sigsafe(buf, sizeof buf, src);
	n = put_sigsafe(buf, n, sizeof buf, ": perf_event task clock refused for a new thread: ");
	n = put_sigsafe(buf, n, sizeof buf, why ? why : "unknown error");
	n = put_sigsafe(buf, n, sizeof buf,
			" (such threads sample with a POSIX CPU-time timer, limited to the scheduler "
			"tick; lower kernel.perf_event_paranoid for exact rates)");
	say_line_sigsafe(buf, n, sizeof buf);
}
