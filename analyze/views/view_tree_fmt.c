/*
 * view_tree_fmt.c: the rows of `sonde report --view tree` in every format but folded.
 * sd_out_tree (view_tree.c) builds the merged tree, prunes it with --min-percent and walks
 * it depth-first; it hands the nodes it prints here, in that order, and this file prints
 * them as one table: text shows total and self with their shares, then the name indented
 * two spaces a level; CSV and JSON rows show the depth, the path (the names from the
 * outermost node down, joined with `;`, as in the folded format) and the name first.
 *
 * Invariant of the input: a node's parent is the last earlier line of depth - 1 (the
 * walk is depth-first and pruning drops whole subtrees), so paths are built with one
 * prefix length per depth. Runs in the CLI's only thread.
 *
 * Bounded: what a row prints does not grow with its depth past SD_TREE_DEEP levels (a
 * chain of 10000 frames printed whole would be 100 MB of indentation, and paths of every
 * name above each node hundreds of MB): deeper names are indented as at that level and
 * prefixed with "[depth N]", and a csv/json path of more than 2 * SD_TREE_KEEP names
 * keeps its first and last SD_TREE_KEEP around "...". One note says so.
 */
#include "analyze/views/views.h"

#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Levels indented in text; names kept at each end of a longer csv/json path. */
enum { SD_TREE_DEEP = 64, SD_TREE_KEEP = 16 };

/* Make *b hold at least need bytes: 0 or -ENOMEM (*b unchanged). */
static int reserve(char **b, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 256;
	while (ncap < need)
		ncap *= 2;
	char *nb = realloc(*b, ncap);
	if (!nb)
		return -ENOMEM;
	*b = nb;
	*cap = ncap;
	return 0;
}

/* The path a csv/json row shows for a line at depth (path: its names joined, at[d]: the
 * length of its first d + 1 names): path itself, or past 2 * SD_TREE_KEEP names its
 * first and last SD_TREE_KEEP names around "..." in *cut; NULL when out of memory. */
static const char *shown_path(const char *path, const size_t *at, uint32_t depth, char **cut,
			      size_t *ccap)
{
	if (depth < 2 * SD_TREE_KEEP)
		return path;
	/* names 0 .. KEEP - 1, "...", names depth - KEEP + 1 .. depth */
	size_t head = at[SD_TREE_KEEP - 1];
	const char *tail = path + at[depth - SD_TREE_KEEP] + 1;
	size_t tl = strlen(tail);
	if (reserve(cut, ccap, head + tl + 6))
		return NULL;
	memcpy(*cut, path, head);
	memcpy(*cut + head, ";...;", 5);
	memcpy(*cut + head + 5, tail, tl + 1);
	return *cut;
}

/* The note of a tree (maxd: its deepest line's depth) too deep for its rows to show whole:
 * text's indentation (on out), or csv/json's paths (on stderr). */
static void note_deep(FILE *out, const struct sd_report_opts *o, uint32_t maxd)
{
	if (maxd >= SD_TREE_DEEP && o->format == SD_FMT_TEXT)
		fprintf(out, "sonde: note: the tree is %" PRIu32 " levels deep (past level %d "
			"names are not indented further and show their depth as [depth N])\n",
			maxd + 1, SD_TREE_DEEP);
	else if (maxd >= 2 * SD_TREE_KEEP && o->format != SD_FMT_TEXT)
		sd_msg("sonde: note: the tree is %" PRIu32 " levels deep (paths of more "
			"than %d names keep their first and last %d around \"...\"; depth gives "
			"the level)", maxd + 1, 2 * SD_TREE_KEEP, SD_TREE_KEEP);
}

int sd_out_tree_rows(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o,
		     const struct sd_tree_line *lines, size_t n)
{
	enum { TXT = SD_IN_TEXT, DATA = SD_IN_CSV | SD_IN_JSON };
	char b1[64], b2[64];
	const struct sd_col cols[] = {
		{ .name = "depth", .in = DATA },
		{ .name = "path", .in = DATA },
		{ .name = "name", .in = DATA },
		{ .name = sd_metric_col(o, "total", b1, sizeof(b1)), .width = 10 },
		{ .name = "total_pct", .text = "total%", .width = 7, .gap = " " },
		{ .name = sd_metric_col(o, "self", b2, sizeof(b2)), .width = 10, .gap = " " },
		{ .name = "self_pct", .text = "self%", .width = 7, .gap = " " },
		{ .name = "path", .in = TXT, .left = 1 },
	};
	size_t *at = malloc((n + 1) * sizeof(*at)); /* at[d]: path length of the last line at d */
	char *path = NULL, *ind = NULL, *cut = NULL; /* the joined path; the indented name;
						      * the path shown */
	size_t cap = 0, icap = 0, ccap = 0;
	uint32_t maxd = 0;
	double all = sd_metric_total(p, o);
	struct sd_table *t = sd_table_new(o, cols, sizeof(cols) / sizeof(*cols));
	int err = -ENOMEM;

	assert(o->format != SD_FMT_FOLDED);
	if (!at || !t)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct sd_tree_line *l = &lines[i];
		assert(l->depth <= i); /* its ancestors came before it */
		size_t base = l->depth ? at[l->depth - 1] : 0, len = strlen(l->name);
		size_t lvl = l->depth < SD_TREE_DEEP ? l->depth : SD_TREE_DEEP;
		char tag[32] = "";
		if (l->depth >= SD_TREE_DEEP)
			snprintf(tag, sizeof(tag), "[depth %" PRIu32 "] ", l->depth);
		size_t tlen = strlen(tag);
		if (reserve(&path, &cap, base + len + 2) ||
		    reserve(&ind, &icap, 2 * lvl + tlen + len + 1))
			goto out;
		if (l->depth > maxd)
			maxd = l->depth;
		if (l->depth)
			path[base++] = ';';
		memcpy(path + base, l->name, len + 1);
		at[l->depth] = base + len;
		memset(ind, ' ', 2 * lvl);
		memcpy(ind + 2 * lvl, tag, tlen);
		memcpy(ind + 2 * lvl + tlen, l->name, len + 1);
		const char *shown = o->format == SD_FMT_TEXT ? "" /* text: not shown */
				  : shown_path(path, at, l->depth, &cut, &ccap);
		if (!shown)
			goto out;
		sd_table_u64(t, l->depth);
		sd_table_str(t, shown);
		sd_table_str(t, l->name);
		sd_table_metric(t, l->total);
		sd_table_pct(t, sd_pct(l->total, all));
		sd_table_metric(t, l->self);
		sd_table_pct(t, sd_pct(l->self, all));
		sd_table_str(t, ind);
	}
	note_deep(out, o, maxd);
	if (o->format == SD_FMT_JSON) {
		sd_json_head(out, p, o, sd_metric_name(o));
		fprintf(out, ",\"min_percent\":%g,", o->min_percent);
	}
	err = sd_table_print_view(out, t, "rows", 1);
out:
	sd_table_free(t);
	free(at);
	free(path);
	free(ind);
	free(cut);
	return err;
}
