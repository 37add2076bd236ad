/*
 * output.c: renders a loaded profile for `sonde report` (views flat, threads, sources;
 * formats text, folded, csv, json) and the JSON helpers `sonde dump` shares. The
 * context views (group-by, tree, regions) are in views.c.
 *
 * Column names and shapes are documented in docs/REPORT.md and checked by
 * tests/analyze; a change here changes both. Output is deterministic: every list is
 * sorted with a total order before it is printed. JSON output is always valid JSON:
 * strings are escaped and invalid UTF-8 bytes become U+FFFD.
 */
#include "analyze/analyze.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void sd_json_str(FILE *out, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;

	putc('"', out);
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			fprintf(out, "\\%c", c);
		} else if (c == '\n') {
			fputs("\\n", out);
		} else if (c == '\t') {
			fputs("\\t", out);
		} else if (c == '\r') {
			fputs("\\r", out);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(out, "\\u%04x", c);
		} else if (c >= 0x80) {
			size_t l = utf8_len(s + i, len - i);
			if (l)
				fwrite(s + i, 1, l, out);
			else
				fputs("\\ufffd", out);
			i += l ? l : 1;
			continue;
		} else {
			putc(c, out);
		}
		i++;
	}
	putc('"', out);
}

static void json_hex(FILE *out, const char *p, size_t len)
{
	putc('"', out);
	for (size_t i = 0; i < len; i++)
		fprintf(out, "%02x", (unsigned char)p[i]);
	putc('"', out);
}

static void json_double(FILE *out, double d)
{
	if (isfinite(d))
		fprintf(out, "%.17g", d);
	else
		fputs("null", out);
}

void sd_json_obj(FILE *out, const msgpack_object *o)
{
	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		fputs("null", out);
		break;
	case MSGPACK_OBJECT_BOOLEAN:
		fputs(o->via.boolean ? "true" : "false", out);
		break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		fprintf(out, "%" PRIu64, o->via.u64);
		break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		fprintf(out, "%" PRId64, o->via.i64);
		break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		json_double(out, o->via.f64);
		break;
	case MSGPACK_OBJECT_STR:
		sd_json_str(out, o->via.str.ptr, o->via.str.size);
		break;
	case MSGPACK_OBJECT_BIN:
		json_hex(out, o->via.bin.ptr, o->via.bin.size);
		break;
	case MSGPACK_OBJECT_EXT:
		fprintf(out, "{\"ext\":%d,\"data\":", o->via.ext.type);
		json_hex(out, o->via.ext.ptr, o->via.ext.size);
		putc('}', out);
		break;
	case MSGPACK_OBJECT_ARRAY:
		putc('[', out);
		for (uint32_t i = 0; i < o->via.array.size; i++) {
			if (i)
				putc(',', out);
			sd_json_obj(out, &o->via.array.ptr[i]);
		}
		putc(']', out);
		break;
	case MSGPACK_OBJECT_MAP:
		putc('{', out);
		for (uint32_t i = 0; i < o->via.map.size; i++) {
			const msgpack_object_kv *kv = &o->via.map.ptr[i];
			if (i)
				putc(',', out);
			if (kv->key.type == MSGPACK_OBJECT_STR) {
				sd_json_str(out, kv->key.via.str.ptr, kv->key.via.str.size);
			} else if (kv->key.type == MSGPACK_OBJECT_ARRAY ||
				   kv->key.type == MSGPACK_OBJECT_MAP) {
				/* not quoted JSON: escaping nested keys would grow exponentially */
				fputs(kv->key.type == MSGPACK_OBJECT_MAP ? "\"<map>\"" : "\"<array>\"",
				      out);
			} else { /* JSON keys are strings: render the scalar key's JSON as one */
				char *buf = NULL;
				size_t len = 0;
				FILE *m = open_memstream(&buf, &len);
				if (m) {
					sd_json_obj(m, &kv->key);
					fclose(m);
				}
				sd_json_str(out, buf ? buf : "", buf ? len : 0);
				free(buf);
			}
			putc(':', out);
			sd_json_obj(out, &kv->val);
		}
		putc('}', out);
		break;
	default:
		fputs("null", out);
	}
}

void sd_csv_str(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, out);
		return;
	}
	putc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			putc('"', out);
		putc(*s, out);
	}
	putc('"', out);
}

static void csv_str(FILE *out, const char *s)
{
	sd_csv_str(out, s);
}

static void json_cstr(FILE *out, const char *s)
{
	sd_json_str(out, s, strlen(s));
}

/* ---- flat profile ---------------------------------------------------------------- */

struct frow { const struct sd_func *f; double self, total; };

