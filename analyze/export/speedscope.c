/*
 * export/speedscope.c: `sonde report --format speedscope`, the profile as a speedscope
 * file (https://www.speedscope.app/file-format-schema.json; the app's own
 * file-format-spec.ts is the reference), written from the timeline (profile/timeline.c) by
 * the dispatcher (output.c) in the CLI's thread.
 *
 * One "sampled" profile per thread (pid, tid), in the order the threads were read, or,
 * with --group-by, one per combination of the keys' values (sd_grouper_key, as the
 * group-by view makes its rows), heaviest first. Its samples are the call paths of the
 * counted samples, outermost frame first, in time order (the run's clock: every stream's
 * time from its HEADER clock), so speedscope's time-order view is the thread's history
 * with idle time left out; its weights are the report's metric per sample (without
 * --metric, time in "nanoseconds" when every source counted is in ns, as speedscope shows
 * best; else periods): 1 (unit "none") for samples, weight x period for --metric weight
 * or time (unit "nanoseconds", or
 * "none" for a source counting events), the sum of the counter's deltas for --metric
 * COUNTER ("none"), THREAD_END deltas being one more sample at the thread's end with the
 * path [thread end] (as in the flat view). Samples of weight 0 are left out: speedscope
 * ignores them.
 *
 * The file opens on the profile of the largest total (activeProfileIndex, after the
 * profiles: the busiest thread, not the first one read).
 *
 * Frames are shared by all profiles, one per function, named as the flat view names it
 * (`display`), with the file of the function where the symbolizer knows it (the first
 * file seen on its frames; a function has no line of its own: with --lines every frame
 * is a "function file:line" function already). The profiles are written before the frame
 * table (JSON does not order keys), so the file is written in one pass.
 */
#define _GNU_SOURCE /* qsort_r, asprintf */
#include "analyze/export/export.h"

#include <stdlib.h>
#include <string.h>

struct ss {
	FILE *out;
	const struct sd_profile *p;
	const struct sd_report_opts *o;
	uint32_t *frame_of;         /* func id -> frame index + 1 (0: not yet a frame) */
	uint32_t *frames;           /* frame index -> func id */
	size_t nframes;
	uint32_t *path; size_t cappath;
	size_t nprofiles;
	size_t busiest;             /* the profile of the largest total: the one it opens on */
	double most;
};

/* One sample's path as frame indices, root first. */
static int put_path(struct ss *s, const struct sd_tl_sample *e)
{
	long n = sd_tl_path(s->p, s->p->rows[e->row].cnode, &s->path, &s->cappath);
	if (n < 0)
		return -ENOMEM;
	putc('[', s->out);
	for (long i = 0; i < n; i++) {
		uint32_t f = s->path[i];
		if (!s->frame_of[f]) {
			s->frames[s->nframes] = f;
			s->frame_of[f] = (uint32_t)++s->nframes;
		}
		fprintf(s->out, "%s%u", i ? "," : "", s->frame_of[f] - 1);
	}
	putc(']', s->out);
	return 0;
}

/* The profile of samples idx[0..n) (one thread or group, in time order), named name. */
static int put_profile(struct ss *s, const char *name, const size_t *idx, size_t n)
{
	const struct sd_timeline *tl = sd_timeline_of(s->p);
	const char *unit = s->o->weight && !s->o->weight_unit && !s->o->ncids ? "nanoseconds"
			 : "none";
	double total = 0;
	int first = 1;

	for (size_t i = 0; i < n; i++)
		total += sd_tl_value(s->p, s->o, &tl->samples[idx[i]]);
	if (!(total > 0))
		return 0;
	if (total > s->most)
		s->most = total, s->busiest = s->nprofiles;
	fputs(s->nprofiles++ ? ",\n{\"type\":\"sampled\",\"name\":" : "\n{\"type\":\"sampled\",\"name\":",
	      s->out);
	sd_json_str(s->out, name, strlen(name));
	fprintf(s->out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%.0f,\"samples\":[", unit,
		total);
	for (size_t i = 0; i < n; i++) {
		const struct sd_tl_sample *e = &tl->samples[idx[i]];
		if (!(sd_tl_value(s->p, s->o, e) > 0))
			continue;
		if (!first)
			putc(',', s->out);
		first = 0;
		if (put_path(s, e))
			return -ENOMEM;
	}
	fputs("],\"weights\":[", s->out);
	first = 1;
	for (size_t i = 0; i < n; i++) {
		double v = sd_tl_value(s->p, s->o, &tl->samples[idx[i]]);
		if (v > 0)
			fprintf(s->out, "%s%.0f", first ? "" : ",", v);
		first = first && !(v > 0);
	}
	fputs("]}", s->out);
	return 0;
}

