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
 * end of the stream are closed at the thread's last known time and flagged as forced.
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
 */
#include "analyze/analyze.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct snode { uint32_t parent; int64_t mod; uint64_t addr; uint64_t samples; double weight;
	       uint32_t cnode; int used; uint32_t file, line; /* innermost frame's source */ };
struct sopen { uint32_t node; uint64_t t, child_ns; uint64_t *cnt; /* counts at begin */ };
struct sthread { uint64_t tid, t, now, samples, first, last, last_t; char *name; int defined;
		 struct sopen *open; size_t nopen, capopen; uint32_t row;
		 uint64_t *lastcnt; /* counts of its last REGION that had them */
		 uint64_t *endcnt;  /* its THREAD_END deltas, summed (NULL: none) */
		 /* coverage (coverage.c): cpu-time samples' ns, the kernel's CPU time from
		  * THREAD_END cpu (end_cpu) or its last THREAD_CPU (flush), and at that
		  * record the samples and drops so far (snap_*) */
		 double cov_sampled, snap_sampled, cov_accounted;
		 uint64_t snap_drops[SD_COV_NDROP];
		 int end_cpu, split, has_flush;
		 uint64_t end_cpu_ns, user_ns, sys_ns, flush_cpu_ns;
		 /* UNSAMPLED (cumulative, the last one counts): CPU time the runtime
		  * knows it did not sample: its descriptors closed behind its back
		  * (fd_closed), a raw clone found late (not_sampled), a CLONE_VM child
		  * process never sampled (clone_vm: its whole CPU time) */
		 uint64_t un_fd_closed, un_not_sampled, un_clone_vm; };
struct sattr { char *name; uint32_t gid; int merged; };
struct sctx { uint32_t parent, attr, gnode; char *value; int used; };
struct sagg { uint32_t thread, source, ctx, pctx, node; int kept; uint64_t samples, first, last;
	      double weight; uint64_t nocnt; };
struct sreg { uint32_t thread, node; uint64_t calls, incl, excl, min, max, forced;
	      uint64_t *cnt; /* inclusive counter deltas, NULL until the first */ };
struct scounter { char *name, *group, *unit, *source; uint32_t gid; };
struct ssource { char *name, *spec, *unit, *mechanism; uint64_t period, samples; double weight; };

/* Everything known about the stream being read. Index 0 of nodes is the root; index 0 of
 * threads collects samples of undefined threads; sources[nsources] undefined sources. */
struct sstate {
	uint64_t pid;
	int64_t rank;                             /* HEADER rank, -1 without one */
	char *host;                               /* HEADER host */
	long host_id;                             /* interned at merge (value_strs) */
	struct snode *nodes; size_t nnodes;       /* nnodes includes the root */
	int *mods; size_t nmods;                  /* stream module id - 1 -> symbolizer handle */
	char **modpath; uint8_t **modbid; size_t *modbidlen; /* registered at merge time */
	struct sthread *threads; size_t nthreads; /* includes slot 0 */
	struct ssource *sources; size_t nsources; /* plus one more for undefined */
	uint64_t nostack, badnode;
	double nostack_w, badnode_w;
	struct sd_strmap drops;                   /* thread \0 reason -> index in dropv */
	uint64_t *dropv; char **dropr; size_t ndrops;
	uint64_t *dropt;                          /* the thread of each entry */
	long cpu_src;                             /* the cpu-time source (-1: none) */
	struct sattr *attrs; size_t nattrs, capattrs;  /* includes slot 0 */
	struct sctx *ctxs; size_t nctxs, capctxs;      /* includes the root */
	struct sagg *aggs; size_t naggs, capaggs;
	struct aggslot *aggtab; size_t aggcap;         /* key -> index in aggs (open addressing) */
	uint32_t last_agg; int have_last;              /* cache: consecutive samples repeat */
	struct sreg *regs; size_t nregs, capregs;
	struct sd_u64map regmap;                       /* thread << 32 | node -> index in regs */
	uint64_t nregion_records, nregion_counts;
	struct scounter *ctrs; size_t nctrs;           /* HEADER counters */
	char **unames, **ureasons; size_t nun;         /* HEADER counters_unavailable */
	uint64_t *aggcnt; size_t capaggcnt;            /* nctrs sums per agg */
	char *exe;                                     /* HEADER exe (empty MODULE paths) */
	char *cwd;                                     /* HEADER cwd (relative MODULE paths) */
	int has_exe, has_ppid, has_clock;              /* HEADER exe, ppid, clock present */
	uint64_t ppid, origin_ns;                      /* HEADER ppid, clock monotonic_ns */
	char *name, *command;                          /* process name; argv joined (or NULL) */
	uint64_t max_t;                                /* latest t of its records */
	double cpu_ns;                                 /* its threads' CPU time (coverage) */
	uint64_t cpu_threads, cpu_flush, nthreads_def; /* threads with it; from a flush; all */
	int ended;                                     /* the last known record was END */
	char *end_reason;                              /* of the last END (NULL: none) */
	uint64_t end_signal;                           /* its stats `signal` */
	uint64_t nsamples_all;                         /* SAMPLE records read */
};

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
	free(p->nodes);
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

static void sstate_fini(struct sstate *st)
{
	free(st->name), free(st->command);
	free(st->nodes);
	for (size_t i = 0; i < st->nmods; i++) {
		free(st->modpath ? st->modpath[i] : NULL);
		free(st->modbid ? st->modbid[i] : NULL);
	}
	free(st->modpath);
	free(st->modbid);
	free(st->modbidlen);
	free(st->mods);
	for (size_t i = 0; i < st->nthreads; i++) {
		free(st->threads[i].name);
		for (size_t k = 0; k < st->threads[i].nopen; k++)
			free(st->threads[i].open[k].cnt);
		free(st->threads[i].open);
		free(st->threads[i].lastcnt);
		free(st->threads[i].endcnt);
	}
	free(st->threads);
	for (size_t i = 0; i < st->nattrs; i++)
		free(st->attrs[i].name);
	free(st->attrs);
	for (size_t i = 0; i < st->nctxs; i++)
		free(st->ctxs[i].value);
	free(st->ctxs);
	free(st->aggs);
	free(st->aggtab);
	for (size_t i = 0; i < st->nregs; i++)
		free(st->regs[i].cnt);
	free(st->regs);
	sd_u64map_fini(&st->regmap);
	for (size_t i = 0; i < st->nctrs; i++) {
		struct scounter *c = &st->ctrs[i];
		free(c->name), free(c->group), free(c->unit), free(c->source);
	}
	free(st->ctrs);
	for (size_t i = 0; i < st->nun; i++)
		free(st->unames[i]), free(st->ureasons[i]);
	free(st->unames);
	free(st->ureasons);
	free(st->aggcnt);
	free(st->exe);
	free(st->cwd);
	free(st->end_reason);
	for (size_t i = 0; i <= st->nsources && st->sources; i++) {
		struct ssource *s = &st->sources[i];
		free(s->name), free(s->spec), free(s->unit), free(s->mechanism);
	}
	free(st->sources);
	free(st->host);
	sd_strmap_fini(&st->drops);
	for (size_t i = 0; i < st->ndrops; i++)
		free(st->dropr[i]);
	free(st->dropr);
	free(st->dropv);
	free(st->dropt);
}

static char *strdup_or(const msgpack_object *o, const char *dflt)
{
	char *s = sd_obj_strdup(o);
	return s ? s : strdup(dflt);
}

/* Is key `k` of map m, when present, of type `ty` (POSITIVE_INTEGER, STR, MAP, ARRAY)? */
static int key_ok(const msgpack_object *m, const char *k, msgpack_object_type ty)
{
	const msgpack_object *v = sd_map_get(m, k);
	return !v || v->type == ty;
}

static const char *type_name(msgpack_object_type ty)
{
	return ty == MSGPACK_OBJECT_POSITIVE_INTEGER ? "an unsigned integer"
	     : ty == MSGPACK_OBJECT_STR ? "a string" : ty == MSGPACK_OBJECT_MAP ? "a map"
	     : "an array";
}

/* The keys of the maps of a HEADER (docs/FORMAT.md) and their types; a key that is
 * present with another type makes the stream corrupt. Unknown keys are ignored. */
struct keyty { const char *key; msgpack_object_type ty; };
#define U MSGPACK_OBJECT_POSITIVE_INTEGER
#define S MSGPACK_OBJECT_STR
#define M MSGPACK_OBJECT_MAP
#define A MSGPACK_OBJECT_ARRAY
static const struct keyty info_keys[] = {
	{ "pid", U }, { "ppid", U }, { "host", S }, { "exe", S }, { "argv", A }, { "clock", M },
	{ "sources", A }, { "unwind", S }, { "max_depth", U }, { "rank", U }, { "fork_of", U },
	{ "seq", U }, { "sonde", S }, { "counters", A }, { "counters_unavailable", A },
	{ "ring_bytes", U }, { NULL, U } };
static const struct keyty source_keys[] = {
	{ "name", S }, { "spec", S }, { "unit", S }, { "period", U }, { "mechanism", S },
	{ "signal", U }, { "fallback_reason", S }, { NULL, U } };
static const struct keyty counter_keys[] = {
	{ "name", S }, { "group", S }, { "unit", S }, { "source", S }, { NULL, U } };
static const struct keyty unavail_keys[] = { { "name", S }, { "reason", S }, { NULL, U } };
static const struct keyty clock_keys[] = {
	{ "monotonic_ns", U }, { "realtime_ns", U }, { NULL, U } };
static const struct keyty stats_keys[] = {
	{ "samples", U }, { "dropped", U }, { "threads", U }, { "frames", U }, { "bytes", U },
	{ "signal", U }, { NULL, U } };
#undef U
#undef S
#undef M
#undef A

/* NULL if map m's keys of table kt have their types, else why not (in buf). */
static const char *check_keys(const msgpack_object *m, const struct keyty *kt,
			      const char *what, char *buf, size_t len)
{
	for (; kt->key; kt++)
		if (!key_ok(m, kt->key, kt->ty)) {
			snprintf(buf, len, "%s `%s` is not %s", what, kt->key, type_name(kt->ty));
			return buf;
		}
	return NULL;
}

/* NULL if `key` of info, when present, is an array of maps whose keys have their types. */
static const char *check_maps(const msgpack_object *info, const char *key,
			      const struct keyty *kt, char *buf, size_t len)
{
	const msgpack_object *a = sd_map_get(info, key);
	char what[64];

	for (uint32_t i = 0; a && i < a->via.array.size; i++) {
		const msgpack_object *m = &a->via.array.ptr[i];
		snprintf(what, sizeof(what), "HEADER %s[%u]", key, (unsigned)i);
		if (m->type != MSGPACK_OBJECT_MAP) {
			snprintf(buf, len, "%s is not a map", what);
			return buf;
		}
		if (check_keys(m, kt, what, buf, len))
			return buf;
	}
	return NULL;
}

