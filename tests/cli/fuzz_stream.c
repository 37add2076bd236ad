/*
 * fuzz_stream.c: fuzz target for the analyzer's reader entry points. One input is one
 * stream: it is read record by record and printed as JSON (what `sonde dump` does), then
 * loaded into a profile (with --where filters and the timeline's event list) and
 * rendered in every view and format (speedscope, trace, svg, html and pprof included), group-by, tree (text, folded, csv, json), regions, counters, callers and callees
 * included, with --stats thread/process/rank and counter metrics (what `sonde report`
 * does), then filtered after loading (--where function~REGEX, thread!~REGEX, process=N:
 * where.c) and rendered again, with output to /dev/null. Symbolization is on, so module
 * paths from the input reach the symbolizer too. `sonde diff` is not a library function
 * (cmd_diff.c reads files by path), so it is not fuzzed here.
 *
 * Built with clang -fsanitize=fuzzer it is a libFuzzer target. Otherwise (SD_FUZZ_DRIVER)
 * main() runs it over each file given and over 2000 mutated copies of them (bit flips,
 * byte stores, truncation, splices, duplicated ranges; a fixed seed, or $SD_FUZZ_SEED),
 * and prints "fuzz_stream: N files, M mutations, 0 crashes" when nothing crashed.
 */
