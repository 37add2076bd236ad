/* test_config.c - unit.config: the runtime's configuration from the
 * environment (sampler/config.c sd_config_parse, and SONDE_COUNTERS through
 * kernel/counters.c sd_kernel_counters_probe), against docs/ENV.md, which is
 * normative: every accepted form parses to the documented value, every
 * refused one gives the documented line and keeps the documented default.
 *
 * config.c prints through sd_msg() (common/log.h: in libsonde the writer's
 * sink writes each line to stderr and keeps it as a NOTE). This test sets
 * its own sink and keeps each line, so that lines are compared whole. Its
 * sd_real_sigaction (common/real.h) is common/real.c's, linked as in
 * libsonde (from an executable, RTLD_NEXT finds libc's sigaction). The
 * counters probe takes its `say` function as an argument: the same capture
 * is given.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sampler/sampler.h"
#include "tests/unit/unit.h"

/* ---- what config.c calls from other files -------------------------------- */

#define MAX_MSGS 16
static char msgs[MAX_MSGS][1024];
static unsigned nmsgs;

/* the log sink (common/log.h) of this test: every line kept */
static void keep(const char *line, size_t len)
{
	CHECK(nmsgs < MAX_MSGS);
	snprintf(msgs[nmsgs++], sizeof msgs[0], "%.*s", (int)len, line);
}

__attribute__((constructor)) static void capture_lines(void)
{
	sd_log_set(keep, 0);
}

/* ---- helpers --------------------------------------------------------------- */

static const char *const vars[] = {
	"SONDE_ENABLE",	   "SONDE_SAMPLE",  "SONDE_COUNTERS", "SONDE_OUTPUT",  "SONDE_MODE",
	"SONDE_ARGV",	   "SONDE_FLUSH_MS", "SONDE_MAX_DEPTH", "SONDE_UNWIND", "SONDE_BUFFER_KB",
	"SONDE_SIGNAL",	   "SONDE_REGIONS", "SONDE_REGION_COUNTERS", "SONDE_FOLLOW_FORK", "SONDE_VERBOSE",
};

/* A fresh environment: no SONDE_* variable, no message kept. */
static void reset(void)
{
	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
		unsetenv(vars[i]);
	nmsgs = 0;
}

/* Parses with `var`=`value` alone set; returns sd_config_parse's result. */
static int parse_with(struct sd_config *cfg, const char *var, const char *value)
{
	reset();
	if (var)
		setenv(var, value, 1);
	return sd_config_parse(cfg);
}

static void free_cfg(struct sd_config *cfg)
{
	if (cfg->argv_mode == SD_ARGV_REDACT)
		regfree(&cfg->argv_re);
}

/* Exactly the lines given, in order, each one line. */
static void expect_msgs(unsigned n, ...)
{
	va_list ap;
	va_start(ap, n);
	for (unsigned i = 0; i < n && i < nmsgs; i++) {
		const char *want = va_arg(ap, const char *);
		CHECK_STR(msgs[i], want);
	}
	va_end(ap);
	for (unsigned i = 0; i < nmsgs; i++)
		CHECK(!strchr(msgs[i], '\n'));
	if (nmsgs != n) {
		for (unsigned i = 0; i < nmsgs; i++)
			fprintf(stderr, "  message %u: %s\n", i, msgs[i]);
	}
	CHECK_EQ(nmsgs, n);
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	static char bufs[8][1024];
	static unsigned k;
	char *b = bufs[k++ % 8];
	va_list ap;
	va_start(ap, f);
	vsnprintf(b, sizeof bufs[0], f, ap);
	va_end(ap);
	return b;
}

/* The first real-time signal from SIGRTMIN+4 with the default disposition:
 * what docs/ENV.md says SONDE_SIGNAL defaults to. */