/* NULL if the HEADER's info map is well typed (docs/FORMAT.md, HEADER), else why not. */
static const char *check_header(const struct sd_record *r, char *buf, size_t len)
{
	const msgpack_object *info = r->n > SD_F_HEADER_INFO ? &r->v[SD_F_HEADER_INFO] : NULL;
	const msgpack_object *argv;

	if (!info || info->type != MSGPACK_OBJECT_MAP)
		return "HEADER info is not a map";
	if (check_keys(info, info_keys, "HEADER", buf, len) ||
	    check_maps(info, "sources", source_keys, buf, len) ||
	    check_maps(info, "counters", counter_keys, buf, len) ||
	    check_maps(info, "counters_unavailable", unavail_keys, buf, len))
		return buf;
	if (sd_map_get(info, "clock") &&
	    check_keys(sd_map_get(info, "clock"), clock_keys, "HEADER clock", buf, len))
		return buf;
	if ((argv = sd_map_get(info, "argv")))
		for (uint32_t i = 0; i < argv->via.array.size; i++)
			if (argv->via.array.ptr[i].type != MSGPACK_OBJECT_STR)
				return "HEADER `argv` holds a value that is not a string";
	return NULL;
}

/* A copy of p[0..len) as a C string (p may be NULL when len is 0). NULL on ENOMEM. */
static char *dupn(const char *p, size_t len)
{
	char *d = malloc(len + 1);
	if (d) {
		if (len)
			memcpy(d, p, len);
		d[len] = 0;
	}
	return d;
}

/* The process name of a HEADER (docs/REPORT.md, "Processes"): the basename of argv[0],
 * else of exe, else "?"; control characters become '?' (it labels text tables). */
static char *process_name(const msgpack_object *argv, const msgpack_object *exe)
{
	const msgpack_object *o = argv && argv->via.array.size ? &argv->via.array.ptr[0] : NULL;
	const char *p = NULL;
	size_t len = 0;

	for (int k = 0; k < 2 && !len; k++, o = exe) {
		if (!o || o->type != MSGPACK_OBJECT_STR)
			continue;
		p = o->via.str.ptr;
		len = o->via.str.size;
		while (len && p[len - 1] == '/')
			len--;
		for (size_t i = len; i-- > 0;)
			if (p[i] == '/') {
				p += i + 1;
				len -= i + 1;
				break;
			}
	}
	char *n = len ? dupn(p, len) : strdup("?");
	for (char *c = n; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return n;
}

/* argv joined with spaces (NULL without argv). */
static char *join_argv(const msgpack_object *argv)
{
	size_t len = 1;

	if (!argv)
		return NULL;
	for (uint32_t i = 0; i < argv->via.array.size; i++)
		len += argv->via.array.ptr[i].via.str.size + 1;
	char *j = malloc(len), *q = j;
	if (!j)
		return NULL;
	for (uint32_t i = 0; i < argv->via.array.size; i++) {
		const msgpack_object_str *a = &argv->via.array.ptr[i].via.str;
		if (i)
			*q++ = ' ';
		if (a->size)
			memcpy(q, a->ptr, a->size);
		q += a->size;
	}
	*q = 0;
	return j;
}

static int on_header(struct sstate *st, const struct sd_record *r, struct sd_stream *strm)
{
	const msgpack_object *info = r->n > SD_F_HEADER_INFO ? &r->v[SD_F_HEADER_INFO] : NULL;
	const char *bad = check_header(r, strm->why_buf, sizeof(strm->why_buf));

	if (bad) {
		strm->err_off = r->offset;
		strm->err_why = bad;
		return SD_ERR_CORRUPT;
	}
	const msgpack_object *srcs = sd_map_get(info, "sources");
	size_t n = srcs && srcs->type == MSGPACK_OBJECT_ARRAY ? srcs->via.array.size : 0;

	sd_obj_u64(sd_map_get(info, "pid"), &st->pid);
	st->host = strdup_or(sd_map_get(info, "host"), "?");
	st->exe = strdup_or(sd_map_get(info, "exe"), "[unknown module]");
	if (!st->host || !st->exe)
		return -ENOMEM;
	st->cwd = sd_obj_strdup(sd_map_get(info, "cwd")); /* NULL: none (or no memory) */
	const msgpack_object *argv = sd_map_get(info, "argv");
	st->has_exe = sd_map_get(info, "exe") != NULL;
	st->has_ppid = sd_obj_u64(sd_map_get(info, "ppid"), &st->ppid) == 0;
	st->has_clock = sd_obj_u64(sd_map_get(sd_map_get(info, "clock"), "monotonic_ns"),
				   &st->origin_ns) == 0;
	if (!(st->name = process_name(argv, sd_map_get(info, "exe"))) ||
	    (argv && !(st->command = join_argv(argv))))
		return -ENOMEM;
	uint64_t rank;
	st->rank = sd_obj_u64(sd_map_get(info, "rank"), &rank) == 0 && rank <= INT64_MAX
		   ? (int64_t)rank : -1;
	st->sources = calloc(n + 1, sizeof(*st->sources));
	if (!st->sources)
		return -ENOMEM;
	st->nsources = n;
	for (size_t i = 0; i <= n; i++) {
		const msgpack_object *m = i < n ? &srcs->via.array.ptr[i] : NULL;
		struct ssource *s = &st->sources[i];
		s->name = strdup_or(sd_map_get(m, "name"), i < n ? "?" : "[unknown source]");
		s->spec = strdup_or(sd_map_get(m, "spec"), "?");
		s->unit = strdup_or(sd_map_get(m, "unit"), "ns");
		s->mechanism = strdup_or(sd_map_get(m, "mechanism"), "?");
		sd_obj_u64(sd_map_get(m, "period"), &s->period);
		if (!s->name || !s->spec || !s->unit || !s->mechanism)
			return -ENOMEM;
	}
	st->cpu_src = -1; /* coverage: the first cpu-time source in ns */
	for (size_t i = 0; i < n && st->cpu_src < 0; i++)
		if (!strcmp(st->sources[i].name, "cpu-time") && !strcmp(st->sources[i].unit, "ns"))
			st->cpu_src = (long)i;
	/* counters and unavailable counters; entries that are not maps get "?" names */
	const msgpack_object *ctrs = sd_map_get(info, "counters");
	n = ctrs && ctrs->type == MSGPACK_OBJECT_ARRAY ? ctrs->via.array.size : 0;
	if (n && !(st->ctrs = calloc(n, sizeof(*st->ctrs))))
		return -ENOMEM;
	st->nctrs = n;
	for (size_t i = 0; i < n; i++) {
		const msgpack_object *m = &ctrs->via.array.ptr[i];
		struct scounter *c = &st->ctrs[i];
		c->name = strdup_or(sd_map_get(m, "name"), "?");
		c->group = strdup_or(sd_map_get(m, "group"), c->name ? c->name : "?");
		c->unit = strdup_or(sd_map_get(m, "unit"), "count");
		c->source = strdup_or(sd_map_get(m, "source"), "?");
		if (!c->name || !c->group || !c->unit || !c->source)
			return -ENOMEM;
	}
	const msgpack_object *un = sd_map_get(info, "counters_unavailable");
	n = un && un->type == MSGPACK_OBJECT_ARRAY ? un->via.array.size : 0;
	if (n && (!(st->unames = calloc(n, sizeof(char *))) ||
		  !(st->ureasons = calloc(n, sizeof(char *)))))
		return -ENOMEM;
	st->nun = n;
	for (size_t i = 0; i < n; i++) {
		const msgpack_object *m = &un->via.array.ptr[i];
		st->unames[i] = strdup_or(sd_map_get(m, "name"), "?");
		st->ureasons[i] = strdup_or(sd_map_get(m, "reason"), "no reason given");
		if (!st->unames[i] || !st->ureasons[i])
			return -ENOMEM;
	}
	/* thread slot 0: samples of threads never announced */
	st->threads = calloc(1, sizeof(*st->threads));
	if (!st->threads)
		return -ENOMEM;
	st->nthreads = 1;
	st->nodes = calloc(1, sizeof(*st->nodes));
	if (!st->nodes || sd_grow(&st->attrs, &st->capattrs, 1, sizeof(*st->attrs)) ||
	    sd_grow(&st->ctxs, &st->capctxs, 1, sizeof(*st->ctxs)))
		return -ENOMEM;
	st->nnodes = 1;
	st->nattrs = 1;
	st->nctxs = 1;
	return 0;
}

/* A definition of id `id` in a table of n entries (slot 0 reserved): 1..n redefine,
 * n+1..n appends; anything else is corrupt. Returns the index or -1. */
static long def_index(uint64_t id, size_t n)
{
	return id >= 1 && id <= n ? (long)id : -1;
}

/* Count one sample under its key (see struct sagg), with its counter deltas (a checked
 * array of nctrs unsigned integers, or NULL) or nocnt = 1 when flag 8 says unreadable. */
/* The per-key table: the hot lookup of every SAMPLE, so the key lives in the slot
 * (no pointer to chase) and the hash is a few multiplications. */
struct aggslot { uint32_t k[5]; uint32_t idx1; /* index + 1; 0 = empty */ };

static uint64_t agg_hash(const uint32_t *k)
{
	uint64_t h = ((uint64_t)k[0] << 32 | k[1]) * 0x9E3779B97F4A7C15ull;
	h ^= ((uint64_t)k[2] << 32 | k[3]) * 0xC2B2AE3D27D4EB4Full;
	h ^= (uint64_t)k[4] * 0x165667B19E3779F9ull;
	return h ^ (h >> 29);
}

static struct aggslot *agg_find(struct aggslot *tab, size_t cap, const uint32_t *k)
{
	size_t i = agg_hash(k) & (cap - 1);
	while (tab[i].idx1 && memcmp(tab[i].k, k, sizeof tab[i].k))
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static int agg_grow(struct sstate *st)
{
	size_t cap = st->aggcap ? st->aggcap * 2 : 1024;
	struct aggslot *tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < st->aggcap; i++)
		if (st->aggtab[i].idx1)
			*agg_find(tab, cap, st->aggtab[i].k) = st->aggtab[i];
	free(st->aggtab);
	st->aggtab = tab;
	st->aggcap = cap;
	return 0;
}

static int agg_add(struct sstate *st, uint32_t key[5], double w, uint64_t now,
		   const msgpack_object *deltas, int nocnt)
{
	uint32_t idx;

	const struct sagg *last = st->have_last ? &st->aggs[st->last_agg] : NULL;
	if (last && last->thread == key[0] && last->source == key[1] && last->ctx == key[2] &&
	    last->pctx == key[3] && last->node == key[4]) {
		idx = st->last_agg;
	} else {
		if ((st->naggs + 1) * 2 > st->aggcap && agg_grow(st))
			return -ENOMEM;
		struct aggslot *slot = agg_find(st->aggtab, st->aggcap, key);
		if (slot->idx1) {
			idx = slot->idx1 - 1;
			goto found;
		}
		if (st->naggs >= UINT32_MAX - 1 ||
		    sd_grow(&st->aggs, &st->capaggs, st->naggs + 1, sizeof(*st->aggs)) ||
		    (st->nctrs && sd_grow(&st->aggcnt, &st->capaggcnt, (st->naggs + 1) * st->nctrs,
				       sizeof(*st->aggcnt))))
			return -ENOMEM;
		idx = (uint32_t)st->naggs;
		memcpy(slot->k, key, sizeof slot->k);
		slot->idx1 = idx + 1;
		struct sagg *a = &st->aggs[st->naggs++];
		a->thread = key[0], a->source = key[1], a->ctx = key[2], a->pctx = key[3];
		a->node = key[4];
		a->first = now;
	}
found:;
	struct sagg *a = &st->aggs[idx];
	a->samples++;
	a->weight += w;
	a->last = now;
	a->nocnt += nocnt != 0;
	for (uint32_t k = 0; deltas && k < deltas->via.array.size; k++)
		st->aggcnt[(size_t)idx * st->nctrs + k] += deltas->via.array.ptr[k].via.u64;
	st->last_agg = idx;
	st->have_last = 1;
	return 0;
}

/* Close the innermost open region of thread ti at time `end`, with the thread's counter
 * totals `cnt` at that time (nctrs values, or NULL if unknown). */
static int region_close(struct sstate *st, uint32_t ti, uint64_t end, int forced,
			const uint64_t *cnt)
{
	struct sthread *t = &st->threads[ti];
	struct sopen o = t->open[--t->nopen];
	uint64_t dur = end > o.t ? end - o.t : 0, key = (uint64_t)ti << 32 | o.node;
	uint32_t idx;

	if (!sd_u64map_get(&st->regmap, key, &idx)) {
		if (st->nregs >= UINT32_MAX - 1 ||
		    sd_grow(&st->regs, &st->capregs, st->nregs + 1, sizeof(*st->regs)))
			return -ENOMEM;
		idx = (uint32_t)st->nregs;
		if (sd_u64map_put(&st->regmap, key, idx)) {
			free(o.cnt);
			return -ENOMEM;
		}
		struct sreg *g = &st->regs[st->nregs++];
		g->thread = ti;
		g->node = o.node;
		g->min = UINT64_MAX;
	}
	struct sreg *g = &st->regs[idx];
	g->calls++;
	g->incl += dur;
	g->excl += dur > o.child_ns ? dur - o.child_ns : 0;
	if (dur < g->min)
		g->min = dur;
	if (dur > g->max)
		g->max = dur;
	g->forced += forced != 0;
	if (o.cnt && cnt) {
		if (!g->cnt && !(g->cnt = calloc(st->nctrs, sizeof(*g->cnt)))) {
			free(o.cnt);
			return -ENOMEM;
		}
		for (size_t k = 0; k < st->nctrs; k++)
			g->cnt[k] += cnt[k] > o.cnt[k] ? cnt[k] - o.cnt[k] : 0;
	}
	free(o.cnt);
	if (t->nopen)
		t->open[t->nopen - 1].child_ns += dur;
	return 0;
}

/* Replay one REGION event of a defined thread and context node; `counts` is its checked
 * counts array (nctrs unsigned integers) or NULL. */
static int region_event(struct sstate *st, uint32_t ti, uint64_t t, uint32_t node, uint64_t ev,
			const msgpack_object *counts)
{
	struct sthread *th = &st->threads[ti];
	uint64_t *cnt = NULL;
	int err;

	if (t > th->last_t)
		th->last_t = t;
	if (counts && st->nctrs) {
		if (!th->lastcnt && !(th->lastcnt = calloc(st->nctrs, sizeof(*th->lastcnt))))
			return -ENOMEM;
		for (size_t k = 0; k < st->nctrs; k++)
			th->lastcnt[k] = counts->via.array.ptr[k].via.u64;
		cnt = th->lastcnt;
	}
	if (ev == 1) {
		uint64_t *copy = NULL;
		if (sd_grow(&th->open, &th->capopen, th->nopen + 1, sizeof(*th->open)))
			return -ENOMEM;
		if (cnt) {
			if (!(copy = malloc(st->nctrs * sizeof(*copy))))
				return -ENOMEM;
			memcpy(copy, cnt, st->nctrs * sizeof(*copy));
		}
		th->open[th->nopen++] = (struct sopen){ node, t, 0, copy };
		return 0;
	}
	size_t k = th->nopen;
	while (k && th->open[k - 1].node != node)
		k--;
	if (!k)
		return 0; /* not open: nothing to time */
	while (th->nopen > k) /* misnested: inner regions end with it, forced */
		if ((err = region_close(st, ti, t, 1, cnt)))
			return err;
	return region_close(st, ti, t, ev == 2, cnt);
}

/* A CONTEXT value as a string: str as is, integers in decimal, floats as %.15g. */
static char *value_str(const msgpack_object *o)
{
	char buf[64];

	switch (o->type) {
	case MSGPACK_OBJECT_STR:
		return dupn(o->via.str.ptr, o->via.str.size);
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->via.u64);
		return strdup(buf);
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		snprintf(buf, sizeof(buf), "%lld", (long long)o->via.i64);
		return strdup(buf);
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		snprintf(buf, sizeof(buf), "%.15g", o->via.f64);
		return strdup(buf);
	default:
		return NULL;
	}
}

