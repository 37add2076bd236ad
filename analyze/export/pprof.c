/*
 * export/pprof.c: `sonde report --format pprof -o FILE`, the profile as a gzipped
 * perftools.profiles.Profile (the pprof format: `go tool pprof`, the pprof web UI,
 * speedscope, Perfetto). Written with a small protobuf encoder of our own (varints and
 * length-delimited fields, the only two wire types the message needs) from the field
 * numbers of profile.proto, and zlib for the gzip.
 *
 * What goes in:
 *   sample types  samples/count; the sources' weight (time/nanoseconds when every
 *                 source counts ns, else weight/<unit>); one per counter (NAME/count).
 *                 The default is time when every source counts ns, else periods.
 *   samples       one per sample row (thread, source, context, call path): its call
 *                 path leaf first, its values, and labels: each annotation value of its
 *                 thread and process context (numbers as numeric labels with the unit
 *                 "count", since pprof drops a numeric 0 without a unit), the thread's
 *                 tid and the process's pid (unit "id").
 *   locations     one per node of the merged call tree, standing for its address: its
 *                 function, then (pprof's Line list, innermost first) each function it
 *                 is inlined into, out to the one the code is in; a sample lists one
 *                 location per address, so inlined calls show as pprof's "(inline)"
 *                 frames. A sample's innermost frame is a location of its own per
 *                 source line (node, line), whose first line carries that line number
 *                 (`-lines`).
 *   functions     one per function, its name, and as its file the source file of its
 *                 first innermost frame with a line (else the module).
 *   mappings      one per module the streams named (path, build-id in hex, the run-time
 *                 range [lo, hi) of its first stream's MODULE), marked as symbolized;
 *                 each location points to its function's module, at an address its
 *                 function was sampled at (the node's ELF address plus the mapping's bias).
 * --where, --source and --metric's rows apply as for every view: they filtered the rows.
 * With --view tree (sd_out_pprof_tree): the tree view's paths, its annotation levels as
 * functions of their own ("phase=solve", no mapping), one location per tree node, one
 * sample per node with a value of its own, and one sample type: the metric.
 * Called by sd_output in the CLI's one thread; writes FILE, nothing on stdout.
 */
#include "analyze/export/export.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* A growing protobuf buffer; err sticks at -ENOMEM. */
struct pb { uint8_t *p; size_t n, cap; int err; };

static void put(struct pb *b, const void *d, size_t n)
{
	if (b->err)
		return;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 256;
		while (cap < b->n + n)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return;
		}
		b->p = p, b->cap = cap;
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
}

static void varint(struct pb *b, uint64_t v)
{
	uint8_t t[10];
	size_t k = 0;
	do {
		t[k] = v & 0x7f;
		v >>= 7;
		t[k++] |= v ? 0x80 : 0;
	} while (v);
	put(b, t, k);
}

/* A varint field (wire type 0); proto3 leaves zeros out. int64 values go as their
 * two's complement bits (not zigzag), as profile.proto's int64 fields are. */
static void f_int(struct pb *b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	varint(b, (uint64_t)field << 3);
	varint(b, v);
}

/* A length-delimited field (wire type 2): bytes, a string, a message or a packed array. */
static void f_bytes(struct pb *b, unsigned field, const void *d, size_t n)
{
	varint(b, (uint64_t)field << 3 | 2);
	varint(b, n);
	put(b, d, n);
}

/* Appends message m as field `field` of b, and empties m for reuse. */
static void f_msg(struct pb *b, unsigned field, struct pb *m)
{
	if (m->err)
		b->err = m->err;
	f_bytes(b, field, m->p, m->n);
	m->n = 0;
}

/* The string table: index 0 is "" (pprof requires it). */
struct strs { struct sd_strmap map; char **v; size_t n, cap; int err; };

static int64_t str_id(struct strs *s, const char *str)
{
	uint32_t id;
	size_t len = strlen(str);
	if (sd_strmap_get(&s->map, str, len, &id))
		return id;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		char **v = realloc(s->v, cap * sizeof(*v));
		if (!v) {
			s->err = -ENOMEM;
			return 0;
		}
		s->v = v, s->cap = cap;
	}
	if (!(s->v[s->n] = strdup(str)) || sd_strmap_put(&s->map, str, len, (uint32_t)s->n)) {
		s->err = -ENOMEM;
		return 0;
	}
	return (int64_t)s->n++;
}

static void value_type(struct pb *b, unsigned field, struct strs *s, const char *type,
		       const char *unit, struct pb *m)
{
	f_int(m, 1, (uint64_t)str_id(s, type));
	f_int(m, 2, (uint64_t)str_id(s, unit));
	f_msg(b, field, m);
}

