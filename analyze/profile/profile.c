/*
 * profile.c: loads sonde streams into one merged profile for `sonde report`.
 *
 * Samples are never stored one by one. While a stream is read, each SAMPLE only adds to
 * the counter of its key (thread, source, context, process context, FRAME node), struct
 * sagg. When the stream is done, the --where filters are evaluated once per key, the
 * kept keys add to their node, thread and source, each node that has samples below it is
 * symbolized once and mapped to a node of the merged call tree (struct sd_cnode), keyed
 * by (parent, function), so paths of all streams, processes and threads with the same
 * functions meet in one node. Annotation contexts are merged the same way into one
 * context tree keyed by (parent, attribute name, value); each kept key becomes one
 * struct sd_crow for the context views.
 *
 * REGION records are replayed per thread while reading (a stack of open context nodes):
 * each closed region adds to the timing of its (thread, node); regions still open at the
 * end of the stream are closed at their thread's end, or at the stream's last timestamp,
 * and flagged as forced. Where events were lost (REGION event 3, or a begin or end the
 * open regions contradict), the calls concerned are left out and counted, never paired
 * with another call's event (decode_annot.c, region_event). With SONDE_REGIONS=on,
 * REGION_OPEN says which calls were open when the totals were read; decode_annot.c closes
 * them too.
 *
 * Counters (HEADER `counters`): every SAMPLE's `deltas` (one per counter, header order)
 * add to its key's counter sums (struct sagg, a stride of ncounters in aggcnt), so the
 * per-key sums, not the samples, are kept; samples with flag 8 (counters unreadable) are
 * counted instead. REGION `counts` are the thread's totals at the event: a region's
 * deltas are its end's counts minus its begin's. Counters are merged across streams by
 * name (struct sd_counter_row); a `deltas` or `counts` array whose length is not the
 * number of header counters is corrupt.
 *
 * A stream is merged only after it was read without error (a truncated stream is read up
 * to its last whole record), so a corrupt file leaves the profile as it was.
 *
 * Input is untrusted. Ids that are defined (node, module, thread) must be at most one
 * more than the number defined so far, so memory stays proportional to the file; a FRAME's
 * parent must be an earlier node (no cycles). The same holds for ATTRIBUTE and CONTEXT ids
 * (a CONTEXT's attribute must be defined). A SAMPLE naming a thread, source, FRAME node or
 * CONTEXT node not defined before it, a REGION naming such a thread or context, a
 * THREAD_END naming such a thread, and HEADER/END fields of the wrong type make the
 * stream corrupt (docs/REPORT.md); a FRAME naming an undefined module is still named
 * "[unknown]+0x..", and a REGION of an unknown event is ignored. (The "[unknown stack]"
 * and "[unknown thread]" slots below are therefore never filled by a valid stream.)
 *
 * Per stream, the reader keeps how it ended (END reason, signal; none: incomplete), its
 * SAMPLE and REGION records and its drops by kind (DROPS reasons "region_*" count region
 * events, every other reason samples) for the notes every view states (output.c).
 * THREAD_END deltas are kept per thread and become one sample row of their thread with
 * no sample, source or context, under the pseudo function "[thread end]", so that any
 * cut of the rows (thread, process, rank, host, function) adds up to the totals.
 *
 * What the aggregation does not keep (each sample at its time, for the timeline formats)
 * is kept by observers (struct sd_observer_ops, perf's perf_tool): they register on the
 * profile before loading and decode.c, merge.c and where.c call them through the
 * sd_obs_* functions below, never a particular observer.
 */
#include "analyze/profile/profile_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int sd_profile_init(struct sd_profile *p, int addresses)
{
	memset(p, 0, sizeof(*p));
	p->sym = sd_sym_new(addresses);
	if (!p->sym || sd_grow(&p->nodes, &p->capnodes, 1, sizeof(*p->nodes)))
		return -ENOMEM;
	p->nnodes = 1; /* the root */
	if (sd_grow(&p->ctx, &p->capctx, 1, sizeof(*p->ctx)))
		return -ENOMEM;
	p->nctx = 1; /* the empty context */
	return 0;
}

