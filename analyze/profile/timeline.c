/*
 * timeline.c: the event list behind `sonde report --format speedscope` and `--format
 * trace` (profile.h): every counted sample and every region call at its time, which the
 * aggregated profile (profile.c) does not keep.
 *
 * Opt-in: cli.c attaches it (sd_timeline_attach) only for these formats, as an observer
 * of the profile (struct sd_observer_ops): the engine calls it, never by name. While a stream is read
 * (decode.c, possibly in a --jobs worker: only the stream's own state is touched) each
 * counted SAMPLE is appended to the stream's list as (thread time, aggregate index,
 * weight x period, deltas) and each REGION event as it came. When the stream is merged
 * (merge.c, the CLI's thread) tl_merged maps the aggregates to the rows merge.c just
 * made (rows are made in aggregate order, the kept ones only, then the THREAD_END rows),
 * turns the deltas into merged counter ids, adds one event per THREAD_END row, pairs the
 * region begins and ends of each thread (as decode_annot.c's region timing does: a
 * misnested end closes the regions opened inside it, forced; the regions still open at
 * the end close at the thread's last time, forced) and keeps each thread's first and
 * last time.
 * sd_filters_apply (where.c) renumbers rows after loading: tl_rows_kept follows,
 * and tl_regions_kept applies the filters to the region calls as to region rows.
 *
 * Times stay in each stream's clock (ns after its HEADER clock); sd_tl_time puts them
 * on the run's clock (the earliest stream start) when a format prints them.
 */
#define _GNU_SOURCE /* qsort_r, asprintf */
#include "analyze/profile/profile_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What decode.c records of one stream, in its own ids. */
struct raw_sample { uint64_t t; uint32_t agg; double w; size_t cnt; };
struct raw_region { uint64_t t; uint32_t thread, node, event; };
struct sd_tl_stream {
	struct raw_sample *s; size_t n, cap;
	uint64_t *cnt; size_t ncnt, capcnt;
	struct raw_region *r; size_t nr, capr;
};

static void tl_free(void *arg)
{
	struct sd_timeline *tl = arg;
	free(tl->samples);
	free(tl->counts);
	free(tl->regions);
	free(tl->threads);
	free(tl->func_file);
	free(tl);
}

static void tl_stream_free(void *stream)
{
	struct sd_tl_stream *s = stream;
	free(s->s);
	free(s->cnt);
	free(s->r);
	free(s);
}

static struct sd_tl_stream *stream_of(void **stream)
{
	if (!*stream)
		*stream = calloc(1, sizeof(struct sd_tl_stream));
	return *stream;
}

static int tl_sample(const struct sstate *st, void **stream, uint64_t t, uint32_t agg, double w,
		     const msgpack_object *deltas)
{
	struct sd_tl_stream *s = stream_of(stream);
	if (!s || sd_grow(&s->s, &s->cap, s->n + 1, sizeof(*s->s)))
		return -ENOMEM;
	size_t off = SIZE_MAX;
	if (deltas && st->nctrs && deltas->via.array.size == st->nctrs) {
		if (sd_grow(&s->cnt, &s->capcnt, s->ncnt + st->nctrs, sizeof(*s->cnt)))
			return -ENOMEM;
		off = s->ncnt;
		for (size_t k = 0; k < st->nctrs; k++)
			s->cnt[s->ncnt++] = deltas->via.array.ptr[k].via.u64;
	}
	s->s[s->n++] = (struct raw_sample){ t, agg, w, off };
	return 0;
}

static int tl_region(void **stream, uint32_t thread, uint64_t t, uint32_t node, uint32_t event)
{
	struct sd_tl_stream *s = stream_of(stream);
	if (!s || sd_grow(&s->r, &s->capr, s->nr + 1, sizeof(*s->r)))
		return -ENOMEM;
	s->r[s->nr++] = (struct raw_region){ t, thread, node, event };
	return 0;
}

static int tl_frames(void *arg, const struct sd_frame *fr, int nf)
{
	struct sd_timeline *tl = arg;
	for (int k = 0; k < nf; k++) {
		if (fr[k].func >= tl->nfunc_file &&
		    sd_grow(&tl->func_file, &tl->capfunc_file, fr[k].func + 1,
			    sizeof(*tl->func_file)))
			return -ENOMEM;
		if (fr[k].func >= tl->nfunc_file)
			tl->nfunc_file = fr[k].func + 1;
		if (!tl->func_file[fr[k].func])
			tl->func_file[fr[k].func] = fr[k].file;
	}
	return 0;
}

