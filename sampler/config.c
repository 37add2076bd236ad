/* config.c - the runtime's configuration, from the environment.
 *
 * Called once from the constructor, before main, in the main thread. Reads
 * variables with getenv: libsonde is preloaded, so libc is initialised before
 * this constructor runs. Every problem gives one `sonde:` line naming the
 * variable, the bad value and what is accepted; the rest of the configuration
 * still applies (docs/ENV.md lists every variable). Each SONDE_SAMPLE token is
 * parsed by the row of its kind (source_kinds.c).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sampler/sampler.h"

#define PERIOD_MIN_NS 10000ull          /* 10 us: perf_event_max_sample_rate */
#define PERIOD_MAX_NS 60000000000ull    /* 60 s */

int sd_config_parse_period(const char *s, uint64_t *period_ns)
{
	char *end;
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v <= 0)
		return -EINVAL;
	double ns;
	if (!strcmp(end, "ns"))
		ns = v;
	else if (!strcmp(end, "us"))
		ns = v * 1e3;
	else if (!strcmp(end, "ms"))
		ns = v * 1e6;
	else if (!strcmp(end, "s"))
		ns = v * 1e9;
	else if (!strcasecmp(end, "hz"))
		ns = 1e9 / v;
	else
		return -EINVAL;
	if (ns < (double)PERIOD_MIN_NS || ns > (double)PERIOD_MAX_NS)
		return -ERANGE;
	*period_ns = (uint64_t)(ns + 0.5);
	return 0;
}

static void parse_sample(struct sd_config *cfg, const char *v)
{
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", v);
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (isspace((unsigned char)*tok))
			tok++;
		if (!*tok)
			continue;
		if (cfg->nsources == SD_MAX_SOURCES) {
			sd_msg("sonde: SONDE_SAMPLE: '%s': too many sources (at most %d)", tok,
			       SD_MAX_SOURCES);
			break;
		}
		struct sd_source s;
		if (sd_source_parse(tok, &s) == 0) {
			int dup = 0;
			for (unsigned i = 0; i < cfg->nsources; i++)
				dup |= cfg->sources[i].kind == s.kind &&
				       (!sd_source_kinds[s.kind].by_event ||
					!strcmp(cfg->sources[i].event, s.event));
			if (dup)
				sd_msg("sonde: SONDE_SAMPLE: '%s': source given twice (keeping the first)", tok);
			else
				cfg->sources[cfg->nsources++] = s;
		}
	}
}

/* Unsigned integer in [lo, hi]; on error prints one line and keeps *out. */
static void parse_uint(const char *var, unsigned lo, unsigned hi, unsigned *out)
{
	const char *v = getenv(var);
	if (!v || !*v)
		return;
	char *end;
	errno = 0;
	unsigned long x = strtoul(v, &end, 10);
	/* strtoul takes "-N" (after blanks, too) as 2^64 - N: any '-' is refused. */
	if (errno || *end || end == v || x < lo || x > hi || strchr(v, '-')) {
		sd_msg("sonde: %s: '%s' is not an integer from %u to %u (keeping %u)", var, v, lo, hi,
		       *out);
		return;
	}
	*out = (unsigned)x;
}

/* Signals sonde may borrow for sampling: the real-time ones (not PAPI's
 * SIGRTMIN+2) and the few whose only meaning is the program's own (user
 * signals, timers). Never a signal the kernel sends for a fault (SIGILL,
 * SIGTRAP, SIGBUS, SIGFPE, SIGSEGV, SIGSYS: a real fault would be taken for a
 * sample, or the program killed by it), nor job control, termination,
 * SIGIO (sonde's own overflow guard), SIGCHLD, SIGPIPE and the like. */
static int signal_borrowable(long n)
{
	if (n >= SIGRTMIN && n <= SIGRTMAX)
		return n != SIGRTMIN + 2;
	return n == SIGUSR1 || n == SIGUSR2 || n == SIGPROF || n == SIGVTALRM || n == SIGALRM;
}