static int first_free_signal(void)
{
	for (int s = SIGRTMIN + 4; s <= SIGRTMAX; s++) {
		struct sigaction old;
		if (sigaction(s, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
		    !(old.sa_flags & SA_SIGINFO))
			return s;
	}
	return -1;
}

static void check_default_source(const struct sd_config *cfg)
{
	CHECK_EQ(cfg->nsources, 1);
	CHECK_EQ(cfg->sources[0].kind, SD_SRC_CPU);
	CHECK_EQ(cfg->sources[0].period_ns, 1000000);
	CHECK_STR(cfg->sources[0].spec, "cpu-time@1ms");
}

/* ---- the defaults ---------------------------------------------------------- */

static void case_defaults(void)
{
	struct sd_config cfg;
	CHECK_EQ(parse_with(&cfg, NULL, NULL), 0);
	expect_msgs(0);
	CHECK_EQ(cfg.enabled, 1);
	check_default_source(&cfg);
	CHECK_EQ(cfg.flush_ms, 100);
	CHECK_EQ(cfg.max_depth, 1024);
	CHECK_EQ(cfg.unwind, SD_UNWIND_LIBUNWIND);
	CHECK_EQ(cfg.buffer_kb, 512);
	CHECK_EQ(cfg.follow_fork, 1);
	CHECK_EQ(cfg.regions, 0);
	CHECK_EQ(cfg.verbose, 0);
	CHECK_EQ(cfg.argv_mode, SD_ARGV_ON);
	CHECK_EQ(cfg.file_mode, 0600);
	CHECK_EQ(cfg.dir_mode, 0700);
	CHECK_EQ(cfg.signo, first_free_signal());
	/* ./sonde-<exe> */
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	CHECK(n > 0);
	exe[n] = 0;
	CHECK_STR(cfg.output, fmt("sonde-%s", strrchr(exe, '/') + 1));
	free_cfg(&cfg);
}

static void case_enable(void)
{
	static const char *const off[] = {"0", "off", "no", "OFF", "No"};
	for (size_t i = 0; i < sizeof off / sizeof off[0]; i++) {
		struct sd_config cfg;
		CHECK_EQ(parse_with(&cfg, "SONDE_ENABLE", off[i]), -ECANCELED);
		CHECK_EQ(cfg.enabled, 0);
		expect_msgs(0);
	}
	static const char *const on[] = {"1", "on", "yes", ""};
	for (size_t i = 0; i < sizeof on / sizeof on[0]; i++) {
		struct sd_config cfg;
		CHECK_EQ(parse_with(&cfg, "SONDE_ENABLE", on[i]), 0);
		CHECK_EQ(cfg.enabled, 1);
		free_cfg(&cfg);
	}
	struct sd_config cfg;
	CHECK_EQ(parse_with(&cfg, "SONDE_VERBOSE", "1"), 0);
	CHECK_EQ(cfg.verbose, 1);
	CHECK_EQ(parse_with(&cfg, "SONDE_VERBOSE", "0"), 0);
	CHECK_EQ(cfg.verbose, 0);
	CHECK_EQ(parse_with(&cfg, "SONDE_OUTPUT", "/tmp/some where/out"), 0);
	CHECK_STR(cfg.output, "/tmp/some where/out");
	expect_msgs(0);
}

/* ---- SONDE_SAMPLE ---------------------------------------------------------- */

struct period_case {
	const char *spec;
	enum sd_source_kind kind;
	uint64_t period_ns;
};

static void case_sample_periods(void)
{
	/* docs/ENV.md: examples, every unit, both ends of 10 us .. 60 s. */
	static const struct period_case ok[] = {
		{"cpu-time@1ms", SD_SRC_CPU, 1000000},
		{"cpu-time@100us", SD_SRC_CPU, 100000},
		{"cpu-time@4000hz", SD_SRC_CPU, 250000},
		{"cpu-time@1000hz", SD_SRC_CPU, 1000000},
		{"wall-time@10ms", SD_SRC_WALL, 10000000},
		{"cpu-time@250us", SD_SRC_CPU, 250000},
		{"cpu-time@100000ns", SD_SRC_CPU, 100000},
		{"wall-time@1s", SD_SRC_WALL, 1000000000},
		{"cpu-time@10us", SD_SRC_CPU, 10000},
		{"cpu-time@10000ns", SD_SRC_CPU, 10000},
		{"cpu-time@100000hz", SD_SRC_CPU, 10000},
		{"wall-time@60s", SD_SRC_WALL, 60000000000ull},
		{"wall-time@60000ms", SD_SRC_WALL, 60000000000ull},
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		struct sd_config cfg;
		CHECK_EQ(parse_with(&cfg, "SONDE_SAMPLE", ok[i].spec), 0);
		expect_msgs(0);
		CHECK_EQ(cfg.nsources, 1);
		CHECK_EQ(cfg.sources[0].kind, ok[i].kind);
		CHECK_EQ(cfg.sources[0].period_ns, ok[i].period_ns);
		CHECK_STR(cfg.sources[0].spec, ok[i].spec);
		free_cfg(&cfg);
	}
	/* sd_config_parse_period itself: the same forms, and nothing on error. */
	uint64_t p = 7;
	CHECK_EQ(sd_config_parse_period("2ms", &p), 0);
	CHECK_EQ(p, 2000000);
	CHECK_EQ(sd_config_parse_period("9us", &p), -ERANGE);
	CHECK_EQ(sd_config_parse_period("61s", &p), -ERANGE);
	CHECK_EQ(sd_config_parse_period("1min", &p), -EINVAL);
	CHECK_EQ(sd_config_parse_period("ms", &p), -EINVAL);
	CHECK_EQ(p, 2000000);
}

static void case_sample_several(void)
{
	struct sd_config cfg;
	CHECK_EQ(parse_with(&cfg, "SONDE_SAMPLE", "cpu-time@1ms,wall-time@20ms"), 0);
	expect_msgs(0);
	CHECK_EQ(cfg.nsources, 2);
	CHECK_EQ(cfg.sources[0].kind, SD_SRC_CPU);
	CHECK_EQ(cfg.sources[0].period_ns, 1000000);
	CHECK_EQ(cfg.sources[1].kind, SD_SRC_WALL);
	CHECK_EQ(cfg.sources[1].period_ns, 20000000);
	CHECK_STR(cfg.sources[1].spec, "wall-time@20ms");

	/* PAPI events, preset and native, NAME@COUNT with COUNT in 1000 ..
	 * 2147483647, mixed with the timers: period_ns holds the count. */
	CHECK_EQ(parse_with(&cfg, "SONDE_SAMPLE",
			    "wall-time@10ms,PAPI_TOT_CYC@2000000,perf::TASK-CLOCK@1000,"
			    "perf::INSTRUCTIONS@2147483647"),
		 0);
	expect_msgs(0);
	CHECK_EQ(cfg.nsources, 4);
	CHECK_EQ(cfg.sources[0].kind, SD_SRC_WALL);
	CHECK_EQ(cfg.sources[1].kind, SD_SRC_PAPI);
	CHECK_STR(cfg.sources[1].event, "PAPI_TOT_CYC");
	CHECK_EQ(cfg.sources[1].period_ns, 2000000);
	CHECK_STR(cfg.sources[1].spec, "PAPI_TOT_CYC@2000000");
	CHECK_EQ(cfg.sources[2].kind, SD_SRC_PAPI);
	CHECK_STR(cfg.sources[2].event, "perf::TASK-CLOCK");
	CHECK_EQ(cfg.sources[2].period_ns, 1000);
	CHECK_STR(cfg.sources[3].event, "perf::INSTRUCTIONS");
	CHECK_EQ(cfg.sources[3].period_ns, 2147483647);

	/* A bad token is dropped, the rest applies. */
	CHECK_EQ(parse_with(&cfg, "SONDE_SAMPLE", "cpu-time@1ms,bogus@1ms,wall-time@5ms"), 0);
	expect_msgs(1, "sonde: SONDE_SAMPLE: 'bogus@1ms': unknown sampling source (use "
		       "cpu-time@PERIOD, wall-time@PERIOD or a PAPI event NAME@COUNT; see 'sonde "
		       "events')");
	CHECK_EQ(cfg.nsources, 2);
	CHECK_EQ(cfg.sources[0].period_ns, 1000000);
	CHECK_EQ(cfg.sources[1].kind, SD_SRC_WALL);
	CHECK_EQ(cfg.sources[1].period_ns, 5000000);

	/* At most one of each kind (docs/ENV.md): the first is kept. The line is
	 * not spelled out in docs/ENV.md; its shape is. */
	CHECK_EQ(parse_with(&cfg, "SONDE_SAMPLE", "cpu-time@2ms,cpu-time@3ms"), 0);
	CHECK_EQ(cfg.nsources, 1);
	CHECK_EQ(cfg.sources[0].period_ns, 2000000);
	CHECK_EQ(nmsgs, 1);
	CHECK(!strncmp(msgs[0], "sonde: SONDE_SAMPLE: 'cpu-time@3ms': ", 37));

	/* At most SD_MAX_SOURCES sources: the next one is refused, said once. */
	CHECK_EQ(SD_MAX_SOURCES, 4);
	CHECK_EQ(parse_with(&cfg, "SONDE_SAMPLE",
			    "cpu-time@1ms,wall-time@10ms,PAPI_TOT_CYC@2000000,perf::CYCLES@1000000,"
			    "perf::INSTRUCTIONS@1000000"),
		 0);
	CHECK_EQ(cfg.nsources, 4);
	CHECK_STR(cfg.sources[3].event, "perf::CYCLES");
	expect_msgs(1, "sonde: SONDE_SAMPLE: 'perf::INSTRUCTIONS@1000000': too many sources (at "
		       "most 4)");
}

static void case_sample_refused(void)
{
	static const char *const unknown[] = {"bogus@1ms", "cpu@1ms", "cputime", "CPU-TIME@1ms",
					      "@1ms"};
	static const char *const unparseable[] = {"cpu-time@1min", "cpu-time@ms", "cpu-time@",
						  "cpu-time@-1ms", "wall-time@1", "cpu-time@1 ms",
						  "wall-time@10msec"};
	static const char *const range[] = {"cpu-time@9us", "cpu-time@9999ns", "wall-time@61s",
					    "cpu-time@100001hz", "wall-time@0.01hz"};
	static const char *const papi[] = {"PAPI_TOT_CYC@999", "PAPI_TOT_CYC@2147483648",
					   "perf::TASK-CLOCK", "perf::TASK-CLOCK@",
					   "PAPI_TOT_CYC@-5000", "PAPI_TOT_CYC@1e6",
					   "PAPI_TOT_CYC@2000000x",
					   /* 2^64 - 2000 negated is 2000 to strtoull */
					   "PAPI_TOT_CYC@ -18446744073709549616"};
	const char *const no_left = "sonde: SONDE_SAMPLE: no valid source left (sampling with "
				    "cpu-time@1ms)";
	const char *const forms = "a period like 1ms, 250us, 100000ns, 1s or 1000hz, from 10us "
				  "to 60s";
	struct sd_config cfg;
	for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
		CHECK_EQ(parse_with(&cfg, "SONDE_SAMPLE", unknown[i]), 0);
		expect_msgs(2,
			    fmt("sonde: SONDE_SAMPLE: '%s': unknown sampling source (use "
				"cpu-time@PERIOD, wall-time@PERIOD or a PAPI event NAME@COUNT; see "
				"'sonde events')",
				unknown[i]),
			    no_left);
		check_default_source(&cfg);
	}
	for (size_t i = 0; i < sizeof unparseable / sizeof unparseable[0]; i++) {
		CHECK_EQ(parse_with(&cfg, "SONDE_SAMPLE", unparseable[i]), 0);
		expect_msgs(2, fmt("sonde: SONDE_SAMPLE: '%s': unparseable period (use %s)",
				   unparseable[i], forms),
			    no_left);
		check_default_source(&cfg);
	}
	for (size_t i = 0; i < sizeof range / sizeof range[0]; i++) {
		CHECK_EQ(parse_with(&cfg, "SONDE_SAMPLE", range[i]), 0);
		expect_msgs(2, fmt("sonde: SONDE_SAMPLE: '%s': out-of-range period (use %s)",
				   range[i], forms),
			    no_left);
		check_default_source(&cfg);
	}
	for (size_t i = 0; i < sizeof papi / sizeof papi[0]; i++) {
		CHECK_EQ(parse_with(&cfg, "SONDE_SAMPLE", papi[i]), 0);
		expect_msgs(2,
			    fmt("sonde: SONDE_SAMPLE: '%s': a PAPI event needs a count from 1000 "
				"to 2147483647 (e.g. perf::TASK-CLOCK@1000000)",
				papi[i]),
			    no_left);
		check_default_source(&cfg);
	}
	/* Only separators: no source given. */
	CHECK_EQ(parse_with(&cfg, "SONDE_SAMPLE", ", ,"), 0);
	expect_msgs(1, no_left);
	check_default_source(&cfg);
}

