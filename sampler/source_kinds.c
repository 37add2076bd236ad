/* source_kinds.c - what each kind of sampling source is: its name in
 * SONDE_SAMPLE, its spec, unit, default period and what its samples stand
 * for, and the parse of its spec. One row per kind (enum sd_source_kind).
 *
 * Compiled into libsonde (config.c parses SONDE_SAMPLE with it, in the
 * constructor) and into the CLI (`sonde run` checks -e with the runtime's own
 * parser; `sonde events` lists these rows): it holds no runtime code, only
 * data and parsing, ordinary context. How the runtime runs each kind is its
 * row in source_table.c. Every refusal is one `sonde: SONDE_SAMPLE:` line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sampler/sampler.h"

#define PERIOD_FORMS "a period like 1ms, 250us, 100000ns, 1s or 1000hz, from 10us to 60s"

const char sd_source_period_forms[] = PERIOD_FORMS;

static int is_cpu_time(const char *name)
{
	return !strcmp(name, "cpu-time");
}

static int is_wall_time(const char *name)
{
	return !strcmp(name, "wall-time");
}

/* A PAPI preset (PAPI_*) or a native event (pmu::NAME). */
static int is_papi_event(const char *name)
{
	return !strncmp(name, "PAPI_", 5) || strstr(name, "::");
}

/* NAME@COUNT: a PAPI event (preset or native) and its overflow threshold. */
static int parse_papi(const char *tok, const char *name, const char *at, struct sd_source *src)
{
	char *end;
	errno = 0;
	unsigned long long n = at ? strtoull(at + 1, &end, 10) : 0;
	/* strtoull takes "-N" (after blanks, too) as 2^64 - N: any '-' is refused. */
	if (!at || errno || end == at + 1 || *end || strchr(at + 1, '-') || n < 1000 ||
	    n > 2147483647ull) {
		sd_msg("sonde: SONDE_SAMPLE: '%s': a PAPI event needs a count from 1000 to 2147483647 "
		       "(e.g. perf::TASK-CLOCK@1000000)", tok);
		return -EINVAL;
	}
	src->kind = SD_SRC_PAPI;
	src->period_ns = n;
	snprintf(src->event, sizeof src->event, "%s", name);
	snprintf(src->spec, sizeof src->spec, "%s", tok);
	return 0;
}

/* NAME[@PERIOD]: a clock of src->kind, the kind whose row matched (its
 * default period without @). */
static int parse_clock(const char *tok, const char *name, const char *at, struct sd_source *src)
{
	(void)name;
	src->period_ns = sd_source_kinds[src->kind].default_period;
	if (at) {
		int err = sd_config_parse_period(at + 1, &src->period_ns);
		if (err) {
			sd_msg("sonde: SONDE_SAMPLE: '%s': %s period (use %s)", tok,
			       err == -ERANGE ? "out-of-range" : "unparseable", PERIOD_FORMS);
			return err;
		}
	}
	snprintf(src->spec, sizeof src->spec, "%s", tok);
	return 0;
}

const struct sd_source_kind_desc sd_source_kinds[SD_SRC_NKINDS] = {
	[SD_SRC_CPU] = {
		.name = "cpu-time", .syntax = "cpu-time@PERIOD", .unit = "ns",
		.default_period = 1000000, .default_spec = "cpu-time@1ms",
		.summary = "each thread's CPU time, on its own clock",
		.match = is_cpu_time, .parse = parse_clock,
	},
	[SD_SRC_WALL] = {
		.name = "wall-time", .syntax = "wall-time@PERIOD", .unit = "ns",
		.default_period = 10000000, .default_spec = "wall-time@10ms",
		.summary = "each thread's elapsed time, its blocked time included",
		.match = is_wall_time, .parse = parse_clock,
	},
	[SD_SRC_PAPI] = {
		.name = NULL, .syntax = "NAME@COUNT", .unit = "events",
		.default_period = 0, .default_spec = NULL,
		.summary = "a PAPI event (presets, native events: below), every COUNT events, "
			   "1000 to 2147483647",
		.by_event = 1, .match = is_papi_event, .parse = parse_papi,
	},
};

int sd_source_parse(const char *tok, struct sd_source *src)
{
	char name[48];
	const char *at = strrchr(tok, '@');
	size_t n = at ? (size_t)(at - tok) : strlen(tok);
	memset(src, 0, sizeof *src);
	if (n < sizeof name) {
		memcpy(name, tok, n);
		name[n] = 0;
		for (unsigned k = 0; k < SD_SRC_NKINDS; k++)
			if (sd_source_kinds[k].match(name)) {
				src->kind = (enum sd_source_kind)k;
				return sd_source_kinds[k].parse(tok, name, at, src);
			}
	}
	sd_msg("sonde: SONDE_SAMPLE: '%s': unknown sampling source (use cpu-time@PERIOD, "
	       "wall-time@PERIOD or a PAPI event NAME@COUNT; see 'sonde events')", tok);
	return -EINVAL;
}

void sd_source_set_default(struct sd_source *src)
{
	memset(src, 0, sizeof *src);
	src->kind = SD_SRC_CPU;
	src->period_ns = sd_source_kinds[SD_SRC_CPU].default_period;
	snprintf(src->spec, sizeof src->spec, "%s", sd_source_kinds[SD_SRC_CPU].default_spec);
}

void sd_source_drop(struct sd_config *cfg, unsigned i)
{
	memmove(&cfg->sources[i], &cfg->sources[i + 1],
		(cfg->nsources - i - 1) * sizeof cfg->sources[0]);
	if (--cfg->nsources == 0) {
		sd_msg("sonde: SONDE_SAMPLE: no valid source left (sampling with cpu-time@1ms)");
		sd_source_set_default(&cfg->sources[cfg->nsources++]);
	}
}
