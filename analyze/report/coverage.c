/*
 * coverage.c: the coverage account of `sonde report` (docs/REPORT.md, "Coverage"): for
 * each thread and in total, the CPU time the kernel measured (THREAD_END `cpu`, else the
 * thread's last THREAD_CPU) against the time its cpu-time samples stand for, with every
 * gap named by cause: the samples the runtime dropped, by reason (DROPS, counted at the
 * cpu-time period), kernel mode (sys time: cpu-time samples user mode only), threads
 * that were never sampled, and the unexplained rest. profile.c fills one struct
 * sd_cov_row per thread while merging (no --where or --source filter applies: it is an
 * account of the run); this file makes the total and prints it: a block in every text
 * report's header, a "coverage" object in every json view, and --view coverage (its
 * text and csv rows through table.c; its json is the coverage object with every thread).
 *
 * Invariant of every row with a known CPU time: sampled + Σ drops + kernel + not_sampled
 * + unexplained = cpu, exactly (unexplained is what is left, and may be negative: the
 * samples stand for more than the kernel measured). The total adds the process-wide
 * drops (DROPS of thread 0) to its gaps, so its unexplained is computed, not summed.
 */
#include "analyze/report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Is the row part of the account (its stream has cpu-time, its CPU time is known)? */
static int counted(const struct sd_cov_row *c)
{
	return c->computed && c->cpu_from != SD_COV_UNKNOWN;
}

struct cov_sum {
	struct sd_cov_row tot;
	uint64_t flush_threads;   /* counted threads whose CPU time is up to the last flush */
	uint64_t split_rejected;  /* counted threads whose user/sys split was not used */
	uint64_t unknown;         /* threads of cpu-time streams with no CPU time recorded */
	double unknown_sampled_ns;
};

static void cov_total(const struct sd_profile *p, struct cov_sum *s)
{
	struct sd_cov_row *t = &s->tot;

	memset(s, 0, sizeof(*s));
	t->name = "total";
	t->computed = 1;
	t->split = 1;
	t->cpu_from = SD_COV_END;
	for (size_t i = 0; i < p->cov.n; i++) {
		const struct sd_cov_row *c = &p->cov.rows[i];
		if (c->computed && c->cpu_from == SD_COV_UNKNOWN) {
			s->unknown++;
			s->unknown_sampled_ns += c->sampled_ns;
		}
		if (!counted(c))
			continue;
		t->threads++;
		t->split &= c->split;
		t->split_rejected |= c->split_rejected; /* the total's split is not used either */
		s->split_rejected += (uint64_t)c->split_rejected;
		if (c->cpu_from == SD_COV_FLUSH) {
			t->cpu_from = SD_COV_FLUSH;
			s->flush_threads++;
		}
		t->cpu_ns += c->cpu_ns;
		t->user_ns += c->user_ns;
		t->sys_ns += c->sys_ns;
		t->sampled_ns += c->sampled_ns;
		t->after_ns += c->after_ns;
		for (int k = 0; k < SD_COV_NDROP; k++)
			t->drops_ns[k] += c->drops_ns[k];
		t->kernel_ns += c->kernel_ns;
		t->as_user_ns += c->as_user_ns;
		t->switches += c->switches;
		t->not_sampled_ns += c->not_sampled_ns;
	}
	double gaps = t->kernel_ns + t->as_user_ns + t->not_sampled_ns;
	for (int k = 0; k < SD_COV_NDROP; k++) {
		t->drops_ns[k] += p->cov.procwide_ns[k];
		gaps += t->drops_ns[k];
	}
	if (!t->threads) /* nothing to account: every field empty */
		t->split = t->computed = 0;
	t->unexplained_ns = t->cpu_ns - t->sampled_ns - gaps;
}

/* Coverage in percent and what of: the user time when known (cpu-time samples user mode
 * only), else the whole CPU time. Negative when there is no base. */
static double cov_pct(const struct sd_cov_row *c, const char **of)
{
	double base = c->split ? c->user_ns : c->cpu_ns;

	*of = c->split ? "user" : "cpu";
	return base > 0 ? 100.0 * c->sampled_ns / base : -1;
}