void sd_profile_fini(struct sd_profile *p)
{
	sd_sym_free(p->sym);
	for (size_t k = 0; k < p->nobs; k++)
		if (p->obs[k].ops->free)
			p->obs[k].ops->free(p->obs[k].arg);
	free(p->nodes);
	free(p->modrange);
	sd_u64map_fini(&p->children);
	for (size_t i = 0; i < p->nthreads; i++)
		free(p->threads[i].name);
	free(p->threads);
	for (size_t i = 0; i < p->nsources; i++) {
		struct sd_source_row *r = &p->sources[i];
		free(r->name), free(r->spec), free(r->unit), free(r->mechanism);
	}
	free(p->sources);
	free(p->pids);
	free(p->child);
	sd_u64map_fini(&p->childmap);
	free(p->procs);
	sd_strmap_fini(&p->drop_reasons);
	for (size_t i = 0; i < p->ndrop; i++)
		free(p->drop_names[i]);
	free(p->drop_names);
	free(p->drop_counts);
	sd_strmap_fini(&p->attr_map);
	sd_strmap_fini(&p->value_map);
	for (size_t i = 0; i < p->nattr_names; i++)
		free(p->attr_names[i]);
	free(p->attr_names);
	for (size_t i = 0; i < p->nvalue_strs; i++)
		free(p->value_strs[i]);
	free(p->value_strs);
	free(p->ctx);
	sd_strmap_fini(&p->ctx_children);
	for (size_t i = 0; i < p->nrows; i++)
		free(p->rows[i].counts);
	free(p->rows);
	for (size_t i = 0; i < p->nregions; i++)
		free(p->regions[i].counts);
	free(p->regions);
	free(p->msgs);
	for (size_t i = 0; i < p->ncounters; i++) {
		struct sd_counter_row *c = &p->counters[i];
		free(c->name), free(c->group), free(c->unit), free(c->source);
	}
	free(p->counters);
	for (size_t i = 0; i < p->nunavail; i++)
		free(p->unavail[i].name), free(p->unavail[i].reason);
	free(p->unavail);
	free(p->where);
	for (size_t i = 0; i < p->nsinfo; i++) {
		struct sd_stream_info *si = &p->sinfo[i];
		free(si->file), free(si->host), free(si->end);
		free(si->name), free(si->label), free(si->command), free(si->exe);
	}
	free(p->sinfo);
	free(p->cov.rows);
	free(p->cov.spec);
	memset(p, 0, sizeof(*p));
}

/* Index of string s in a table (map + array), appended if new: >= 0 or -ENOMEM. */
static long intern(struct sd_strmap *m, char ***arr, size_t *n, size_t *cap, const char *s)
{
	uint32_t idx;
	size_t len = strlen(s);

	if (sd_strmap_get(m, s, len, &idx))
		return idx;
	if (*n >= UINT32_MAX - 1 || sd_grow(arr, cap, *n + 1, sizeof(**arr)))
		return -ENOMEM;
	if (!((*arr)[*n] = strdup(s)))
		return -ENOMEM;
	if (sd_strmap_put(m, s, len, (uint32_t)*n)) {
		free((*arr)[*n]);
		return -ENOMEM;
	}
	return (long)(*n)++;
}

long sd_profile_attr(struct sd_profile *p, const char *name)
{
	return intern(&p->attr_map, &p->attr_names, &p->nattr_names, &p->capattr_names, name);
}

static long value_id(struct sd_profile *p, const char *v)
{
	return intern(&p->value_map, &p->value_strs, &p->nvalue_strs, &p->capvalue_strs, v);
}

long sd_profile_value(struct sd_profile *p, const char *v)
{
	return value_id(p, v);
}

static int path_value(const struct sd_profile *p, uint32_t c, uint32_t attr, uint32_t *value)
{
	for (; c; c = p->ctx[c].parent)
		if (p->ctx[c].attr == attr) {
			*value = p->ctx[c].value;
			return 1;
		}
	return 0;
}

int sd_ctx_value(const struct sd_profile *p, uint32_t ctx, uint32_t pctx, uint32_t attr,
		 uint32_t *value)
{
	return path_value(p, ctx, attr, value) || path_value(p, pctx, attr, value);
}

/* Module handle h's run-time range, from the first stream that recorded one (ms: the
 * stream's SD_MODSTAT numbers of it). 0 or -ENOMEM. */
