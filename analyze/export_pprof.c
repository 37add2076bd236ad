/*
 * export_pprof.c: `sonde report --format pprof -o FILE`, the profile as a gzipped
 * perftools.profiles.Profile (the pprof format: `go tool pprof`, the pprof web UI,
 * speedscope, Perfetto). Written with a small protobuf encoder of our own (varints and
 * length-delimited fields, the only two wire types the message needs) from the field
 * numbers of profile.proto, and zlib for the gzip.
 *
 * What goes in:
 *   sample types  samples/count; the sources' weight (time/nanoseconds when every
 *                 source counts ns, else weight/<unit>); one per counter (NAME/count).
 *                 The default is samples.
 *   samples       one per sample row (thread, source, context, call path): its call
 *                 path leaf first, its values, and labels: each annotation value of its
 *                 thread and process context (numbers as numeric labels with the unit
 *                 "count", since pprof drops a numeric 0 without a unit), the thread's
 *                 tid and the process's pid (unit "id").
 *   locations     one per node of the merged call tree, its function as its one line;
 *                 a sample's innermost frame is a location of its own per source line
 *                 (node, line), whose line carries that line number (`-lines`).
 *   functions     one per function, its name, and as its file the source file of its
 *                 first innermost frame with a line (else the module).
 *   mappings      one per module the streams named (path, build-id in hex), marked as
 *                 symbolized; each location points to its function's module.
 * --where, --source and --metric's rows apply as for every view: they filtered the rows.
 * Called by sd_output in the CLI's one thread; writes FILE, nothing on stdout.
 */
#include "analyze/analyze.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
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

static int gzip_write(const char *path, const struct pb *b)
{
	gzFile f = gzopen(path, "wb9");
	if (!f)
		return -errno ? -errno : -EIO;
	int ok = b->n == 0 || gzwrite(f, b->p, (unsigned)b->n) == (int)b->n;
	if (gzclose(f) != Z_OK || !ok)
		return -EIO;
	return 0;
}