/* ---- integers: SONDE_FLUSH_MS, SONDE_MAX_DEPTH, SONDE_BUFFER_KB ----------- */

struct uint_var {
	const char *var;
	unsigned lo, hi, def;
	size_t off; /* of the field in struct sd_config */
};

static void case_integers(void)
{
	static const struct uint_var uv[] = {
		{"SONDE_FLUSH_MS", 1, 60000, 100, offsetof(struct sd_config, flush_ms)},
		{"SONDE_MAX_DEPTH", 1, 1024, 1024, offsetof(struct sd_config, max_depth)},
		{"SONDE_BUFFER_KB", 64, 1048576, 512, offsetof(struct sd_config, buffer_kb)},
	};
	for (size_t i = 0; i < sizeof uv / sizeof uv[0]; i++) {
		struct sd_config cfg;
		unsigned oks[] = {uv[i].lo, uv[i].lo + 1, uv[i].hi - 1, uv[i].hi, uv[i].def - 3};
		for (size_t k = 0; k < sizeof oks / sizeof oks[0]; k++) {
			CHECK_EQ(parse_with(&cfg, uv[i].var, fmt("%u", oks[k])), 0);
			expect_msgs(0);
			CHECK_EQ(*(unsigned *)((char *)&cfg + uv[i].off), oks[k]);
		}
		const char *bad[] = {fmt("%u", uv[i].lo - 1), fmt("%u", uv[i].hi + 1), "abc",
				     "-1", "10ms", "1.5", "99999999999999999999999",
				     /* minus any multiple of 2^64, plus 1: strtoul wraps */
				     "-18446744073709551615", " -18446744073709551615"};
		for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
			char b[64];
			snprintf(b, sizeof b, "%s", bad[k]);
			CHECK_EQ(parse_with(&cfg, uv[i].var, b), 0);
			expect_msgs(1, fmt("sonde: %s: '%s' is not an integer from %u to %u (keeping %u)",
					   uv[i].var, b, uv[i].lo, uv[i].hi, uv[i].def));
			CHECK_EQ(*(unsigned *)((char *)&cfg + uv[i].off), uv[i].def);
		}
		/* Empty: unset. */
		CHECK_EQ(parse_with(&cfg, uv[i].var, ""), 0);
		expect_msgs(0);
		CHECK_EQ(*(unsigned *)((char *)&cfg + uv[i].off), uv[i].def);
	}
	struct sd_config cfg;
	CHECK_EQ(parse_with(&cfg, "SONDE_FOLLOW_FORK", "0"), 0);
	CHECK_EQ(cfg.follow_fork, 0);
	CHECK_EQ(parse_with(&cfg, "SONDE_FOLLOW_FORK", "1"), 0);
	CHECK_EQ(cfg.follow_fork, 1);
	expect_msgs(0);
	CHECK_EQ(parse_with(&cfg, "SONDE_FOLLOW_FORK", "2"), 0);
	expect_msgs(1, "sonde: SONDE_FOLLOW_FORK: '2' is not an integer from 0 to 1 (keeping 1)");
	CHECK_EQ(cfg.follow_fork, 1);
}

