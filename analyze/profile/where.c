/*
 * where.c: every --where filter of `sonde report` and `sonde diff`, in two phases.
 *
 * While merging (profile.c asks sd_where_ctx_ok for each sample key and region): the
 * plain attribute filters (`attr=value`, `attr!=value`, `attr`, `!attr`, kept by
 * sd_profile_where in p->where), which need only the annotation context, so samples
 * they drop are never symbolized nor counted.
 *
 * After loading (sd_filters_apply): `attr~REGEX` / `attr!~REGEX` (POSIX extended regular
 * expressions), and every filter on a built-in key (`function`, `module`, `thread`,
 * `process`, `source`), which need symbols (functions are known only after
 * symbolization). Each filter is tested in one of the two phases, never both.
 *
 * sd_filters_apply() drops the sample rows (struct sd_crow) that fail a filter and
 * recomputes from the kept rows what the views read: the merged call nodes' counts, the
 * threads' and sources' sample counts, the profile's totals and the counter totals (as
 * with any --where, THREAD_END deltas are then left out). Threads' first/last sample
 * times stay those of the samples kept by the plain filters. Region rows are tested
 * with attribute filters on the region's own path and with `thread`/`process`; the
 * other built-ins do not apply to regions.
 *
 * Runs in the CLI's only thread: sd_profile_where before loading, sd_filters_apply once
 * between loading and printing.
 */
#include "analyze/profile/profile_int.h"
#include "common/log.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *const builtin_names[] = { "function", "module", "thread", "process",
					     "source", "rank", "host", NULL };
enum { B_FUNCTION, B_MODULE, B_THREAD, B_PROCESS, B_SOURCE, B_RANK, B_HOST };

int sd_filters_add(struct sd_filters *f, const char *expr, char *err, size_t errlen)
{
	struct sd_filter w = { .op = SD_WHERE_PRESENT, .builtin = -1 };
	const char *tilde = strchr(expr, '~'), *eq = strchr(expr, '=');
	const char *name_end, *val = NULL;
	int re = 0;

	if (tilde && (!eq || tilde < eq)) {
		re = 1;
		w.op = SD_WHERE_EQ;
		name_end = tilde;
		if (tilde > expr && tilde[-1] == '!') {
			w.op = SD_WHERE_NE;
			name_end--;
		}
		val = tilde + 1;
	} else if (eq) {
		w.op = SD_WHERE_EQ;
		name_end = eq;
		if (eq > expr && eq[-1] == '!') {
			w.op = SD_WHERE_NE;
			name_end--;
		}
		val = eq + 1;
	} else {
		if (expr[0] == '!') {
			w.op = SD_WHERE_ABSENT;
			expr++;
		}
		name_end = expr + strlen(expr);
	}
	if (name_end == expr) {
		snprintf(err, errlen, "no attribute name (use attr=value, attr!=value, attr~regex, "
			 "attr or !attr)");
		return -EINVAL;
	}
	for (int i = 0; builtin_names[i]; i++)
		if (strlen(builtin_names[i]) == (size_t)(name_end - expr) &&
		    !strncmp(expr, builtin_names[i], (size_t)(name_end - expr)))
			w.builtin = i;
	if (!re && w.builtin < 0)
		return 0; /* a plain attribute filter: profile.c */
	if (!(w.name = strndup(expr, (size_t)(name_end - expr))) ||
	    (val && !(w.value = strdup(val)))) {
		free(w.name);
		return -ENOMEM;
	}
	if (re) {
		int rc = regcomp(&w.re, val, REG_EXTENDED | REG_NOSUB);
		if (rc) {
			char why[200];
			regerror(rc, &w.re, why, sizeof(why));
			snprintf(err, errlen, "bad regular expression: %s (POSIX extended syntax, "
				 "e.g. function~^solve_)", why);
			free(w.name), free(w.value);
			return -EINVAL;
		}
		w.is_re = 1;
	}
	struct sd_filter *nv = realloc(f->v, (f->n + 1) * sizeof(*nv));
	if (!nv) {
		if (w.is_re)
			regfree(&w.re);
		free(w.name), free(w.value);
		return -ENOMEM;
	}
	f->v = nv;
	f->v[f->n++] = w;
	return 1;
}