/* Is s an integer (a numeric label)? */
static int integer(const char *s, int64_t *v)
{
	char *end;
	if (!*s)
		return 0;
	long long x = strtoll(s, &end, 10);
	if (*end)
		return 0;
	*v = x;
	return 1;
}

static void label(struct pb *b, struct strs *s, const char *key, const char *str, int64_t num,
		  const char *unit, struct pb *m)
{
	f_int(m, 1, (uint64_t)str_id(s, key));
	if (str)
		f_int(m, 2, (uint64_t)str_id(s, str));
	else {
		f_int(m, 3, (uint64_t)num);
		f_int(m, 4, (uint64_t)str_id(s, unit));
	}
	f_msg(b, 3, m);
}

/* The labels of a context path (outermost first does not matter: one label a key, the
 * innermost value of an attribute wins, as it is the one the sample ran under). */
static void ctx_labels(struct pb *smp, struct strs *s, const struct sd_profile *p, uint32_t c,
		       struct pb *m)
{
	uint8_t *seen = NULL;
	if (p->nattr_names && !(seen = calloc(p->nattr_names, 1)))
		return;
	for (; c; c = p->ctx[c].parent) {
		const struct sd_ctxnode *x = &p->ctx[c];
		if (seen[x->attr])
			continue;
		seen[x->attr] = 1;
		const char *v = p->value_strs[x->value];
		int64_t num;
		if (integer(v, &num))
			label(smp, s, p->attr_names[x->attr], NULL, num, "count", m);
		else
			label(smp, s, p->attr_names[x->attr], v, 0, NULL, m);
	}
	free(seen);
}

/* The weight's sample type: time in ns when every source counts ns, else its unit. */
static const char *weight_unit(const struct sd_profile *p)
{
	const char *u = NULL;
	for (size_t i = 0; i < p->nsources; i++) {
		if (!p->sources[i].samples)
			continue;
		if (u && strcmp(u, p->sources[i].unit))
			return NULL; /* mixed units: no weight column */
		u = p->sources[i].unit;
	}
	return u;
}

/* The mapping of function f's module (0: none). */
static uint64_t mapping_of(const struct sd_profile *p, const struct sd_strmap *modmap, uint32_t f)
{
	const char *mod = sd_sym_func(p->sym, f)->module;
	uint32_t id;
	return mod && *mod && sd_strmap_get(modmap, mod, strlen(mod), &id) ? id : 0;
}

/* FILE written by sd_outfile_open's rule (outfile.c): 0, -ENOMEM, or SD_SAID(SD_EXIT_IO). */
static int gzip_write(const char *path, const struct pb *b)
{
	struct sd_outfile of;
	int fd = sd_outfile_open(&of, path);
	if (fd < 0)
		return SD_SAID(SD_EXIT_IO);
	gzFile f = gzdopen(fd, "wb9");
	if (!f) {
		close(fd);
		sd_outfile_done(&of, 0);
		return -ENOMEM;
	}
	errno = 0;
	int ok = b->n == 0 || gzwrite(f, b->p, (unsigned)b->n) == (int)b->n;
	ok &= gzclose(f) == Z_OK;
	if (!ok)
		sd_msg("sonde: %s: cannot write: %s (check the path and its directory)",
			path, strerror(errno ? errno : EIO));
	return sd_outfile_done(&of, ok) || !ok ? SD_SAID(SD_EXIT_IO) : 0;
}

/* What the parts of one export share. */
struct px {
	const struct sd_profile *p;
	struct pb prof, m, smp, lab;
	struct strs s;
	const char *wu;                 /* the weight's unit (NULL: no weight column) */
	size_t nv;                      /* values per sample */
	uint64_t *vals, *locs;
	uint32_t *ffile;                /* a source file per function */
	struct sd_u64map leafmap;       /* (node, line) -> location id */
	uint64_t *leaves;               /* location id - first_leaf -> (node, line) */
	size_t nleaves, capleaves, first_leaf;
	struct sd_strmap modmap;        /* module basename -> mapping id */
};

/* The outermost node of the address of node x: x, or the function x is inlined into
 * (its one location holds them all). */
static uint32_t address_top(const struct sd_profile *p, uint32_t x)
{
	while (x && SD_CNODE_IS_INLINE(&p->nodes[x]))
		x = p->nodes[x].parent;
	return x;
}