/* The frame table: every function a profile named. */
static void put_frames(struct ss *s)
{
	const struct sd_timeline *tl = sd_timeline_of(s->p);
	fputs("],\n\"shared\":{\"frames\":[", s->out);
	for (size_t i = 0; i < s->nframes; i++) {
		uint32_t f = s->frames[i];
		const struct sd_func *fn = sd_sym_func(s->p->sym, f);
		const char *file = f < tl->nfunc_file ? sd_sym_file(s->p->sym, tl->func_file[f]) : "";
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", s->out);
		sd_json_str(s->out, fn->display, strlen(fn->display));
		if (file[0]) {
			fputs(",\"file\":", s->out);
			sd_json_str(s->out, file, strlen(file));
		}
		putc('}', s->out);
	}
	fprintf(s->out, "]},\n\"activeProfileIndex\":%zu}\n", s->busiest);
}

/* One profile per thread: samples sorted by thread, then time. */
static int by_thread(struct ss *s)
{
	const struct sd_profile *p = s->p;
	size_t *idx, n = sd_timeline_of(p)->nsamples;
	int err = 0;

	if (sd_tl_order(p, NULL, &idx))
		return -ENOMEM;
	for (size_t i = 0, j; i < n && !err; i = j) {
		uint32_t th = sd_timeline_of(p)->samples[idx[i]].thread;
		for (j = i; j < n && sd_timeline_of(p)->samples[idx[j]].thread == th; j++)
			;
		const struct sd_thread_row *t = &p->threads[th];
		const struct sd_tl_thread *tt = th < sd_timeline_of(p)->nthreads ? &sd_timeline_of(p)->threads[th]
					      : NULL;
		const char *proc = tt && tt->known ? p->sinfo[tt->stream].label : "?";
		char *name = NULL;
		if (asprintf(&name, "%s %s (tid %llu)", proc, t->name[0] ? t->name : "?",
			     (unsigned long long)t->tid) < 0)
			err = -ENOMEM;
		else
			err = put_profile(s, name, idx + i, j - i);
		free(name);
	}
	free(idx);
	return err;
}

struct group { char *name; double total; uint32_t rank; };

static int group_cmp(const void *a, const void *b)
{
	const struct group *x = *(struct group *const *)a, *y = *(struct group *const *)b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return sd_natcmp(x->name, y->name);
}