/* ---- words: SONDE_UNWIND, SONDE_REGIONS, SONDE_MODE ------------------------ */

static void case_words(void)
{
	struct sd_config cfg;
	CHECK_EQ(parse_with(&cfg, "SONDE_UNWIND", "libunwind"), 0);
	CHECK_EQ(cfg.unwind, SD_UNWIND_LIBUNWIND);
	CHECK_EQ(parse_with(&cfg, "SONDE_UNWIND", "fp"), 0);
	CHECK_EQ(cfg.unwind, SD_UNWIND_FP);
	CHECK_EQ(parse_with(&cfg, "SONDE_UNWIND", "none"), 0);
	CHECK_EQ(cfg.unwind, SD_UNWIND_NONE);
	expect_msgs(0);
	static const char *const bad_unwind[] = {"dwarf", "FP", "libunwind ", "no"};
	for (size_t i = 0; i < sizeof bad_unwind / sizeof bad_unwind[0]; i++) {
		CHECK_EQ(parse_with(&cfg, "SONDE_UNWIND", bad_unwind[i]), 0);
		expect_msgs(1, fmt("sonde: SONDE_UNWIND: '%s' is not an unwinder (use libunwind, fp "
				   "or none; keeping libunwind)",
				   bad_unwind[i]));
		CHECK_EQ(cfg.unwind, SD_UNWIND_LIBUNWIND);
	}

	static const char *const reg_on[] = {"on", "1"}, *const reg_off[] = {"off", "0", ""};
	for (size_t i = 0; i < 2; i++) {
		CHECK_EQ(parse_with(&cfg, "SONDE_REGIONS", reg_on[i]), 0);
		CHECK_EQ(cfg.regions, SD_REGIONS_ON);
	}
	CHECK_EQ(parse_with(&cfg, "SONDE_REGIONS", "trace"), 0);
	CHECK_EQ(cfg.regions, SD_REGIONS_TRACE);
	for (size_t i = 0; i < 3; i++) {
		CHECK_EQ(parse_with(&cfg, "SONDE_REGIONS", reg_off[i]), 0);
		CHECK_EQ(cfg.regions, 0);
	}
	expect_msgs(0);
	static const char *const bad_reg[] = {"traced", "yes", "ON", "2"};
	for (size_t i = 0; i < sizeof bad_reg / sizeof bad_reg[0]; i++) {
		CHECK_EQ(parse_with(&cfg, "SONDE_REGIONS", bad_reg[i]), 0);
		expect_msgs(1, fmt("sonde: SONDE_REGIONS: '%s' is not on, trace or off (keeping off)",
				   bad_reg[i]));
		CHECK_EQ(cfg.regions, 0);
	}
	CHECK_EQ(parse_with(&cfg, "SONDE_REGION_COUNTERS", "on"), 0);
	CHECK_EQ(cfg.region_counters, 1);
	CHECK_EQ(parse_with(&cfg, "SONDE_REGION_COUNTERS", "off"), 0);
	CHECK_EQ(cfg.region_counters, 0);
	CHECK_EQ(parse_with(&cfg, "SONDE_REGION_COUNTERS", "yes"), 0);
	expect_msgs(1, "sonde: SONDE_REGION_COUNTERS: 'yes' is not on or off (keeping off)");

	static const struct {
		const char *v;
		mode_t f, d;
	} modes[] = {{"private", 0600, 0700}, {"group", 0640, 0750}, {"world", 0644, 0755},
		     {"", 0600, 0700}};
	for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
		CHECK_EQ(parse_with(&cfg, "SONDE_MODE", modes[i].v), 0);
		expect_msgs(0);
		CHECK_EQ(cfg.file_mode, modes[i].f);
		CHECK_EQ(cfg.dir_mode, modes[i].d);
	}
	static const char *const bad_mode[] = {"public", "0644", "Group"};
	for (size_t i = 0; i < sizeof bad_mode / sizeof bad_mode[0]; i++) {
		CHECK_EQ(parse_with(&cfg, "SONDE_MODE", bad_mode[i]), 0);
		expect_msgs(1, fmt("sonde: SONDE_MODE: '%s' is not private, group or world (keeping "
				   "private: streams 0600, directories 0700)",
				   bad_mode[i]));
		CHECK_EQ(cfg.file_mode, 0600);
		CHECK_EQ(cfg.dir_mode, 0700);
	}
}

