/*
 * emit.c: what every view of `sonde report` (and `sonde diff`, `sonde dump`) prints
 * through: percent, JSON and CSV strings (JSON always valid: escaped, invalid UTF-8 as
 * U+FFFD), msgpack values as JSON, and the metric a report shows (samples, weight or a
 * counter: resolved once per profile, then per row, total, column name and value).
 * The views and the dispatcher (output.c) call these; nothing here calls a view.
 */
#include "analyze/report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- text ---------------------------------------------------------------------------- */

double sd_pct(double v, double all)
{
	return all > 0 ? 100.0 * v / all : 0.0;
}

int sd_natcmp(const char *a, const char *b)
{
	while (*a && *b) {
		if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
			const char *x = a, *y = b;
			while (*x == '0')
				x++;
			while (*y == '0')
				y++;
			size_t lx = strspn(x, "0123456789"), ly = strspn(y, "0123456789");
			if (lx != ly)
				return lx < ly ? -1 : 1;
			int c = memcmp(x, y, lx);
			if (c)
				return c;
			size_t za = (size_t)(x - a), zb = (size_t)(y - b); /* fewer zeros first */
			if (za != zb)
				return za < zb ? -1 : 1;
			a = x + lx, b = y + ly;
			continue;
		}
		if (*a != *b)
			return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
		a++, b++;
	}
	return (unsigned char)*a - (unsigned char)*b;
}

unsigned sd_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned row[64];
	if (la > 63 || lb > 63)
		return 64;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned sub = diag + (a[i - 1] != b[j - 1]);
			unsigned del = up + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			diag = up;
		}
	}
	return row[lb];
}

const char *sd_nearest(const char *s, const void *names, size_t n, size_t stride)
{
	const char *near = NULL;
	unsigned best = 3; /* at most 2 edits away */
	for (size_t i = 0; i < n; i++) {
		const char *name = *(const char *const *)((const char *)names + i * stride);
		unsigned d = name ? sd_edit_distance(s, name) : 64;
		if (d < best)
			best = d, near = name;
	}
	return near;
}

int sd_natcmp_keys(const char *a, size_t la, const char *b, size_t lb)
{
	const char *ea = a + la, *eb = b + lb;
	while (a < ea && b < eb) {
		int c = sd_natcmp(a, b);
		if (c)
			return c;
		a += strlen(a) + 1;
		b += strlen(b) + 1;
	}
	return (a < ea) - (b < eb);
}

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

/* s with each '"' doubled when quoted, and bytes that are not UTF-8 as U+FFFD (a csv
 * file is valid UTF-8 whatever the names hold) */
static void csv_put(FILE *out, const char *str, int quoted)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);
	for (size_t i = 0; i < n;) {
		size_t l = utf8_len(s + i, n - i);
		if (quoted && s[i] == '"')
			putc('"', out);
		if (l)
			fwrite(s + i, 1, l, out);
		else
			fputs("\xef\xbf\xbd", out);
		i += l ? l : 1;
	}
}

void sd_csv_str(FILE *out, const char *s)
{
	int quoted = strpbrk(s, ",\"\n\r") != NULL;
	if (quoted)
		putc('"', out);
	csv_put(out, s, quoted);
	if (quoted)
		putc('"', out);
}

size_t sd_text_esc(char *dst, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t o = 0;
	for (size_t i = 0; i < len;) {
		unsigned char c = s[i];
		size_t l = utf8_len(s + i, len - i);
		const char *e = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r"
			      : c == '\\' ? "\\\\" : NULL;
		/* controls (C0, DEL, C1 as U+0080..U+009F) and bytes that are not UTF-8:
		 * each byte as \xNN */
		int hex = !e && (c < 0x20 || c == 0x7f || !l || (c == 0xc2 && s[i + 1] < 0xa0));
		if (!e && !hex) {
			if (dst)
				memcpy(dst + o, s + i, l);
			o += l;
			i += l;
			continue;
		}
		size_t nb = hex ? (l ? l : 1) : 1;
		for (size_t k = 0; k < nb; k++) {
			char b[8];
			if (hex)
				snprintf(b, sizeof(b), "\\x%02x", s[i + k]);
			if (dst)
				memcpy(dst + o, hex ? b : e, hex ? 4 : 2);
			o += hex ? 4 : 2;
		}
		i += nb;
	}
	return o;
}