void sd_filters_fini(struct sd_filters *f)
{
	for (size_t i = 0; i < f->n; i++) {
		if (f->v[i].is_re)
			regfree(&f->v[i].re);
		free(f->v[i].name);
		free(f->v[i].value);
	}
	free(f->v);
	f->v = NULL;
	f->n = 0;
}

static int matches(const struct sd_filter *w, const char *s)
{
	return w->is_re ? regexec(&w->re, s, 0, NULL, 0) == 0 : !strcmp(s, w->value);
}

/* Does filter w hold for a value that is present (s, and alt and alt2 when not NULL: any
 * may match) or absent (s NULL)? */
static int holds3(const struct sd_filter *w, const char *s, const char *alt, const char *alt2)
{
	int m = s && w->value && (matches(w, s) || (alt && matches(w, alt)) ||
				  (alt2 && matches(w, alt2)));

	switch (w->op) {
	case SD_WHERE_PRESENT: return s != NULL;
	case SD_WHERE_ABSENT: return s == NULL;
	case SD_WHERE_EQ: return m;
	default: return !m;
	}
}

static int holds(const struct sd_filter *w, const char *s, const char *alt)
{
	return holds3(w, s, alt, NULL);
}

/* process=X: X is the pid, the process name or its NAME[PID] label. */
static int process_holds(const struct sd_profile *p, const struct sd_filter *w, uint64_t pid,
			 uint32_t stream)
{
	char num[32];
	const struct sd_stream_info *si = stream < p->nsinfo ? &p->sinfo[stream] : NULL;

	snprintf(num, sizeof(num), "%" PRIu64, pid);
	return holds3(w, num, si ? si->name : NULL, si ? si->label : NULL);
}

/* rank=N and host=H: the MPI rank (none: "(none)", as --group-by shows it) and the host
 * of the process, from its stream's header. */
static int stream_key_holds(const struct sd_profile *p, const struct sd_filter *w,
			    uint32_t stream)
{
	const struct sd_stream_info *si = stream < p->nsinfo ? &p->sinfo[stream] : NULL;
	char num[32] = "(none)";
	if (w->builtin == B_HOST)
		return holds(w, si && si->host ? si->host : "?", NULL);
	if (si && si->rank >= 0)
		snprintf(num, sizeof num, "%" PRId64, si->rank);
	return holds(w, num, NULL);
}

/* Does attribute filter w hold for contexts (ctx, pctx)? attr: id, or -1 if unknown. */
static int attr_holds(const struct sd_profile *p, const struct sd_filter *w, long attr,
		      uint32_t ctx, uint32_t pctx)
{
	uint32_t v;

	if (attr < 0 || !sd_ctx_value(p, ctx, pctx, (uint32_t)attr, &v))
		return holds(w, NULL, NULL);
	return holds(w, p->value_strs[v], NULL);
}

static int row_ok(const struct sd_profile *p, const struct sd_filters *f, const long *attrs,
		  const struct sd_crow *r)
{
	char num[32];

	for (size_t i = 0; i < f->n; i++) {
		const struct sd_filter *w = &f->v[i];
		const struct sd_func *fn = sd_sym_func(p->sym, p->nodes[r->cnode].func);
		int ok;
		switch (w->builtin) {
		case B_FUNCTION:
			ok = holds(w, fn->name, fn->display);
			break;
		case B_MODULE:
			ok = holds(w, fn->module, NULL);
			break;
		case B_THREAD:
			snprintf(num, sizeof(num), "%" PRIu64, r->tid);
			ok = holds(w, num, r->tname);
			break;
		case B_PROCESS:
			ok = process_holds(p, w, r->pid, r->stream);
			break;
		case B_SOURCE:
			ok = holds(w, r->thread_end ? "(none)" : p->sources[r->source].name, NULL);
			break;
		case B_RANK:
		case B_HOST:
			ok = stream_key_holds(p, w, r->stream);
			break;
		default:
			ok = attr_holds(p, w, attrs[i], r->ctx, r->pctx);
		}
		if (!ok)
			return 0;
	}
	return 1;
}