/* Digits only: no sign, no space (strtol would take "SIGRTMIN+-3" as 31). */
static int parse_digits(const char *v, long *out)
{
	long n = 0;
	if (!*v)
		return -EINVAL;
	for (; *v; v++) {
		if (*v < '0' || *v > '9' || n > 1000)
			return -EINVAL;
		n = n * 10 + (*v - '0');
	}
	*out = n;
	return 0;
}

static int parse_signal(const char *v, int *signo)
{
	long n;
	if (!strncmp(v, "SIGRTMIN+", 9)) {
		if (parse_digits(v + 9, &n) != 0)
			return -EINVAL;
		n += SIGRTMIN;
	} else if (parse_digits(v, &n) != 0) {
		return -EINVAL;
	}
	if (!signal_borrowable(n))
		return -EINVAL;
	*signo = (int)n;
	return 0;
}

/* Picks the sampling signal: SONDE_SIGNAL, else the first real-time signal
 * from SIGRTMIN+4 whose disposition is the default. Never SIGRTMIN+2 (PAPI's
 * overflow signal) or SIGRTMIN+3 (HPCToolkit's). */
static int pick_signal(struct sd_config *cfg)
{
	const char *v = getenv("SONDE_SIGNAL");
	if (v && *v) {
		if (parse_signal(v, &cfg->signo) == 0)
			return 0;
		sd_msg("sonde: SONDE_SIGNAL: '%s' is not a signal sonde may borrow (use a real-time "
		       "signal, as a number or SIGRTMIN+N but not SIGRTMIN+2, or SIGUSR1, SIGUSR2, "
		       "SIGPROF, SIGVTALRM or SIGALRM by number; choosing one)", v);
	}
	for (int s = SIGRTMIN + 4; s <= SIGRTMAX; s++) {
		struct sigaction old;
		if (sd_real_sigaction(s, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO)) {
			cfg->signo = s;
			return 0;
		}
	}
	sd_msg("sonde: signals: no free real-time signal from SIGRTMIN+4 (set SONDE_SIGNAL)");
	return -EBUSY;
}

/* SONDE_ARGV: on (default), off, or redact:REGEX. A bad value records no
 * argv at all: what the user meant to hide stays hidden. */
static void parse_argv(struct sd_config *cfg, const char *v)
{
	cfg->argv_mode = SD_ARGV_ON;
	if (!v || !*v || !strcmp(v, "on"))
		return;
	cfg->argv_mode = SD_ARGV_OFF;
	if (!strcmp(v, "off"))
		return;
	if (strncmp(v, "redact:", 7) != 0 || !v[7]) {
		sd_msg("sonde: SONDE_ARGV: '%s' is not on, off or redact:REGEX (the command line is "
		       "not recorded)", v);
		return;
	}
	int err = regcomp(&cfg->argv_re, v + 7, REG_EXTENDED | REG_NOSUB);
	if (err) {
		char why[128];
		regerror(err, &cfg->argv_re, why, sizeof why);
		sd_msg("sonde: SONDE_ARGV: '%s': bad regular expression: %s (a POSIX extended "
		       "regex; the command line is not recorded)", v + 7, why);
		return;
	}
	cfg->argv_mode = SD_ARGV_REDACT;
}

static const char *exe_base(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	if (n <= 0)
		return "prog";
	buf[n] = 0;
	char *slash = strrchr(buf, '/');
	return slash ? slash + 1 : buf;
}

