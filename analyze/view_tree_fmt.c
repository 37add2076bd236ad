/*
 * view_tree_fmt.c: the rows of `sonde report --view tree` in every format but folded.
 * sd_out_tree (views.c) builds the merged tree, prunes it with --min-percent and walks
 * it depth-first; it hands the nodes it prints here, in that order, and this file prints
 * them as one table: text shows total and self with their shares, then the name indented
 * two spaces a level; CSV and JSON rows show the depth, the path (the names from the
 * outermost node down, joined with `;`, as in the folded format) and the name first.
 *
 * Invariant of the input: a node's parent is the last earlier line of depth - 1 (the
 * walk is depth-first and pruning drops whole subtrees), so paths are built with one
 * prefix length per depth. Runs in the CLI's only thread.
 */
#include "analyze/analyze.h"

#include <assert.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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
	char *path = NULL, *ind = NULL;             /* the joined path; the indented name */
	size_t cap = 0, icap = 0;
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
		if (reserve(&path, &cap, base + len + 2) ||
		    reserve(&ind, &icap, 2 * (size_t)l->depth + len + 1))
			goto out;
		if (l->depth)
			path[base++] = ';';
		memcpy(path + base, l->name, len + 1);
		at[l->depth] = base + len;
		memset(ind, ' ', 2 * (size_t)l->depth);
		memcpy(ind + 2 * (size_t)l->depth, l->name, len + 1);
		sd_table_u64(t, l->depth);
		sd_table_str(t, path);
		sd_table_str(t, l->name);
		sd_table_metric(t, l->total);
		sd_table_pct(t, sd_pct(l->total, all));
		sd_table_metric(t, l->self);
		sd_table_pct(t, sd_pct(l->self, all));
		sd_table_str(t, ind);
	}
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
	return err;
}