/* ---- SONDE_SIGNAL ---------------------------------------------------------- */

static void handler(int sig)
{
	(void)sig;
}

static void case_signal(void)
{
	struct sd_config cfg;
	CHECK_EQ(parse_with(&cfg, "SONDE_SIGNAL", "SIGRTMIN+5"), 0);
	expect_msgs(0);
	CHECK_EQ(cfg.signo, SIGRTMIN + 5);
	CHECK_EQ(parse_with(&cfg, "SONDE_SIGNAL", "SIGRTMIN+0"), 0);
	CHECK_EQ(cfg.signo, SIGRTMIN);
	CHECK_EQ(parse_with(&cfg, "SONDE_SIGNAL", fmt("%d", SIGRTMAX)), 0);
	CHECK_EQ(cfg.signo, SIGRTMAX);
	CHECK_EQ(parse_with(&cfg, "SONDE_SIGNAL", "10"), 0);
	CHECK_EQ(cfg.signo, 10);
	for (int ok = 10; ok <= 27; ok++) { /* SIGUSR1/2, SIGALRM, SIGVTALRM, SIGPROF */
		if (ok != SIGUSR1 && ok != SIGUSR2 && ok != SIGALRM && ok != SIGVTALRM && ok != SIGPROF)
			continue;
		CHECK_EQ(parse_with(&cfg, "SONDE_SIGNAL", fmt("%d", ok)), 0);
		CHECK_EQ(cfg.signo, ok);
	}
	expect_msgs(0);

	int dflt = first_free_signal();
	CHECK(dflt >= SIGRTMIN + 4);
	/* Fault signals (SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV, SIGSYS killed the
	 * program when accepted), job control, termination, SIGIO, SIGCHLD, signs. */
	const char *bad[] = {"SIGRTMIN+2", fmt("%d", SIGRTMIN + 2), "9", "19", "0", "-5",
			     fmt("%d", SIGRTMAX + 1), "SIGUSR1", "SIGRTMIN+", "SIGRTMIN+x",
			     "SIGRTMAX", "12abc", "4", "5", "7", "8", "11", "31", "SIGRTMIN+-3",
			     "1", "2", "3", "6", "13", "15", "17", "18", "20", "29", "+10", " 10",
			     "SIGRTMIN+ 4"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char b[64];
		snprintf(b, sizeof b, "%s", bad[i]);
		CHECK_EQ(parse_with(&cfg, "SONDE_SIGNAL", b), 0);
		expect_msgs(1, fmt("sonde: SONDE_SIGNAL: '%s' is not a signal sonde may borrow (use "
				   "a real-time signal, as a number or SIGRTMIN+N but not SIGRTMIN+2, "
				   "or SIGUSR1, SIGUSR2, SIGPROF, SIGVTALRM or SIGALRM by number; "
				   "choosing one)",
				   b));
		CHECK_EQ(cfg.signo, dflt);
	}

	/* The default skips signals the program handles or ignores. */
	static struct sigaction saved[128];
	for (int s = dflt; s <= SIGRTMAX; s++)
		CHECK(sigaction(s, NULL, &saved[s]) == 0);
	struct sigaction sa = {.sa_handler = handler};
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(dflt, &sa, NULL) == 0);
	sa.sa_handler = SIG_IGN;
	CHECK(sigaction(dflt + 1, &sa, NULL) == 0);
	CHECK_EQ(parse_with(&cfg, NULL, NULL), 0);
	expect_msgs(0);
	CHECK_EQ(cfg.signo, dflt + 2);
	CHECK_EQ(cfg.signo, first_free_signal());
	/* None left: the runtime cannot run. */
	for (int s = dflt + 2; s <= SIGRTMAX; s++)
		CHECK(sigaction(s, &sa, NULL) == 0);
	CHECK_EQ(parse_with(&cfg, NULL, NULL), -EBUSY);
	expect_msgs(1, "sonde: signals: no free real-time signal from SIGRTMIN+4 (set "
		       "SONDE_SIGNAL)");
	for (int s = dflt; s <= SIGRTMAX; s++)
		CHECK(sigaction(s, &saved[s], NULL) == 0);
	CHECK_EQ(first_free_signal(), dflt);
}