void sd_text_put(FILE *out, const char *s)
{
	size_t len = strlen(s), n = sd_text_esc(NULL, s, len);
	if (n == len) {
		fputs(s, out);
		return;
	}
	char *b = malloc(n);
	if (!b) {
		fputs("?", out);
		return;
	}
	sd_text_esc(b, s, len);
	fwrite(b, 1, n, out);
	free(b);
}

/* ---- metrics ----------------------------------------------------------------------- */

int sd_metric_resolve(const struct sd_profile *p, struct sd_report_opts *o)
{
	o->weight_unit = NULL;
	if (o->weight) {
		const char *unit = NULL;
		for (size_t i = 0; i < p->nsources; i++) {
			const struct sd_source_row *s = &p->sources[i];
			if (!s->samples)
				continue;
			if (unit && strcmp(unit, s->unit))
				return -EDOM;
			unit = s->unit;
		}
		if (unit && strcmp(unit, "ns"))
			o->weight_unit = unit;
	}
	if (!o->counter)
		return 0;
	free(o->cids);
	o->cids = malloc((p->ncounters + 1) * sizeof(*o->cids));
	o->ncids = 0;
	if (!o->cids)
		return -ENOMEM;
	for (size_t k = 0; k < p->ncounters; k++)
		if (!strcmp(p->counters[k].name, o->counter) ||
		    !strcmp(p->counters[k].group, o->counter))
			o->cids[o->ncids++] = (uint32_t)k;
	if (o->ncids)
		return 0;
	for (size_t k = 0; k < p->nunavail; k++)
		if (!strcmp(p->unavail[k].name, o->counter))
			return -ENODATA;
	return -ENOENT;
}

void sd_metric_fini(struct sd_report_opts *o)
{
	free(o->cids);
	o->cids = NULL;
	o->ncids = 0;
}

double sd_metric_row(const struct sd_report_opts *o, const struct sd_crow *r)
{
	if (o->counter) {
		double v = 0;
		for (size_t k = 0; k < o->ncids; k++)
			v += (double)sd_crow_count(r, o->cids[k]);
		return v;
	}
	return o->weight ? r->weight : o->samples ? (double)r->samples : (double)r->periods;
}

const char *sd_metric_name(const struct sd_report_opts *o)
{
	return o->counter ? o->counter : o->weight ? "weight" : o->samples ? "samples" : "periods";
}

/* The periods of the rows counted (the default metric's total). */
static double periods_total(const struct sd_profile *p)
{
	double v = 0;
	for (size_t i = 0; i < p->nrows; i++)
		v += (double)p->rows[i].periods;
	return v;
}

double sd_metric_total(const struct sd_profile *p, const struct sd_report_opts *o)
{
	double v = 0;

	if (!o->counter)
		return o->weight ? p->weight : o->samples ? (double)p->samples : periods_total(p);
	for (size_t k = 0; k < o->ncids; k++) /* the rows (samples and thread ends) add up to it */
		v += (double)p->counters[o->cids[k]].total;
	return v;
}

void sd_metric_put(FILE *out, const struct sd_report_opts *o, double v, int width)
{
	if (o->weight && !o->counter && !o->weight_unit)
		fprintf(out, "%*.3f", width, v / 1e6);
	else
		fprintf(out, "%*.0f", width, v);
}

const char *sd_metric_col(const struct sd_report_opts *o, const char *prefix, char *buf,
			  size_t len)
{
	if (!o->weight || o->counter)
		return prefix;
	snprintf(buf, len, "%s_%s", prefix, o->weight_unit ? o->weight_unit : "ms");
	return buf;
}

