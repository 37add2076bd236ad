/*
 * view_tree_fmt.c: `sonde report --view tree --format csv|json`. sd_out_tree (views.c)
 * builds the merged tree, prunes it with --min-percent and walks it depth-first as for
 * the text view; it hands the nodes it would print here, in that order, and this file
 * prints them as rows: depth, path (the names from the outermost node down, joined with
 * `;`, as in the folded format), name, total and self with their shares.
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

int sd_out_tree_rows(FILE *out, const struct sd_profile *p, const struct sd_report_opts *o,
		     const struct sd_tree_line *lines, size_t n)
{
	size_t *at = malloc((n + 1) * sizeof(*at)); /* at[d]: path length of the last line at d */
	char *path = NULL, b1[64], b2[64];
	size_t cap = 0;
	double all = sd_metric_total(p, o);
	const char *total = sd_metric_col(o, "total", b1, sizeof(b1));
	const char *self = sd_metric_col(o, "self", b2, sizeof(b2));
	const char *metric = o->counter ? o->counter : o->weight ? "weight" : "samples";
	int json = o->format == SD_FMT_JSON, err = -ENOMEM;

	assert(o->format == SD_FMT_CSV || o->format == SD_FMT_JSON);
	if (!at)
		return -ENOMEM;
	if (json) {
		sd_json_head(out, p, o, metric);
		fprintf(out, ",\"min_percent\":%g,\"rows\":[", o->min_percent);
	} else {
		fprintf(out, "depth,path,name,%s,total_pct,%s,self_pct\n", total, self);
	}
	for (size_t i = 0; i < n; i++) {
		const struct sd_tree_line *l = &lines[i];
		assert(l->depth <= i); /* its ancestors came before it */
		size_t base = l->depth ? at[l->depth - 1] : 0, len = strlen(l->name);
		if (base + len + 2 > cap) {
			size_t ncap = cap ? cap * 2 : 256;
			while (ncap < base + len + 2)
				ncap *= 2;
			char *np = realloc(path, ncap);
			if (!np)
				goto out;
			path = np;
			cap = ncap;
		}
		if (l->depth)
			path[base++] = ';';
		memcpy(path + base, l->name, len + 1);
		at[l->depth] = base + len;
		if (json) {
			fprintf(out, "%s{\"depth\":%" PRIu32 ",\"path\":", i ? ",\n" : "\n", l->depth);
			sd_json_str(out, path, base + len);
			fputs(",\"name\":", out);
			sd_json_str(out, l->name, len);
			fprintf(out, ",\"%s\":", total);
			sd_metric_put(out, o, l->total, 0);
			fprintf(out, ",\"total_pct\":%.2f,\"%s\":", sd_pct(l->total, all), self);
			sd_metric_put(out, o, l->self, 0);
			fprintf(out, ",\"self_pct\":%.2f}", sd_pct(l->self, all));
		} else {
			fprintf(out, "%" PRIu32 ",", l->depth);
			sd_csv_str(out, path);
			putc(',', out);
			sd_csv_str(out, l->name);
			putc(',', out);
			sd_metric_put(out, o, l->total, 0);
			fprintf(out, ",%.2f,", sd_pct(l->total, all));
			sd_metric_put(out, o, l->self, 0);
			fprintf(out, ",%.2f\n", sd_pct(l->self, all));
		}
	}
	if (json)
		fputs("]}\n", out);
	err = 0;
out:
	free(at);
	free(path);
	return err;
}
