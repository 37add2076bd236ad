/*
 * timeline.h: the opt-in event list of the timeline formats (`--format speedscope`,
 * `--format trace`), shared by the file that fills it (timeline.c, an observer of the
 * profile that decode.c, merge.c and where.c call through struct sd_observer_ops) and the
 * exporters that read it (export_speedscope.c, export_trace.c, export_html.c).
 *
 * The profile aggregates samples into rows without time order (profile.c); a timeline
 * needs each sample at its time. So when a timeline is attached (only for these formats),
 * decode.c also records every counted SAMPLE as (time, aggregate key, weight, counter
 * deltas) and every REGION event, in the stream's own ids; merge.c hands them to
 * the timeline, which maps them to the merged rows (struct sd_crow: call node, source,
 * contexts, thread, stream), pairs region begins and ends into slices and keeps each
 * thread's start and end. Every other report attaches none and pays one
 * predictable branch per sample.
 */
#ifndef SONDE_TIMELINE_H
#define SONDE_TIMELINE_H

#include "analyze/analyze.h"

/* One counted sample (or, with `end`, a thread's THREAD_END deltas: no sample). */
struct sd_tl_sample {
	uint64_t t;                 /* ns after its stream's origin (the thread's clock) */
	uint32_t row;               /* index into p->rows (kept current by sd_filters_apply) */
	uint32_t thread;            /* index into p->threads */
	double weight;              /* weight x period, in its source's unit */
	size_t cnt;                 /* offset of its deltas in tl->counts, SIZE_MAX: none */
	uint32_t ncnt;              /* deltas there (merged counter ids 0..ncnt-1) */
	int end;                    /* THREAD_END deltas: the row's counts, t = thread end */
};

/* One region call: begin and end (ns after its stream's origin) on one thread. */
struct sd_tl_region {
	uint64_t begin, end;
	uint32_t thread, ctx;       /* p->threads index; merged context node (the region) */
	uint32_t depth;             /* open regions of its thread around it */
	int forced;                 /* ended by a misnested end or by the stream's end */
};

/* A thread's lifetime as its records say (ns after its stream's origin). */
struct sd_tl_thread { uint64_t t0, t_end; uint32_t stream; int known; };

struct sd_timeline {
	struct sd_tl_sample *samples; size_t nsamples, capsamples; /* in record order per stream */
	uint64_t *counts; size_t ncounts, capcounts;
	struct sd_tl_region *regions; size_t nregions, capregions;
	struct sd_tl_thread *threads; size_t nthreads, capthreads; /* by p->threads index */
	uint32_t *func_file; size_t nfunc_file, capfunc_file; /* func id -> sd_sym_file id */
};

/* The run's start: the earliest HEADER clock of the streams (0 without any). */
uint64_t sd_tl_run_start(const struct sd_profile *p);
/* ns after the run's start of time t of stream `stream` (a stream without a clock is
 * taken to start with the run). */
uint64_t sd_tl_time(const struct sd_profile *p, uint64_t run0, uint32_t stream, uint64_t t);
/* Sample indices sorted by (key[i], run time, record order): key NULL sorts by thread.
 * *out is malloc'ed (caller frees); 0 or -ENOMEM. */
int sd_tl_order(const struct sd_profile *p, const uint32_t *key, size_t **out);
/* The functions of call node `cnode`, outermost first, into *path (grown as needed,
 * caller frees): their number, or -ENOMEM. */
long sd_tl_path(const struct sd_profile *p, uint32_t cnode, uint32_t **path, size_t *cap);
/* The metric of one sample as the report counts it (samples: 1; weight: weight x
 * period; a counter: the sum of its deltas). */
double sd_tl_value(const struct sd_profile *p, const struct sd_report_opts *o,
		   const struct sd_tl_sample *s);
/* ts as JSON µs with 3 decimals from ns. */
void sd_tl_put_us(FILE *out, uint64_t ns);

/* export_speedscope.c, export_trace.c: write the file to out. 0 or -ENOMEM. */
int sd_tl_speedscope(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);
int sd_tl_trace(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o);

#endif