/* SONDE_REGIONS, SONDE_REGION_COUNTERS, SONDE_UNWIND, SONDE_WRITER: a word each. */
static void parse_modes(struct sd_config *cfg)
{
	const char *v = getenv("SONDE_REGIONS");
	if (v && *v) {
		if (!strcmp(v, "on") || !strcmp(v, "1"))
			cfg->regions = SD_REGIONS_ON;
		else if (!strcmp(v, "trace"))
			cfg->regions = SD_REGIONS_TRACE;
		else if (strcmp(v, "off") && strcmp(v, "0"))
			sd_msg("sonde: SONDE_REGIONS: '%s' is not on, trace or off (keeping off)", v);
	}
	v = getenv("SONDE_REGION_COUNTERS");
	if (v && *v) {
		if (!strcmp(v, "on") || !strcmp(v, "1"))
			cfg->region_counters = 1;
		else if (strcmp(v, "off") && strcmp(v, "0"))
			sd_msg("sonde: SONDE_REGION_COUNTERS: '%s' is not on or off (keeping off)", v);
	}

	v = getenv("SONDE_UNWIND");
	if (v && *v) {
		if (!strcmp(v, "libunwind"))
			cfg->unwind = SD_UNWIND_LIBUNWIND;
		else if (!strcmp(v, "fp"))
			cfg->unwind = SD_UNWIND_FP;
		else if (!strcmp(v, "none"))
			cfg->unwind = SD_UNWIND_NONE;
		else
			sd_msg("sonde: SONDE_UNWIND: '%s' is not an unwinder (use libunwind, fp or none; "
			       "keeping libunwind)", v);
	}

	v = getenv("SONDE_WRITER");
	if (v && *v) {
		if (!strcmp(v, "thread"))
			cfg->writer_always = 1;
		else if (strcmp(v, "auto"))
			sd_msg("sonde: SONDE_WRITER: '%s' is not auto or thread (keeping auto)", v);
	}
}

/* SONDE_OUTPUT (default sonde-<exe>) and SONDE_MODE. */
static void parse_output(struct sd_config *cfg)
{
	const char *v = getenv("SONDE_OUTPUT");
	if (v && *v) {
		snprintf(cfg->output, sizeof cfg->output, "%s", v);
	} else {
		char exe[4096];
		if (snprintf(cfg->output, sizeof cfg->output, "sonde-%s",
			     exe_base(exe, sizeof exe)) >= (int)sizeof cfg->output)
			snprintf(cfg->output, sizeof cfg->output, "sonde-prog");
	}
	v = getenv("SONDE_MODE");
	if (sd_outdir_mode_parse(v, &cfg->file_mode, &cfg->dir_mode) != 0) {
		sd_msg("sonde: SONDE_MODE: '%s' is not private, group or world (keeping private: "
		       "streams 0600, directories 0700)", v);
		sd_outdir_mode_parse(NULL, &cfg->file_mode, &cfg->dir_mode);
	}
}

int sd_config_parse(struct sd_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->enabled = 1;
	cfg->flush_ms = 100;
	cfg->max_depth = SD_MAX_DEPTH_MAX;
	cfg->unwind = SD_UNWIND_LIBUNWIND;
	cfg->buffer_kb = 512;
	cfg->follow_fork = 1;

	const char *v = getenv("SONDE_ENABLE");
	if (v && (!strcmp(v, "0") || !strcasecmp(v, "off") || !strcasecmp(v, "no"))) {
		cfg->enabled = 0;
		return -ECANCELED;
	}
	v = getenv("SONDE_VERBOSE");
	cfg->verbose = v && *v && strcmp(v, "0") != 0;

	v = getenv("SONDE_SAMPLE");
	if (v && *v) {
		parse_sample(cfg, v);
		if (cfg->nsources == 0)
			sd_msg("sonde: SONDE_SAMPLE: no valid source left (sampling with cpu-time@1ms)");
	}
	if (cfg->nsources == 0)
		sd_source_set_default(&cfg->sources[cfg->nsources++]);

	parse_uint("SONDE_FLUSH_MS", 1, 60000, &cfg->flush_ms);
	parse_uint("SONDE_MAX_DEPTH", 1, SD_MAX_DEPTH_MAX, &cfg->max_depth);
	parse_uint("SONDE_BUFFER_KB", 64, 1u << 20, &cfg->buffer_kb);
	unsigned ff = (unsigned)cfg->follow_fork;
	parse_uint("SONDE_FOLLOW_FORK", 0, 1, &ff);
	cfg->follow_fork = (int)ff;

	parse_modes(cfg);
	parse_output(cfg);
	parse_argv(cfg, getenv("SONDE_ARGV"));
	if (pick_signal(cfg) != 0)
		return -EBUSY;
	return 0;
}