static int mod_range(struct sd_profile *p, size_t h, const uint64_t *ms)
{
	if (h >= p->nmodrange) {
		size_t n = h + 1 > 2 * p->nmodrange ? h + 1 : 2 * p->nmodrange;
		uint64_t *v = realloc(p->modrange, 3 * n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memset(v + 3 * p->nmodrange, 0, 3 * (n - p->nmodrange) * sizeof(*v));
		p->modrange = v;
		p->nmodrange = n;
	}
	uint64_t *m = &p->modrange[3 * h];
	if (m[1] == m[2] && ms[3] < ms[4])
		m[0] = ms[2], m[1] = ms[3], m[2] = ms[4];
	return 0;
}

int sd_profile_merge(struct sd_profile *p, struct sd_load *l, size_t *bad_off)
{
	struct sstate *st = &l->st;
	int r = l->r;
	for (size_t i = 0; r == 0 && i < st->nmods; i++) {
		if (!st->modpath[i]) {
			st->mods[i] = -2;
			continue;
		}
		int h = sd_sym_module_stat(p->sym, st->modpath[i], st->cwd, st->modbid[i],
					   st->modbidlen[i],
					   st->modstat ? st->modstat[SD_MODSTAT * i] : UINT64_MAX,
					   st->modstat ? st->modstat[SD_MODSTAT * i + 1] : 0);
		if (h < 0)
			r = h;
		else
			st->mods[i] = h;
		if (h >= 0 && st->modstat && (r = mod_range(p, (size_t)h, &st->modstat[SD_MODSTAT * i])))
			break;
	}
	if (r == 0 && l->name && st->host) { /* JIT code: the process's perf map, if any */
		struct sd_jit_want w = { l->name, st->host, st->pid, st->real_ns,
					 st->real_ns + st->max_t, st->has_clock && st->real_ns };
		int m = sd_sym_perfmap_open(p->sym, &w);
		if (m < 0)
			r = m;
		else
			st->jitmap = m;
	}
	if (r == 0)
		r = sd_merge_stream(p, st, l->name, l->truncated);
	if (r == 0 && l->truncated) {
		p->truncated++;
		r = 1;
	}
	*bad_off = l->bad_off;
	sd_sstate_fini(st);
	free(l);
	return r;
}

int sd_profile_add(struct sd_profile *p, struct sd_stream *s, size_t *bad_off)
{
	struct sd_load *l = sd_profile_parse(p, s);
	if (!l)
		return -ENOMEM;
	return sd_profile_merge(p, l, bad_off);
}

int sd_load_ident(const struct sd_load *l, uint64_t *pid, const char **host, uint64_t *origin_ns)
{
	if (l->r != 0 || !l->st.has_clock || !l->st.host)
		return -ENOENT;
	*pid = l->st.pid;
	*host = l->st.host;
	*origin_ns = l->st.origin_ns;
	return 0;
}

void sd_load_free(struct sd_load *l)
{
	if (!l)
		return;
	sd_sstate_fini(&l->st);
	free(l);
}

/* ---- observers ----------------------------------------------------------------------- */

int sd_profile_observe(struct sd_profile *p, const struct sd_observer_ops *ops, void *arg)
{
	if (p->nobs == SD_MAX_OBSERVERS) {
		if (ops->free)
			ops->free(arg);
		return -ENOSPC;
	}
	p->obs[p->nobs++] = (struct sd_observer){ ops, arg };
	return 0;
}

void sd_obs_stream(const struct sd_profile *p, struct sstate *st)
{
	st->nobs = p->nobs;
	for (size_t k = 0; k < p->nobs; k++) {
		st->obs_ops[k] = p->obs[k].ops;
		st->obs_samples |= p->obs[k].ops->sample != NULL;
	}
}

int sd_obs_sample(struct sstate *st, uint64_t t, uint32_t agg, double w,
		  const msgpack_object *deltas)
{
	int err = 0;
	for (size_t k = 0; !err && k < st->nobs; k++)
		if (st->obs_ops[k]->sample)
			err = st->obs_ops[k]->sample(st, &st->obs[k], t, agg, w, deltas);
	return err;
}

int sd_obs_region(struct sstate *st, uint32_t thread, uint64_t t, uint32_t node,
		  uint32_t event)
{
	int err = 0;
	for (size_t k = 0; !err && k < st->nobs; k++)
		if (st->obs_ops[k]->region)
			err = st->obs_ops[k]->region(&st->obs[k], thread, t, node, event);
	return err;
}

void sd_obs_stream_free(struct sstate *st)
{
	for (size_t k = 0; k < st->nobs; k++)
		if (st->obs[k] && st->obs_ops[k]->stream_free)
			st->obs_ops[k]->stream_free(st->obs[k]);
}

int sd_obs_frames(struct sd_profile *p, const struct sd_frame *fr, int nf)
{
	int err = 0;
	for (size_t k = 0; !err && k < p->nobs; k++)
		if (p->obs[k].ops->frames)
			err = p->obs[k].ops->frames(p->obs[k].arg, fr, nf);
	return err;
}

int sd_obs_merged(struct sd_profile *p, const struct sstate *st, size_t row0, int keep_ends)
{
	int err = 0;
	for (size_t k = 0; !err && k < p->nobs; k++)
		if (p->obs[k].ops->merged)
			err = p->obs[k].ops->merged(p->obs[k].arg, p, st,
						    k < st->nobs ? st->obs[k] : NULL, row0,
						    keep_ends);
	return err;
}

int sd_obs_rows_wanted(const struct sd_profile *p)
{
	for (size_t k = 0; k < p->nobs; k++)
		if (p->obs[k].ops->rows_kept)
			return 1;
	return 0;
}

void sd_obs_rows_kept(struct sd_profile *p, const uint32_t *map)
{
	for (size_t k = 0; k < p->nobs; k++)
		if (p->obs[k].ops->rows_kept)
			p->obs[k].ops->rows_kept(p->obs[k].arg, map);
}

void sd_obs_regions_kept(struct sd_profile *p,
			 int (*ok)(const struct sd_profile *, const void *,
				   const struct sd_region_row *), const void *okarg)
{
	for (size_t k = 0; k < p->nobs; k++)
		if (p->obs[k].ops->regions_kept)
			p->obs[k].ops->regions_kept(p->obs[k].arg, p, ok, okarg);
}