#include "analyze/analyze.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	struct sd_stream s;
	struct sd_record rec;
	struct sd_profile p;
	size_t off;

	if (!null && !(null = fopen("/dev/null", "w")))
		abort();
	sd_stream_init_mem(&s, "fuzz", data, size);
	if (sd_stream_header(&s, &rec) == 0) {
		do
			sd_json_obj(null, &s.up.data);
		while (sd_stream_next(&s, &rec) == 1);
	}
	sd_stream_close(&s);

	/* the timeline formats' event list is kept too (timeline.c), as --format trace does */
	if (sd_profile_init(&p, 0) == 0 && sd_timeline_attach(&p, 0) == 0 &&
	    sd_profile_where(&p, "phase!=x") == 0 && sd_profile_where(&p, "!nosuch") == 0) {
		sd_stream_init_mem(&s, "fuzz", data, size);
		if (sd_profile_add(&p, &s, &off) >= 0) {
			static char *keys[] = { "phase", "function", "thread", "process", "module",
						"source", "iteration" };
			static const struct sd_report_opts opts[] = {
				{ .format = SD_FMT_TEXT }, { .format = SD_FMT_CSV, .weight = 1, .top = 3 },
				{ .format = SD_FMT_JSON }, { .format = SD_FMT_FOLDED, .weight = 1 },
				{ .format = SD_FMT_TEXT, .view = SD_VIEW_THREADS },
				{ .format = SD_FMT_JSON, .view = SD_VIEW_THREADS },
				{ .format = SD_FMT_CSV, .view = SD_VIEW_SOURCES },
				{ .format = SD_FMT_TEXT, .view = SD_VIEW_GROUP, .group_by = keys,
				  .ngroup = 7 },
				{ .format = SD_FMT_JSON, .view = SD_VIEW_GROUP, .group_by = keys,
				  .ngroup = 2, .weight = 1 },
				{ .format = SD_FMT_TEXT, .view = SD_VIEW_TREE },
				{ .format = SD_FMT_FOLDED, .view = SD_VIEW_TREE, .weight = 1 },
				{ .format = SD_FMT_TEXT, .view = SD_VIEW_REGIONS, .by_thread = 1 },
				{ .format = SD_FMT_JSON, .view = SD_VIEW_REGIONS },
				{ .format = SD_FMT_CSV, .view = SD_VIEW_TREE, .min_percent = 0.5 },
				{ .format = SD_FMT_JSON, .view = SD_VIEW_TREE, .weight = 1 },
				{ .format = SD_FMT_TEXT, .stats = SD_STATS_THREAD, .min_percent = 1,
				  .min_percent_given = 1 },
				{ .format = SD_FMT_CSV, .stats = SD_STATS_PROCESS, .weight = 1 },
				{ .format = SD_FMT_JSON, .stats = SD_STATS_RANK, .top = 2 },
				{ .format = SD_FMT_TEXT, .view = SD_VIEW_GROUP, .group_by = keys,
				  .ngroup = 3, .stats = SD_STATS_RANK },
				{ .format = SD_FMT_CSV, .view = SD_VIEW_GROUP, .group_by = keys + 2,
				  .ngroup = 2, .stats = SD_STATS_THREAD },
				{ .format = SD_FMT_JSON, .view = SD_VIEW_GROUP, .group_by = keys,
				  .ngroup = 1, .stats = SD_STATS_PROCESS },
				{ .format = SD_FMT_TEXT, .view = SD_VIEW_COVERAGE },
				{ .format = SD_FMT_CSV, .view = SD_VIEW_COVERAGE },
				{ .format = SD_FMT_JSON, .view = SD_VIEW_COVERAGE },
				{ .format = SD_FMT_TEXT, .view = SD_VIEW_STREAMS },
				{ .format = SD_FMT_TEXT, .view = SD_VIEW_PROCESSES },
				{ .format = SD_FMT_CSV, .view = SD_VIEW_PROCESSES, .top = 1 },
				{ .format = SD_FMT_JSON, .view = SD_VIEW_PROCESSES },
				{ .format = SD_FMT_TRACE }, { .format = SD_FMT_SPEEDSCOPE },
				{ .format = SD_FMT_SPEEDSCOPE, .weight = 1 },
				{ .format = SD_FMT_SPEEDSCOPE, .view = SD_VIEW_GROUP, .group_by = keys,
				  .ngroup = 3 },
				{ .format = SD_FMT_SVG }, { .format = SD_FMT_SVG, .top = 2, .weight = 1 },
				{ .format = SD_FMT_SVG, .view = SD_VIEW_TREE, .color_by = "phase" },
				{ .format = SD_FMT_SVG, .color_by = "iteration" },
				{ .format = SD_FMT_HTML }, { .format = SD_FMT_HTML, .top = 1 },
			};
			for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
				if (sd_output(null, &p, &opts[i]))
					abort();
			/* pprof (no line on stdout: sd_out_pprof itself) */
			if (sd_out_pprof("/dev/null", &p) == -ENOMEM)
				abort();
			/* callers and callees of names the seeds have (and of none: said, a usage error) */
			static const char *const funcs[] = { "mk_main", "mk_beta", "mk_recurse",
							     "mk_alpha [mkstream]", "[no stack]", "" };
			for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
				struct sd_report_opts o = { .format = (enum sd_format)(i % 3 ? i % 3 + 1 : 0),
							    .view = i % 2 ? SD_VIEW_CALLEES : SD_VIEW_CALLERS,
							    .func = funcs[i], .weight = i == 3, .top = i };
				int r = sd_output(null, &p, &o);
				o.view = o.view == SD_VIEW_CALLERS ? SD_VIEW_CALLEES : SD_VIEW_CALLERS;
				if ((r && r != SD_SAID(SD_EXIT_USAGE)) ||
				    ((r = sd_output(null, &p, &o)) && r != SD_SAID(SD_EXIT_USAGE)))
					abort();
			}
			/* counter metrics (a group and a name), the counters view, weight units */
			static const char *const metrics[] = { "context-switches", "page-faults", NULL };
			for (size_t m = 0; m < 3; m++) {
				struct sd_report_opts o = { .format = SD_FMT_TEXT, .counter = metrics[m],
							    .weight = m == 2 };
				int r = sd_metric_resolve(&p, &o);
				if (r == -ENOMEM)
					abort();
				for (int v = 0; r == 0 && v < 5; v++) {
					o.view = v == 0 ? SD_VIEW_FLAT : v == 1 ? SD_VIEW_GROUP : v == 2
						 ? SD_VIEW_TREE : v == 3 ? SD_VIEW_REGIONS : SD_VIEW_COUNTERS;
					o.group_by = keys;
					o.ngroup = 2;
					o.format = v == 2 ? SD_FMT_FOLDED : v == 1 ? SD_FMT_JSON : SD_FMT_TEXT;
					if (sd_output(null, &p, &o))
						abort();
					o.format = SD_FMT_SPEEDSCOPE; /* the counter's deltas per sample */
					if (v == 0 && sd_output(null, &p, &o))
						abort();
				}
				sd_metric_fini(&o);
			}
			/* filters after loading (where.c), then the views over what they keep */
			static const char *const wheres[] = { "function~^mk_(alpha|beta)",
							      "thread!~^w", "process!=1", "module~.",
							      "function!~(", NULL };
			struct sd_filters f = { 0 };
			char why[300];
			for (size_t i = 0; wheres[i]; i++)
				if (sd_filters_add(&f, wheres[i], why, sizeof(why)) == -ENOMEM)
					abort();
			if (sd_filters_apply(&p, &f))
				abort();
			sd_filters_fini(&f);
			static const struct sd_report_opts after[] = {
				{ .format = SD_FMT_CSV, .stats = SD_STATS_THREAD },
				{ .format = SD_FMT_JSON, .view = SD_VIEW_TREE, .min_percent = 0.5 },
				{ .format = SD_FMT_TEXT, .view = SD_VIEW_CALLERS, .func = "mk_beta" },
				{ .format = SD_FMT_TEXT, .view = SD_VIEW_GROUP, .group_by = keys,
				  .ngroup = 7, .stats = SD_STATS_RANK },
				{ .format = SD_FMT_TEXT, .view = SD_VIEW_REGIONS },
				{ .format = SD_FMT_TRACE }, /* samples on the rows kept, renumbered */
				{ .format = SD_FMT_SPEEDSCOPE, .view = SD_VIEW_GROUP, .group_by = keys,
				  .ngroup = 2 },
			};
			for (size_t i = 0; i < sizeof(after) / sizeof(after[0]); i++) {
				int r = sd_output(null, &p, &after[i]);
				if (r && !(r == SD_SAID(SD_EXIT_USAGE) && after[i].view == SD_VIEW_CALLERS))
					abort();
			}
		}
		sd_stream_close(&s);
	}
	sd_profile_fini(&p);
	return 0;
}