/* ---- SONDE_ARGV ------------------------------------------------------------ */

static void case_argv(void)
{
	struct sd_config cfg;
	CHECK_EQ(parse_with(&cfg, "SONDE_ARGV", "on"), 0);
	CHECK_EQ(cfg.argv_mode, SD_ARGV_ON);
	CHECK_EQ(parse_with(&cfg, "SONDE_ARGV", ""), 0);
	CHECK_EQ(cfg.argv_mode, SD_ARGV_ON);
	CHECK_EQ(parse_with(&cfg, "SONDE_ARGV", "off"), 0);
	CHECK_EQ(cfg.argv_mode, SD_ARGV_OFF);
	expect_msgs(0);

	CHECK_EQ(parse_with(&cfg, "SONDE_ARGV", "redact:^--password=|^--token="), 0);
	expect_msgs(0);
	CHECK_EQ(cfg.argv_mode, SD_ARGV_REDACT);
	CHECK(regexec(&cfg.argv_re, "--password=hunter2", 0, NULL, 0) == 0);
	CHECK(regexec(&cfg.argv_re, "--token=x", 0, NULL, 0) == 0);
	CHECK(regexec(&cfg.argv_re, "--user=me", 0, NULL, 0) == REG_NOMATCH);
	CHECK(regexec(&cfg.argv_re, "x--password=", 0, NULL, 0) == REG_NOMATCH);
	free_cfg(&cfg);

	/* A bad value records no argv at all. */
	static const char *const bad[] = {"yes", "redact:", "redact", "ON", "redact-^x"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK_EQ(parse_with(&cfg, "SONDE_ARGV", bad[i]), 0);
		expect_msgs(1, fmt("sonde: SONDE_ARGV: '%s' is not on, off or redact:REGEX (the "
				   "command line is not recorded)",
				   bad[i]));
		CHECK_EQ(cfg.argv_mode, SD_ARGV_OFF);
	}
	static const char *const bad_re[] = {"(", "a{2,1}", "[z-a]"};
	for (size_t i = 0; i < sizeof bad_re / sizeof bad_re[0]; i++) {
		regex_t re;
		int err = regcomp(&re, bad_re[i], REG_EXTENDED | REG_NOSUB);
		CHECK(err != 0);
		char why[128];
		regerror(err, &re, why, sizeof why);
		CHECK_EQ(parse_with(&cfg, "SONDE_ARGV", fmt("redact:%s", bad_re[i])), 0);
		expect_msgs(1, fmt("sonde: SONDE_ARGV: '%s': bad regular expression: %s (a POSIX "
				   "extended regex; the command line is not recorded)",
				   bad_re[i], why));
		CHECK_EQ(cfg.argv_mode, SD_ARGV_OFF);
	}
}