void sd_nocounters_warning(FILE *out, const struct sd_profile *p)
{
#define NOCOUNTERS "sonde: warning: %" PRIu64 " samples carry no counter values (their " \
	"thread's counters could not be read, flag 8; counted as samples, not as zero deltas)"
	if (p->nocounters && out)
		fprintf(out, NOCOUNTERS "\n", p->nocounters);
	else if (p->nocounters)
		sd_msg(NOCOUNTERS, p->nocounters);
#undef NOCOUNTERS
}

/* The metric of each merged call node's own samples (index: node). NULL on ENOMEM. */
double *sd_node_values(const struct sd_profile *p, const struct sd_report_opts *o)
{
	double *v = calloc(p->nnodes, sizeof(*v));

	if (!v)
		return NULL;
	if (o->counter || (!o->weight && !o->samples)) { /* counters, periods: by row */
		for (size_t i = 0; i < p->nrows; i++)
			v[p->rows[i].cnode] += sd_metric_row(o, &p->rows[i]);
	} else {
		for (size_t i = 1; i < p->nnodes; i++)
			v[i] = o->weight ? p->nodes[i].weight : (double)p->nodes[i].samples;
	}
	return v;
}

void sd_json_open(FILE *out, const struct sd_report_opts *o)
{
	putc('{', out);
	if (o->json_head)
		o->json_head(out, o, o->json_head_arg);
}

void sd_json_head(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o,
		  const char *metric)
{
	sd_json_open(out, o);
	fputs("\"metric\":", out);
	sd_json_str(out, metric, strlen(metric));
	fprintf(out, ",\"samples\":%" PRIu64 ",\"periods\":%.0f", p->samples, periods_total(p));
	if (o->weight && o->weight_unit)
		fprintf(out, ",\"weight_%s\":%.0f", o->weight_unit, p->weight);
	else
		fprintf(out, ",\"weight_ms\":%.3f", p->weight / 1e6);
	fprintf(out, ",\"truncated_samples\":%" PRIu64, p->trunc_samples);
}

/* ---- folded stacks ------------------------------------------------------------------ */

struct fline { char *path; double v; uint32_t node; };

static int fline_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fline *)a)->path, ((const struct fline *)b)->path);
}

/* Heaviest first, then by path. */
static int fline_heavy(const void *a, const void *b)
{
	const struct fline *x = a, *y = b;
	if (x->v != y->v)
		return x->v > y->v ? -1 : 1;
	return strcmp(x->path, y->path);
}

static void flines_free(struct fline *lines, size_t nl)
{
	for (size_t i = 0; lines && i < nl; i++)
		free(lines[i].path);
	free(lines);
}

/* The lines of t (one per node with a value of its own), the first *shown of them the
 * ones printed (t->top: the heaviest), in path order. 0 or -ENOMEM. */
static int folded_lines(const struct sd_folded_tree *t, struct fline **out, size_t *nl,
			size_t *shown)
{
	struct fline *lines = malloc((t->n + 1) * sizeof(*lines));
	uint32_t *chain = malloc((t->n + 1) * sizeof(*chain));
	int err = -ENOMEM;

	*nl = 0;
	if (!lines || !chain)
		goto out;
	for (uint32_t i = 1; i < t->n; i++) {
		double v = t->value(t->ctx, i);
		size_t depth = 0, len = 0;
		if (v <= 0)
			continue;
		for (uint32_t c = i; c; c = t->parent(t->ctx, c)) {
			chain[depth++] = c;
			len += strlen(t->name(t->ctx, c)) + 1;
		}
		char *s = malloc(len), *q = s;
		if (!s)
			goto out;
		while (depth--) {
			const char *name = t->name(t->ctx, chain[depth]);
			size_t l = strlen(name);
			memcpy(q, name, l);
			q += l;
			*q++ = depth ? ';' : 0;
		}
		lines[(*nl)++] = (struct fline){ s, v, i };
	}
	*shown = *nl;
	if (t->top && t->top < *nl) { /* the heaviest, then in path order */
		qsort(lines, *nl, sizeof(*lines), fline_heavy);
		*shown = t->top;
	}
	if (*shown > 1)
		qsort(lines, *shown, sizeof(*lines), fline_cmp);
	err = 0;
out:
	free(chain);
	if (err) {
		flines_free(lines, *nl);
		lines = NULL;
	}
	*out = lines;
	return err;
}