/* Each thread's lifetime, by its merged thread row. */
static int merge_threads(struct sd_timeline *tl, struct sd_profile *p, const struct sstate *st)
{
	if (sd_grow(&tl->threads, &tl->capthreads, p->nthreads, sizeof(*tl->threads)))
		return -ENOMEM;
	tl->nthreads = p->nthreads;
	for (size_t i = 1; i < st->nthreads; i++) {
		const struct sthread *t = &st->threads[i];
		if (t->defined)
			tl->threads[t->row] = (struct sd_tl_thread){ t->t, t->last_t,
				(uint32_t)(p->nsinfo - 1), 1 };
	}
	return 0;
}

static int add_sample(struct sd_timeline *tl, struct sd_tl_sample s)
{
	if (sd_grow(&tl->samples, &tl->capsamples, tl->nsamples + 1, sizeof(*tl->samples)))
		return -ENOMEM;
	tl->samples[tl->nsamples++] = s;
	return 0;
}

/* The stream's samples on the merged rows; then one event per THREAD_END row. */
static int merge_samples(struct sd_timeline *tl, struct sd_profile *p, const struct sstate *st,
			 const struct sd_tl_stream *s, size_t row0, int keep_ends)
{
	uint32_t *rowof = malloc((st->naggs + 1) * sizeof(*rowof));
	size_t row = row0;
	int err = -ENOMEM;

	if (!rowof)
		return -ENOMEM;
	for (size_t i = 0; i < st->naggs; i++)
		rowof[i] = st->aggs[i].kept ? (uint32_t)row++ : UINT32_MAX;
	for (size_t i = 0; s && i < s->n; i++) {
		const struct raw_sample *r = &s->s[i];
		if (rowof[r->agg] == UINT32_MAX)
			continue;
		struct sd_tl_sample e = { .t = r->t, .row = rowof[r->agg], .weight = r->w,
			.thread = st->threads[st->aggs[r->agg].thread].row, .cnt = SIZE_MAX };
		if (r->cnt != SIZE_MAX) {
			if (sd_grow(&tl->counts, &tl->capcounts, tl->ncounts + p->ncounters,
				    sizeof(*tl->counts)))
				goto out;
			e.cnt = tl->ncounts;
			e.ncnt = (uint32_t)p->ncounters;
			memset(&tl->counts[e.cnt], 0, p->ncounters * sizeof(*tl->counts));
			for (size_t k = 0; k < st->nctrs; k++)
				tl->counts[e.cnt + st->ctrs[k].gid] += s->cnt[r->cnt + k];
			tl->ncounts += p->ncounters;
		}
		if (add_sample(tl, e))
			goto out;
	}
	for (size_t i = 1; keep_ends && i < st->nthreads; i++) {
		const struct sthread *t = &st->threads[i];
		if (t->endcnt && add_sample(tl, (struct sd_tl_sample){ .t = t->last_t,
				.row = (uint32_t)row++, .thread = t->row, .cnt = SIZE_MAX, .end = 1 }))
			goto out;
	}
	err = 0;
out:
	free(rowof);
	return err;
}

/* Close the innermost open region of a thread (stack `open`, *nopen deep) at t. */
static int region_close(struct sd_timeline *tl, struct sd_profile *p, const struct sstate *st,
			const struct raw_region *open, size_t *nopen, uint64_t t, int forced)
{
	const struct raw_region *b = &open[--*nopen];
	uint32_t gnode = st->ctxs[b->node].gnode;
	if (!sd_where_ctx_ok(p, gnode, 0))
		return 0;
	if (sd_grow(&tl->regions, &tl->capregions, tl->nregions + 1, sizeof(*tl->regions)))
		return -ENOMEM;
	tl->regions[tl->nregions++] = (struct sd_tl_region){ b->t, t > b->t ? t : b->t,
		st->threads[b->thread].row, gnode, (uint32_t)*nopen, forced };
	return 0;
}

/* The REGION events of one thread of the stream, begins and ends paired. */
static int merge_thread_regions(struct sd_timeline *tl, struct sd_profile *p,
				const struct sstate *st, const struct sd_tl_stream *s, uint32_t ti,
				struct raw_region **open, size_t *cap)
{
	size_t nopen = 0;
	int err;