/* "k1=v1, k2=v2" of a grouper key (values each followed by a NUL). */
static char *group_name(const struct sd_report_opts *o, const char *key, size_t len)
{
	char *buf = NULL;
	size_t blen = 0;
	FILE *m = open_memstream(&buf, &blen);
	if (!m)
		return NULL;
	const char *v = key;
	for (size_t k = 0; k < o->ngroup && v < key + len; k++, v += strlen(v) + 1)
		fprintf(m, "%s%s=%s", k ? ", " : "", o->group_by[k], v);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The group of every sample (ids in first-seen order) into gid; the groups into *gs. */
static int make_groups(struct ss *s, uint32_t *gid, struct group **gs, size_t *ngs)
{
	const struct sd_profile *p = s->p;
	struct sd_grouper *g = sd_grouper_new(p, s->o->group_by, s->o->ngroup, 0);
	struct sd_strmap map = { 0 };
	size_t cap = 0;
	int err = -ENOMEM;

	if (!g)
		return -ENOMEM;
	for (size_t i = 0; i < sd_timeline_of(p)->nsamples; i++) {
		const struct sd_tl_sample *e = &sd_timeline_of(p)->samples[i];
		const char *key;
		size_t len;
		uint32_t id;
		if (sd_grouper_key(g, &p->rows[e->row], &key, &len))
			goto out;
		if (!sd_strmap_get(&map, key, len, &id)) {
			id = (uint32_t)*ngs;
			if (sd_grow(gs, &cap, *ngs + 1, sizeof(**gs)) ||
			    !((*gs)[id].name = group_name(s->o, key, len)))
				goto out;
			(*ngs)++;
			if (sd_strmap_put(&map, key, len, id))
				goto out;
		}
		gid[i] = id;
		(*gs)[id].total += sd_tl_value(p, s->o, e);
	}
	err = 0;
out:
	sd_strmap_fini(&map);
	sd_grouper_free(g);
	return err;
}

/* One profile per --group-by value: samples sorted by group (heaviest first), time. */
static int by_group(struct ss *s)
{
	size_t n = sd_timeline_of(s->p)->nsamples, ngs = 0, *idx = NULL;
	uint32_t *gid = malloc((n + 1) * sizeof(*gid));
	struct group *gs = NULL, **order = NULL;
	int err = -ENOMEM;

	if (!gid || make_groups(s, gid, &gs, &ngs) ||
	    !(order = malloc((ngs + 1) * sizeof(*order))))
		goto out;
	for (size_t i = 0; i < ngs; i++)
		order[i] = &gs[i];
	qsort(order, ngs, sizeof(*order), group_cmp);
	for (size_t i = 0; i < ngs; i++)
		order[i]->rank = (uint32_t)i;
	for (size_t i = 0; i < n; i++)
		gid[i] = gs[gid[i]].rank;
	if (sd_tl_order(s->p, gid, &idx))
		goto out;
	err = 0;
	for (size_t i = 0, j; i < n && !err; i = j) {
		for (j = i; j < n && gid[idx[j]] == gid[idx[i]]; j++)
			;
		err = put_profile(s, order[gid[idx[i]]]->name, idx + i, j - i);
	}
out:
	for (size_t i = 0; i < ngs; i++)
		free(gs[i].name);
	free(gs);
	free(order);
	free(gid);
	free(idx);
	return err;
}

/* The metric asked for, but time where the default (periods) counts time: every source
 * counted is in ns (cpu-time, wall-time), so a period is a duration and the weights are
 * nanoseconds, as speedscope shows them best. */
static struct sd_report_opts time_metric(const struct sd_profile *p, const struct sd_report_opts *o)
{
	struct sd_report_opts t = *o;
	int timed = p->nsources > 0;
	for (size_t i = 0; i < p->nsources; i++)
		if (p->sources[i].samples && (!p->sources[i].unit || strcmp(p->sources[i].unit, "ns")))
			timed = 0;
	if (!o->metric_given && timed) {
		t.weight = 1;
		t.weight_unit = NULL;
	}
	return t;
}

int sd_tl_speedscope(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o0)
{
	size_t nf = sd_sym_nfuncs(p->sym) + 1;
	struct sd_report_opts ot = time_metric(p, o0);
	const struct sd_report_opts *o = &ot;
	struct ss s = { .out = out, .p = p, .o = o, .frame_of = calloc(nf, sizeof(uint32_t)),
			.frames = calloc(nf, sizeof(uint32_t)) };
	int err = -ENOMEM;

	if (!s.frame_of || !s.frames)
		goto out;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"sonde report --format speedscope\",\"name\":\"sonde report\","
	      "\"profiles\":[", out);
	err = o->ngroup ? by_group(&s) : by_thread(&s);
	if (err)
		goto out;
	if (!s.nprofiles) /* nothing counted: one empty profile, so that the file opens */
		fputs("\n{\"type\":\"sampled\",\"name\":\"(no samples)\",\"unit\":\"none\","
		      "\"startValue\":0,\"endValue\":0,\"samples\":[],\"weights\":[]}", out);
	put_frames(&s);
out:
	free(s.frame_of);
	free(s.frames);
	free(s.path);
	return err;
}