/* Location id of row r's innermost frame at its line (a location of its own). */
static int leaf_location(struct px *x, const struct sd_crow *r, uint32_t *id)
{
	uint64_t key = (uint64_t)r->cnode << 32 | r->line;
	if (sd_u64map_get(&x->leafmap, key, id))
		return 0;
	*id = (uint32_t)(x->first_leaf + x->nleaves);
	if (sd_grow(&x->leaves, &x->capleaves, x->nleaves + 1, sizeof(*x->leaves)) ||
	    sd_u64map_put(&x->leafmap, key, *id))
		return -ENOMEM;
	x->leaves[x->nleaves++] = key;
	uint32_t f = x->p->nodes[r->cnode].func;
	if (!x->ffile[f])
		x->ffile[f] = r->file;
	return 0;
}

/* One sample per row: its locations leaf first (one per address: inlined calls share
 * their caller's), values and labels. */
static int write_samples(struct px *x)
{
	const struct sd_profile *p = x->p;
	for (size_t i = 0; i < p->nrows; i++) {
		const struct sd_crow *r = &p->rows[i];
		size_t nl = 0;
		for (uint32_t n = r->cnode; n; n = p->nodes[address_top(p, n)].parent)
			x->locs[nl++] = n;
		if (nl && r->line) {
			uint32_t id;
			if (leaf_location(x, r, &id))
				return -ENOMEM;
			x->locs[0] = id;
		}
		for (size_t k = 0; k < nl; k++)
			varint(&x->m, x->locs[k]);
		f_msg(&x->smp, 1, &x->m);
		x->vals[0] = r->periods;
		x->vals[1] = r->samples;
		if (x->wu)
			x->vals[2] = (uint64_t)llround(r->weight);
		for (size_t c = 0; c < p->ncounters; c++)
			x->vals[2 + (x->wu != NULL) + c] = r->counts ? r->counts[c] : 0;
		for (size_t k = 0; k < x->nv; k++)
			varint(&x->m, x->vals[k]);
		f_msg(&x->smp, 2, &x->m);
		ctx_labels(&x->smp, &x->s, p, r->ctx, &x->lab);
		ctx_labels(&x->smp, &x->s, p, r->pctx, &x->lab);
		label(&x->smp, &x->s, "thread", NULL, (int64_t)r->tid, "id", &x->lab);
		label(&x->smp, &x->s, "pid", NULL, (int64_t)r->pid, "id", &x->lab);
		f_msg(&x->prof, 2, &x->smp);
	}
	return 0;
}

/* Mappings: one per module; a function's module found by its basename. */
static void write_mappings(struct px *x)
{
	size_t nmods = sd_sym_nmodules(x->p->sym);
	for (size_t i = 0; i < nmods; i++) {
		const char *mpath, *base;
		const uint8_t *bid;
		size_t bidlen;
		char hex[2 * 64 + 1];
		sd_sym_module_info(x->p->sym, i, &mpath, &base, &bid, &bidlen);
		for (size_t k = 0; k < bidlen && k < 64; k++)
			snprintf(hex + 2 * k, 3, "%02x", bid[k]);
		hex[2 * (bidlen < 64 ? bidlen : 64)] = 0;
		f_int(&x->m, 1, i + 1);
		if (i < x->p->nmodrange) { /* its run-time range (the first process's) */
			const uint64_t *r = &x->p->modrange[3 * i];
			f_int(&x->m, 2, r[1]), f_int(&x->m, 3, r[2]);
		}
		f_int(&x->m, 5, (uint64_t)str_id(&x->s, mpath ? mpath : ""));
		f_int(&x->m, 6, (uint64_t)str_id(&x->s, hex));
		f_int(&x->m, 7, 1), f_int(&x->m, 8, 1), f_int(&x->m, 9, 1), f_int(&x->m, 10, 1);
		f_msg(&x->prof, 3, &x->m);
		uint32_t have;
		if (base && !sd_strmap_get(&x->modmap, base, strlen(base), &have) &&
		    sd_strmap_put(&x->modmap, base, strlen(base), (uint32_t)i + 1))
			x->prof.err = -ENOMEM;
	}
}

/* Location `id` of node n's address: its lines innermost first (n at `line`, 0: not
 * known), then each function n is inlined into, out to the one the address is in,
 * whose module is the location's mapping. */
