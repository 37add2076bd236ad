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
 *
 * A child process that a stream's CHILD records name but that left no stream of its
 * own (killed before its first flush, a program that is not profiled, output moved by
 * chroot) is a row too, from what its parent recorded: pid, ppid, start, how the program
 * saw it end, and why it may have no stream.
 */
#include "analyze/views/views.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Widest command shown in text (bytes); csv and json give all of it. */
#define CMD_WIDTH 60

/* A row: stream i, or (i >= nsinfo) child i - nsinfo without a stream. */
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
	size_t all = p->nsinfo;
	struct prow *rows = calloc(p->nsinfo + p->nchild + 1, sizeof(*rows));

	if (!rows)
		return NULL;
	for (size_t i = 0; i < p->nsinfo; i++) {
		rows[i].i = i;
		rows[i].cpu = p->sinfo[i].cpu_threads ? p->sinfo[i].cpu_ns : -1;
	}
	for (size_t k = 0; k < p->nrows; k++)
		if (p->rows[k].stream < p->nsinfo)
			rows[p->rows[k].stream].samples += p->rows[k].samples;
	for (size_t c = 0; c < p->nchild; c++)
		if (!p->child[c].has_stream)
			rows[all++] = (struct prow){ .i = p->nsinfo + c, .cpu = -1 };
	if (all > 1)
		qsort(rows, all, sizeof(*rows), prow_cmp);
	*n = o->top && o->top < all ? o->top : all;
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
	{ .name = "file", .in = DATA }, { .name = "stream", .in = DATA },
	{ .name = "no_stream", .in = DATA },
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
	sd_table_num(t, "true");
	sd_table_null(t);
}

/* Why child c may have left no stream, from what its parent recorded (docs/REPORT.md,
 * "Processes view"): the short form for text's command column, the long one for csv and
 * json. */
static void child_why(const struct sd_child *c, char *buf, size_t len, int brief)
{
	if (c->how == SD_CHILD_FORK_UNPROFILED)
		snprintf(buf, len, "not profiled: SONDE_FOLLOW_FORK=0");
	else if (c->end == SD_CHILD_SIGNAL && c->value == 9)
		snprintf(buf, len, "killed by SIGKILL%s", brief ? " before its first flush" :
			 " (signal 9) before its first flush (SONDE_FLUSH_MS)");
	else if (c->end == SD_CHILD_SIGNAL)
		snprintf(buf, len, "killed by signal %" PRIu64 "%s", c->value,
			 " before its stream was written");
	else if (c->end == SD_CHILD_EXIT)
		snprintf(buf, len, "exited with status %" PRIu64 "%s", c->value, brief ? "" :
			 " without a stream: it ran a program that is not profiled, its output "
			 "moved (chroot, unshare, setns before sonde saw it) or failed (its stderr "
			 "says)");
	else if (c->how == SD_CHILD_SPAWN)
		snprintf(buf, len, "%s", brief ? "its program not profiled, or killed" :
			 "the program it ran is not profiled (LD_PRELOAD not passed on, setuid, "
			 "static), or it was killed (SIGKILL) before its first flush (SONDE_FLUSH_MS)");
	else
		snprintf(buf, len, "%s", brief ? "killed, or its output moved" :
			 "killed (SIGKILL) before its first flush (SONDE_FLUSH_MS) and not reaped "
			 "by the program, or still running, or its output moved (chroot, unshare, "
			 "setns), or it ran a program that is not profiled");
}

/* A child without a stream: what its parent recorded. Named as its parent for a fork
 * (the same program until it execs), `?` otherwise. */
static void child_cells(struct sd_table *t, const struct sd_profile *p, const struct sd_child *c,
			uint64_t t0)
{
	const struct sd_stream_info *par = &p->sinfo[c->parent];
	int forked = c->how == SD_CHILD_FORK || c->how == SD_CHILD_FORK_UNPROFILED;
	const char *name = forked && par->name ? par->name : "?";
	char why[400], label[300];

	snprintf(label, sizeof label, "%.250s[%" PRIu64 "]", name, c->pid);
	sd_table_str(t, label);
	sd_table_u64(t, c->pid);
	sd_table_u64(t, par->pid);
	sd_table_str(t, name);
	sd_table_null(t);
	sd_table_u64(t, 0);
	sd_table_u64(t, 0);
	sd_table_u64(t, 0);
	sd_table_null(t);
	c->has_start && par->has_clock && c->start_ns >= t0 ? sd_table_ms(t, c->start_ns - t0)
							     : sd_table_null(t);
	c->has_start && c->end >= 0 && c->end_ns >= c->start_ns ? sd_table_ms(t, c->end_ns - c->start_ns)
								  : sd_table_null(t);
	sd_table_str(t, "no_stream");
	sd_table_text(t, 10, "%s", "no stream");
	c->end == SD_CHILD_SIGNAL ? sd_table_u64(t, c->value) : sd_table_null(t);
	sd_table_null(t);
	sd_table_null(t);
	child_why(c, why, sizeof why, 1);
	sd_table_text(t, CMD_WIDTH, "(no stream: %s)", why);
	sd_table_null(t);
	sd_table_num(t, "false");
	child_why(c, why, sizeof why, 0);
	sd_table_str(t, why);
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
		if (rows[k].i >= p->nsinfo) {
			child_cells(t, p, &p->child[rows[k].i - p->nsinfo], t0);
			continue;
		}
		const struct sd_stream_info *si = &p->sinfo[rows[k].i];
		partial += si->cpu_threads && (si->cpu_threads < si->threads || si->cpu_flush);
		row_cells(t, si, rows[k].samples, t0);
	}
	err = sd_table_print_view(out, t, "processes", 0);
	if (o->format == SD_FMT_TEXT && partial && !err)
		fprintf(out, "cpu_ms of %zu process%s is partial: a thread's CPU time is unknown, or "
			"known up to the last flush only (killed or still running; see --view "
			"coverage); '-': no CPU time recorded\n", partial, partial == 1 ? "" : "es");
	if (o->format == SD_FMT_TEXT && !err && p->nchild) {
		size_t none = 0, killed = 0;
		for (size_t c = 0; c < p->nchild; c++) {
			none += !p->child[c].has_stream;
			killed += !p->child[c].has_stream &&
				  p->child[c].end == SD_CHILD_SIGNAL;
		}
		if (none)
			fprintf(out, "%zu of %zu children sonde saw start have no stream ('no stream' "
				"rows, from what their parent recorded; %zu killed by a signal): a "
				"child killed by SIGKILL before its first flush (SONDE_FLUSH_MS) leaves "
				"none, nor does one whose program is not profiled or whose output "
				"moved (chroot, unshare, setns)\n", none, p->nchild, killed);
	}
out:
	free(rows);
	sd_table_free(t);
	return err;
}