	for (size_t i = 0; i < s->nr; i++) {
		const struct raw_region *r = &s->r[i];
		if (r->thread != ti)
			continue;
		if (r->event == SD_REGION_BEGIN) {
			if (sd_grow(open, cap, nopen + 1, sizeof(**open)))
				return -ENOMEM;
			(*open)[nopen++] = *r;
			continue;
		}
		size_t k = nopen;
		while (k && (*open)[k - 1].node != r->node)
			k--;
		if (!k)
			continue; /* not open: nothing to draw */
		while (nopen > k) /* misnested: the inner regions end with it, forced */
			if ((err = region_close(tl, p, st, *open, &nopen, r->t, 1)))
				return err;
		if ((err = region_close(tl, p, st, *open, &nopen, r->t,
					r->event == SD_REGION_FORCED_END)))
			return err;
	}
	while (nopen)
		if ((err = region_close(tl, p, st, *open, &nopen, st->threads[ti].last_t, 1)))
			return err;
	return 0;
}

static int tl_merged(void *arg, struct sd_profile *p, const struct sstate *st,
		     const void *stream, size_t row0, int keep_ends)
{
	struct sd_timeline *tl = arg;
	const struct sd_tl_stream *s = stream;
	struct raw_region *open = NULL;
	size_t cap = 0;
	int err;

	if ((err = merge_threads(tl, p, st)) ||
	    (err = merge_samples(tl, p, st, s, row0, keep_ends)))
		return err;
	for (size_t i = 1; s && s->nr && i < st->nthreads; i++)
		if (st->threads[i].defined &&
		    (err = merge_thread_regions(tl, p, st, s, (uint32_t)i, &open, &cap)))
			break;
	free(open);
	return err;
}

static void tl_rows_kept(void *arg, const uint32_t *map)
{
	struct sd_timeline *tl = arg;
	size_t n = 0;
	for (size_t i = 0; i < tl->nsamples; i++) {
		struct sd_tl_sample *s = &tl->samples[i];
		if (map[s->row] == UINT32_MAX)
			continue;
		s->row = map[s->row];
		tl->samples[n++] = *s;
	}
	tl->nsamples = n;
}

static void tl_regions_kept(void *tlp, const struct sd_profile *p,
			    int (*ok)(const struct sd_profile *, const void *,
				      const struct sd_region_row *), const void *arg)
{
	struct sd_timeline *tl = tlp;
	size_t n = 0;
	for (size_t i = 0; i < tl->nregions; i++) {
		const struct sd_tl_region *g = &tl->regions[i];
		const struct sd_thread_row *t = &p->threads[g->thread];
		struct sd_region_row row = { .ctx = g->ctx, .pid = t->pid, .tid = t->tid,
			.tname = t->name, .stream = tl->threads[g->thread].stream };
		if (ok(p, arg, &row))
			tl->regions[n++] = *g;
	}
	tl->nregions = n;
}

/* The timeline formats hear of every sample; --format html's page of the regions only. */
static const struct sd_observer_ops tl_ops = {
	.sample = tl_sample, .region = tl_region, .stream_free = tl_stream_free,
	.frames = tl_frames, .merged = tl_merged, .rows_kept = tl_rows_kept,
	.regions_kept = tl_regions_kept, .free = tl_free,
};
static const struct sd_observer_ops tl_regions_ops = {
	.region = tl_region, .stream_free = tl_stream_free,
	.frames = tl_frames, .merged = tl_merged, .rows_kept = tl_rows_kept,
	.regions_kept = tl_regions_kept, .free = tl_free,
};

int sd_timeline_attach(struct sd_profile *p, int regions_only)
{
	struct sd_timeline *tl = calloc(1, sizeof(*tl));
	if (!tl)
		return -ENOMEM;
	return sd_profile_observe(p, regions_only ? &tl_regions_ops : &tl_ops, tl);
}

struct sd_timeline *sd_timeline_of(const struct sd_profile *p)
{
	for (size_t k = 0; k < p->nobs; k++)
		if (p->obs[k].ops == &tl_ops || p->obs[k].ops == &tl_regions_ops)
			return p->obs[k].arg;
	return NULL;
}