/* Why the account cannot be made, or NULL when it can. */
static const char *not_computed(const struct sd_profile *p, const struct cov_sum *s)
{
	if (!p->cov.streams_cpu)
		return "no cpu-time source was recorded: the other sources do not measure CPU "
		       "time (sample with SONDE_SAMPLE=cpu-time@1ms for an account)";
	if (!s->tot.threads)
		return "the streams do not record their threads' CPU time (written by an older "
		       "sonde)";
	return NULL;
}

/* The named gaps of a row with a value, largest first, as "name X ms, ...". */
struct gap { const char *name; double ns; };

static size_t gaps_of(const struct sd_cov_row *c, struct gap *g)
{
	size_t n = 0;

	for (int k = 0; k < SD_COV_NDROP; k++)
		if (c->drops_ns[k] > 0)
			g[n++] = (struct gap){ sd_cov_drop_names[k], c->drops_ns[k] };
	if (c->kernel_ns > 0)
		g[n++] = (struct gap){ "kernel mode", c->kernel_ns };
	if (c->as_user_ns > 0)
		g[n++] = (struct gap){ "kernel counted as user", c->as_user_ns };
	if (c->not_sampled_ns > 0)
		g[n++] = (struct gap){ "not sampled", c->not_sampled_ns };
	for (size_t i = 1; i < n; i++) /* insertion sort: a dozen at most */
		for (size_t j = i; j > 0 && g[j].ns > g[j - 1].ns; j--) {
			struct gap x = g[j];
			g[j] = g[j - 1];
			g[j - 1] = x;
		}
	return n;
}

static void put_gaps(FILE *out, const struct sd_cov_row *c, int why)
{
	struct gap g[SD_COV_NDROP + 3];
	size_t n = gaps_of(c, g);

	for (size_t i = 0; i < n; i++) {
		fprintf(out, "%s%s %.3f ms%s", i ? ", " : "", g[i].name, g[i].ns / 1e6,
			why && !strcmp(g[i].name, "kernel mode") ? " (sys time: cpu-time samples "
			"user mode only; wall-time puts it under the calls that spent it)" : "");
		if (why && g[i].ns == c->as_user_ns && !strcmp(g[i].name, "kernel counted as user"))
			fprintf(out, " (around %.0f context switches, %.1f us each: the kernel's "
				"tick-based user/sys split counts it as user time)", c->switches,
				c->as_user_ns / c->switches / 1e3);
	}
	if (c->unexplained_ns >= 0)
		fprintf(out, "%sunexplained %.3f ms", n ? ", " : "", c->unexplained_ns / 1e6);
	else
		fprintf(out, "%sover %.3f ms (sampled more than measured%s)", n ? ", " : "",
			-c->unexplained_ns / 1e6, c->split ? ": the kernel's tick-based user/sys "
			"split put some user time under sys" : "");
}

/* A share of user time over 100 % says why: user is the kernel's estimate from ticks. */
static void over_user(FILE *out, const struct sd_cov_row *c, double pc)
{
	if (c->split && pc >= 100.005)
		fputs(" (over 100%: user time is the kernel's estimate from its ticks)", out);
}

/* The notes under the account: what it leaves out and how it counts. */
/* pre: "" in a text report's header, "sonde: " in the lines said (csv). */
static void cov_notes(FILE *out, const char *pre, const struct sd_profile *p,
		      const struct cov_sum *s)
{
	if (s->flush_threads)
		fprintf(out, "%scoverage: the CPU time of %" PRIu64 " thread%s is known up to the "
			"last flush only (no THREAD_END: the process was killed, data after the last "
			"flush is lost; %.3f ms sampled after it are not counted)\n", pre,
			s->flush_threads, s->flush_threads > 1 ? "s" : "", s->tot.after_ns / 1e6);
	if (s->split_rejected)
		fprintf(out, "%scoverage: the kernel's user/sys split of %" PRIu64 " thread%s was not "
			"used (it gave less user time than the samples stand for: getrusage divides "
			"CPU time by tick samples); coverage is of all its CPU time\n", pre,
			s->split_rejected, s->split_rejected > 1 ? "s" : "");
	if (s->unknown)
		fprintf(out, "%scoverage: %" PRIu64 " thread%s with no CPU time recorded left out "
			"(%.3f ms sampled)\n", pre, s->unknown, s->unknown > 1 ? "s" : "",
			s->unknown_sampled_ns / 1e6);
	if (p->cov.streams_nocpu)
		fprintf(out, "%scoverage: %" PRIu64 " stream%s without a cpu-time source left out\n", pre,
			p->cov.streams_nocpu, p->cov.streams_nocpu > 1 ? "s" : "");
	if (p->cov.streams_mixed)
		fprintf(out, "%scoverage: drops are not split by source: all are counted at the "
			"cpu-time period (%s)%s\n", pre, p->cov.spec ? p->cov.spec : "?",
			p->cov.specs_differ ? " of each stream" : "");
}