int sd_folded_print(FILE *out, const struct sd_folded_tree *t)
{
	struct fline *lines;
	size_t nl, shown;
	if (folded_lines(t, &lines, &nl, &shown))
		return -ENOMEM;
	for (size_t i = 0; i < shown; i++) {
		sd_text_put(out, lines[i].path); /* one line each, whatever the names hold */
		fprintf(out, " %.0f\n", lines[i].v);
	}
	flines_free(lines, nl);
	return 0;
}

uint8_t *sd_folded_keep(const struct sd_folded_tree *t)
{
	struct fline *lines;
	size_t nl, shown;
	uint8_t *keep = calloc(t->n + 1, 1);
	if (!keep || folded_lines(t, &lines, &nl, &shown)) {
		free(keep);
		return NULL;
	}
	for (size_t i = 0; i < shown; i++)
		for (uint32_t c = lines[i].node; c && !keep[c]; c = t->parent(t->ctx, c))
			keep[c] = 1;
	flines_free(lines, nl);
	return keep;
}

/* ---- XML and HTML text --------------------------------------------------------- */

void sd_xml_put(FILE *out, const char *str, size_t n, size_t max)
{
	const unsigned char *s = (const unsigned char *)str;

	for (size_t i = 0; i < n && i < max;) {
		unsigned char c = s[i];
		size_t l = c < 0x80 ? 1 : utf8_len(s + i, n - i);
		if (l > 1 && i + l > max)
			break;
		if (c == '&')
			fputs("&amp;", out);
		else if (c == '<')
			fputs("&lt;", out);
		else if (c == '>')
			fputs("&gt;", out);
		else if (c == '"')
			fputs("&quot;", out);
		else if (c == '\'')
			fputs("&apos;", out);
		else if (c < 0x20 || c == 0x7f || (c == 0xc2 && l == 2 && s[i + 1] < 0xa0) ||
			 (c == 0xef && l == 3 && s[i + 1] == 0xbf && s[i + 2] >= 0xbe))
			putc('?', out); /* C0, DEL, C1; U+FFFE and U+FFFF are not XML characters */
		else if (!l)
			fputs("\xef\xbf\xbd", out);
		else
			fwrite(s + i, 1, l, out);
		i += l ? l : 1;
	}
}

/* ---- -o FILE ------------------------------------------------------------------ */

static void said_write(const char *path, int e)
{
	sd_msg("sonde: %s: cannot write: %s (check the path and its directory)", path,
		strerror(e));
}

FILE *sd_out_open(FILE *out, const char *path, struct sd_outfile *of)
{
	*of = (struct sd_outfile){ .dirfd = -1 };
	if (!path)
		return out;
	int fd = sd_outfile_open(of, path);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		said_write(path, errno);
		close(fd);
		sd_outfile_done(of, 0);
	}
	return f;
}

int sd_out_close(FILE *f, struct sd_outfile *of, int err, const char *what, const char *hint)
{
	const char *path = of->path;
	if (!path)
		return err;
	int bad = ferror(f);
	errno = 0;
	if (fclose(f) || bad) {
		if (!err)
			said_write(path, errno ? errno : EIO);
		err = err ? err : SD_SAID(SD_EXIT_IO);
	}
	if (sd_outfile_done(of, !err) && !err)
		err = SD_SAID(SD_EXIT_IO);
	if (!err)
		printf("sonde: %s written to %s (%s)\n", what, path, hint);
	return err;
}
