/*
 * table.c: the one row printer of the tabular views. A view declares its columns
 * (name, alignment, in which formats they appear), adds its rows cell by cell, and
 * sd_table_print writes them as aligned text, CSV or the rows of a JSON object: the
 * three formats of one view can no longer drift apart, and a column added once appears
 * in all of them.
 *
 * Called by the views in the one thread of `sonde report`/`diff`. Cells are kept as
 * formatted strings in one growing buffer until the table is printed, because aligned
 * text needs every cell's width first. A cell is formatted once, for the table's format:
 * a metric in ms has 3 decimals everywhere, a percent has "%" only in text, a string is
 * quoted by the CSV or JSON printer, a number never is. Where text shows a cell
 * differently (ms for ns, a cut command line), sd_table_text replaces the cell just
 * added, in text only: the last cell always ends the buffer, so replacing it is cheap.
 */
#include "analyze/report/report.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct cell { size_t off; unsigned char str, null, heat; }; /* heat: a share's colour */

struct sd_table {
	enum sd_format fmt;
	const struct sd_report_opts *o;
	const struct sd_col *cols;
	size_t ncols;
	char *buf;                  /* every cell's text, NUL-terminated */
	size_t len, cap;
	struct cell *cells;         /* row-major, ncols a row */
	size_t ncells, capcells;
	int err;                    /* -ENOMEM once an append failed: print refuses */
};

struct sd_table *sd_table_new(const struct sd_report_opts *o, const struct sd_col *cols,
			      size_t ncols)
{
	struct sd_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->fmt = o->format;
	t->o = o;
	t->cols = cols;
	t->ncols = ncols;
	return t;
}

void sd_table_free(struct sd_table *t)
{
	if (!t)
		return;
	free(t->buf);
	free(t->cells);
	free(t);
}

size_t sd_table_rows(const struct sd_table *t)
{
	return t->ncols ? t->ncells / t->ncols : 0;
}

static int shown(const struct sd_table *t, size_t c)
{
	unsigned in = t->cols[c].in;
	unsigned bit = t->fmt == SD_FMT_TEXT ? SD_IN_TEXT : t->fmt == SD_FMT_CSV ? SD_IN_CSV
		     : SD_IN_JSON;
	return !in || (in & bit);
}

/* Room for one more cell of len bytes and its NUL at t->buf + t->len, or NULL (t->err
 * set). The cell is counted by push. */
static char *room(struct sd_table *t, size_t len)
{
	if (t->err)
		return NULL;
	if (t->ncells == t->capcells) {
		size_t cap = t->capcells ? 2 * t->capcells : 64;
		struct cell *c = realloc(t->cells, cap * sizeof(*c));
		if (!c)
			goto oom;
		t->cells = c, t->capcells = cap;
	}
	if (t->len + len + 1 > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 4096;
		while (cap < t->len + len + 1)
			cap *= 2;
		char *b = realloc(t->buf, cap);
		if (!b)
			goto oom;
		t->buf = b, t->cap = cap;
	}
	return t->buf + t->len;
oom:
	t->err = -ENOMEM;
	return NULL;
}

static void push(struct sd_table *t, size_t len, int str, int null)
{
	t->buf[t->len + len] = 0;
	t->cells[t->ncells++] = (struct cell){ .off = t->len, .str = (unsigned char)str,
					       .null = (unsigned char)null };
	t->len += len + 1;
}

/* Append one cell of len bytes (a NUL is added). In text a string is kept escaped
 * (sd_text_esc), so that its width is what the terminal shows. */
static void add(struct sd_table *t, const char *s, size_t len, int str, int null)
{
	size_t n = str && t->fmt == SD_FMT_TEXT ? sd_text_esc(NULL, s, len) : len;
	char *b = room(t, n);

	if (!b)
		return;
	if (n != len)
		sd_text_esc(b, s, len);
	else
		memcpy(b, s, len);
	push(t, n, str, null);
}

void sd_table_str(struct sd_table *t, const char *s)
{
	add(t, s, strlen(s), 1, 0);
}

void sd_table_num(struct sd_table *t, const char *fmt, ...)
{
	char b[64];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(b, sizeof(b), fmt, ap);
	va_end(ap);
	add(t, b, n < 0 ? 0 : (size_t)n < sizeof(b) ? (size_t)n : sizeof(b) - 1, 0, 0);
}

void sd_table_u64(struct sd_table *t, uint64_t v)
{
	sd_table_num(t, "%" PRIu64, v);
}

void sd_table_metric(struct sd_table *t, double v)
{
	const struct sd_report_opts *o = t->o;

	if (o->weight && !o->counter && !o->weight_unit)
		sd_table_num(t, "%.3f", v / 1e6);
	else
		sd_table_num(t, "%.0f", v);
}