static int frow_cmp(const void *a, const void *b)
{
	const struct frow *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	int c = strcmp(x->f->display, y->f->display);
	return c ? c : strcmp(x->f->module, y->f->module);
}

static double node_val(const struct sd_cnode *n, int weight)
{
	return weight ? n->weight : (double)n->samples;
}

/* Self and total (inclusive; a function counted once per path) per function. */
static int flat_rows(const struct sd_profile *p, int weight, struct frow **out, size_t *nout)
{
	size_t nf = sd_sym_nfuncs(p->sym), n = p->nnodes, nrows = 0;
	double *self = calloc(nf + 1, sizeof(double)), *total = calloc(nf + 1, sizeof(double));
	double *sub = calloc(n, sizeof(double));
	uint32_t *first = malloc(n * sizeof(uint32_t)), *next = malloc(n * sizeof(uint32_t));
	uint32_t *onpath = calloc(nf + 1, sizeof(uint32_t));
	uint64_t *stack = malloc(2 * n * sizeof(uint64_t));
	struct frow *rows = NULL;
	int err = -ENOMEM;

	if (!self || !total || !sub || !first || !next || !onpath || !stack)
		goto out;
	memset(first, 0xff, n * sizeof(uint32_t));
	for (size_t i = n; i-- > 1;) {
		const struct sd_cnode *c = &p->nodes[i];
		sub[i] += node_val(c, weight);
		self[c->func] += node_val(c, weight);
		sub[c->parent] += sub[i];
		next[i] = first[c->parent];
		first[c->parent] = (uint32_t)i;
	}
	/* depth-first walk; an entry with bit 63 set marks leaving that node */
	size_t sp = 0;
	for (uint32_t c = first[0]; c != UINT32_MAX; c = next[c])
		stack[sp++] = c;
	while (sp) {
		uint64_t e = stack[--sp];
		uint32_t i = (uint32_t)e, f = p->nodes[i].func;
		if (e >> 63) {
			onpath[f]--;
			continue;
		}
		if (!onpath[f]++)
			total[f] += sub[i];
		stack[sp++] = e | 1ULL << 63;
		for (uint32_t c = first[i]; c != UINT32_MAX; c = next[c])
			stack[sp++] = c;
	}
	rows = malloc((nf + 1) * sizeof(*rows));
	if (!rows)
		goto out;
	for (size_t f = 0; f < nf; f++)
		if (total[f] > 0 || self[f] > 0)
			rows[nrows++] = (struct frow){ sd_sym_func(p->sym, (uint32_t)f), self[f], total[f] };
	qsort(rows, nrows, sizeof(*rows), frow_cmp);
	*out = rows;
	*nout = nrows;
	rows = NULL;
	err = 0;
out:
	free(self), free(total), free(sub), free(first), free(next), free(onpath), free(stack);
	free(rows);
	return err;
}

static double pct(double v, double all)
{
	return all > 0 ? 100.0 * v / all : 0.0;
}

/* A metric value as text: integer samples, or milliseconds for weight (ns units). */
static void put_val(FILE *out, int weight, double v, int width)
{
	if (weight)
		fprintf(out, "%*.3f", width, v / 1e6);
	else
		fprintf(out, "%*" PRIu64, width, (uint64_t)v);
}

static void drops_warning(FILE *out, const struct sd_profile *p)
{
	if (!p->dropped || p->dropped * 100 <= p->samples)
		return;
	if (p->samples)
		fprintf(out, "sonde: warning: %" PRIu64 " samples dropped (%.2f%% of %" PRIu64
			" recorded;", p->dropped, pct((double)p->dropped, (double)p->samples),
			p->samples);
	else
		fprintf(out, "sonde: warning: %" PRIu64 " samples dropped (none recorded;",
			p->dropped);
	for (size_t i = 0; i < p->ndrop; i++)
		if (p->drop_counts[i])
			fprintf(out, " %s %" PRIu64, p->drop_names[i], p->drop_counts[i]);
	fputs(")\n", out);
}