static void location(struct px *x, uint64_t id, uint32_t n, uint32_t line)
{
	const struct sd_profile *p = x->p;
	const struct sd_cnode *top = &p->nodes[address_top(p, n)];
	uint64_t map = mapping_of(p, &x->modmap, top->func);
	f_int(&x->m, 1, id);
	f_int(&x->m, 2, map);
	/* an address the function was sampled at, in the mapping's range (by its bias) */
	if (map && map <= p->nmodrange && p->modrange[3 * (map - 1) + 1] < p->modrange[3 * (map - 1) + 2])
		f_int(&x->m, 3, top->addr + p->modrange[3 * (map - 1)]);
	else if (!map)
		f_int(&x->m, 3, top->addr);
	for (uint32_t k = n;; k = p->nodes[k].parent) {
		struct pb ln = { 0 };
		f_int(&ln, 1, p->nodes[k].func + 1);
		if (k == n && line)
			f_int(&ln, 2, line);
		f_msg(&x->m, 4, &ln);
		if (ln.err)
			x->m.err = ln.err;
		free(ln.p);
		if (!SD_CNODE_IS_INLINE(&p->nodes[k]))
			break;
	}
	f_msg(&x->prof, 4, &x->m);
}

static void write_functions(struct px *x)
{
	size_t nfuncs = sd_sym_nfuncs(x->p->sym);
	for (size_t f = 0; f < nfuncs; f++) {
		const struct sd_func *fn = sd_sym_func(x->p->sym, (uint32_t)f);
		const char *file = x->ffile[f] ? sd_sym_file(x->p->sym, x->ffile[f]) : "";
		f_int(&x->m, 1, f + 1);
		f_int(&x->m, 2, (uint64_t)str_id(&x->s, fn->display));
		f_int(&x->m, 3, (uint64_t)str_id(&x->s, fn->name ? fn->name : fn->display));
		f_int(&x->m, 4, (uint64_t)str_id(&x->s, *file ? file : fn->module ? fn->module : ""));
		f_msg(&x->prof, 5, &x->m);
	}
}

/* Sample types (periods, the default: the samples counted by their weights; samples;
 * the weight; the counters), after them the period (the first
 * source's) and the default type, which close the message. */
static void write_types(struct px *x)
{
	value_type(&x->prof, 1, &x->s, "periods", "count", &x->m);
	value_type(&x->prof, 1, &x->s, "samples", "count", &x->m);
	if (x->wu)
		value_type(&x->prof, 1, &x->s, !strcmp(x->wu, "ns") ? "time" : "weight",
			   !strcmp(x->wu, "ns") ? "nanoseconds" : x->wu, &x->m);
	for (size_t c = 0; c < x->p->ncounters; c++)
		value_type(&x->prof, 1, &x->s, x->p->counters[c].name, "count", &x->m);
}

static void write_period(struct px *x)
{
	const struct sd_profile *p = x->p;
	size_t first = 0; /* the first source counted */
	while (first + 1 < p->nsources && !p->sources[first].samples)
		first++;
	if (p->nsources) {
		const struct sd_source_row *src = &p->sources[first];
		value_type(&x->prof, 11, &x->s, !strcmp(src->unit, "ns") ? "cpu" : src->name,
			   !strcmp(src->unit, "ns") ? "nanoseconds" : src->unit, &x->m);
		f_int(&x->prof, 12, src->period);
	}
	f_int(&x->prof, 13, (uint64_t)str_id(&x->s, "sonde report --format pprof"));
	/* the default: time, when every source counts it (what pprof users read first) */
	f_int(&x->prof, 14, (uint64_t)str_id(&x->s, x->wu && !strcmp(x->wu, "ns") ? "time"
									       : "periods"));
	for (size_t k = 0; k < x->s.n; k++)
		f_bytes(&x->prof, 6, x->s.v[k], strlen(x->s.v[k]));
}

static void px_fini(struct px *x)
{
	free(x->vals);
	free(x->locs);
	free(x->ffile);
	free(x->leaves);
	sd_u64map_fini(&x->leafmap);
	sd_strmap_fini(&x->modmap);
	free(x->prof.p), free(x->m.p), free(x->smp.p), free(x->lab.p);
	for (size_t k = 0; k < x->s.n; k++)
		free(x->s.v[k]);
	free(x->s.v);
	sd_strmap_fini(&x->s.map);
}

int sd_out_pprof(const char *path, const struct sd_profile *p)
{
	struct px x = { .p = p, .wu = weight_unit(p), .first_leaf = p->nnodes };
	int err = -ENOMEM;

	str_id(&x.s, "");
	x.nv = 2 + (x.wu != NULL) + p->ncounters;
	x.vals = calloc(x.nv, sizeof(*x.vals));
	x.locs = calloc(p->nnodes + 1, sizeof(*x.locs));
	x.ffile = calloc(sd_sym_nfuncs(p->sym) + 1, sizeof(*x.ffile));
	if (!x.vals || !x.locs || !x.ffile)
		goto out;
	write_types(&x);
	if (write_samples(&x))
		goto out;
	write_mappings(&x);
	for (size_t n = 1; n < p->nnodes; n++) /* every node's address */
		location(&x, n, (uint32_t)n, 0);
	for (size_t k = 0; k < x.nleaves; k++) /* innermost frames at their lines */
		location(&x, x.first_leaf + k, (uint32_t)(x.leaves[k] >> 32), (uint32_t)x.leaves[k]);
	write_functions(&x);
	write_period(&x);
	err = x.prof.err ? x.prof.err : x.m.err ? x.m.err : x.smp.err ? x.smp.err
	    : x.lab.err ? x.lab.err : x.s.err;
	if (!err)
		err = gzip_write(path, &x.prof);
out:
	px_fini(&x);
	return err;
}

