/*
 * svg_int.h: what the two files of the flame graph share, and nothing else includes.
 * svg.c builds the graph's frames from a tree (merged by name as folded output prints
 * them), lays them out and tints them (--color-by), and holds the entry points
 * (export.h: sd_out_svg*); svg_draw.c writes the document. The design is described at
 * the top of svg.c.
 */
#ifndef SONDE_SVG_INT_H
#define SONDE_SVG_INT_H

#include "analyze/export/export.h"

/* A frame: a node of the graph's tree (node 0: the root, "all"). */
struct fnode {
	uint32_t parent, kid, next, depth; /* kid, next: 0 = none (the root is no child) */
	const char *name;           /* borrowed from the source tree */
	double v[2], self[2];       /* total and self: [0] the graph's (B's), [1] A's (diff) */
	double x;                   /* left edge in value units */
	int level;                  /* 1: an annotation level (id, val: attribute, value) */
	uint32_t id, val;           /* else id: the function */
	long cval;                  /* --color-by: the value with most of the frame, -1 none */
	double cshare;              /* that value's share of the frame's weight */
};

/* The graph: its frames, and what drawing them needs. */
struct svg {
	struct fnode *n; size_t nn, cap;
	struct sd_strmap kids;      /* parent id (4 bytes) + name -> node */
	char *key; size_t keycap;
	const struct sd_profile *p; /* the graph's (B's) */
	const struct sd_report_opts *o;
	long cattr;                 /* --color-by attribute id, -1: by module */
	int diff, absolute;
	double maxd;                /* diff: the largest |delta| drawn */
};

/* What the title line names: the program(s) of a report, or the two sides of a diff. */
struct head { const char *view, *a, *b; };

/* svg_draw.c: the document of g (laid out) on out, titled by h. 0 or -ENOMEM. */
int sd_svg_emit(FILE *out, struct svg *g, const struct head *h);

#endif