int sd_out_pprof(const char *path, const struct sd_profile *p)
{
	struct pb prof = { 0 }, m = { 0 }, smp = { 0 }, lab = { 0 };
	struct strs s = { 0 };
	const char *wu = weight_unit(p);
	int err;

	str_id(&s, "");
	/* sample types: samples, the weight, the counters */
	value_type(&prof, 1, &s, "samples", "count", &m);
	if (wu)
		value_type(&prof, 1, &s, !strcmp(wu, "ns") ? "time" : "weight",
			   !strcmp(wu, "ns") ? "nanoseconds" : wu, &m);
	for (size_t c = 0; c < p->ncounters; c++)
		value_type(&prof, 1, &s, p->counters[c].name, "count", &m);
	size_t nv = 1 + (wu != NULL) + p->ncounters, nfuncs = sd_sym_nfuncs(p->sym);
	uint64_t *vals = calloc(nv, sizeof(*vals)), *locs = calloc(p->nnodes + 1, sizeof(*locs));
	uint32_t *ffile = calloc(nfuncs + 1, sizeof(*ffile)); /* a source file per function */
	struct sd_u64map leafmap = { 0 };               /* (node, line) -> location id */
	uint64_t *leaves = NULL;                        /* location id - first_leaf -> key */
	size_t nleaves = 0, capleaves = 0, first_leaf = p->nnodes;
	err = -ENOMEM;
	if (!vals || !locs || !ffile)
		goto out;
	/* samples */
	for (size_t i = 0; i < p->nrows; i++) {
		const struct sd_crow *r = &p->rows[i];
		size_t nl = 0;
		for (uint32_t x = r->cnode; x; x = p->nodes[x].parent)
			locs[nl++] = x;
		if (nl && r->line) { /* the innermost frame at its line */
			uint64_t key = (uint64_t)r->cnode << 32 | r->line;
			uint32_t id;
			if (!sd_u64map_get(&leafmap, key, &id)) {
				if (sd_grow(&leaves, &capleaves, nleaves + 1, sizeof(*leaves)) ||
				    sd_u64map_put(&leafmap, key, (uint32_t)(first_leaf + nleaves)))
					goto out;
				id = (uint32_t)(first_leaf + nleaves);
				leaves[nleaves++] = key;
			}
			locs[0] = id;
			uint32_t f = p->nodes[r->cnode].func;
			if (!ffile[f])
				ffile[f] = r->file;
		}
		for (size_t k = 0; k < nl; k++)
			varint(&m, locs[k]);
		f_msg(&smp, 1, &m);
		vals[0] = r->samples;
		if (wu)
			vals[1] = (uint64_t)llround(r->weight);
		for (size_t c = 0; c < p->ncounters; c++)
			vals[1 + (wu != NULL) + c] = r->counts ? r->counts[c] : 0;
		for (size_t k = 0; k < nv; k++)
			varint(&m, vals[k]);
		f_msg(&smp, 2, &m);
		ctx_labels(&smp, &s, p, r->ctx, &lab);
		ctx_labels(&smp, &s, p, r->pctx, &lab);
		label(&smp, &s, "thread", NULL, (int64_t)r->tid, "id", &lab);
		label(&smp, &s, "pid", NULL, (int64_t)r->pid, "id", &lab);
		f_msg(&prof, 2, &smp);
	}
	/* mappings: one per module; a function's module by its basename */
	size_t nmods = sd_sym_nmodules(p->sym);
	struct sd_strmap modmap = { 0 };
	for (size_t i = 0; i < nmods; i++) {
		const char *mpath, *base;
		const uint8_t *bid;
		size_t bidlen;
		char hex[2 * 64 + 1];
		sd_sym_module_info(p->sym, i, &mpath, &base, &bid, &bidlen);
		for (size_t k = 0; k < bidlen && k < 64; k++)
			snprintf(hex + 2 * k, 3, "%02x", bid[k]);
		hex[2 * (bidlen < 64 ? bidlen : 64)] = 0;
		f_int(&m, 1, i + 1);
		f_int(&m, 5, (uint64_t)str_id(&s, mpath ? mpath : ""));
		f_int(&m, 6, (uint64_t)str_id(&s, hex));
		f_int(&m, 7, 1), f_int(&m, 8, 1), f_int(&m, 9, 1), f_int(&m, 10, 1);
		f_msg(&prof, 3, &m);
		uint32_t have;
		if (base && !sd_strmap_get(&modmap, base, strlen(base), &have) &&
		    sd_strmap_put(&modmap, base, strlen(base), (uint32_t)i + 1))
			prof.err = -ENOMEM;
	}
	/* locations: one per call-tree node, its function as its line */
	for (size_t x = 1; x < p->nnodes; x++) {
		f_int(&m, 1, x);
		f_int(&m, 2, mapping_of(p, &modmap, p->nodes[x].func));
		struct pb line = { 0 };
		f_int(&line, 1, p->nodes[x].func + 1);
		f_msg(&m, 4, &line);
		free(line.p);
		f_msg(&prof, 4, &m);
	}
	for (size_t k = 0; k < nleaves; k++) { /* innermost frames at their lines */
		uint32_t node = (uint32_t)(leaves[k] >> 32), line = (uint32_t)leaves[k];
		f_int(&m, 1, first_leaf + k);
		f_int(&m, 2, mapping_of(p, &modmap, p->nodes[node].func));
		struct pb ln = { 0 };
		f_int(&ln, 1, p->nodes[node].func + 1);
		f_int(&ln, 2, line);
		f_msg(&m, 4, &ln);
		free(ln.p);
		f_msg(&prof, 4, &m);
	}
	/* functions */
	for (size_t f = 0; f < nfuncs; f++) {
		const struct sd_func *fn = sd_sym_func(p->sym, (uint32_t)f);
		const char *file = ffile[f] ? sd_sym_file(p->sym, ffile[f]) : "";
		f_int(&m, 1, f + 1);
		f_int(&m, 2, (uint64_t)str_id(&s, fn->display));
		f_int(&m, 3, (uint64_t)str_id(&s, fn->name ? fn->name : fn->display));
		f_int(&m, 4, (uint64_t)str_id(&s, *file ? file : fn->module ? fn->module : ""));
		f_msg(&prof, 5, &m);
	}
	/* the period: the first source's, and the default type */
	if (p->nsources) {
		const struct sd_source_row *src = &p->sources[0];
		value_type(&prof, 11, &s, !strcmp(src->unit, "ns") ? "cpu" : src->name,
			   !strcmp(src->unit, "ns") ? "nanoseconds" : src->unit, &m);
		f_int(&prof, 12, src->period);
	}
	f_int(&prof, 13, (uint64_t)str_id(&s, "sonde report --format pprof"));
	f_int(&prof, 14, (uint64_t)str_id(&s, "samples"));
	for (size_t k = 0; k < s.n; k++)
		f_bytes(&prof, 6, s.v[k], strlen(s.v[k]));
	err = prof.err ? prof.err : m.err ? m.err : smp.err ? smp.err : lab.err ? lab.err : s.err;
	if (!err)
		err = gzip_write(path, &prof);
	sd_strmap_fini(&modmap);
out:
	free(vals);
	free(locs);
	free(ffile);
	free(leaves);
	sd_u64map_fini(&leafmap);
	free(prof.p), free(m.p), free(smp.p), free(lab.p);
	for (size_t k = 0; k < s.n; k++)
		free(s.v[k]);
	free(s.v);
	sd_strmap_fini(&s.map);
	return err;
}
