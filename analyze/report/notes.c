/*
 * notes.c: what every view of `sonde report` states before its rows (sd_notes,
 * docs/REPORT.md "Notes"): incomplete streams, streams ended by a signal, dropped samples
 * and region events, sources of different periods counted together, throttled sources,
 * the source picked among several. The dispatcher (output.c), the flat view and the file
 * formats (html, speedscope, trace) call it; it calls no view. Runs in the CLI's only
 * thread.
 */
#define _GNU_SOURCE /* sigabbrev_np, open_memstream */
#include "analyze/report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t sd_incomplete(const struct sd_profile *p)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nsinfo; i++)
		n += !p->sinfo[i].end;
	return n;
}

/* The drops of one kind (regions: reasons "region_*"), of `asked` (recorded + dropped). */
static void drops_line(FILE *out, const struct sd_profile *p, int regions, uint64_t dropped,
		       uint64_t asked)
{
	int ring = 0, first = 1;

	fprintf(out, "sonde: warning: %" PRIu64 " of %" PRIu64 " %s dropped (%.2f%%:", dropped,
		asked, regions ? "region events" : "samples", sd_pct((double)dropped, (double)asked));
	for (size_t i = 0; i < p->ndrop; i++) {
		const char *r = p->drop_names[i];
		if (!p->drop_counts[i] || !strncmp(r, SD_DROP_REGION_PREFIX, sizeof SD_DROP_REGION_PREFIX - 1) != (regions != 0))
			continue;
		fprintf(out, "%s %s %" PRIu64, first ? "" : ",", r, p->drop_counts[i]);
		first = 0;
		ring |= !strcmp(r, regions ? "region_ring_full" : "ring_full");
	}
	if (regions)
		fputs("; the regions view misses them", out);
	if (ring)
		fputs(regions ? "; region_ring_full: raise SONDE_BUFFER_KB" : "; ring_full: raise SONDE_BUFFER_KB", out);
	fputs(")\n", out);
}

/* Does the view count samples as equals (the default metric, in a view whose numbers
 * are sample counts)? */
static int counts_samples(const struct sd_report_opts *o)
{
	if (!o || o->weight || o->counter || o->format == SD_FMT_TRACE) /* trace: time */
		return 0;
	switch (o->view) {
	case SD_VIEW_FLAT: case SD_VIEW_TREE: case SD_VIEW_GROUP: case SD_VIEW_CALLERS:
	case SD_VIEW_CALLEES: case SD_VIEW_THREADS:
		return 1;
	default:
		return 0;
	}
}

/* A count that adds samples of sources with different periods adds unlike things (a
 * cpu-time sample at 1 ms stands for a tenth of a wall-time sample at 10 ms): said once,
 * with the sources, and what to count instead. */
static void mixed_periods_line(FILE *out, const struct sd_profile *p)
{
	const struct sd_source_row *first = NULL;
	int mixed = 0, units = 0;
	for (size_t i = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		if (!s->samples)
			continue;
		if (!first)
			first = s;
		else if (s->period != first->period || strcmp(s->unit, first->unit))
			mixed = 1, units |= strcmp(s->unit, first->unit) != 0;
	}
	if (!mixed)
		return;
	fputs("sonde: warning: samples of sources with different periods are counted alike (", out);
	int sep = 0;
	for (size_t i = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		if (!s->samples)
			continue;
		fputs(sep ? ", " : "", out);
		sd_text_put(out, s->spec);
		sep = 1;
	}
	fprintf(out, ") (%s)\n",
		units ? "count one source with --source NAME" :
			"use --metric time to weigh each by its period, or --source NAME");
}

/* Samples whose stack was cut at max_depth (their paths under [truncated]): how many,
 * where, and the knob (unless it is at its maximum already). */
static void truncated_line(FILE *out, const struct sd_profile *p)
{
	fprintf(out, "sonde: warning: %" PRIu64 " of %" PRIu64 " samples truncated",
		p->trunc_samples, p->samples);
	if (p->trunc_depth_lo && p->trunc_depth_lo != p->trunc_depth_hi)
		fprintf(out, " at %" PRIu64 "-%" PRIu64 " frames", p->trunc_depth_lo,
			p->trunc_depth_hi);
	else if (p->trunc_depth_lo)
		fprintf(out, " at %" PRIu64 " frames", p->trunc_depth_lo);
	fprintf(out, " (%.2f%%: their outermost frames are missing, under [truncated]; ",
		sd_pct((double)p->trunc_samples, (double)p->samples));
	if (p->trunc_depth_lo >= SD_MAX_DEPTH_MAX)
		fprintf(out, "SONDE_MAX_DEPTH is at its maximum, %u)\n", SD_MAX_DEPTH_MAX);
	else
		fprintf(out, "raise SONDE_MAX_DEPTH, up to %u)\n", SD_MAX_DEPTH_MAX);
}

/* The source a sample view shows when the streams hold several (sd_cli_resolve):
 * which, of what, and how to choose another. */