static int region_ok(const struct sd_profile *p, const struct sd_filters *f, const long *attrs,
		     const struct sd_region_row *g)
{
	char num[32];

	for (size_t i = 0; i < f->n; i++) {
		const struct sd_filter *w = &f->v[i];
		int ok = 1;
		if (w->builtin == B_THREAD) {
			snprintf(num, sizeof(num), "%" PRIu64, g->tid);
			ok = holds(w, num, g->tname);
		} else if (w->builtin == B_PROCESS) {
			ok = process_holds(p, w, g->pid, g->stream);
		} else if (w->builtin == B_RANK || w->builtin == B_HOST) {
			ok = stream_key_holds(p, w, g->stream);
		} else if (w->builtin < 0) {
			ok = attr_holds(p, w, attrs[i], g->ctx, 0);
		}
		if (!ok)
			return 0;
	}
	return 1;
}

/* A stream's MPI messages (--view comm) are kept by the filters on its keys (rank, host,
 * process); the others (functions, threads, attributes) do not apply to them. */
static int msgs_ok(const struct sd_profile *p, const struct sd_filters *f, uint32_t stream)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct sd_filter *w = &f->v[i];
		if ((w->builtin == B_RANK || w->builtin == B_HOST) && !stream_key_holds(p, w, stream))
			return 0;
		if (w->builtin == B_PROCESS && stream < p->nsinfo &&
		    !process_holds(p, w, p->sinfo[stream].pid, stream))
			return 0;
	}
	return 1;
}

/* The observers' region calls (the timeline's: --format trace) are filtered as region
 * rows. */
struct region_args { const struct sd_filters *f; const long *attrs; };
static int tl_region_ok(const struct sd_profile *p, const void *arg,
			const struct sd_region_row *g)
{
	const struct region_args *a = arg;
	return region_ok(p, a->f, a->attrs, g);
}

/* The totals the kept rows are added into (sd_filters_apply). */
static void zero_totals(struct sd_profile *p)
{
	for (size_t i = 0; i < p->nnodes; i++)
		p->nodes[i].samples = 0, p->nodes[i].weight = 0;
	for (size_t i = 0; i < p->nthreads; i++)
		p->threads[i].samples = 0, p->threads[i].periods = 0;
	for (size_t i = 0; i < p->nsources; i++)
		p->sources[i].samples = 0, p->sources[i].weight = 0;
	for (size_t k = 0; k < p->ncounters; k++)
		p->counters[k].total = p->counters[k].end_total = 0;
	p->samples = 0, p->weight = 0, p->cpu_ns = 0;
}

