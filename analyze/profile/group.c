/*
 * group.c: the --group-by key of a sample row (struct sd_crow): the values of built-in
 * keys (function, thread, process, module, source, file, line, rank, host) and of
 * annotation attributes, each followed by a NUL. The group-by view (views/view_group.c), `sonde
 * diff` (cmd_diff.c), --stats and the speedscope exporter group rows by it. Runs in the
 * CLI's only thread.
 */
#include "analyze/profile/profile.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* A growing byte buffer. */
struct buf { char *p; size_t n, cap; };

static int buf_add(struct buf *b, const char *s, size_t len)
{
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + len + 1)
			cap *= 2;
		char *np = realloc(b->p, cap);
		if (!np)
			return -ENOMEM;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, len);
	b->n += len;
	b->p[b->n] = 0;
	return 0;
}

static int buf_str(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

enum key_kind { K_ATTR, K_FUNCTION, K_THREAD, K_PROCESS, K_MODULE, K_SOURCE, K_FILE, K_LINE,
		K_RANK, K_HOST };
struct key { enum key_kind kind; uint32_t attr; int known; };
/* names of the built-in keys, indexed by enum key_kind */
static const char *const builtins[] = { "", "function", "thread", "process", "module",
					"source", "file", "line", "rank", "host", NULL };
/* Append the value of key k for row r (then a NUL) to b. */
static int key_value(struct buf *b, const struct sd_profile *p, const struct key *k,
		     const struct sd_crow *r, int text)
{
	char tmp[64] = "";
	const char *s = tmp;
	uint32_t v;

	switch (k->kind) {
	case K_ATTR:
		s = k->known && sd_ctx_value(p, r->ctx, r->pctx, k->attr, &v) ? p->value_strs[v]
									    : "(none)";
		break;
	case K_FUNCTION:
		s = sd_sym_func(p->sym, p->nodes[r->cnode].func)->display;
		break;
	case K_MODULE:
		s = sd_sym_func(p->sym, p->nodes[r->cnode].func)->module;
		break;
	case K_SOURCE:
		s = r->thread_end ? "(none)" : p->sources[r->source].name; /* deltas of no sample */
		break;
	case K_FILE: /* the innermost frame's source (inlined code: the inlined function's) */
	case K_LINE:
		s = r->file ? sd_sym_file(p->sym, r->file) : "(unknown)";
		if (r->file && k->kind == K_LINE) {
			if (buf_str(b, s))
				return -ENOMEM;
			snprintf(tmp, sizeof(tmp), ":%" PRIu32, r->line);
			s = tmp;
		}
		break;
	case K_PROCESS: /* NAME[PID]: one row per process image (docs/REPORT.md) */
		if (r->stream < p->nsinfo && p->sinfo[r->stream].label)
			s = p->sinfo[r->stream].label;
		else
			snprintf(tmp, sizeof(tmp), "?[%" PRIu64 "]", r->pid);
		break;
	case K_RANK:
		if (r->rank >= 0)
			snprintf(tmp, sizeof(tmp), "%" PRId64, r->rank);
		else
			s = "(none)";
		break;
	case K_HOST:
		s = r->host < p->nvalue_strs ? p->value_strs[r->host] : "?";
		break;
	case K_THREAD:
		snprintf(tmp, sizeof(tmp), "%" PRIu64, r->tid);
		if (text) {
			if (buf_str(b, tmp) || buf_str(b, " (") || buf_str(b, r->tname) ||
			    buf_add(b, ")", 1))
				return -ENOMEM;
			b->n++; /* keep the NUL as separator */
			return 0;
		}
		break;
	}
	if (buf_str(b, s))
		return -ENOMEM;
	b->n++;
	return 0;
}

struct sd_grouper { const struct sd_profile *p; struct key *keys; size_t n; struct buf b;
		   int text; };

struct sd_grouper *sd_grouper_new(const struct sd_profile *p, char *const *names, size_t n,
				  int text)
{
	struct sd_grouper *g = calloc(1, sizeof(*g));

	if (!g || !(g->keys = calloc(n + 1, sizeof(*g->keys)))) {
		free(g);
		return NULL;
	}
	g->p = p;
	g->n = n;
	g->text = text;
	for (size_t i = 0; i < n; i++) {
		g->keys[i].kind = K_ATTR;
		for (int k = 1; builtins[k]; k++)
			if (!strcmp(names[i], builtins[k]))
				g->keys[i].kind = (enum key_kind)k;
		if (g->keys[i].kind == K_ATTR) {
			uint32_t id;
			g->keys[i].known = sd_strmap_get(&p->attr_map, names[i], strlen(names[i]), &id);
			g->keys[i].attr = id;
		}
	}
	return g;
}

int sd_grouper_key(struct sd_grouper *g, const struct sd_crow *r, const char **key, size_t *len)
{
	g->b.n = 0;
	for (size_t k = 0; k < g->n; k++)
		if (key_value(&g->b, g->p, &g->keys[k], r, g->text))
			return -ENOMEM;
	*key = g->b.p ? g->b.p : "";
	*len = g->b.n;
	return 0;
}

void sd_grouper_free(struct sd_grouper *g)
{
	if (!g)
		return;
	free(g->keys);
	free(g->b.p);
	free(g);
}