/* NULL if o is an array of n unsigned integers, else why it is corrupt. */
static const char *check_counts(const msgpack_object *o, size_t n, const char *what)
{
	int i = !strcmp(what, "SAMPLE deltas") ? 0 : !strcmp(what, "REGION counts") ? 1 : 2;
	static const char *const why[3][3] = {
		{ "SAMPLE deltas is not an array",
		  "SAMPLE deltas does not have one value per header counter",
		  "SAMPLE deltas holds a value that is not an unsigned integer" },
		{ "REGION counts is not an array",
		  "REGION counts does not have one value per header counter",
		  "REGION counts holds a value that is not an unsigned integer" },
		{ "THREAD_END deltas is not an array",
		  "THREAD_END deltas does not have one value per header counter",
		  "THREAD_END deltas holds a value that is not an unsigned integer" },
	};
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return why[i][0];
	if (o->via.array.size != n && !(i == 2 && o->via.array.size == 0)) /* THREAD_END: none */
		return why[i][1];
	for (uint32_t k = 0; k < o->via.array.size; k++)
		if (o->via.array.ptr[k].type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			return why[i][2];
	return NULL;
}

static const char generic[] = "a field is missing or has the wrong type";

/* Which field of a record of known kind is missing or of the wrong type (docs/FORMAT.md's
 * layouts; u: unsigned integer, s: string, m: map; "?": any), in buf; the generic
 * reason when each listed field is fine. Optional fields count only when present. */
static const char *field_why(const struct sd_record *r, char *buf, size_t len)
{
	static const char *const layout[SD_K_LAST + 1][SD_F_SAMPLE_N - 1] = {
		[SD_K_MODULE] = { "module:u", "t:u", "path:s" },
		[SD_K_THREAD] = { "thread:u", "tid:u", "t:u" },
		[SD_K_THREAD_END] = { "thread:u" },
		[SD_K_FRAME] = { "node:u", "parent:u", "module:u", "addr:u" },
		[SD_K_SAMPLE] = { "thread:u", "dt:u", "source:u", "node:u", "weight:u", "+flags:u",
				  "+context:u", "+pcontext:u" },
		[SD_K_DROPS] = { "thread:u", "counts:m" },
		[SD_K_ATTRIBUTE] = { "attr:u", "name:s", "type:s", "scope:s" },
		[SD_K_CONTEXT] = { "node:u", "parent:u", "attr:u", "value:?" },
		[SD_K_REGION] = { "thread:u", "t:u", "node:u", "event:u" },
		[SD_K_THREAD_CPU] = { "thread:u", "t:u", "cpu_ns:u" },
		[SD_K_UNSAMPLED] = { "thread:u", "t:u", "reason:s", "cpu_ns:u" },
	};
	static const char *const kinds[SD_K_LAST + 1] = SD_KIND_NAMES;

	if (r->kind >= SD_K_UNSAMPLED) /* UNSAMPLED: the generic reason, as ever */
		return generic;
	for (uint32_t i = 0; i < SD_F_SAMPLE_N - 1 && layout[r->kind][i]; i++) {
		const char *f = layout[r->kind][i];
		int opt = f[0] == '+';
		size_t nl = strcspn(f + opt, ":");
		char ty = f[opt + nl + 1];
		const msgpack_object *o = i + 1 < r->n ? &r->v[i + 1] : NULL;
		if (!o && opt)
			break;
		if (o && (ty == '?' || (ty == 'u' && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) ||
			  (ty == 's' && o->type == MSGPACK_OBJECT_STR) ||
			  (ty == 'm' && o->type == MSGPACK_OBJECT_MAP)))
			continue;
		snprintf(buf, len, "%s %.*s is %s", kinds[r->kind], (int)nl, f + opt,
			 !o ? "missing" : ty == 'u' ? "not an unsigned integer"
			 : ty == 's' ? "not a string" : "not a map");
		return buf;
	}
	return generic;
}

/* NULL if THREAD_END's cpu map o is well typed, else why not. */
static const char *check_cpu(const msgpack_object *o, struct sd_stream *s)
{
	static const struct keyty cpu_keys[] = {
		{ "cpu_ns", MSGPACK_OBJECT_POSITIVE_INTEGER }, { "user_ns", MSGPACK_OBJECT_POSITIVE_INTEGER },
		{ "sys_ns", MSGPACK_OBJECT_POSITIVE_INTEGER }, { NULL, MSGPACK_OBJECT_POSITIVE_INTEGER } };
	if (o->type != MSGPACK_OBJECT_MAP)
		return "THREAD_END cpu is not a map";
	return check_keys(o, cpu_keys, "THREAD_END cpu", s->why_buf, sizeof(s->why_buf));
}

/* Thread thr's sample drops so far, by coverage gap (sd_cov_drop_names). */
static void thread_drops(const struct sstate *st, uint64_t thr, uint64_t out[SD_COV_NDROP])
{
	memset(out, 0, SD_COV_NDROP * sizeof(*out));
	for (size_t i = 0; i < st->ndrops; i++) {
		int k = st->dropt[i] == thr ? sd_cov_drop_index(st->dropr[i]) : -1;
		if (k >= 0)
			out[k] += st->dropv[i];
	}
}

/* One decoder per record kind (docs/FORMAT.md, format/format.h). Each reads
 * its fields by name, checks them and the ids they name, and updates the
 * stream's state. Returns 0, -ENOMEM, or REC_BAD with *why set (the generic
 * reason: field_why() then names the missing or mistyped field). */
#define REC_BAD 1

struct rec_ctx {
	struct sd_profile *p;
	struct sstate *st;
	const struct sd_record *r;
	struct sd_stream *s;
	const char *why;
};

/* A thread id the records before this one defined, for kind `what`. */
static int known_thread(struct rec_ctx *c, uint64_t thread, const char *why)
{
	if (thread == 0 || thread >= c->st->nthreads) {
		c->why = why;
		return 0;
	}
	return 1;
}

static int rec_module(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t id;
	const char *str;
	uint32_t len;
	long i;
	const msgpack_object *bid = r->n > SD_F_MODULE_BUILD_ID ? &r->v[SD_F_MODULE_BUILD_ID] : NULL;
	if (sd_rec_u64(r, SD_F_MODULE_ID, &id) || sd_rec_str(r, SD_F_MODULE_PATH, &str, &len) ||
	    !bid || (bid->type != MSGPACK_OBJECT_BIN && bid->type != MSGPACK_OBJECT_NIL))
		return REC_BAD;
	c->why = "MODULE id out of order";
	if ((i = def_index(id, st->nmods + 1)) < 0)
		return REC_BAD;
	/* Registered with the symbolizer when the stream is merged: parsing
	 * may run in a worker thread (--jobs), the symbolizer is shared. */
	/* an empty path is the main program's (docs/FORMAT.md, MODULE) */
	char *path = len ? dupn(str, len) : strdup(st->exe[0] ? st->exe : "[unknown module]");
	if (!path)
		return -ENOMEM;
	if ((size_t)i > st->nmods) {
		size_t n = (size_t)i;
		int *nm = realloc(st->mods, n * sizeof(*nm));
		if (nm)
			st->mods = nm;
		char **np = realloc(st->modpath, n * sizeof(*np));
		if (np)
			st->modpath = np;
		uint8_t **nb = realloc(st->modbid, n * sizeof(*nb));
		if (nb)
			st->modbid = nb;
		size_t *nl = realloc(st->modbidlen, n * sizeof(*nl));
		if (nl)
			st->modbidlen = nl;
		if (!nm || !np || !nb || !nl) {
			free(path);
			return -ENOMEM;
		}
		st->modpath[n - 1] = NULL;
		st->modbid[n - 1] = NULL;
		st->modbidlen[n - 1] = 0;
		st->nmods = n;
	}
	free(st->modpath[i - 1]);
	free(st->modbid[i - 1]);
	st->modpath[i - 1] = path;
	st->modbid[i - 1] = NULL;
	st->modbidlen[i - 1] = 0;
	if (bid->type == MSGPACK_OBJECT_BIN && bid->via.bin.size) {
		st->modbid[i - 1] = malloc(bid->via.bin.size);
		if (!st->modbid[i - 1])
			return -ENOMEM;
		memcpy(st->modbid[i - 1], bid->via.bin.ptr, bid->via.bin.size);
		st->modbidlen[i - 1] = bid->via.bin.size;
	}
	st->mods[i - 1] = -2;
	return 0;
}

static int rec_thread(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t id, tid, t0;
	long i;
	if (sd_rec_u64(r, SD_F_THREAD_ID, &id) || sd_rec_u64(r, SD_F_THREAD_TID, &tid) ||
	    sd_rec_u64(r, SD_F_THREAD_T, &t0))
		return REC_BAD;
	c->why = "THREAD id out of order";
	if ((i = def_index(id, st->nthreads)) < 0 || id >= UINT32_MAX)
		return REC_BAD;
	if ((size_t)i == st->nthreads) {
		struct sthread *nt = realloc(st->threads, (st->nthreads + 1) * sizeof(*nt));
		if (!nt)
			return -ENOMEM;
		st->threads = nt;
		memset(&nt[st->nthreads++], 0, sizeof(*nt));
	}
	struct sthread *t = &st->threads[i];
	free(t->name);
	t->name = strdup_or(r->n > SD_F_THREAD_NAME ? &r->v[SD_F_THREAD_NAME] : NULL, "");
	if (!t->name)
		return -ENOMEM;
	t->tid = tid;
	t->t = t->now = t0;
	if (t0 > t->last_t)
		t->last_t = t0;
	t->defined = 1;
	return 0;
}

static int rec_thread_end(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t id, v;
	const msgpack_object *deltas =
		r->n > SD_F_THREAD_END_DELTAS ? &r->v[SD_F_THREAD_END_DELTAS] : NULL;
	const msgpack_object *cpu = r->n > SD_F_THREAD_END_CPU ? &r->v[SD_F_THREAD_END_CPU] : NULL;
	if (sd_rec_u64(r, SD_F_THREAD_END_ID, &id))
		return REC_BAD;
	if (deltas && (c->why = check_counts(deltas, st->nctrs, "THREAD_END deltas")))
		return REC_BAD;
	if (cpu && (c->why = check_cpu(cpu, c->s)))
		return REC_BAD;
	if (!known_thread(c, id, "THREAD_END names a thread that no THREAD record defined before it"))
		return REC_BAD;
	struct sthread *t = &st->threads[id];
	if (cpu && !sd_obj_u64(sd_map_get(cpu, "cpu_ns"), &v)) {
		t->end_cpu = 1;
		t->end_cpu_ns = v;
		t->split = !sd_obj_u64(sd_map_get(cpu, "user_ns"), &t->user_ns) &&
			   !sd_obj_u64(sd_map_get(cpu, "sys_ns"), &t->sys_ns);
	}
	if (deltas && st->nctrs && deltas->via.array.size) { /* its thread's, after its last sample */
		if (!t->endcnt && !(t->endcnt = calloc(st->nctrs, sizeof(*t->endcnt))))
			return -ENOMEM;
		for (size_t k = 0; k < st->nctrs; k++)
			t->endcnt[k] += deltas->via.array.ptr[k].via.u64;
	}
	if (!sd_rec_u64(r, SD_F_THREAD_END_T, &v) && v > t->last_t)
		t->last_t = v;
	if (r->n > SD_F_THREAD_END_NAME && r->v[SD_F_THREAD_END_NAME].type == MSGPACK_OBJECT_STR) {
		char *n = sd_obj_strdup(&r->v[SD_F_THREAD_END_NAME]);
		if (!n)
			return -ENOMEM;
		free(t->name);
		t->name = n;
	}
	return 0;
}

static int rec_frame(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t node, parent, module, addr;
	long i;
	if (sd_rec_u64(r, SD_F_FRAME_NODE, &node) || sd_rec_u64(r, SD_F_FRAME_PARENT, &parent) ||
	    sd_rec_u64(r, SD_F_FRAME_MODULE, &module) || sd_rec_u64(r, SD_F_FRAME_ADDR, &addr))
		return REC_BAD;
	c->why = "FRAME node id out of order";
	if ((i = def_index(node, st->nnodes)) < 0 || node >= UINT32_MAX)
		return REC_BAD;
	c->why = "FRAME parent is not an earlier node";
	if (parent >= node)
		return REC_BAD;
	if ((size_t)i == st->nnodes) {
		size_t cap = st->nnodes; /* capacity kept as a power of two >= nnodes */
		if ((st->nnodes & (st->nnodes - 1)) == 0) {
			struct snode *nn = realloc(st->nodes, cap * 2 * sizeof(*nn));
			if (!nn)
				return -ENOMEM;
			st->nodes = nn;
		}
		memset(&st->nodes[st->nnodes++], 0, sizeof(*st->nodes));
	}
	struct snode *n = &st->nodes[i]; /* a redefinition keeps the counts */
	n->parent = (uint32_t)parent;
	n->mod = module > INT64_MAX ? INT64_MAX : (int64_t)module;
	n->addr = addr;
	return 0;
}

/* The hot path of every report: one SAMPLE. The reason is stored only on a
 * failure (a store per check costs ~8 % of a report's time). */
static inline int rec_sample(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, dt, source, node, weight, fl = 0, cx = 0, pcx = 0;
	const msgpack_object *dl = r->n > SD_F_SAMPLE_DELTAS ? &r->v[SD_F_SAMPLE_DELTAS] : NULL;
	const char *why;
	if (sd_rec_u64(r, SD_F_SAMPLE_THREAD, &thread) || sd_rec_u64(r, SD_F_SAMPLE_DT, &dt) ||
	    sd_rec_u64(r, SD_F_SAMPLE_SOURCE, &source) || sd_rec_u64(r, SD_F_SAMPLE_NODE, &node) ||
	    sd_rec_u64(r, SD_F_SAMPLE_WEIGHT, &weight) ||
	    (r->n > SD_F_SAMPLE_FLAGS && sd_rec_u64(r, SD_F_SAMPLE_FLAGS, &fl)) ||
	    (r->n > SD_F_SAMPLE_CONTEXT && sd_rec_u64(r, SD_F_SAMPLE_CONTEXT, &cx)) ||
	    (r->n > SD_F_SAMPLE_PCONTEXT && sd_rec_u64(r, SD_F_SAMPLE_PCONTEXT, &pcx)))
		return REC_BAD; /* c->why: generic, field_why names the field */
	if (dl && (why = check_counts(dl, st->nctrs, "SAMPLE deltas")))
		goto bad;
	why = "SAMPLE has both deltas and flag 8, counters unreadable";
	if (dl && (fl & SD_FLAG_NO_COUNTERS))
		goto bad;
	/* what a SAMPLE names is defined before it (docs/FORMAT.md) */
	why = "SAMPLE names a thread that no THREAD record defined before it";
	if (thread == 0 || thread >= st->nthreads)
		goto bad;
	why = "SAMPLE names a source that the HEADER does not list";
	if (source >= st->nsources)
		goto bad;
	why = "SAMPLE names a FRAME node that no FRAME record defined before it";
	if (node >= st->nnodes)
		goto bad;
	why = "SAMPLE names a CONTEXT node that no CONTEXT record defined before it";
	if (cx >= st->nctxs || pcx >= st->nctxs)
		goto bad;
	st->nsamples_all++;
	struct ssource *src = &st->sources[source];
	struct sthread *t = &st->threads[thread];
	t->now += dt; /* time advances even for samples filtered out below */
	/* coverage (no filter applies): signalled samples and the time accounted
	 * from the thread's own clock while it kept the signal blocked */
	if ((long)source == st->cpu_src) {
		t->cov_sampled += (double)weight * (double)src->period;
		if (fl & SD_FLAG_ACCOUNTED) /* from the thread's clock: user and system time */
			t->cov_accounted += (double)weight * (double)src->period;
	}
	if (t->now > t->last_t)
		t->last_t = t->now;
	if (c->p->only_source && strcmp(src->name, c->p->only_source))
		return 0;
	uint32_t key[5] = { (uint32_t)thread, (uint32_t)source, (uint32_t)cx, (uint32_t)pcx,
			    (uint32_t)node };
	return agg_add(st, key, (double)weight * (double)src->period, t->now, dl,
		       (fl & SD_FLAG_NO_COUNTERS) != 0);
bad:
	c->why = why;
	return REC_BAD;
}

static int rec_attribute(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t id;
	const char *name, *ty, *sc;
	uint32_t len, tl, sl;
	long i;
	if (sd_rec_u64(r, SD_F_ATTRIBUTE_ID, &id) || sd_rec_str(r, SD_F_ATTRIBUTE_NAME, &name, &len) ||
	    sd_rec_str(r, SD_F_ATTRIBUTE_TYPE, &ty, &tl) ||
	    sd_rec_str(r, SD_F_ATTRIBUTE_SCOPE, &sc, &sl))
		return REC_BAD;
	c->why = "ATTRIBUTE id out of order";
	if ((i = def_index(id, st->nattrs)) < 0 || id >= UINT32_MAX)
		return REC_BAD;
	if ((size_t)i == st->nattrs) {
		if (sd_grow(&st->attrs, &st->capattrs, st->nattrs + 1, sizeof(*st->attrs)))
			return -ENOMEM;
		st->nattrs++;
	}
	struct sattr *at = &st->attrs[i];
	free(at->name);
	if (!(at->name = dupn(name, len)))
		return -ENOMEM;
	return 0;
}

static int rec_context(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t node, parent, attr;
	long i;
	if (sd_rec_u64(r, SD_F_CONTEXT_NODE, &node) || sd_rec_u64(r, SD_F_CONTEXT_PARENT, &parent) ||
	    sd_rec_u64(r, SD_F_CONTEXT_ATTR, &attr) || r->n <= SD_F_CONTEXT_VALUE)
		return REC_BAD;
	c->why = "CONTEXT node id out of order";
	if ((i = def_index(node, st->nctxs)) < 0 || node >= UINT32_MAX)
		return REC_BAD;
	c->why = "CONTEXT parent is not an earlier node";
	if (parent >= node)
		return REC_BAD;
	c->why = "CONTEXT attribute is not defined";
	if (attr == 0 || attr >= st->nattrs)
		return REC_BAD;
	c->why = "CONTEXT value is not a string or a number";
	const msgpack_object *value = &r->v[SD_F_CONTEXT_VALUE];
	char *v = value_str(value);
	if (!v) {
		if (value->type != MSGPACK_OBJECT_STR && value->type != MSGPACK_OBJECT_POSITIVE_INTEGER &&
		    value->type != MSGPACK_OBJECT_NEGATIVE_INTEGER &&
		    value->type != MSGPACK_OBJECT_FLOAT32 && value->type != MSGPACK_OBJECT_FLOAT64)
			return REC_BAD;
		return -ENOMEM;
	}
	if ((size_t)i == st->nctxs) {
		if (sd_grow(&st->ctxs, &st->capctxs, st->nctxs + 1, sizeof(*st->ctxs))) {
			free(v);
			return -ENOMEM;
		}
		st->nctxs++;
	}
	struct sctx *x = &st->ctxs[i];
	free(x->value);
	x->value = v;
	x->parent = (uint32_t)parent;
	x->attr = (uint32_t)attr;
	return 0;
}

static int rec_region(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, t, node, event;
	const msgpack_object *cn = r->n > SD_F_REGION_COUNTS ? &r->v[SD_F_REGION_COUNTS] : NULL;
	if (sd_rec_u64(r, SD_F_REGION_THREAD, &thread) || sd_rec_u64(r, SD_F_REGION_T, &t) ||
	    sd_rec_u64(r, SD_F_REGION_NODE, &node) || sd_rec_u64(r, SD_F_REGION_EVENT, &event))
		return REC_BAD;
	if (cn && (c->why = check_counts(cn, st->nctrs, "REGION counts")))
		return REC_BAD;
	if (!known_thread(c, thread, "REGION names a thread that no THREAD record defined before it"))
		return REC_BAD;
	c->why = "REGION names a CONTEXT node that no CONTEXT record defined before it";
	if (node == 0 || node >= st->nctxs)
		return REC_BAD;
	st->nregion_records++;
	st->nregion_counts += cn != NULL;
	if (event > SD_REGION_FORCED_END)
		return 0; /* an event of a later format: ignored */
	return region_event(st, (uint32_t)thread, t, (uint32_t)node, event, cn);
}

static int rec_thread_cpu(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, t, cpu_ns;
	if (sd_rec_u64(r, SD_F_THREAD_CPU_THREAD, &thread) || sd_rec_u64(r, SD_F_THREAD_CPU_T, &t) ||
	    sd_rec_u64(r, SD_F_THREAD_CPU_NS, &cpu_ns))
		return REC_BAD;
	if (!known_thread(c, thread, "THREAD_CPU names a thread that no THREAD record defined before it"))
		return REC_BAD;
	struct sthread *th = &st->threads[thread];
	th->has_flush = 1;
	th->flush_cpu_ns = cpu_ns;
	th->snap_sampled = th->cov_sampled;
	thread_drops(st, thread, th->snap_drops);
	return 0;
}

static int rec_unsampled(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t thread, t, cpu_ns;
	if (sd_rec_u64(r, SD_F_UNSAMPLED_THREAD, &thread) || sd_rec_u64(r, SD_F_UNSAMPLED_T, &t) ||
	    r->n <= SD_F_UNSAMPLED_NS || r->v[SD_F_UNSAMPLED_REASON].type != MSGPACK_OBJECT_STR ||
	    sd_rec_u64(r, SD_F_UNSAMPLED_NS, &cpu_ns))
		return REC_BAD;
	if (!known_thread(c, thread, "UNSAMPLED names a thread that no THREAD record defined before it"))
		return REC_BAD;
	struct sthread *th = &st->threads[thread];
	const msgpack_object_str *rs = &r->v[SD_F_UNSAMPLED_REASON].via.str;
	static const char *const reasons[SD_UNSAMPLED_NREASONS] = SD_UNSAMPLED_NAMES;
	uint64_t *un[SD_UNSAMPLED_NREASONS] = {
		[SD_UNSAMPLED_FD_CLOSED] = &th->un_fd_closed,
		[SD_UNSAMPLED_NOT_SAMPLED] = &th->un_not_sampled,
		[SD_UNSAMPLED_CLONE_VM] = &th->un_clone_vm };
	for (unsigned k = 0; k < SD_UNSAMPLED_NREASONS; k++)
		if (rs->size == strlen(reasons[k]) && !memcmp(rs->ptr, reasons[k], rs->size))
			*un[k] = cpu_ns;
	return 0; /* a reason of a later sonde: not counted */
}

/* Thread `thread`'s cumulative count for drop reason `reason`. */
static int drop_set(struct sstate *st, uint64_t thread, const msgpack_object *reason,
		    uint64_t count)
{
	uint32_t idx;
	char key[600];
	int kl = snprintf(key, sizeof(key), "%llu:%.*s", (unsigned long long)thread,
			  (int)(reason->via.str.size > 500 ? 500 : reason->via.str.size),
			  reason->via.str.ptr);
	if (!sd_strmap_get(&st->drops, key, (size_t)kl, &idx)) {
		idx = (uint32_t)st->ndrops;
		if (sd_strmap_put(&st->drops, key, (size_t)kl, idx))
			return -ENOMEM;
		uint64_t *nv = realloc(st->dropv, (st->ndrops + 1) * sizeof(*nv));
		if (nv)
			st->dropv = nv;
		uint64_t *nt = realloc(st->dropt, (st->ndrops + 1) * sizeof(*nt));
		if (nt)
			st->dropt = nt;
		if (!nt)
			return -ENOMEM;
		nt[idx] = thread;
		char **nr = realloc(st->dropr, (st->ndrops + 1) * sizeof(*nr));
		if (nr)
			st->dropr = nr;
		if (!nv || !nr || !(nr[idx] = sd_obj_strdup(reason)))
			return -ENOMEM;
		st->ndrops++;
	}
	st->dropv[idx] = count;
	return 0;
}

static int rec_drops(struct rec_ctx *c)
{
	const struct sd_record *r = c->r;
	uint64_t thread, count;
	const msgpack_object *m = r->n > SD_F_DROPS_COUNTS ? &r->v[SD_F_DROPS_COUNTS] : NULL;
	if (sd_rec_u64(r, SD_F_DROPS_THREAD, &thread) || !m || m->type != MSGPACK_OBJECT_MAP)
		return REC_BAD;
	for (uint32_t k = 0; k < m->via.map.size; k++) {
		const msgpack_object_kv *kv = &m->via.map.ptr[k];
		c->why = "DROPS counts is not a map of reason names to unsigned integers";
		if (kv->key.type != MSGPACK_OBJECT_STR || sd_obj_u64(&kv->val, &count))
			return REC_BAD;
		int err = drop_set(c->st, thread, &kv->key, count);
		if (err)
			return err;
	}
	return 0;
}

static int rec_end(struct rec_ctx *c)
{
	struct sstate *st = c->st;
	const struct sd_record *r = c->r;
	uint64_t t;
	const char *reason;
	uint32_t len;
	const msgpack_object *stats = r->n > SD_F_END_STATS ? &r->v[SD_F_END_STATS] : NULL;
	c->why = "END t is not an unsigned integer";
	if (sd_rec_u64(r, SD_F_END_T, &t))
		return REC_BAD;
	c->why = "END reason is not a string";
	if (sd_rec_str(r, SD_F_END_REASON, &reason, &len))
		return REC_BAD;
	c->why = "END stats is not a map";
	if (!stats || stats->type != MSGPACK_OBJECT_MAP)
		return REC_BAD;
	if ((c->why = check_keys(stats, stats_keys, "END stats", c->s->why_buf,
				 sizeof(c->s->why_buf))))
		return REC_BAD;
	free(st->end_reason);
	if (!(st->end_reason = dupn(reason, len)))
		return -ENOMEM;
	st->end_signal = 0;
	sd_obj_u64(sd_map_get(stats, "signal"), &st->end_signal);
	st->ended = 1;
	return 0;
}

/* One record of a stream after its HEADER: the kind's decoder (MODULE_END,
 * NOTE and kinds of later formats count nothing). 0, -errno, or
 * SD_ERR_CORRUPT with the stream's error offset and reason set. */
static int on_record(struct sd_profile *p, struct sstate *st, const struct sd_record *r,
		     struct sd_stream *s)
{
	static int (*const decode[SD_K_LAST + 1])(struct rec_ctx *) = {
		[SD_K_MODULE] = rec_module, [SD_K_THREAD] = rec_thread,
		[SD_K_THREAD_END] = rec_thread_end, [SD_K_FRAME] = rec_frame,
		/* SAMPLE: called directly, below */ [SD_K_ATTRIBUTE] = rec_attribute,
		[SD_K_CONTEXT] = rec_context, [SD_K_REGION] = rec_region,
		[SD_K_THREAD_CPU] = rec_thread_cpu, [SD_K_UNSAMPLED] = rec_unsampled,
		[SD_K_DROPS] = rec_drops, [SD_K_END] = rec_end,
	};
	/* where `t` is in the records that have one (SAMPLE: its thread's time) */
	static const uint8_t t_index[SD_K_LAST + 1] = {
		[SD_K_MODULE] = SD_F_MODULE_T, [SD_K_MODULE_END] = SD_F_MODULE_END_T,
		[SD_K_THREAD] = SD_F_THREAD_T, [SD_K_THREAD_END] = SD_F_THREAD_END_T,
		[SD_K_END] = SD_F_END_T, [SD_K_NOTE] = SD_F_NOTE_T, [SD_K_REGION] = SD_F_REGION_T,
		[SD_K_THREAD_CPU] = SD_F_THREAD_CPU_T, [SD_K_UNSAMPLED] = SD_F_UNSAMPLED_T };
	uint64_t t;

	if (r->kind > SD_K_LAST)
		return 0; /* a kind of a later format: skipped */
	if (r->kind != SD_K_END)
		st->ended = 0; /* records after an END (a failed exec): not the end yet */
	if (t_index[r->kind] && !sd_rec_u64(r, t_index[r->kind], &t) && t > st->max_t)
		st->max_t = t;
	if (r->kind != SD_K_SAMPLE && !decode[r->kind])
		return 0;
	struct rec_ctx c = { p, st, r, s, generic };
	/* SAMPLE, nearly every record, by a direct call the compiler can inline */
	int ret = r->kind == SD_K_SAMPLE ? rec_sample(&c) : decode[r->kind](&c);
	if (ret != REC_BAD)
		return ret;
	s->err_off = r->offset;
	s->err_why = c.why == generic ? field_why(r, s->why_buf, sizeof(s->why_buf)) : c.why;
	return SD_ERR_CORRUPT;
}

/* Child of merged node `parent` for function `func`, created if needed. */
static int cnode_child(struct sd_profile *p, uint32_t parent, uint32_t func, uint32_t *out)
{
	uint64_t key = (uint64_t)parent << 32 | func;

	if (sd_u64map_get(&p->children, key, out))
		return 0;
	if (p->nnodes >= UINT32_MAX - 1 ||
	    sd_grow(&p->nodes, &p->capnodes, p->nnodes + 1, sizeof(*p->nodes)))
		return -ENOMEM;
	struct sd_cnode *n = &p->nodes[p->nnodes];
	n->parent = parent;
	n->func = func;
	*out = (uint32_t)p->nnodes;
	if (sd_u64map_put(&p->children, key, *out))
		return -ENOMEM;
	p->nnodes++;
	return 0;
}

static int add_root_pseudo(struct sd_profile *p, const char *name, uint64_t n, double w,
			   uint32_t *out)
{
	uint32_t c;
	int f;

	if (!n)
		return 0;
	if ((f = sd_sym_pseudo(p->sym, name)) < 0 || cnode_child(p, 0, (uint32_t)f, &c))
		return -ENOMEM;
	p->nodes[c].samples += n;
	p->nodes[c].weight += w;
	*out = c;
	return 0;
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

/* Map the stream's used context nodes to merged ones (parents first: parent < child). */
static int merge_contexts(struct sd_profile *p, struct sstate *st)
{
	for (size_t i = 0; i < st->naggs; i++)
		st->ctxs[st->aggs[i].ctx].used = st->ctxs[st->aggs[i].pctx].used = 1;
	for (size_t i = 0; i < st->nregs; i++)
		st->ctxs[st->regs[i].node].used = 1;
	for (size_t i = st->nctxs; i-- > 1;)
		if (st->ctxs[i].used)
			st->ctxs[st->ctxs[i].parent].used = 1;
	st->ctxs[0].gnode = 0;
	for (size_t i = 1; i < st->nctxs; i++) {
		struct sctx *x = &st->ctxs[i];
		struct sattr *at = &st->attrs[x->attr];
		if (!x->used)
			continue;
		if (!at->merged) {
			long g = sd_profile_attr(p, at->name);
			if (g < 0)
				return -ENOMEM;
			at->gid = (uint32_t)g;
			at->merged = 1;
		}
		long v = value_id(p, x->value);
		if (v < 0)
			return -ENOMEM;
		uint32_t key[3] = { st->ctxs[x->parent].gnode, at->gid, (uint32_t)v };
		if (sd_strmap_get(&p->ctx_children, key, sizeof(key), &x->gnode))
			continue;
		if (p->nctx >= UINT32_MAX - 1 || sd_grow(&p->ctx, &p->capctx, p->nctx + 1, sizeof(*p->ctx)))
			return -ENOMEM;
		p->ctx[p->nctx] = (struct sd_ctxnode){ key[0], key[1], key[2] };
		x->gnode = (uint32_t)p->nctx;
		if (sd_strmap_put(&p->ctx_children, key, sizeof(key), x->gnode))
			return -ENOMEM;
		p->nctx++;
	}
	return 0;
}

/* Merge the stream's counters into p->counters by name (st->ctrs[].gid) and its
 * unavailable counters by (name, reason). */
static int merge_counters(struct sd_profile *p, struct sstate *st)
{
	for (size_t i = 0; i < st->nctrs; i++) {
		struct scounter *c = &st->ctrs[i];
		size_t j;
		for (j = 0; j < p->ncounters && strcmp(p->counters[j].name, c->name); j++)
			;
		if (j == p->ncounters) {
			if (j >= UINT32_MAX - 1 ||
			    sd_grow(&p->counters, &p->capcounters, j + 1, sizeof(*p->counters)))
				return -ENOMEM;
			struct sd_counter_row *g = &p->counters[j];
			g->name = c->name, g->group = c->group, g->unit = c->unit;
			g->source = c->source;
			c->name = c->group = c->unit = c->source = NULL; /* moved */
			p->ncounters++;
		} else {
			/* a source not listed yet is appended: "a, b" */
			struct sd_counter_row *g = &p->counters[j];
			size_t l = strlen(c->source), gl = strlen(g->source);
			int seen = 0;
			for (const char *q = g->source; (q = strstr(q, c->source)); q++)
				if ((q == g->source || q[-1] == ' ') && (q[l] == 0 || q[l] == ','))
					seen = 1;
			if (!seen) {
				char *ns = realloc(g->source, gl + l + 3);
				if (!ns)
					return -ENOMEM;
				memcpy(ns + gl, ", ", 2);
				memcpy(ns + gl + 2, c->source, l + 1);
				g->source = ns;
			}
		}
		for (size_t k = 0; k < i; k++) /* a name listed twice in one header */
			if (st->ctrs[k].gid == j)
				goto next;
		p->counters[j].streams++;
next:
		c->gid = (uint32_t)j;
	}
	for (size_t i = 0; i < st->nun; i++) {
		size_t j;
		for (j = 0; j < p->nunavail; j++)
			if (!strcmp(p->unavail[j].name, st->unames[i]) &&
			    !strcmp(p->unavail[j].reason, st->ureasons[i]))
				break;
		if (j == p->nunavail) {
			if (sd_grow(&p->unavail, &p->capunavail, j + 1, sizeof(*p->unavail)))
				return -ENOMEM;
			p->unavail[j].name = st->unames[i];
			p->unavail[j].reason = st->ureasons[i];
			st->unames[i] = st->ureasons[i] = NULL; /* moved */
			p->nunavail++;
		}
		p->unavail[j].streams++;
	}
	return 0;
}

/* The stream's nctrs values v as a fresh array indexed by merged counter (NULL: ENOMEM). */
static uint64_t *global_counts(const struct sd_profile *p, const struct sstate *st,
			       const uint64_t *v)
{
	uint64_t *g = calloc(p->ncounters, sizeof(*g));

	if (g)
		for (size_t k = 0; k < st->nctrs; k++)
			g[st->ctrs[k].gid] += v[k];
	return g;
}

/* The coverage account of each thread of the stream (docs/REPORT.md, "Coverage"), after
 * its thread rows exist; the totals are made when a view prints them (coverage.c). */
static int merge_coverage(struct sd_profile *p, struct sstate *st)
{
	struct sd_coverage *cv = &p->cov;
	const struct ssource *cs = st->cpu_src >= 0 ? &st->sources[st->cpu_src] : NULL;
	double period = cs ? (double)cs->period : 0;
	uint64_t drops[SD_COV_NDROP];

	if (!cs) {
		cv->streams_nocpu++;
	} else {
		cv->streams_cpu++;
		cv->streams_mixed += st->nsources > 1;
		if (!cv->spec) {
			if (!(cv->spec = strdup(cs->spec)))
				return -ENOMEM;
		} else if (strcmp(cv->spec, cs->spec)) {
			cv->specs_differ = 1;
		}
		thread_drops(st, 0, drops); /* process-wide drops: only in the total */
		for (int k = 0; k < SD_COV_NDROP; k++)
			cv->procwide_ns[k] += (double)drops[k] * period;
	}
	for (size_t i = 1; i < st->nthreads; i++) {
		const struct sthread *t = &st->threads[i];
		if (!t->defined)
			continue;
		if (sd_grow(&cv->rows, &cv->cap, cv->n + 1, sizeof(*cv->rows)))
			return -ENOMEM;
		struct sd_cov_row *c = &cv->rows[cv->n++];
		const struct sd_thread_row *tr = &p->threads[t->row];
		memset(c, 0, sizeof(*c));
		c->pid = tr->pid;
		c->tid = tr->tid;
		c->name = tr->name;
		c->threads = 1;
		c->computed = cs != NULL;
		st->nthreads_def++;
		/* the kernel's CPU time: at the thread's end, else at the last flush */
		c->sampled_ns = t->cov_sampled;
		thread_drops(st, i, drops);
		if (t->end_cpu) {
			c->cpu_from = SD_COV_END;
			c->cpu_ns = (double)t->end_cpu_ns;
			c->split = t->split;
			c->user_ns = (double)t->user_ns;
			c->sys_ns = (double)t->sys_ns;
		} else if (t->has_flush) {
			/* the account runs up to that record: samples and drops as they were */
			c->cpu_from = SD_COV_FLUSH;
			c->cpu_ns = (double)t->flush_cpu_ns;
			c->sampled_ns = t->snap_sampled;
			c->after_ns = t->cov_sampled - t->snap_sampled;
			memcpy(drops, t->snap_drops, sizeof(drops));
		}
		if (t->un_clone_vm) {
			/* a CLONE_VM child process: its whole CPU time, never sampled */
			c->cpu_from = SD_COV_END;
			c->cpu_ns = (double)t->un_clone_vm;
			c->split = 0;
		}
		if (c->cpu_from != SD_COV_UNKNOWN) { /* the process's CPU time (processes view) */
			st->cpu_ns += c->cpu_ns;
			st->cpu_threads++;
			st->cpu_flush += c->cpu_from == SD_COV_FLUSH;
		}
		double gaps = 0;
		uint64_t ndrops = 0;
		for (int k = 0; k < SD_COV_NDROP; k++) {
			c->drops_ns[k] = (double)drops[k] * period;
			gaps += c->drops_ns[k];
			ndrops += drops[k];
		}
		if (!c->computed || c->cpu_from == SD_COV_UNKNOWN)
			continue;
		/* The kernel's user/sys split divides the exact CPU time by its tick
		 * samples (getrusage): a thread of a few hundred ms on a loaded machine
		 * was seen with all of it as sys while its user-mode samples stood for
		 * 95 ms. A split that gives less user time than the samples show (by
		 * more than a fifth and 5 periods) is not used. */
		if (c->split && c->sampled_ns > c->user_ns + 0.2 * c->cpu_ns + 5 * period) {
			c->split = 0;
			c->split_rejected = 1;
		}
		/* cpu-time samples user mode only (docs/ENV.md): kernel mode is a known gap */
		if (c->split)
			/* less the system time already inside accounted samples (taken
			 * from the thread's CPU clock, user and system alike) */
			c->kernel_ns = c->cpu_ns > 0 && t->cov_accounted < c->cpu_ns
					       ? c->sys_ns * (1 - t->cov_accounted / c->cpu_ns) : 0;
		gaps += c->kernel_ns;
		if (c->sampled_ns == 0 && ndrops == 0 && c->cpu_ns > gaps)
			c->not_sampled_ns = c->cpu_ns - gaps;
		else /* the part the runtime knows it missed (UNSAMPLED) */
			c->not_sampled_ns = (double)(t->un_fd_closed + t->un_not_sampled);
		c->unexplained_ns = c->cpu_ns - c->sampled_ns - gaps - c->not_sampled_ns;
	}
	return 0;
}

/* The kept keys (those --where keeps) count for their source, thread and call node. */
static void merge_keys(struct sd_profile *p, struct sstate *st)
{
	for (size_t i = 0; i < st->naggs; i++) {
		struct sagg *a = &st->aggs[i];
		if (!sd_where_ctx_ok(p, st->ctxs[a->ctx].gnode, st->ctxs[a->pctx].gnode))
			continue;
		a->kept = 1;
		p->nocounters += a->nocnt;
		for (size_t k = 0; k < st->nctrs; k++)
			p->counters[st->ctrs[k].gid].total += st->aggcnt[i * st->nctrs + k];
		struct ssource *src = &st->sources[a->source];
		struct sthread *t = &st->threads[a->thread];
		src->samples += a->samples;
		src->weight += a->weight;
		if (!t->samples || a->first < t->first)
			t->first = a->first;
		if (!t->samples || a->last > t->last)
			t->last = a->last;
		t->samples += a->samples;
		if (a->node == 0) {
			st->nostack += a->samples;
			st->nostack_w += a->weight;
		} else if (a->node == UINT32_MAX) {
			st->badnode += a->samples;
			st->badnode_w += a->weight;
		} else {
			st->nodes[a->node].samples += a->samples;
			st->nodes[a->node].weight += a->weight;
		}
	}
}

/* THREAD_END deltas belong to their thread (and process, rank, host), to no call path
 * and no source: a row of their own (merge_end_rows), counted in the totals unless
 * --source picks samples or a --where filter needs a context. */
static int keep_thread_ends(const struct sd_profile *p)
{
	return !p->only_source && sd_where_ctx_ok(p, 0, 0);
}

static void merge_end_totals(struct sd_profile *p, const struct sstate *st)
{
	for (size_t i = 1; i < st->nthreads; i++)
		for (size_t k = 0; st->threads[i].endcnt && k < st->nctrs; k++) {
			p->counters[st->ctrs[k].gid].total += st->threads[i].endcnt[k];
			p->counters[st->ctrs[k].gid].end_total += st->threads[i].endcnt[k];
		}
}

/* The stream's call nodes with samples in their subtree into the merged call tree
 * (symbolized: an inlined address is several frames), and the [no stack] and
 * [unknown stack] roots (their merged nodes in *nostack_c, *badnode_c). */
static int merge_nodes(struct sd_profile *p, struct sstate *st, uint32_t *nostack_c,
		       uint32_t *badnode_c)
{
	/* mark nodes with samples in their subtree; children come after parents */
	for (size_t i = st->nnodes; i-- > 1;)
		if (st->nodes[i].samples || st->nodes[i].used)
			st->nodes[st->nodes[i].parent].used = 1;
	st->nodes[0].cnode = 0;
	for (size_t i = 1; i < st->nnodes; i++) {
		struct snode *n = &st->nodes[i];
		if (!n->samples && !n->used)
			continue;
		int h = n->mod == 0 ? -1 : (uint64_t)n->mod <= st->nmods ? st->mods[n->mod - 1] : -2;
		/* an address in inlined code is several frames, outermost first */
		const struct sd_frame *fr;
		int nf = sd_sym_frames(p->sym, h, n->addr, &fr);
		if (nf < 0)
			return -ENOMEM;
		n->cnode = st->nodes[n->parent].cnode;
		for (int k = 0; k < nf; k++)
			if (cnode_child(p, n->cnode, fr[k].func, &n->cnode))
				return -ENOMEM;
		n->file = fr[nf - 1].file;
		n->line = fr[nf - 1].line;
		p->nodes[n->cnode].samples += n->samples;
		p->nodes[n->cnode].weight += n->weight;
	}
	if (add_root_pseudo(p, "[no stack]", st->nostack, st->nostack_w, nostack_c) ||
	    add_root_pseudo(p, "[unknown stack]", st->badnode, st->badnode_w, badnode_c))
		return -ENOMEM;

	return 0;
}

/* One thread row per THREAD the stream defined. */
static int merge_threads(struct sd_profile *p, struct sstate *st)
{
	for (size_t i = 0; i < st->nthreads; i++) {
		struct sthread *t = &st->threads[i];
		if (!t->defined)
			continue;
		if (sd_grow(&p->threads, &p->capthreads, p->nthreads + 1, sizeof(*p->threads)))
			return -ENOMEM;
		struct sd_thread_row *row = &p->threads[p->nthreads];
		row->name = strdup(t->defined ? t->name : "[unknown thread]");
		if (!row->name)
			return -ENOMEM;
		row->pid = st->pid;
		row->tid = t->tid;
		row->samples = t->samples;
		row->first_ns = t->first;
		row->last_ns = t->last;
		t->row = (uint32_t)p->nthreads;
		p->nthreads++;
	}
	return 0;
}

/* Sources merged by name, period, unit and mechanism; srcrow[i]: the row of the
 * stream's source i. */
static int merge_sources(struct sd_profile *p, struct sstate *st, uint32_t *srcrow)
{
	for (size_t i = 0; i <= st->nsources; i++) {
		struct ssource *s = &st->sources[i];
		size_t j;
		if (i == st->nsources && !s->samples)
			continue;
		p->samples += s->samples;
		p->weight += s->weight;
		if (!strcmp(s->name, "cpu-time") && !strcmp(s->unit, "ns"))
			p->cpu_ns += s->weight;
		for (j = 0; j < p->nsources; j++) {
			struct sd_source_row *r = &p->sources[j];
			if (!strcmp(r->name, s->name) && r->period == s->period &&
			    !strcmp(r->unit, s->unit) && !strcmp(r->mechanism, s->mechanism))
				break;
		}
		if (j == p->nsources) {
			if (sd_grow(&p->sources, &p->capsources, j + 1, sizeof(*p->sources)))
				return -ENOMEM;
			struct sd_source_row *r = &p->sources[j];
			r->name = s->name, r->spec = s->spec, r->unit = s->unit;
			r->mechanism = s->mechanism, r->period = s->period;
			s->name = s->spec = s->unit = s->mechanism = NULL; /* moved */
			p->nsources++;
		}
		p->sources[j].samples += s->samples;
		p->sources[j].weight += s->weight;
		srcrow[i] = (uint32_t)j;
	}
	return 0;
}

/* Drops by reason; the stream's sample and region-event drops in *sdrop, *rdrop. */
static int merge_drops(struct sd_profile *p, const struct sstate *st, uint64_t *sdrop,
		       uint64_t *rdrop)
{
	for (size_t i = 0; i < st->ndrops; i++) {
		const char *reason = st->dropr[i];
		uint32_t k;
		/* reasons "region_*" count region events, every other one samples (FORMAT.md) */
		if (!strncmp(reason, SD_DROP_REGION_PREFIX, sizeof SD_DROP_REGION_PREFIX - 1))
			*rdrop += st->dropv[i];
		else
			*sdrop += st->dropv[i];
		if (!sd_strmap_get(&p->drop_reasons, reason, strlen(reason), &k)) {
			k = (uint32_t)p->ndrop;
			if (sd_grow(&p->drop_counts, &p->capdrop, k + 1, sizeof(*p->drop_counts)))
				return -ENOMEM;
			char **nn = realloc(p->drop_names, (k + 1) * sizeof(*nn));
			if (!nn)
				return -ENOMEM;
			p->drop_names = nn;
			if (!(nn[k] = strdup(reason)) ||
			    sd_strmap_put(&p->drop_reasons, reason, strlen(reason), k))
				return -ENOMEM;
			p->ndrop++;
		}
		p->drop_counts[k] += st->dropv[i];
	}
	p->dropped += *sdrop;
	p->dropped_regions += *rdrop;
	return 0;
}

/* The stream's row of --view streams and processes, and its pid and (rank, pid). */
static int merge_stream_info(struct sd_profile *p, struct sstate *st, const char *name,
			     int truncated, uint64_t sdrop, uint64_t rdrop)
{
	p->samples_read += st->nsamples_all;
	if (sd_grow(&p->sinfo, &p->capsinfo, p->nsinfo + 1, sizeof(*p->sinfo)))
		return -ENOMEM;
	struct sd_stream_info *si = &p->sinfo[p->nsinfo];
	*si = (struct sd_stream_info){ .pid = st->pid, .rank = st->rank, .signal = st->end_signal,
		.truncated = truncated, .samples = st->nsamples_all, .samples_dropped = sdrop,
		.regions = st->nregion_records, .regions_dropped = rdrop };
	si->file = strdup(name ? name : "?");
	si->host = strdup(st->host ? st->host : "?");
	si->end = st->ended && st->end_reason ? strdup(st->end_reason) : NULL;
	si->ppid = st->ppid, si->has_ppid = st->has_ppid;
	si->origin_ns = st->origin_ns, si->has_clock = st->has_clock;
	for (size_t i = 1; i < st->nthreads; i++)
		if (st->threads[i].last_t > st->max_t)
			st->max_t = st->threads[i].last_t;
	si->last_ns = st->max_t;
	si->cpu_ns = st->cpu_ns, si->cpu_threads = st->cpu_threads, si->cpu_flush = st->cpu_flush;
	si->threads = st->nthreads_def;
	si->name = st->name, st->name = NULL; /* moved */
	si->command = st->command, st->command = NULL;
	si->exe = st->has_exe ? strdup(st->exe) : NULL;
	size_t ll = strlen(si->name ? si->name : "?") + 32;
	if ((si->label = malloc(ll)))
		snprintf(si->label, ll, "%s[%" PRIu64 "]", si->name ? si->name : "?", st->pid);
	if (!si->file || !si->host || (st->ended && st->end_reason && !si->end) || !si->name ||
	    !si->label || (st->has_exe && !si->exe)) {
		free(si->file), free(si->host), free(si->end);
		free(si->name), free(si->label), free(si->command), free(si->exe);
		return -ENOMEM;
	}
	p->nsinfo++;
	size_t j;
	for (j = 0; j < p->npids && p->pids[j] != st->pid; j++)
		;
	if (j == p->npids) {
		if (sd_grow(&p->pids, &p->cappids, j + 1, sizeof(*p->pids)))
			return -ENOMEM;
		p->pids[p->npids++] = st->pid;
	}
	for (j = 0; j < p->nprocs && (p->procs[j].pid != st->pid || p->procs[j].rank != st->rank);
	     j++)
		;
	if (j == p->nprocs) {
		if (sd_grow(&p->procs, &p->capprocs, j + 1, sizeof(*p->procs)))
			return -ENOMEM;
		p->procs[p->nprocs++] = (struct sd_proc){ st->rank, st->pid };
	}
	return 0;
}

/* One row per kept key for the context views. */
static int merge_rows(struct sd_profile *p, const struct sstate *st, const uint32_t *srcrow,
		      uint32_t nostack_c, uint32_t badnode_c)
{
	for (size_t i = 0; i < st->naggs; i++) {
		const struct sagg *a = &st->aggs[i];
		if (!a->kept)
			continue;
		if (sd_grow(&p->rows, &p->caprows, p->nrows + 1, sizeof(*p->rows)))
			return -ENOMEM;
		const struct sthread *t = &st->threads[a->thread];
		const struct sd_thread_row *tr = &p->threads[t->row];
		uint64_t *cnt = NULL;
		if (st->nctrs && !(cnt = global_counts(p, st, &st->aggcnt[i * st->nctrs])))
			return -ENOMEM;
		p->rows[p->nrows++] = (struct sd_crow){
			.counts = cnt, .ncounts = cnt ? (uint32_t)p->ncounters : 0,
			.cnode = a->node == 0 ? nostack_c : a->node == UINT32_MAX ? badnode_c
				 : st->nodes[a->node].cnode,
			.source = srcrow[a->source], .ctx = st->ctxs[a->ctx].gnode,
			.pctx = st->ctxs[a->pctx].gnode, .pid = tr->pid, .tid = tr->tid,
			.file = a->node && a->node != UINT32_MAX ? st->nodes[a->node].file : 0,
			.line = a->node && a->node != UINT32_MAX ? st->nodes[a->node].line : 0,
			.tname = tr->name, .samples = a->samples, .weight = a->weight,
			.rank = st->rank, .host = (uint32_t)st->host_id,
			.stream = (uint32_t)(p->nsinfo - 1) };
	}
	return 0;
}

/* One row per thread with THREAD_END deltas, under the pseudo function [thread end]. */
static int merge_end_rows(struct sd_profile *p, const struct sstate *st)
{
	for (size_t i = 1; i < st->nthreads; i++) {
		const struct sthread *t = &st->threads[i];
		const struct sd_thread_row *tr = &p->threads[t->row];
		uint32_t c;
		int f;
		if (!t->endcnt)
			continue;
		if ((f = sd_sym_pseudo(p->sym, "[thread end]")) < 0 ||
		    cnode_child(p, 0, (uint32_t)f, &c) ||
		    sd_grow(&p->rows, &p->caprows, p->nrows + 1, sizeof(*p->rows)))
			return -ENOMEM;
		uint64_t *cnt = global_counts(p, st, t->endcnt);
		if (!cnt)
			return -ENOMEM;
		p->rows[p->nrows++] = (struct sd_crow){
			.counts = cnt, .ncounts = (uint32_t)p->ncounters, .cnode = c,
			.source = UINT32_MAX, .pid = tr->pid, .tid = tr->tid, .tname = tr->name,
			.rank = st->rank, .host = (uint32_t)st->host_id, .thread_end = 1,
			.stream = (uint32_t)(p->nsinfo - 1) };
	}
	return 0;
}

/* One row per region (thread, context node) that --where keeps. */
static int merge_regions(struct sd_profile *p, const struct sstate *st)
{
	for (size_t i = 0; i < st->nregs; i++) {
		const struct sreg *g = &st->regs[i];
		uint32_t gnode = st->ctxs[g->node].gnode;
		if (!sd_where_ctx_ok(p, gnode, 0))
			continue;
		if (sd_grow(&p->regions, &p->capregions, p->nregions + 1, sizeof(*p->regions)))
			return -ENOMEM;
		const struct sd_thread_row *tr = &p->threads[st->threads[g->thread].row];
		uint64_t *cnt = NULL;
		if (g->cnt && !(cnt = global_counts(p, st, g->cnt)))
			return -ENOMEM;
		p->regions[p->nregions++] = (struct sd_region_row){
			.counts = cnt, .ncounts = cnt ? (uint32_t)p->ncounters : 0,
			.ctx = gnode, .pid = tr->pid, .tid = tr->tid, .tname = tr->name,
			.calls = g->calls, .incl_ns = g->incl, .excl_ns = g->excl, .min_ns = g->min,
			.max_ns = g->max, .forced = g->forced, .stream = (uint32_t)(p->nsinfo - 1) };
	}
	return 0;
}

/* Merges one parsed stream into the profile: its keys, call tree, threads, sources,
 * drops, stream row, context and region rows. 0 or -ENOMEM. */
static int merge(struct sd_profile *p, struct sstate *st, const char *name, int truncated)
{
	uint32_t nostack_c = 0, badnode_c = 0;
	uint64_t sdrop = 0, rdrop = 0;
	uint32_t *srcrow = calloc(st->nsources + 1, sizeof(*srcrow));
	int keep_ends = keep_thread_ends(p);
	int err = -ENOMEM;

	st->host_id = value_id(p, st->host ? st->host : "?");
	if (st->host_id < 0) {
		free(srcrow);
		return -ENOMEM;
	}
	if (!srcrow)
		return -ENOMEM;
	/* regions still open at the end: closed at the thread's last time, forced */
	for (size_t i = 1; i < st->nthreads; i++)
		while (st->threads[i].nopen)
			if (region_close(st, (uint32_t)i, st->threads[i].last_t, 1,
					 st->threads[i].lastcnt))
				goto out;
	if (merge_contexts(p, st) || merge_counters(p, st))
		goto out;
	merge_keys(p, st);
	if (keep_ends)
		merge_end_totals(p, st);
	if (merge_nodes(p, st, &nostack_c, &badnode_c) || merge_threads(p, st) ||
	    merge_coverage(p, st) || merge_sources(p, st, srcrow) ||
	    merge_drops(p, st, &sdrop, &rdrop) ||
	    merge_stream_info(p, st, name, truncated, sdrop, rdrop) ||
	    merge_rows(p, st, srcrow, nostack_c, badnode_c) ||
	    (keep_ends && merge_end_rows(p, st)) || merge_regions(p, st))
		goto out;
	p->region_records += st->nregion_records;
	p->region_counts += st->nregion_counts;
	p->streams++;
	err = 0;
out:
	free(srcrow);
	return err;
}

/* A stream read but not yet merged (--jobs reads several at once). */
struct sd_load {
	struct sstate st;
	int r, truncated;
	size_t bad_off;
	const char *name; /* the stream's (not owned: the caller's file name) */
};

struct sd_load *sd_profile_parse(const struct sd_profile *p, struct sd_stream *s)
{
	struct sd_load *l = calloc(1, sizeof *l);
	if (!l)
		return NULL;
	struct sstate *st = &l->st;
	struct sd_record rec;
	l->name = s->name;
	int r = sd_stream_header(s, &rec);
	if (r == 0)
		r = on_header(st, &rec, s);
	while (r == 0) {
		r = sd_stream_next(s, &rec);
		if (r == 1)
			r = on_record((struct sd_profile *)p, st, &rec, s);
		else if (r == 0)
			break;
		else if (r == SD_ERR_TRUNC && s->nrecords > 0) {
			l->truncated = 1;
			r = 0;
			break;
		}
	}
	l->r = r;
	l->bad_off = s->err_off;
	return l;
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
		int h = sd_sym_module(p->sym, st->modpath[i], st->cwd, st->modbid[i],
				      st->modbidlen[i]);
		if (h < 0)
			r = h;
		else
			st->mods[i] = h;
	}
	if (r == 0)
		r = merge(p, st, l->name, l->truncated);
	if (r == 0 && l->truncated) {
		p->truncated++;
		r = 1;
	}
	*bad_off = l->bad_off;
	sstate_fini(st);
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