static int out_flat(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o)
{
	struct frow *rows;
	size_t n;
	int w = o->weight;
	double all = w ? p->weight : (double)p->samples;

	if (flat_rows(p, w, &rows, &n))
		return -ENOMEM;
	if (o->top && o->top < n)
		n = o->top;
	switch (o->format) {
	case SD_FMT_TEXT:
		fprintf(out, "samples: %" PRIu64, p->samples);
		if (w)
			fprintf(out, " (%.3f ms)", p->weight / 1e6);
		fprintf(out, "  streams: %" PRIu64 "  processes: %zu  threads: %zu\n", p->streams,
			p->npids, p->nthreads);
		for (size_t i = 0; i < p->nsources; i++) {
			const struct sd_source_row *s = &p->sources[i];
			fprintf(out, "source %s: %" PRIu64 " samples (%s, period %" PRIu64 " %s, %s)\n",
				s->name, s->samples, s->spec, s->period, s->unit, s->mechanism);
		}
		fprintf(out, "\n%10s %7s %10s %7s  function\n", w ? "self_ms" : "self", "self%",
			w ? "total_ms" : "total", "total%");
		for (size_t i = 0; i < n; i++) {
			put_val(out, w, rows[i].self, 10);
			fprintf(out, " %6.2f%% ", pct(rows[i].self, all));
			put_val(out, w, rows[i].total, 10);
			fprintf(out, " %6.2f%%  %s\n", pct(rows[i].total, all), rows[i].f->display);
		}
		drops_warning(out, p);
		break;
	case SD_FMT_CSV:
		fputs("function,self,self_pct,total,total_pct,module\n", out);
		for (size_t i = 0; i < n; i++) {
			csv_str(out, rows[i].f->display);
			putc(',', out);
			put_val(out, w, rows[i].self, 0);
			fprintf(out, ",%.2f,", pct(rows[i].self, all));
			put_val(out, w, rows[i].total, 0);
			fprintf(out, ",%.2f,", pct(rows[i].total, all));
			csv_str(out, rows[i].f->module);
			putc('\n', out);
		}
		drops_warning(stderr, p);
		break;
	default: /* json */
		fprintf(out, "{\"metric\":\"%s\",\"samples\":%" PRIu64 ",\"weight_ms\":%.3f,"
			"\"streams\":%" PRIu64 ",\"processes\":%zu,\"threads\":%zu,"
			"\"dropped\":%" PRIu64 ",\"rows\":[", w ? "weight" : "samples", p->samples,
			p->weight / 1e6, p->streams, p->npids, p->nthreads, p->dropped);
		for (size_t i = 0; i < n; i++) {
			fputs(i ? ",\n{\"function\":" : "\n{\"function\":", out);
			json_cstr(out, rows[i].f->display);
			fputs(",\"self\":", out);
			put_val(out, w, rows[i].self, 0);
			fprintf(out, ",\"self_pct\":%.2f,\"total\":", pct(rows[i].self, all));
			put_val(out, w, rows[i].total, 0);
			fprintf(out, ",\"total_pct\":%.2f,\"module\":", pct(rows[i].total, all));
			json_cstr(out, rows[i].f->module);
			putc('}', out);
		}
		fputs("]}\n", out);
		drops_warning(stderr, p);
	}
	free(rows);
	return 0;
}

/* ---- folded stacks ----------------------------------------------------------------- */

struct fline { char *path; double v; };

static int fline_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fline *)a)->path, ((const struct fline *)b)->path);
}

static int out_folded(FILE *out, const struct sd_profile *p, int weight)
{
	struct fline *lines = malloc(p->nnodes * sizeof(*lines));
	uint32_t *chain = malloc(p->nnodes * sizeof(*chain));
	size_t nl = 0;
	int err = -ENOMEM;

	if (!lines || !chain)
		goto out;
	for (size_t i = 1; i < p->nnodes; i++) {
		double v = node_val(&p->nodes[i], weight);
		size_t depth = 0, len = 0;
		if (v <= 0)
			continue;
		for (uint32_t c = (uint32_t)i; c; c = p->nodes[c].parent) {
			chain[depth++] = c;
			len += strlen(sd_sym_func(p->sym, p->nodes[c].func)->display) + 1;
		}
		char *s = malloc(len), *q = s;
		if (!s)
			goto out;
		while (depth--) {
			const char *name = sd_sym_func(p->sym, p->nodes[chain[depth]].func)->display;
			size_t l = strlen(name);
			memcpy(q, name, l);
			q += l;
			*q++ = depth ? ';' : 0;
		}
		lines[nl++] = (struct fline){ s, v };
	}
	qsort(lines, nl, sizeof(*lines), fline_cmp);
	for (size_t i = 0; i < nl; i++)
		fprintf(out, "%s %.0f\n", lines[i].path, lines[i].v);
	drops_warning(stderr, p);
	err = 0;
out:
	for (size_t i = 0; i < nl; i++)
		free(lines[i].path);
	free(lines);
	free(chain);
	return err;
}

/* ---- threads and sources views ---------------------------------------------------- */