static void picked_source_line(FILE *out, const struct sd_profile *p)
{
	const char *other = NULL;
	size_t n = 0;
	if (!p->picked_source)
		return;
	fprintf(out, "sonde: note: showing source %s only: the streams hold several sources (",
		p->picked_source);
	for (size_t i = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		int dup = 0;
		for (size_t j = 0; j < i; j++)
			dup |= !strcmp(p->sources[j].name, s->name);
		if (dup)
			continue;
		fprintf(out, "%s%s", n++ ? ", " : "", s->name);
		if (!other && strcmp(s->name, p->picked_source))
			other = s->name;
	}
	fprintf(out, "), whose clocks are never added (show another with --source %s)\n",
		other ? other : p->picked_source);
}

/* Sources whose period the sampler raised (docs/ENV.md, "Throttling"): their samples
 * stand for several periods each, and every view counts them by their weight. */
static void throttled_lines(FILE *out, const struct sd_profile *p)
{
	for (size_t i = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		if (!s->throttled_threads)
			continue;
		fprintf(out, "sonde: note: %s was throttled: its period was raised on %" PRIu64
			" of %" PRIu64 " threads, up to %" PRIu64 " times (each sample counts the "
			"periods it stands for, its weight; --metric samples counts samples)\n",
			s->spec, s->throttled_threads, s->sampled_threads, s->max_multiple);
	}
}

/* Every note, one line each, on out. */
static void notes_lines(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	for (size_t i = 0; i < p->nsinfo; i++) {
		const struct sd_stream_info *si = &p->sinfo[i];
		if (!si->end) {
			fprintf(out, "sonde: %s: incomplete stream: no END record (the process ended "
				"without an exit sonde saw, such as SIGKILL or a raw exit_group system "
				"call, or is still running; samples after its last flush are lost)\n",
				si->file);
		} else if (!strcmp(si->end, "signal")) {
			const char *abbrev = si->signal && si->signal < 128 ?
					     sigabbrev_np((int)si->signal) : NULL;
			fprintf(out, "sonde: %s: process %" PRIu64 " was killed by ", si->file, si->pid);
			if (!si->signal)
				fputs("a signal", out);
			else if (abbrev)
				fprintf(out, "signal %" PRIu64 " (SIG%s)", si->signal, abbrev);
			else
				fprintf(out, "signal %" PRIu64, si->signal);
			fputs(" (the profile covers its run up to the signal)\n", out);
		}
	}
	/* samples: shown above 1 % of those asked for; region events: any */
	uint64_t asked = p->samples_read + p->dropped;
	if (p->dropped && p->dropped * 100 > asked)
		drops_line(out, p, 0, p->dropped, asked);
	if (p->dropped_regions)
		drops_line(out, p, 1, p->dropped_regions, p->region_records + p->dropped_regions);
	if (p->trunc_samples)
		truncated_line(out, p);
	picked_source_line(out, p);
	throttled_lines(out, p);
	if (counts_samples(o))
		mixed_periods_line(out, p);
}

void sd_say_lines(const char *text)
{
	for (const char *q = text, *nl; q && (nl = strchr(q, '\n')); q = nl + 1)
		sd_msg("%.*s", (int)(nl - q), q);
}

/* json: the notes (buf, lines) as `"warnings":[...]` and the keys around it, on out. */
static void notes_json(FILE *out, const struct sd_profile *p, const char *buf)
{
	fprintf(out, "\"incomplete_streams\":%zu,\"warnings\":[", sd_incomplete(p));
	for (const char *q = buf, *nl; q && *q; q = nl + 1) {
		nl = strchr(q, '\n');
		if (!nl)
			break;
		if (q != buf)
			putc(',', out);
		sd_json_str(out, q, (size_t)(nl - q));
	}
	fputs("],\"throttled\":[", out);
	for (size_t i = 0, n = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		if (!s->throttled_threads)
			continue;
		fputs(n++ ? ",{\"source\":" : "{\"source\":", out);
		sd_json_str(out, s->spec, strlen(s->spec));
		fprintf(out, ",\"threads\":%" PRIu64 ",\"of_threads\":%" PRIu64
			",\"max_multiple\":%" PRIu64 "}", s->throttled_threads, s->sampled_threads,
			s->max_multiple);
	}
	fputs("],", out);
	if (p->picked_source) {
		fputs("\"source_shown\":", out);
		sd_json_str(out, p->picked_source, strlen(p->picked_source));
		putc(',', out);
	}
}

void sd_notes(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	if (o->format == SD_FMT_TEXT) {
		notes_lines(out, p, o);
		return;
	}
	/* the lines made once: said through the log sink, and in json kept in the object */
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (m) {
		notes_lines(m, p, o);
		fclose(m);
	}
	sd_say_lines(buf);
	if (o->format == SD_FMT_JSON)
		notes_json(out, p, buf);
	free(buf);
}