/* ---- --view tree: the tree view's paths, annotation levels as frames ------------- */

/* Function id (1-based) of tree node i: one per distinct name; an annotation level's
 * function has no module. */
static uint64_t tree_func(struct px *x, const struct sd_tree_src *src, uint32_t i,
			  struct sd_strmap *names, size_t *nfn, uint32_t *fmod)
{
	const char *name = src->f.name(src->f.ctx, i);
	uint32_t id;
	if (sd_strmap_get(names, name, strlen(name), &id))
		return id;
	uint32_t fid, val;
	int level = src->what(src->f.ctx, i, &fid, &val);
	const struct sd_func *fn = level ? NULL : sd_sym_func(x->p->sym, fid);
	id = (uint32_t)++*nfn;
	if (sd_strmap_put(names, name, strlen(name), id)) {
		x->prof.err = -ENOMEM;
		return 0;
	}
	fmod[i] = level ? 0 : (uint32_t)mapping_of(x->p, &x->modmap, fid);
	f_int(&x->m, 1, id);
	f_int(&x->m, 2, (uint64_t)str_id(&x->s, name));
	f_int(&x->m, 3, (uint64_t)str_id(&x->s, fn && fn->name ? fn->name : name));
	f_int(&x->m, 4, (uint64_t)str_id(&x->s, fn && fn->module ? fn->module : ""));
	f_msg(&x->prof, 5, &x->m);
	return id;
}

int sd_out_pprof_tree(const char *path, const struct sd_tree_src *src,
		      const struct sd_report_opts *o)
{
	struct px x = { .p = src->p };
	struct sd_strmap names = { 0 };
	uint32_t n = src->f.n;
	uint64_t *fid = calloc(n + 1, sizeof(*fid));
	uint32_t *fmod = calloc(n + 1, sizeof(*fmod));
	size_t nfn = 0;
	int err = -ENOMEM;

	str_id(&x.s, "");
	if (!fid || !fmod)
		goto out;
	const char *unit = o->counter ? "count" : !o->weight ? "count" : o->weight_unit
			 ? o->weight_unit : "nanoseconds";
	value_type(&x.prof, 1, &x.s, o->counter || !o->weight ? sd_metric_name(o)
			: o->weight_unit ? "weight" : "time", unit, &x.m);
	write_mappings(&x);
	for (uint32_t i = 1; i < n; i++) { /* functions and one location per node */
		fid[i] = tree_func(&x, src, i, &names, &nfn, fmod);
		f_int(&x.m, 1, i);
		f_int(&x.m, 2, fmod[i]);
		struct pb ln = { 0 };
		f_int(&ln, 1, fid[i]);
		f_msg(&x.m, 4, &ln);
		free(ln.p);
		f_msg(&x.prof, 4, &x.m);
	}
	for (uint32_t i = 1; i < n; i++) { /* a sample per node with a value of its own */
		double v = src->f.value(src->f.ctx, i);
		if (!(v > 0))
			continue;
		for (uint32_t k = i; k; k = src->f.parent(src->f.ctx, k))
			varint(&x.m, k);
		f_msg(&x.smp, 1, &x.m);
		varint(&x.m, (uint64_t)llround(v)); /* samples, ns, a unit or a count */
		f_msg(&x.smp, 2, &x.m);
		f_msg(&x.prof, 2, &x.smp);
	}
	f_int(&x.prof, 13, (uint64_t)str_id(&x.s, "sonde report --view tree --format pprof"));
	for (size_t k = 0; k < x.s.n; k++)
		f_bytes(&x.prof, 6, x.s.v[k], strlen(x.s.v[k]));
	err = x.prof.err ? x.prof.err : x.m.err ? x.m.err : x.smp.err ? x.smp.err : x.s.err;
	if (!err)
		err = gzip_write(path, &x.prof);
out:
	free(fid);
	free(fmod);
	sd_strmap_fini(&names);
	px_fini(&x);
	return err;
}
