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

/* s with control characters as '?', at most `max` bytes, "..." when cut (text only). */
static void put_text(FILE *out, const char *s, size_t max)
{
	size_t n = strlen(s);
	size_t show = n > max ? max - 3 : n;

	for (size_t i = 0; i < show; i++)
		putc((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i], out);
	if (show < n)
		fputs("...", out);
}

static void json_cstr(FILE *out, const char *s)
{
	if (s)
		sd_json_str(out, s, strlen(s));
	else
		fputs("null", out);
}

int sd_out_processes(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	struct prow *rows = calloc(p->nsinfo ? p->nsinfo : 1, sizeof(*rows));
	uint64_t t0 = UINT64_MAX;
	size_t lw = strlen("process"), partial = 0;

	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsinfo; i++) {
		const struct sd_stream_info *si = &p->sinfo[i];
		rows[i].i = i;
		rows[i].cpu = si->cpu_threads ? si->cpu_ns : -1;
		if (si->has_clock && si->origin_ns < t0)
			t0 = si->origin_ns;
	}
	for (size_t k = 0; k < p->nrows; k++)
		if (p->rows[k].stream < p->nsinfo)
			rows[p->rows[k].stream].samples += p->rows[k].samples;
	if (p->nsinfo > 1)
		qsort(rows, p->nsinfo, sizeof(*rows), prow_cmp);
	size_t n = o->top && o->top < p->nsinfo ? o->top : p->nsinfo;
	for (size_t k = 0; k < n; k++) {
		const struct sd_stream_info *si = &p->sinfo[rows[k].i];
		if (strlen(si->label) > lw)
			lw = strlen(si->label);
		partial += si->cpu_threads && (si->cpu_threads < si->threads || si->cpu_flush);
	}

	if (o->format == SD_FMT_TEXT)
		fprintf(out, "%-*s %8s %8s %11s %8s %7s %10s %10s  %-10s  command\n", (int)lw,
			"process", "pid", "ppid", "cpu_ms", "samples", "threads", "start_ms",
			"wall_ms", "end");
	else if (o->format == SD_FMT_CSV)
		fputs("process,pid,ppid,name,cpu_ms,cpu_threads,samples,threads,start_ms,wall_ms,"
		      "end,signal,exe,command,file\n", out);
	else
		fputs("{\"processes\":[", out);
	for (size_t k = 0; k < n; k++) {
		const struct sd_stream_info *si = &p->sinfo[rows[k].i];
		char ppid[32] = "", cpu[48] = "", start[48] = "", end[48], sig[32] = "";
		if (si->has_ppid)
			snprintf(ppid, sizeof(ppid), "%" PRIu64, si->ppid);
		if (si->cpu_threads)
			snprintf(cpu, sizeof(cpu), "%.3f", si->cpu_ns / 1e6);
		if (si->has_clock)
			snprintf(start, sizeof(start), "%.3f", (double)(si->origin_ns - t0) / 1e6);
		if (si->signal)
			snprintf(sig, sizeof(sig), "%" PRIu64, si->signal);
		if (!si->end)
			snprintf(end, sizeof(end), "incomplete");
		else if (!strcmp(si->end, "signal") && si->signal)
			snprintf(end, sizeof(end), "signal %" PRIu64, si->signal);
		else
			snprintf(end, sizeof(end), "%s", si->end);
		double wall = (double)si->last_ns / 1e6;

		if (o->format == SD_FMT_TEXT) {
			fprintf(out, "%-*s %8" PRIu64 " %8s %11s %8" PRIu64 " %7" PRIu64
				" %10s %10.3f  ", (int)lw, si->label, si->pid, ppid[0] ? ppid : "-",
				cpu[0] ? cpu : "-", rows[k].samples, si->threads,
				start[0] ? start : "-", wall);
			put_text(out, end, 10);
			fprintf(out, "%*s  ", (int)(strlen(end) < 10 ? 10 - strlen(end) : 0), "");
			put_text(out, si->command ? si->command : "(no argv)", CMD_WIDTH);
			putc('\n', out);
		} else if (o->format == SD_FMT_CSV) {
			sd_csv_str(out, si->label);
			fprintf(out, ",%" PRIu64 ",%s,", si->pid, ppid);
			sd_csv_str(out, si->name);
			fprintf(out, ",%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%.3f,", cpu,
				si->cpu_threads, rows[k].samples, si->threads, start, wall);
			sd_csv_str(out, si->end ? si->end : "incomplete");
			fprintf(out, ",%s,", sig);
			sd_csv_str(out, si->exe ? si->exe : "");
			putc(',', out);
			sd_csv_str(out, si->command ? si->command : "");
			putc(',', out);
			sd_csv_str(out, si->file);
			putc('\n', out);
		} else {
			fputs(k ? ",\n{\"process\":" : "\n{\"process\":", out);
			json_cstr(out, si->label);
			fprintf(out, ",\"pid\":%" PRIu64 ",\"ppid\":%s,\"name\":", si->pid,
				ppid[0] ? ppid : "null");
			json_cstr(out, si->name);
			fprintf(out, ",\"cpu_ms\":%s,\"cpu_threads\":%" PRIu64 ",\"cpu_from_flush\":%"
				PRIu64 ",\"samples\":%" PRIu64 ",\"threads\":%" PRIu64
				",\"start_ms\":%s,\"wall_ms\":%.3f,\"end\":", cpu[0] ? cpu : "null",
				si->cpu_threads, si->cpu_flush, rows[k].samples, si->threads,
				start[0] ? start : "null", wall);
			json_cstr(out, si->end ? si->end : "incomplete");
			fprintf(out, ",\"signal\":%s,\"exe\":", sig[0] ? sig : "null");
			json_cstr(out, si->exe);
			fputs(",\"command\":", out);
			json_cstr(out, si->command);
			fputs(",\"file\":", out);
			json_cstr(out, si->file);
			putc('}', out);
		}
	}
	if (o->format == SD_FMT_JSON)
		fputs("]}\n", out);
	else if (o->format == SD_FMT_TEXT && partial)
		fprintf(out, "cpu_ms of %zu process%s is partial: a thread's CPU time is unknown, or "
			"known up to the last flush only (killed or still running; see --view "
			"coverage); '-': no CPU time recorded\n", partial, partial == 1 ? "" : "es");
	free(rows);
	return 0;
}