/* Largest gap (cpu - sampled) first, then pid, tid. */
static int gap_cmp(const void *a, const void *b)
{
	const struct sd_cov_row *x = *(const struct sd_cov_row *const *)a;
	const struct sd_cov_row *y = *(const struct sd_cov_row *const *)b;
	double gx = x->cpu_ns - x->sampled_ns, gy = y->cpu_ns - y->sampled_ns;

	if (gx != gy)
		return gx > gy ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void thread_line(FILE *out, const struct sd_cov_row *c)
{
	const char *of;
	double pc = cov_pct(c, &of);

	fprintf(out, "  thread %" PRIu64 " (", c->tid);
	sd_text_put(out, c->name); /* a name from the stream: escaped */
	fprintf(out, ", pid %" PRIu64 "): cpu %.3f ms%s, sampled %.3f ms", c->pid, c->cpu_ns / 1e6,
		c->cpu_from == SD_COV_FLUSH ? " up to the last flush" : "", c->sampled_ns / 1e6);
	if (pc >= 0)
		fprintf(out, " (%.2f%% of %s)", pc, of);
	over_user(out, c, pc);
	fputs("; ", out);
	put_gaps(out, c, 0);
	putc('\n', out);
}

void sd_cov_block(FILE *out, const struct sd_profile *p)
{
	struct cov_sum s;
	const char *why, *of;

	cov_total(p, &s);
	if ((why = not_computed(p, &s))) {
		fprintf(out, "coverage: not computed: %s\n", why);
		return;
	}
	const struct sd_cov_row *t = &s.tot;
	double pc = cov_pct(t, &of);
	fprintf(out, "coverage: cpu %.3f ms measured by the kernel in %" PRIu64 " thread%s",
		t->cpu_ns / 1e6, t->threads, t->threads > 1 ? "s" : "");
	if (t->split)
		fprintf(out, " (user %.3f, sys %.3f)", t->user_ns / 1e6, t->sys_ns / 1e6);
	fprintf(out, ", sampled %.3f ms by %s", t->sampled_ns / 1e6, p->cov.spec);
	if (pc >= 0)
		fprintf(out, ": %.2f%% of %s time", pc, of);
	over_user(out, t, pc);
	fputs("\ncoverage gaps: ", out);
	put_gaps(out, t, 1);
	putc('\n', out);
	cov_notes(out, "", p, &s);
	if (t->threads < 2)
		return;
	const struct sd_cov_row **v = malloc(t->threads * sizeof(*v));
	size_t n = 0, shown = 5;
	if (!v)
		return; /* the lines above said the essential */
	for (size_t i = 0; i < p->cov.n; i++)
		if (counted(&p->cov.rows[i]))
			v[n++] = &p->cov.rows[i];
	qsort(v, n, sizeof(*v), gap_cmp);
	for (size_t i = 0; i < n && i < shown; i++)
		thread_line(out, v[i]);
	if (n > shown)
		fprintf(out, "  %zu more thread%s in --view coverage\n", n - shown,
			n - shown > 1 ? "s" : "");
	free(v);
}

/* ---- json -------------------------------------------------------------------------- */

static void json_ms(FILE *out, double ns, int known)
{
	if (known && isfinite(ns))
		fprintf(out, "%.3f", ns / 1e6);
	else
		fputs("null", out);
}

static const char *from_name(enum sd_cov_from f)
{
	return f == SD_COV_END ? "thread_end" : f == SD_COV_FLUSH ? "last_flush" : NULL;
}

/* One row as a json object; the total has no pid, tid or name. */
static void json_row(FILE *out, const struct sd_cov_row *c, int total)
{
	int known = counted(c) || (total && c->threads);
	int cpu_known = c->cpu_from != SD_COV_UNKNOWN;
	const char *of;
	double pc = cov_pct(c, &of);

	putc('{', out);
	if (total) {
		fprintf(out, "\"threads\":%" PRIu64 ",", c->threads);
	} else {
		fprintf(out, "\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"name\":", c->pid, c->tid);
		sd_json_str(out, c->name, strlen(c->name));
		putc(',', out);
	}
	fputs("\"cpu_ms\":", out);
	json_ms(out, c->cpu_ns, cpu_known && (total ? c->threads > 0 : 1));
	fputs(",\"cpu_from\":", out);
	if (from_name(c->cpu_from) && (!total || c->threads))
		fprintf(out, "\"%s\"", from_name(c->cpu_from));
	else
		fputs("null", out);
	fputs(",\"user_ms\":", out);
	json_ms(out, c->user_ns, c->split);
	fputs(",\"sys_ms\":", out);
	json_ms(out, c->sys_ns, c->split);
	fprintf(out, ",\"split_rejected\":%s", c->split_rejected ? "true" : "false");
	fputs(",\"sampled_ms\":", out);
	json_ms(out, c->sampled_ns, c->computed);
	fputs(",\"coverage_pct\":", out);
	if (known && pc >= 0)
		fprintf(out, "%.2f,\"coverage_of\":\"%s\"", pc, of);
	else
		fputs("null,\"coverage_of\":null", out);
	fputs(",\"gaps_ms\":{", out);
	for (int k = 0; k < SD_COV_NDROP; k++) {
		fprintf(out, "\"%s\":", sd_cov_drop_names[k]);
		json_ms(out, c->drops_ns[k], c->computed);
		putc(',', out);
	}
	fputs("\"kernel\":", out);
	json_ms(out, c->kernel_ns, known);
	fputs(",\"kernel_as_user\":", out);
	json_ms(out, c->as_user_ns, known);
	fputs(",\"not_sampled\":", out);
	json_ms(out, c->not_sampled_ns, known);
	fprintf(out, "},\"context_switches\":%.0f,\"unexplained_ms\":", c->switches);
	json_ms(out, c->unexplained_ns, known);
	fputs(",\"after_flush_ms\":", out);
	json_ms(out, c->after_ns, c->computed);
	putc('}', out);
}

void sd_cov_json(FILE *out, const struct sd_profile *p, int with_threads)
{
	struct cov_sum s;
	const char *why;

	cov_total(p, &s);
	why = not_computed(p, &s);
	fprintf(out, "\"coverage\":{\"computed\":%s,\"why\":", why ? "false" : "true");
	if (why) {
		sd_json_str(out, why, strlen(why));
		if (!with_threads) { /* short: the account has nothing else to say */
			fputs("},", out);
			return;
		}
	} else {
		fputs("null", out);
	}
	fputs(",\"spec\":", out);
	if (p->cov.spec)
		sd_json_str(out, p->cov.spec, strlen(p->cov.spec));
	else
		fputs("null", out);
	fprintf(out, ",\"drops_at_cpu_time_period\":%s,\"threads_unknown\":%" PRIu64
		",\"unknown_sampled_ms\":%.3f,\"streams_without_cpu_time\":%" PRIu64 ",\"total\":",
		p->cov.streams_mixed ? "true" : "false", s.unknown, s.unknown_sampled_ns / 1e6,
		p->cov.streams_nocpu);
	json_row(out, &s.tot, 1);
	if (with_threads) {
		fputs(",\"threads\":[", out);
		for (size_t i = 0; i < p->cov.n; i++) {
			fputs(i ? ",\n" : "\n", out);
			json_row(out, &p->cov.rows[i], 0);
		}
		putc(']', out);
	}
	fputs("},", out);
}

/* ---- --view coverage ----------------------------------------------------------------- */

static int pidtid_cmp(const void *a, const void *b)
{
	const struct sd_cov_row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The columns of the text and csv rows (json: json_row). Text keeps the printf widths it
 * had (fixed); its name and named gaps are one unaligned column, because the name is padded
 * only when gaps follow it. The csv drop columns, "<reason>_ms", go between the two parts. */
enum { TXT = SD_IN_TEXT, CSV = SD_IN_CSV, NHEAD = 14, NTAIL = 6,
       NCOLS = NHEAD + SD_COV_NDROP + NTAIL };
static const struct sd_col head_cols[NHEAD] = {
	{ .name = "pid", .in = TXT, .width = 8, .fixed = 1 },
	{ .name = "tid", .in = TXT, .width = 8, .gap = " ", .fixed = 1 },
	{ .name = "pid", .in = CSV }, { .name = "tid", .in = CSV }, { .name = "name", .in = CSV },
	{ .name = "cpu_ms", .in = TXT, .width = 12, .gap = " ", .fixed = 1 },
	{ .name = "cpu_ms", .in = CSV }, { .name = "cpu_from", .in = CSV },
	{ .name = "user_ms", .in = CSV }, { .name = "sys_ms", .in = CSV },
	{ .name = "sampled_ms", .in = TXT | CSV, .width = 12, .gap = " ", .fixed = 1 },
	{ .name = "coverage", .in = TXT, .width = 12, .gap = " ", .fixed = 1 },
	{ .name = "coverage_pct", .in = CSV }, { .name = "coverage_of", .in = CSV },
};
static const struct sd_col tail_cols[NTAIL] = {
	{ .name = "kernel_ms", .in = CSV }, { .name = "kernel_as_user_ms", .in = CSV },
	{ .name = "not_sampled_ms", .in = CSV },
	{ .name = "unexplained_ms", .in = TXT | CSV, .width = 14, .gap = " ", .fixed = 1 },
	{ .name = "after_flush_ms", .in = CSV },
	{ .name = "gaps", .text = "name             gaps_ms", .in = TXT, .left = 1 },
};

/* ms, or none (text "-", csv empty) when not known. The values are finite (sums of
 * u64 times), so text's "-" and csv's empty cell follow from `known` alone as before. */
static void ms_cell(struct sd_table *t, double ns, int known)
{
	if (known && isfinite(ns))
		sd_table_num(t, "%.3f", ns / 1e6);
	else
		sd_table_null(t);
}

/* Text's last cell: the name, then (padded to 16) the named gaps largest first, or why
 * there are none. 0 or -ENOMEM. */
static int name_gaps_cell(struct sd_table *t, const struct sd_cov_row *c, int total, int known)
{
	const char *name = total ? "" : c->name;
	size_t len = strlen(name) + 18 + 512, gl = 0, cap = 512;
	char *s = malloc(len), *g;

	if (!s)
		return -ENOMEM;
	g = s + snprintf(s, len, "%-16s ", name);
	*g = 0;
	if (!known)
		snprintf(g, cap, "%s", !c->computed ? "(no cpu-time source in its stream)"
						    : "(no CPU time recorded)");
	struct gap gp[SD_COV_NDROP + 3];
	size_t n = known ? gaps_of(c, gp) : 0;
	for (size_t i = 0; i < n && gl < cap; i++)
		gl += (size_t)snprintf(g + gl, cap - gl, "%s%s %.3f", i ? ", " : "", gp[i].name,
				       gp[i].ns / 1e6);
	if (!*g) /* no gaps: the name alone, unpadded */
		s[strlen(name)] = 0;
	sd_table_str(t, s);
	free(s);
	return 0;
}

/* One row's cells (text only when text); the total has no pid, tid or name: text shows
 * "total" and its threads instead. 0 or -ENOMEM. */
static int cov_cells(struct sd_table *t, const struct sd_cov_row *c, int total, int text)
{
	int known = counted(c) || (total && c->threads);
	int cpu_known = c->cpu_from != SD_COV_UNKNOWN && (!total || c->threads);
	const char *of;
	double pc = cov_pct(c, &of);

	sd_table_num(t, total ? "total" : "%" PRIu64, c->pid);
	sd_table_u64(t, total ? c->threads : c->tid);
	for (int k = 0; k < 2; k++) /* csv's pid and tid */
		if (total)
			sd_table_null(t);
		else
			sd_table_u64(t, k ? c->tid : c->pid);
	sd_table_str(t, total ? "total" : c->name);
	if (cpu_known)
		sd_table_num(t, "%.3f%s", c->cpu_ns / 1e6, c->cpu_from == SD_COV_FLUSH ? "*" : "");
	else
		sd_table_str(t, "unknown");
	ms_cell(t, c->cpu_ns, cpu_known);
	if (cpu_known)
		sd_table_str(t, from_name(c->cpu_from));
	else
		sd_table_null(t);
	ms_cell(t, c->user_ns, c->split);
	ms_cell(t, c->sys_ns, c->split);
	ms_cell(t, c->sampled_ns, c->computed);
	if (known && pc >= 0) {
		sd_table_num(t, "%.2f%% %s", pc, of);
		sd_table_num(t, "%.2f", pc);
		sd_table_str(t, of);
	} else {
		for (int k = 0; k < 3; k++)
			sd_table_null(t);
	}
	for (int k = 0; k < SD_COV_NDROP; k++)
		ms_cell(t, c->drops_ns[k], c->computed);
	ms_cell(t, c->kernel_ns, known);
	ms_cell(t, c->as_user_ns, known);
	ms_cell(t, c->not_sampled_ns, known);
	ms_cell(t, c->unexplained_ns, known);
	ms_cell(t, c->after_ns, c->computed);
	if (!text) {
		sd_table_str(t, "");
		return 0;
	}
	return name_gaps_cell(t, c, total, known);
}

/* Why the account is not computed, or its notes: on out, each line starting with pre. */
static void cov_footer(FILE *out, const char *pre, const struct sd_profile *p,
		       const struct cov_sum *s)
{
	const char *why = not_computed(p, s);
	if (why)
		fprintf(out, "%scoverage: not computed: %s\n", pre, why);
	else
		cov_notes(out, pre, p, s);
}

/* The same lines said through the log sink (csv; stderr in the CLI), "sonde: " first. */
static void cov_say(const struct sd_profile *p, const struct cov_sum *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (m) {
		cov_footer(m, "sonde: ", p, s);
		fclose(m);
	}
	sd_say_lines(buf);
	free(buf);
}

/* Text: the account's notes, the rows by pid and tid, the total; csv: the rows, the notes
 * said through the log sink (stderr in the CLI); json: the coverage object with every thread (sd_output adds it). */
int sd_out_coverage(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	struct sd_col cols[NCOLS];
	char drop_names[SD_COV_NDROP][32];
	int text = o->format == SD_FMT_TEXT, err = -ENOMEM;
	struct sd_cov_row *rows = NULL;
	struct sd_table *t = NULL;
	struct cov_sum s;

	if (o->format == SD_FMT_JSON) {
		sd_json_open(out, o);
		fputs("\"view\":\"coverage\"}\n", out);
		return 0;
	}
	memcpy(cols, head_cols, sizeof(head_cols));
	for (int k = 0; k < SD_COV_NDROP; k++) {
		snprintf(drop_names[k], sizeof(drop_names[k]), "%s_ms", sd_cov_drop_names[k]);
		cols[NHEAD + k] = (struct sd_col){ .name = drop_names[k], .in = CSV };
	}
	memcpy(cols + NHEAD + SD_COV_NDROP, tail_cols, sizeof(tail_cols));
	if (!(rows = malloc((p->cov.n + 1) * sizeof(*rows))) || !(t = sd_table_new(o, cols, NCOLS)))
		goto out;
	if (p->cov.n)
		memcpy(rows, p->cov.rows, p->cov.n * sizeof(*rows));
	qsort(rows, p->cov.n, sizeof(*rows), pidtid_cmp);
	cov_total(p, &s);
	for (size_t i = 0; i < p->cov.n; i++)
		if (cov_cells(t, &rows[i], 0, text))
			goto out;
	if (cov_cells(t, &s.tot, 1, text))
		goto out;
	if (text)
		cov_footer(out, "", p, &s);
	else
		cov_say(p, &s);
	err = sd_table_print(out, t, 0, NULL);
	if (text && s.flush_threads)
		fputs("*: up to the last flush (no THREAD_END)\n", out);
out:
	sd_table_free(t);
	free(rows);
	return err;
}