#ifdef SD_FUZZ_DRIVER
#include <stdio.h>

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n)
		*len = (size_t)n;
	else {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* A mutated copy of in[0..len) into a fresh buffer (*olen bytes). */
static uint8_t *mutate(const uint8_t *in, size_t len, size_t *olen)
{
	size_t cap = len * 2 + 64, n = len;
	uint8_t *b = malloc(cap);

	memcpy(b, in, len);
	for (int k = 1 + (int)(rnd() % 4); k > 0 && n; k--) {
		size_t at = rnd() % n;
		switch (rnd() % 6) {
		case 0: b[at] ^= (uint8_t)(1u << (rnd() % 8)); break;          /* bit flip */
		case 1: b[at] = (uint8_t[]){ 0, 0xff, 0x7f, 0x80, 0xc1, 0xdd, 0xdf, 0x90 }[rnd() % 8];
			break;                                                 /* interesting byte */
		case 2: n = at; break;                                        /* truncate */
		case 3: b[at] = (uint8_t)rnd(); break;                        /* random byte */
		case 4: {                                                     /* duplicate a range */
			size_t l = rnd() % (n - at < 64 ? n - at : 64);
			if (n + l <= cap) {
				memmove(b + at + l, b + at, n - at);
				n += l;
			}
			break;
		}
		default: {                                                    /* delete a range */
			size_t l = rnd() % (n - at < 32 ? n - at : 32) + 1;
			memmove(b + at, b + at + l, n - at - l);
			n -= l;
		}
		}
	}
	*olen = n;
	return b;
}

int main(int argc, char **argv)
{
	const char *seed = getenv("SD_FUZZ_SEED");
	uint8_t *in[64];
	size_t len[64];
	int nin = 0, runs = 2000;

	rng_state = seed ? strtoull(seed, NULL, 0) | 1 : 0x9e3779b97f4a7c15ULL;
	for (int i = 1; i < argc && nin < 64; i++) {
		if (!(in[nin] = load(argv[i], &len[nin]))) {
			fprintf(stderr, "fuzz_stream: %s: cannot read\n", argv[i]);
			return 1;
		}
		LLVMFuzzerTestOneInput(in[nin], len[nin]);
		nin++;
	}
	for (int i = 0; nin && i < runs; i++) {
		int k = (int)(rnd() % (uint64_t)nin);
		size_t n;
		uint8_t *m = mutate(in[k], len[k], &n);
		LLVMFuzzerTestOneInput(m, n);
		free(m);
	}
	fprintf(stderr, "fuzz_stream: %d files, %d mutations, 0 crashes\n", nin, nin ? runs : 0);
	for (int i = 0; i < nin; i++)
		free(in[i]);
	return 0;
}
#endif