/* ---- SONDE_COUNTERS (kernel/counters.c) ------------------------------------ */

static void say(const char *f, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	CHECK(nmsgs < MAX_MSGS);
	vsnprintf(msgs[nmsgs++], sizeof msgs[0], f, ap);
	va_end(ap);
}

static void check_counter(const struct sd_counters *c, unsigned i, const char *name,
			  const char *group, const char *source, int kind)
{
	CHECK(i < c->n);
	CHECK_STR(c->c[i].name, name);
	CHECK_STR(c->c[i].group, group);
	CHECK_STR(c->c[i].source, source);
	CHECK_EQ(c->c[i].kind, kind);
}

static void case_counters(void)
{
	struct sd_counters c;
	reset();
	/* Default: context-switches,page-faults, from getrusage. */
	sd_kernel_counters_probe(NULL, &c, say);
	expect_msgs(0);
	CHECK_EQ(c.n, 3);
	check_counter(&c, 0, "context-switches.voluntary", "context-switches", "getrusage:ru_nvcsw",
		      SD_CTR_RUSAGE);
	check_counter(&c, 1, "context-switches.involuntary", "context-switches",
		      "getrusage:ru_nivcsw", SD_CTR_RUSAGE);
	check_counter(&c, 2, "page-faults", "page-faults", "getrusage:ru_minflt+ru_majflt",
		      SD_CTR_RUSAGE);
	CHECK_EQ(c.nperf, 0);
	CHECK_EQ(c.nunavail, 0);
	sd_kernel_counters_probe_release(&c);

	sd_kernel_counters_probe("none", &c, say);
	CHECK_EQ(c.n, 0);
	sd_kernel_counters_probe("", &c, say);
	CHECK_EQ(c.n, 0);
	expect_msgs(0);

	/* Order as given; a name given twice counts once. */
	sd_kernel_counters_probe("major-faults,minor-faults, page-faults,major-faults", &c, say);
	expect_msgs(0);
	CHECK_EQ(c.n, 3);
	check_counter(&c, 0, "major-faults", "major-faults", "getrusage:ru_majflt", SD_CTR_RUSAGE);
	check_counter(&c, 1, "minor-faults", "minor-faults", "getrusage:ru_minflt", SD_CTR_RUSAGE);
	check_counter(&c, 2, "page-faults", "page-faults", "getrusage:ru_minflt+ru_majflt",
		      SD_CTR_RUSAGE);

	static const char *const unknown[] = {"bogus", "context_switches", "Page-Faults"};
	for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
		nmsgs = 0;
		sd_kernel_counters_probe(fmt("page-faults,%s", unknown[i]), &c, say);
		expect_msgs(1, fmt("sonde: SONDE_COUNTERS: '%s': unknown counter (use "
				   "context-switches, cpu-migrations, page-faults, minor-faults or "
				   "major-faults; see 'sonde events')",
				   unknown[i]));
		CHECK_EQ(c.n, 1);
		check_counter(&c, 0, "page-faults", "page-faults", "getrusage:ru_minflt+ru_majflt",
			      SD_CTR_RUSAGE);
	}

	/* At most SD_MAX_COUNTERS values: context-switches is two. With 7 used,
	 * a one-value counter still fits; then the next one is refused, with a
	 * line, whatever kind it is (PAPI/native events included). The native
	 * software events need libpfm4 and perf_event for this user: where they
	 * are unavailable, they fill no slot and only the first part is run. */
	CHECK_EQ(SD_MAX_COUNTERS, 8);
	nmsgs = 0;
	sd_kernel_counters_probe("context-switches,minor-faults,major-faults,perf::PAGE-FAULTS,"
				 "perf::CONTEXT-SWITCHES,perf::TASK-CLOCK,page-faults",
				 &c, say);
	if (c.n + c.nunavail != 8) {
		for (unsigned i = 0; i < nmsgs; i++)
			fprintf(stderr, "  message %u: %s\n", i, msgs[i]);
		CHECK_EQ(c.n + c.nunavail, 8);
	}
	check_counter(&c, c.n - 1, "page-faults", "page-faults", "getrusage:ru_minflt+ru_majflt",
		      SD_CTR_RUSAGE);
	if (c.n == 8) {
		CHECK_STR(c.c[5].name, "perf::CONTEXT-SWITCHES");
		CHECK_STR(c.c[6].name, "perf::TASK-CLOCK");
		CHECK_STR(c.c[6].source, "perf_event:perf::TASK-CLOCK");
		CHECK_EQ(c.nperf, 3);
		struct sd_counter last = c.c[7];
		static const char *const more[] = {"perf::CPU-CLOCK", "cpu-migrations", "PAPI_TOT_INS"};
		for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
			nmsgs = 0;
			sd_kernel_counters_probe(
				fmt("context-switches,minor-faults,major-faults,perf::PAGE-FAULTS,"
				    "perf::CONTEXT-SWITCHES,perf::TASK-CLOCK,page-faults,%s,bogus",
				    more[i]),
				&c, say);
			CHECK_EQ(c.n, 8);
			CHECK_EQ(c.nunavail, 0);
			/* the last one counted is left as it was */
			CHECK(!memcmp(&c.c[7], &last, sizeof last));
			expect_msgs(1, fmt("sonde: SONDE_COUNTERS: '%s': too many counters (at most 8 "
					   "values)",
					   more[i]));
		}
	} else {
		printf("counters: native events unavailable here (%u of them): limit past 8 not "
		       "run\n", c.nunavail);
	}
	sd_kernel_counters_probe_release(&c);

	/* cpu-migrations: a perf_event counting kernel-side, where this user may
	 * open one; else unavailable, with the documented line. */
	nmsgs = 0;
	sd_kernel_counters_probe("cpu-migrations", &c, say);
	if (c.n == 1) {
		expect_msgs(0);
		check_counter(&c, 0, "cpu-migrations", "cpu-migrations",
			      "perf_event:cpu-migrations", SD_CTR_PERF);
		CHECK_EQ(c.nperf, 1);
		CHECK_EQ(c.c[0].exclude_kernel, 0);
		CHECK_EQ(c.nprobe_fd, 1);
		sd_kernel_counters_probe_release(&c);
		CHECK_EQ(c.nprobe_fd, 0);
	} else {
		CHECK_EQ(c.n, 0);
		CHECK_EQ(c.nunavail, 1);
		CHECK_STR(c.unavail_name[0], "cpu-migrations");
		int level = sd_kernel_paranoid();
		const char *r = c.unavail_reason[0];
		const char *head = fmt("perf_event_paranoid=%d: kernel-side events read 0 for this "
				       "user (", level);
		const char *tail = "), and no other source exists";
		CHECK(!strncmp(r, head, strlen(head)));
		CHECK(strlen(r) > strlen(head) + strlen(tail));
		CHECK_STR(r + strlen(r) - strlen(tail), tail);
		expect_msgs(1, fmt("sonde: SONDE_COUNTERS: cpu-migrations: unavailable: %s (run as "
				   "root or lower kernel.perf_event_paranoid; see 'sonde events')",
				   r));
	}
}

UNIT_MAIN({"defaults", case_defaults}, {"enable", case_enable},
	  {"sample_periods", case_sample_periods}, {"sample_several", case_sample_several},
	  {"sample_refused", case_sample_refused}, {"integers", case_integers},
	  {"words", case_words}, {"signal", case_signal}, {"argv", case_argv},
	  {"counters", case_counters})