static int thread_cmp(const void *a, const void *b)
{
	const struct sd_thread_row *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void out_threads(FILE *out, struct sd_profile *p, enum sd_format fmt)
{
	if (p->nthreads > 1)
		qsort(p->threads, p->nthreads, sizeof(*p->threads), thread_cmp);
	if (fmt == SD_FMT_TEXT)
		fprintf(out, "%10s %10s %10s %12s %12s  name\n", "pid", "tid", "samples",
			"first_ms", "last_ms");
	else if (fmt == SD_FMT_CSV)
		fputs("pid,tid,name,samples,first_ns,last_ns\n", out);
	else
		fputs("{\"threads\":[", out);
	for (size_t i = 0; i < p->nthreads; i++) {
		const struct sd_thread_row *t = &p->threads[i];
		if (fmt == SD_FMT_TEXT) {
			fprintf(out, "%10" PRIu64 " %10" PRIu64 " %10" PRIu64, t->pid, t->tid,
				t->samples);
			if (t->samples)
				fprintf(out, " %12.3f %12.3f", t->first_ns / 1e6, t->last_ns / 1e6);
			else
				fprintf(out, " %12s %12s", "-", "-");
			fprintf(out, "  %s\n", t->name);
		} else if (fmt == SD_FMT_CSV) {
			fprintf(out, "%" PRIu64 ",%" PRIu64 ",", t->pid, t->tid);
			csv_str(out, t->name);
			fprintf(out, ",%" PRIu64 ",", t->samples);
			if (t->samples)
				fprintf(out, "%" PRIu64 ",%" PRIu64, t->first_ns, t->last_ns);
			else
				putc(',', out);
			putc('\n', out);
		} else {
			fprintf(out, "%s{\"pid\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"name\":",
				i ? ",\n" : "\n", t->pid, t->tid);
			json_cstr(out, t->name);
			fprintf(out, ",\"samples\":%" PRIu64, t->samples);
			if (t->samples)
				fprintf(out, ",\"first_ns\":%" PRIu64 ",\"last_ns\":%" PRIu64 "}",
					t->first_ns, t->last_ns);
			else
				fputs(",\"first_ns\":null,\"last_ns\":null}", out);
		}
	}
	if (fmt == SD_FMT_JSON)
		fputs("]}\n", out);
}

static void out_sources(FILE *out, const struct sd_profile *p, enum sd_format fmt)
{
	if (fmt == SD_FMT_TEXT)
		fprintf(out, "%-12s %10s %16s %12s %4s  mechanism\n", "source", "samples",
			"weight", "period", "unit");
	else if (fmt == SD_FMT_CSV)
		fputs("source,spec,samples,weight,period,unit,mechanism\n", out);
	else
		fputs("{\"sources\":[", out);
	for (size_t i = 0; i < p->nsources; i++) {
		const struct sd_source_row *s = &p->sources[i];
		if (fmt == SD_FMT_TEXT) {
			fprintf(out, "%-12s %10" PRIu64 " %16.0f %12" PRIu64 " %4s  %s\n", s->name,
				s->samples, s->weight, s->period, s->unit, s->mechanism);
		} else if (fmt == SD_FMT_CSV) {
			csv_str(out, s->name);
			putc(',', out);
			csv_str(out, s->spec);
			fprintf(out, ",%" PRIu64 ",%.0f,%" PRIu64 ",", s->samples, s->weight, s->period);
			csv_str(out, s->unit);
			putc(',', out);
			csv_str(out, s->mechanism);
			putc('\n', out);
		} else {
			fputs(i ? ",\n{\"source\":" : "\n{\"source\":", out);
			json_cstr(out, s->name);
			fputs(",\"spec\":", out);
			json_cstr(out, s->spec);
			fprintf(out, ",\"samples\":%" PRIu64 ",\"weight\":%.0f,\"period\":%" PRIu64
				",\"unit\":", s->samples, s->weight, s->period);
			json_cstr(out, s->unit);
			fputs(",\"mechanism\":", out);
			json_cstr(out, s->mechanism);
			putc('}', out);
		}
	}
	if (fmt == SD_FMT_JSON)
		fputs("]}\n", out);
}

int sd_output(FILE *out, struct sd_profile *p, const struct sd_report_opts *o)
{
	if (sd_sym_finish(p->sym))
		return -ENOMEM;
	if (o->view == SD_VIEW_THREADS) {
		out_threads(out, p, o->format);
		return 0;
	}
	if (o->view == SD_VIEW_SOURCES) {
		out_sources(out, p, o->format);
		return 0;
	}
	if (o->view == SD_VIEW_GROUP)
		return sd_out_group(out, p, o);
	if (o->view == SD_VIEW_TREE)
		return sd_out_tree(out, p, o);
	if (o->view == SD_VIEW_REGIONS)
		return sd_out_regions(out, p, o);
	if (o->format == SD_FMT_FOLDED)
		return out_folded(out, p, o->weight);
	return out_flat(out, p, o);
}
