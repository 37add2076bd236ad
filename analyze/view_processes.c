/*
 * view_processes.c: `sonde report --view processes`, one row per process image: every
 * stream of the report is one (a process that exec'd writes one stream per image under
 * the same pid, and each is its own row, ended by `exec`). Called by sd_output (output.c)
 * after loading, in the CLI's only thread; text, csv and json (docs/REPORT.md,
 * "Processes view").
 *
 * Columns come from the stream's HEADER (pid, ppid, argv, exe, clock), its threads' CPU
 * time as the coverage account reads it (THREAD_END cpu, else the last THREAD_CPU: a
 * killed process's CPU up to its last flush), the samples of the rows kept after the
 * filters, and its END. Rows are sorted by CPU time (descending; unknown last), then
 * samples, then start; --top N keeps the first N.
 */
#include "analyze/analyze.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Widest command shown in text (bytes); csv and json give all of it. */
#define CMD_WIDTH 60

struct prow { size_t i; uint64_t samples; double cpu; };

static int prow_cmp(const void *a, const void *b)
{
	const struct prow *x = a, *y = b;

	if (x->cpu != y->cpu)
		return x->cpu > y->cpu ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* The rows kept, in order: sorted, then --top. rows[] has one per stream (at least 1). */
static struct prow *sorted_rows(const struct sd_profile *p, const struct sd_report_opts *o,
				size_t *n)
{
	struct prow *rows = calloc(p->nsinfo ? p->nsinfo : 1, sizeof(*rows));

	if (!rows)
		return NULL;
	for (size_t i = 0; i < p->nsinfo; i++) {
		rows[i].i = i;
		rows[i].cpu = p->sinfo[i].cpu_threads ? p->sinfo[i].cpu_ns : -1;
	}
	for (size_t k = 0; k < p->nrows; k++)
		if (p->rows[k].stream < p->nsinfo)
			rows[p->rows[k].stream].samples += p->rows[k].samples;
	if (p->nsinfo > 1)
		qsort(rows, p->nsinfo, sizeof(*rows), prow_cmp);
	*n = o->top && o->top < p->nsinfo ? o->top : p->nsinfo;
	return rows;
}

/* Text: one space between fixed-width columns as printf wrote them (a wider cell shifts
 * its row), two around the end; csv and json have more columns, and all of the command. */
enum { TXT = SD_IN_TEXT, DATA = SD_IN_CSV | SD_IN_JSON };
#define FIXED(n, w) .name = n, .width = w, .fixed = 1, .gap = " "
static const struct sd_col cols[] = {
	{ .name = "process", .left = 1 }, { FIXED("pid", 8) }, { FIXED("ppid", 8) },
	{ .name = "name", .in = DATA }, { FIXED("cpu_ms", 11) }, { .name = "cpu_threads", .in = DATA },
	{ .name = "cpu_from_flush", .in = SD_IN_JSON }, { FIXED("samples", 8) },
	{ FIXED("threads", 7) }, { FIXED("start_ms", 10) }, { FIXED("wall_ms", 10) },
	{ .name = "end", .left = 1, .width = 10, .fixed = 1 }, { .name = "signal", .in = DATA },
	{ .name = "exe", .in = DATA }, { .name = "command", .left = 1 },
	{ .name = "file", .in = DATA },
};

static void row_cells(struct sd_table *t, const struct sd_stream_info *si, uint64_t samples,
		      uint64_t t0)
{
	const char *end = si->end ? si->end : "incomplete";

	sd_table_str(t, si->label);
	sd_table_u64(t, si->pid);
	si->has_ppid ? sd_table_u64(t, si->ppid) : sd_table_null(t);
	sd_table_str(t, si->name);
	si->cpu_threads ? sd_table_num(t, "%.3f", si->cpu_ns / 1e6) : sd_table_null(t);
	sd_table_u64(t, si->cpu_threads);
	sd_table_u64(t, si->cpu_flush);
	sd_table_u64(t, samples);
	sd_table_u64(t, si->threads);
	si->has_clock ? sd_table_ms(t, si->origin_ns - t0) : sd_table_null(t);
	sd_table_ms(t, si->last_ns);
	sd_table_str(t, end);
	if (si->end && !strcmp(si->end, "signal") && si->signal)
		sd_table_text(t, 10, "signal %" PRIu64, si->signal);
	else
		sd_table_text(t, 10, "%s", end);
	si->signal ? sd_table_u64(t, si->signal) : sd_table_null(t);
	si->exe ? sd_table_str(t, si->exe) : sd_table_null(t);
	si->command ? sd_table_str(t, si->command) : sd_table_null(t);
	sd_table_text(t, CMD_WIDTH, "%s", si->command ? si->command : "(no argv)");
	sd_table_str(t, si->file);
}

int sd_out_processes(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	struct sd_table *t = sd_table_new(o, cols, sizeof(cols) / sizeof(*cols));
	size_t n = 0, partial = 0;
	struct prow *rows = t ? sorted_rows(p, o, &n) : NULL;
	uint64_t t0 = UINT64_MAX;
	int err = -ENOMEM;

	if (!rows)
		goto out;
	for (size_t i = 0; i < p->nsinfo; i++)
		if (p->sinfo[i].has_clock && p->sinfo[i].origin_ns < t0)
			t0 = p->sinfo[i].origin_ns;
	for (size_t k = 0; k < n; k++) {
		const struct sd_stream_info *si = &p->sinfo[rows[k].i];
		partial += si->cpu_threads && (si->cpu_threads < si->threads || si->cpu_flush);
		row_cells(t, si, rows[k].samples, t0);
	}
	err = sd_table_print_view(out, t, "processes", 0);
	if (o->format == SD_FMT_TEXT && partial && !err)
		fprintf(out, "cpu_ms of %zu process%s is partial: a thread's CPU time is unknown, or "
			"known up to the last flush only (killed or still running; see --view "
			"coverage); '-': no CPU time recorded\n", partial, partial == 1 ? "" : "es");
out:
	free(rows);
	sd_table_free(t);
	return err;
}