void sd_table_pct(struct sd_table *t, double pct)
{
	sd_table_num(t, t->fmt == SD_FMT_TEXT ? "%.2f%%" : "%.2f", pct);
	if (!t->err) /* perf's colours for a share: red from 5 %, green from 0.5 % */
		t->cells[t->ncells - 1].heat = pct >= 5 ? 2 : pct >= 0.5 ? 1 : 0;
}

void sd_table_ms(struct sd_table *t, uint64_t ns)
{
	sd_table_num(t, "%.3f", (double)ns / 1e6);
}

void sd_table_null(struct sd_table *t)
{
	add(t, "-", 1, 0, 1);
}

void sd_table_text(struct sd_table *t, size_t max, const char *fmt, ...)
{
	va_list ap;

	assert(!max || max >= 3);
	if (t->fmt != SD_FMT_TEXT || t->err)
		return;
	assert(t->ncells);
	const struct cell last = t->cells[--t->ncells]; /* the last cell ends the buffer */
	t->len = last.off;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	size_t len = n < 0 ? 0 : (size_t)n;
	char *raw = malloc(len + 1);
	if (!raw) {
		t->err = -ENOMEM;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(raw, len + 1, fmt, ap);
	va_end(ap);
	size_t elen = max ? sd_text_esc(NULL, raw, len) : len; /* max: arbitrary strings */
	char *b = room(t, elen);
	if (!b) {
		free(raw);
		return;
	}
	if (max)
		sd_text_esc(b, raw, len);
	else
		memcpy(b, raw, len);
	free(raw);
	len = elen;
	if (max && len > max) {
		size_t show = max - 3;
		while (show && ((unsigned char)b[show] & 0xc0) == 0x80)
			show--; /* not inside a UTF-8 sequence */
		for (size_t k = show >= 3 ? show - 3 : 0; k < show; k++)
			if (b[k] == '\\' && k + (b[k + 1] == 'x' ? 4 : 2) > show) {
				show = k; /* nor inside an escape */
				break;
			}
		memcpy(b + show, "...", 3), len = show + 3;
	}
	push(t, len, last.str, 0);
}

static const char *cell(const struct sd_table *t, size_t row, size_t c, const struct cell **ce)
{
	*ce = &t->cells[row * t->ncols + c];
	return t->buf + (*ce)->off;
}

static const char *head(const struct sd_col *c, enum sd_format fmt)
{
	return fmt == SD_FMT_TEXT && c->text ? c->text : c->name;
}

/* Display columns of s's first n bytes: one per UTF-8 character (names are escaped,
 * so no control character is left to move the cursor). */
static size_t columns(const char *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += ((unsigned char)s[i] & 0xc0) != 0x80;
	return k;
}

/* The bytes of s that fill at most cols display columns, never half a character. */
static size_t cut_bytes(const char *s, size_t cols)
{
	size_t i = 0, k = 0;

	for (; s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && k++ == cols)
			break;
	return i;
}

/* The last column, the names: whole, or on a terminal (o->width) cut to what is left of
 * the row after `used` columns, ended by "..." (at least 12 columns are shown). */
static void put_last(FILE *out, const struct sd_table *t, const char *s, size_t used)
{
	size_t width = t->o->width, len = strlen(s);

	if (!width || used + columns(s, len) <= width) {
		fputs(s, out);
		return;
	}
	size_t room = width > used + 15 ? width - used - 3 : 12;
	if (columns(s, len) <= room + 3) {
		fputs(s, out); /* a narrow terminal: the few columns a cut would save */
		return;
	}
	fwrite(s, 1, cut_bytes(s, room), out);
	fputs("...", out);
}

/* The widths of the shown columns (w[c]), the last shown column, and the width of a row
 * up to it (*used). NULL on ENOMEM. */
static size_t *text_widths(const struct sd_table *t, size_t nrows, size_t *last, size_t *used)
{
	size_t *w = calloc(t->ncols, sizeof(*w));
	const struct cell *ce;

	if (!w)
		return NULL;
	*last = 0, *used = 0;
	for (size_t c = 0; c < t->ncols; c++) {
		if (!shown(t, c))
			continue;
		*last = c;
		w[c] = strlen(head(&t->cols[c], t->fmt));
		if (w[c] < t->cols[c].width || t->cols[c].fixed)
			w[c] = t->cols[c].width;
		for (size_t r = 0; r < nrows && !t->cols[c].fixed; r++) {
			size_t l = strlen(cell(t, r, c, &ce));
			w[c] = l > w[c] ? l : w[c];
		}
	}
	int first = 1;
	for (size_t c = 0; c <= *last; c++) { /* each shown column but the first after a gap */
		if (!shown(t, c))
			continue;
		if (!first)
			*used += strlen(t->cols[c].gap ? t->cols[c].gap : "  ");
		first = 0;
		*used += c < *last ? w[c] : 0;
	}
	return w;
}

static void print_text(FILE *out, const struct sd_table *t, size_t nrows)
{
	static const char *const heat[] = { "", "\033[32m", "\033[31m" };
	size_t last, used;
	size_t *w = text_widths(t, nrows, &last, &used);
	const struct cell *ce = NULL;
	int color = t->o->color;

	if (!w)
		return;
	for (size_t r = 0; r <= nrows; r++) {
		int first = 1;
		if (!r && color)
			fputs("\033[1m", out); /* the heading in bold */
		for (size_t c = 0; c < t->ncols; c++) {
			if (!shown(t, c))
				continue;
			const struct sd_col *col = &t->cols[c];
			const char *s = r ? cell(t, r - 1, c, &ce) : head(col, t->fmt);
			int hot = r && color && ce->heat;
			if (!first)
				fputs(col->gap ? col->gap : "  ", out);
			first = 0;
			if (hot)
				fputs(heat[ce->heat], out);
			if (col->left && c == last && !col->fixed)
				put_last(out, t, s, used);
			else
				fprintf(out, col->left ? "%-*s" : "%*s", (int)w[c], s);
			if (hot)
				fputs("\033[m", out);
		}
		if (!r && color)
			fputs("\033[m", out);
		putc('\n', out);
	}
	free(w);
}

static void print_csv(FILE *out, const struct sd_table *t, size_t nrows)
{
	const struct cell *ce;

	for (size_t r = 0; r <= nrows; r++) {
		int first = 1;
		for (size_t c = 0; c < t->ncols; c++) {
			if (!shown(t, c))
				continue;
			if (!first)
				putc(',', out);
			first = 0;
			if (!r) {
				sd_csv_str(out, t->cols[c].name);
				continue;
			}
			const char *s = cell(t, r - 1, c, &ce);
			if (!ce->null)
				sd_csv_str(out, s);
		}
		putc('\n', out);
	}
}

static void json_cell(FILE *out, const char *s, const struct cell *ce)
{
	if (ce->null)
		fputs("null", out);
	else if (ce->str)
		sd_json_str(out, s, strlen(s));
	else
		fputs(s, out);
}

static void print_json_row(FILE *out, const struct sd_table *t, size_t r)
{
	const struct cell *ce;
	const char *group = NULL; /* the array being written */
	int first = 1;

	putc('{', out);
	for (size_t c = 0; c < t->ncols; c++) {
		if (!shown(t, c))
			continue;
		const struct sd_col *col = &t->cols[c];
		const char *s = cell(t, r, c, &ce);
		if (group && (!col->group || strcmp(group, col->group))) {
			putc(']', out);
			group = NULL;
		}
		if (group) {
			putc(',', out);
			json_cell(out, s, ce);
			continue;
		}
		if (!first)
			putc(',', out);
		first = 0;
		group = col->group;
		sd_json_str(out, group ? group : col->name, strlen(group ? group : col->name));
		fputs(group ? ":[" : ":", out);
		json_cell(out, s, ce);
	}
	if (group)
		putc(']', out);
	putc('}', out);
}

size_t sd_table_ncols(const struct sd_table *t)
{
	return t->ncols;
}

const struct sd_col *sd_table_col(const struct sd_table *t, size_t c)
{
	return &t->cols[c];
}

int sd_table_col_shown(const struct sd_table *t, size_t c)
{
	return shown(t, c);
}

const char *sd_table_cell(const struct sd_table *t, size_t r, size_t c, int *str, int *null)
{
	const struct cell *ce;
	const char *s = cell(t, r, c, &ce);
	*str = ce->str;
	*null = ce->null;
	return s;
}

int sd_table_print_view(FILE *out, const struct sd_table *t, const char *json_key, int opened)
{
	int json = t->fmt == SD_FMT_JSON && !t->o->table_sink;
	if (json && !opened)
		sd_json_open(out, t->o);
	int err = sd_table_print(out, t, 0, json_key);
	if (json)
		fputs("}\n", out);
	return err;
}

int sd_table_print(FILE *out, const struct sd_table *t, size_t nrows, const char *json_key)
{
	if (t->err)
		return t->err;
	if (t->o->table_sink)
		return t->o->table_sink(t->o->table_sink_arg, t);
	size_t have = sd_table_rows(t);
	nrows = nrows && nrows < have ? nrows : have;
	if (t->fmt == SD_FMT_TEXT) {
		print_text(out, t, nrows);
	} else if (t->fmt == SD_FMT_CSV) {
		print_csv(out, t, nrows);
	} else {
		fprintf(out, "\"%s\":[", json_key);
		for (size_t r = 0; r < nrows; r++) {
			fputs(r ? ",\n" : "\n", out);
			print_json_row(out, t, r);
		}
		putc(']', out);
	}
	return 0;
}