int sd_filters_apply(struct sd_profile *p, const struct sd_filters *f)
{
	long *attrs;
	struct sd_u64map trow = { 0 };
	uint32_t *rowmap = NULL;
	size_t n = 0;
	int err = -ENOMEM;

	if (!f->n)
		return 0;
	if (sd_sym_finish(p->sym) || !(attrs = calloc(f->n, sizeof(*attrs))))
		return -ENOMEM;
	size_t had = p->nrows + p->nregions;
	for (size_t i = 0; i < f->n; i++) {
		uint32_t id;
		attrs[i] = f->v[i].builtin < 0 && sd_strmap_get(&p->attr_map, f->v[i].name,
								  strlen(f->v[i].name), &id) ? (long)id : -1;
	}
	/* e.g. --format speedscope|trace: the samples' rows are renumbered with them */
	if (sd_obs_rows_wanted(p) && !(rowmap = malloc((p->nrows + 1) * sizeof(*rowmap))))
		goto out;
	for (size_t i = 0; i < p->nthreads; i++)
		if (sd_u64map_put(&trow, (uint64_t)(uintptr_t)p->threads[i].name, (uint32_t)i))
			goto out;
	zero_totals(p); /* the totals, from the kept rows only */
	for (size_t i = 0; i < p->nrows; i++) {
		struct sd_crow *r = &p->rows[i];
		uint32_t t;
		int ok = row_ok(p, f, attrs, r);
		if (rowmap)
			rowmap[i] = ok ? (uint32_t)n : UINT32_MAX;
		if (!ok) {
			free(r->counts);
			continue;
		}
		p->nodes[r->cnode].samples += r->samples;
		p->nodes[r->cnode].weight += r->weight;
		if (sd_u64map_get(&trow, (uint64_t)(uintptr_t)r->tname, &t))
			p->threads[t].samples += r->samples, p->threads[t].periods += r->periods;
		if (!r->thread_end) {
			struct sd_source_row *s = &p->sources[r->source];
			s->samples += r->samples;
			s->weight += r->weight;
			if (!strcmp(s->name, "cpu-time") && !strcmp(s->unit, "ns"))
				p->cpu_ns += r->weight;
		}
		p->samples += r->samples;
		p->weight += r->weight;
		for (size_t k = 0; k < r->ncounts && k < p->ncounters; k++) {
			p->counters[k].total += r->counts[k];
			if (r->thread_end)
				p->counters[k].end_total += r->counts[k];
		}
		p->rows[n++] = *r;
	}
	p->nrows = n;
	if (rowmap)
		sd_obs_rows_kept(p, rowmap);
	n = 0;
	for (size_t i = 0; i < p->nregions; i++) {
		if (region_ok(p, f, attrs, &p->regions[i]))
			p->regions[n++] = p->regions[i];
		else
			free(p->regions[i].counts);
	}
	p->nregions = n;
	n = 0;
	for (size_t i = 0; i < p->nmsgs; i++) /* by the keys of its stream only */
		if (msgs_ok(p, f, p->msgs[i].stream))
			p->msgs[n++] = p->msgs[i];
	p->nmsgs = n;
	sd_obs_regions_kept(p, tl_region_ok, &(struct region_args){ f, attrs });
	if (had && !p->nrows && !p->nregions)
		sd_msg("sonde: report: --where: no sample or region of the streams matches (the "
		       "report is empty; --group-by rank,host,process and --view streams show what "
		       "the streams hold)");
	err = 0;
out:
	free(attrs);
	free(rowmap);
	sd_u64map_fini(&trow);
	return err;
}

/* ---- phase 1: attribute filters, while merging ----------------------------------- */

int sd_profile_where(struct sd_profile *p, const char *expr)
{
	struct sd_where w = { SD_WHERE_PRESENT, 0, 0 };
	const char *eq = strchr(expr, '=');
	char *name;
	long a, v = 0;

	if (expr[0] == '!' && !eq) {
		w.op = SD_WHERE_ABSENT;
		expr++;
	}
	if (eq && eq > expr && eq[-1] == '!') {
		w.op = SD_WHERE_NE;
		name = strndup(expr, (size_t)(eq - 1 - expr));
	} else if (eq) {
		w.op = SD_WHERE_EQ;
		name = strndup(expr, (size_t)(eq - expr));
	} else {
		name = strdup(expr);
	}
	if (!name)
		return -ENOMEM;
	if (!name[0]) {
		free(name);
		return -EINVAL;
	}
	a = sd_profile_attr(p, name);
	free(name);
	if (a < 0 || (eq && (v = sd_profile_value(p, eq + 1)) < 0))
		return -ENOMEM;
	w.attr = (uint32_t)a;
	w.value = (uint32_t)v;
	struct sd_where *nw = realloc(p->where, (p->nwhere + 1) * sizeof(*nw));
	if (!nw)
		return -ENOMEM;
	p->where = nw;
	p->where[p->nwhere++] = w;
	return 0;
}

int sd_where_ctx_ok(const struct sd_profile *p, uint32_t ctx, uint32_t pctx)
{
	for (size_t i = 0; i < p->nwhere; i++) {
		const struct sd_where *w = &p->where[i];
		uint32_t v;
		int has = sd_ctx_value(p, ctx, pctx, w->attr, &v);
		int ok = w->op == SD_WHERE_PRESENT ? has
		       : w->op == SD_WHERE_ABSENT ? !has
		       : w->op == SD_WHERE_EQ ? has && v == w->value
		       : !(has && v == w->value);
		if (!ok)
			return 0;
	}
	return 1;
}
