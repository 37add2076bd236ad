/* test_context.c - unit.context: attributes, the generalized context tree
 * and the thread blackboard (annotate/context.c, annotate/api.c), against
 * docs/API.md ("Limits", and the table of warnings).
 *
 * The tree is reached two ways: directly (sd_ann_attr_get, sd_ann_child:
 * annotate_int.h) and through the entry points a program calls
 * (sonde_rt_begin & co., what include/sonde.h's inline functions call), with
 * the blackboard read as the signal handler reads it
 * (sd_annotate_thread_ctx_sigsafe). Their warnings (annotate/warn.c) go
 * through sd_msg (common/log.h), whose sink libsonde sets to the writer's
 * (writer/notes.c, sd_writer_log: the line on stderr and a NOTE record);
 * this test sets its own sink and keeps the lines. The files under test
 * take their locks through sd_real_pthread_mutex_lock (common/real.h): the
 * test links common/real.c as libsonde does (from an executable, RTLD_NEXT
 * finds libc's). Each case runs in its own process: the tree only grows.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annotate/annotate_int.h"
#include "common/log.h"
#include "common/real.h"
#include "include/sonde.h"
#include "tests/unit/unit.h"

/* ---- what api.c calls from other files ----------------------------------- */

#define MAX_MSGS 64
static char msgs[MAX_MSGS][600];
static unsigned nmsgs;
static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;

/* the log sink (common/log.h) of this test: every line kept */
static void keep(const char *line, size_t len)
{
	pthread_mutex_lock(&msg_lock);
	CHECK(nmsgs < MAX_MSGS);
	snprintf(msgs[nmsgs++], sizeof msgs[0], "%.*s", (int)len, line);
	pthread_mutex_unlock(&msg_lock);
}

__attribute__((constructor)) static void capture_lines(void)
{
	sd_log_set(keep, 0);
}

static void expect_msgs(unsigned n, ...)
{
	va_list ap;
	va_start(ap, n);
	for (unsigned i = 0; i < n && i < nmsgs; i++)
		CHECK_STR(msgs[i], va_arg(ap, const char *));
	va_end(ap);
	if (nmsgs != n)
		for (unsigned i = 0; i < nmsgs; i++)
			fprintf(stderr, "  message %u: %s\n", i, msgs[i]);
	CHECK_EQ(nmsgs, n);
	nmsgs = 0;
}

/* ---- helpers ---------------------------------------------------------------- */

static struct sd_value vint(int64_t i)
{
	return (struct sd_value){.type = SD_TYPE_INT, .i = i, .key = (uint64_t)i};
}

static struct sd_value vdouble(double d)
{
	struct sd_value v = {.type = SD_TYPE_DOUBLE, .d = d};
	memcpy(&v.key, &d, sizeof v.key);
	return v;
}

static struct sd_value vstr(const char *s)
{
	struct sd_value v = {.type = SD_TYPE_STRING, .s = s, .len = strlen(s)};
	v.key = sd_ann_hash_str(s, v.len);
	return v;
}

static struct sd_node_view node(uint32_t id)
{
	struct sd_node_view nv;
	CHECK_EQ(sd_annotate_node_get(id, &nv), 0);
	return nv;
}

static uint16_t attr(const char *name, int type)
{
	struct sd_attr *a = sd_ann_attr_get(name, type, SD_SCOPE_THREAD);
	CHECK(a);
	return a->id;
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);
	CHECK(s);
	memset(s, c, n);
	s[n] = 0;
	return s;
}

/* ---- interning -------------------------------------------------------------- */

static void case_intern(void)
{
	CHECK_EQ(sd_annotate_attr_count(), 0);
	CHECK_EQ(sd_annotate_node_count(), 0);
	struct sd_attr *phase = sd_ann_attr_get("phase", SD_TYPE_STRING, SD_SCOPE_THREAD);
	struct sd_attr *iter = sd_ann_attr_get("iteration", SD_TYPE_INT, SD_SCOPE_PROCESS);
	struct sd_attr *odd = sd_ann_attr_get("odd", 7, 9);
	CHECK(phase && iter && odd);
	CHECK_EQ(phase->id, 1);
	CHECK_EQ(iter->id, 2);
	CHECK_EQ(odd->id, 3);
	/* An existing name: the same attribute, whatever type is asked now. */
	CHECK(sd_ann_attr_get("phase", SD_TYPE_INT, SD_SCOPE_PROCESS) == phase);
	CHECK(sd_ann_attr_find("iteration") == iter);
	CHECK(sd_ann_attr_find("nope") == NULL);
	CHECK_EQ(sd_annotate_attr_count(), 3);
	struct sd_attr_view av;
	CHECK_EQ(sd_annotate_attr_get(2, &av), 0);
	CHECK_STR(av.name, "iteration");
	CHECK_EQ(av.type, SD_TYPE_INT);
	CHECK_EQ(av.scope, SD_SCOPE_PROCESS);
	CHECK_EQ(sd_annotate_attr_get(3, &av), 0);
	CHECK_EQ(av.type, SD_TYPE_STRING); /* out-of-range type and scope: the defaults */
	CHECK_EQ(av.scope, SD_SCOPE_THREAD);
	CHECK_EQ(sd_annotate_attr_get(0, &av), -1);
	CHECK_EQ(sd_annotate_attr_get(4, &av), -1);

	/* A path phase=solve / iteration=42 / phase=inner: one node per
	 * (parent, attribute, value), ids from 1 in order of creation. */
	struct sd_value solve = vstr("solve"), i42 = vint(42), inner = vstr("inner");
	uint32_t n1 = sd_ann_child(0, phase->id, &solve);
	uint32_t n2 = sd_ann_child(n1, iter->id, &i42);
	uint32_t n3 = sd_ann_child(n2, phase->id, &inner);
	CHECK_EQ(n1, 1);
	CHECK_EQ(n2, 2);
	CHECK_EQ(n3, 3);
	CHECK_EQ(sd_annotate_node_count(), 3);
	/* Again, from fresh values equal to the first: the same nodes. */
	char buf[8] = "solve";
	struct sd_value solve2 = vstr(buf), i42b = vint(42);
	CHECK_EQ(sd_ann_child(0, phase->id, &solve2), n1);
	CHECK_EQ(sd_ann_child(n1, iter->id, &i42b), n2);
	CHECK_EQ(sd_annotate_node_count(), 3);

	struct sd_node_view nv = node(n3);
	CHECK_EQ(nv.parent, n2);
	CHECK_EQ(nv.attr, phase->id);
	CHECK_EQ(nv.type, SD_TYPE_STRING);
	CHECK_EQ(nv.flags, 0);
	CHECK_STR(nv.s, "inner");
	nv = node(n2);
	CHECK_EQ(nv.parent, n1);
	CHECK_EQ(nv.type, SD_TYPE_INT);
	CHECK_EQ(nv.i, 42);
	CHECK(nv.s == NULL);
	CHECK_EQ(sd_ann_node_parent(n3), n2);
	CHECK_EQ(sd_ann_node_attr(n2), iter->id);
	struct sd_node_view dummy;
	CHECK_EQ(sd_annotate_node_get(0, &dummy), -1);
	CHECK_EQ(sd_annotate_node_get(4, &dummy), -1);

	/* Each of parent, attribute, type and value tells nodes apart. */
	uint32_t other_parent = sd_ann_child(n2, iter->id, &i42);
	uint32_t other_attr = sd_ann_child(n1, phase->id, &i42);
	CHECK(other_parent != n2 && other_attr != n2 && other_parent != other_attr);
	/* int and double with the same bits (the same key): two nodes */
	double one = 1.0;
	int64_t one_bits;
	memcpy(&one_bits, &one, sizeof one_bits);
	uint32_t as_int = sd_ann_child(n1, iter->id, &(struct sd_value){.type = SD_TYPE_INT,
									.i = one_bits,
									.key = (uint64_t)one_bits});
	struct sd_value d1 = vdouble(1.0);
	uint32_t as_double = sd_ann_child(n1, iter->id, &d1);
	CHECK(as_int != as_double);
	CHECK_EQ(node(as_double).type, SD_TYPE_DOUBLE);
	CHECK(node(as_double).d == 1.0);
	/* -0.0 and 0.0 compare equal but are different values here (by bits) */
	struct sd_value z = vdouble(0.0), nz = vdouble(-0.0);
	CHECK(sd_ann_child(n1, iter->id, &z) != sd_ann_child(n1, iter->id, &nz));
	/* Two strings under one key (a hash collision): two nodes, each found. */
	struct sd_value c1 = vstr("alpha"), c2 = vstr("beta");
	c2.key = c1.key;
	uint32_t na = sd_ann_child(n1, phase->id, &c1), nb = sd_ann_child(n1, phase->id, &c2);
	CHECK(na != nb);
	CHECK_EQ(sd_ann_child(n1, phase->id, &c1), na);
	CHECK_EQ(sd_ann_child(n1, phase->id, &c2), nb);
	CHECK_STR(node(nb).s, "beta");
	/* A string equal to a prefix of another: two nodes. */
	struct sd_value pre = vstr("sol");
	CHECK(sd_ann_child(0, phase->id, &pre) != n1);
	expect_msgs(0);
}

/* ---- through the entry points: the blackboard -------------------------------- */

static void case_blackboard(void)
{
	sd_annotate_start(NULL);
	CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), 0);
	sonde_rt_begin("phase", "solve");
	uint32_t solve = sd_annotate_thread_ctx_sigsafe();
	CHECK(solve != 0);
	sonde_rt_begin_int("iteration", 7);
	uint32_t it7 = sd_annotate_thread_ctx_sigsafe();
	CHECK_EQ(node(it7).parent, solve);
	CHECK_EQ(node(it7).i, 7);
	sonde_rt_set_int("iteration", 8); /* replaces the innermost value */
	uint32_t it8 = sd_annotate_thread_ctx_sigsafe();
	CHECK(it8 != it7);
	CHECK_EQ(node(it8).parent, solve);
	sonde_rt_end("iteration");
	CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), solve);
	sonde_rt_begin_int("iteration", 7);
	CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), it7); /* same path, same node */
	sonde_rt_end("iteration");
	sonde_rt_end("phase");
	CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), 0);
	/* Regions are values of the attribute "region". */
	sonde_rt_begin("region", "halo");
	uint32_t halo = sd_annotate_thread_ctx_sigsafe();
	CHECK_STR(node(halo).s, "halo");
	struct sd_attr_view av;
	CHECK_EQ(sd_annotate_attr_get(node(halo).attr, &av), 0);
	CHECK_STR(av.name, "region");
	sonde_rt_region_end("halo");
	CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), 0);
	expect_msgs(0);
	/* Misuse warns once per distinct line (docs/API.md). */
	sonde_rt_end("phase");
	sonde_rt_end("phase");
	sonde_rt_region_end("nothere");
	expect_msgs(2, "sonde: sonde_end(\"phase\"): no value of \"phase\" is open (check nesting)",
		    "sonde: sonde_region_end(\"nothere\"): region \"nothere\" is not open (check "
		    "nesting)");
	sd_annotate_thread_exit();
}

/* ---- limits ------------------------------------------------------------------ */

/* Values over 255 bytes: truncated, the node flagged, one line; two values
 * equal in their first 255 bytes share the node. */
static void case_truncate(void)
{
	sd_annotate_start(NULL);
	char *long1 = repeat('x', 300), *long2 = repeat('x', 400);
	long2[300] = 'y';
	sonde_rt_begin("phase", long1);
	uint32_t n = sd_annotate_thread_ctx_sigsafe();
	CHECK(n != 0);
	struct sd_node_view nv = node(n);
	CHECK_EQ(nv.flags & 1, 1);
	CHECK_EQ(strlen(nv.s), SD_VALUE_MAX);
	CHECK(!strncmp(nv.s, long1, SD_VALUE_MAX));
	expect_msgs(1, "sonde: sonde_begin(\"phase\"): value of 300 bytes truncated to 255 (see "
		       "docs/API.md, Limits)");
	sonde_rt_end("phase");
	sonde_rt_begin("phase", long2);
	CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), n);
	sonde_rt_end("phase");
	expect_msgs(1, "sonde: sonde_begin(\"phase\"): value of 400 bytes truncated to 255 (see "
		       "docs/API.md, Limits)");
	/* Exactly 255: not truncated, not flagged; a new node. (255 'x' would
	 * be the truncated node's value, and resolve to it, flag and all.) */
	char *exact = repeat('z', SD_VALUE_MAX);
	sonde_rt_begin("phase", exact);
	uint32_t e = sd_annotate_thread_ctx_sigsafe();
	CHECK(e != n);
	CHECK_EQ(node(e).flags, 0);
	sonde_rt_end("phase");
	expect_msgs(0);
	free(long1);
	free(long2);
	free(exact);
	sd_annotate_thread_exit();
}

/* A region whose name is over the limit is begun under its first 255 bytes;
 * sonde_region_end with the same name must end it. */
static void case_truncate_region(void)
{
	sd_annotate_start(NULL);
	char *name = repeat('r', 300);
	sonde_rt_begin("region", name);
	CHECK(sd_annotate_thread_ctx_sigsafe() != 0);
	sonde_rt_region_end(name);
	CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), 0);
	/* and one nested in another region */
	sonde_rt_begin("region", "outer");
	uint32_t outer = sd_annotate_thread_ctx_sigsafe();
	sonde_rt_begin("region", name);
	sonde_rt_region_end(name);
	CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), outer);
	sonde_rt_region_end("outer");
	CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), 0);
	/* only the truncation warnings (identical text: said once) */
	expect_msgs(1, "sonde: sonde_begin(\"region\"): value of 300 bytes truncated to 255 (see "
		       "docs/API.md, Limits)");
	free(name);
	sd_annotate_thread_exit();
}

/* Attribute names up to 63 bytes; at most 256 attributes, "region" included. */
static void case_attr_limits(void)
{
	sd_annotate_start(NULL); /* creates "region" */
	CHECK_EQ(sd_annotate_attr_count(), 1);
	char *n63 = repeat('a', SD_ATTR_NAME_MAX), *n64 = repeat('b', SD_ATTR_NAME_MAX + 1);
	CHECK(sd_ann_attr_get(n63, SD_TYPE_STRING, SD_SCOPE_THREAD));
	CHECK(!sd_ann_attr_get(n64, SD_TYPE_STRING, SD_SCOPE_THREAD));
	char want[200];
	snprintf(want, sizeof want, "sonde: attribute \"%.63s...\": name longer than 63 bytes "
		 "(ignored; see docs/API.md, Limits)", n64);
	expect_msgs(1, want);
	/* calls with it do nothing */
	sonde_rt_begin(n64, "v");
	CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), 0);
	CHECK_EQ(sd_annotate_attr_count(), 2);
	nmsgs = 0;
	char name[32];
	for (unsigned i = sd_annotate_attr_count(); i < SD_ATTR_MAX; i++) {
		snprintf(name, sizeof name, "attr%u", i);
		CHECK(sd_ann_attr_get(name, SD_TYPE_INT, SD_SCOPE_THREAD));
	}
	CHECK_EQ(sd_annotate_attr_count(), SD_ATTR_MAX);
	expect_msgs(0);
	CHECK(!sd_ann_attr_get("one_too_many", SD_TYPE_INT, SD_SCOPE_THREAD));
	CHECK_EQ(sd_annotate_attr_count(), SD_ATTR_MAX);
	expect_msgs(1, "sonde: attribute \"one_too_many\": more than 256 attributes (ignored; see "
		       "docs/API.md, Limits)");
	sonde_rt_begin_int("one_too_many", 1);
	CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), 0);
	/* existing ones still work */
	sonde_rt_begin_int("attr100", 5);
	uint32_t n = sd_annotate_thread_ctx_sigsafe();
	CHECK(n != 0);
	CHECK_EQ(node(n).attr, sd_ann_attr_find("attr100")->id);
	sonde_rt_end("attr100");
	free(n63);
	free(n64);
	sd_annotate_thread_exit();
}

/* At most 64 values open in a thread: deeper begins are ignored, and so are
 * their ends; the 64 below stay as they were. */
static void case_stack_limit(void)
{
	sd_annotate_start(NULL);
	uint32_t at[SD_STACK_MAX + 1] = {0};
	for (int i = 0; i < SD_STACK_MAX; i++) {
		sonde_rt_begin_int("depth", i);
		at[i + 1] = sd_annotate_thread_ctx_sigsafe();
		CHECK_EQ(node(at[i + 1]).parent, at[i]);
		CHECK_EQ(node(at[i + 1]).i, i);
	}
	expect_msgs(0);
	for (int i = 0; i < 3; i++) {
		sonde_rt_begin_int("depth", 1000 + i);
		CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), at[SD_STACK_MAX]);
	}
	expect_msgs(1, "sonde: sonde_begin_int(\"depth\"): more than 64 values open (ignored; check "
		       "nesting, see docs/API.md, Limits)");
	for (int i = 0; i < 3; i++) {
		sonde_rt_end("depth"); /* the ignored ones */
		CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), at[SD_STACK_MAX]);
	}
	for (int i = SD_STACK_MAX; i > 0; i--) {
		CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), at[i]);
		sonde_rt_end("depth");
	}
	CHECK_EQ(sd_annotate_thread_ctx_sigsafe(), 0);
	expect_msgs(0);
	sd_annotate_thread_exit();
}

/* 65536 nodes at most (ids 1..65535); past 64512, a new value becomes one
 * "(capped)" node per (parent, attribute), said once; values seen before
 * keep resolving; with no id left the value is left out (the parent). */
static void case_node_cap(void)
{
	const uint32_t reserve_from = SD_NODES_MAX - 1024;
	uint16_t a = attr("i", SD_TYPE_INT), b = attr("j", SD_TYPE_INT);
	/* 64512 nodes: i=0..63 at the root, j=0..1006 under each (and a few
	 * more to make up the count). */
	uint32_t roots[64];
	for (int i = 0; i < 64; i++) {
		struct sd_value v = vint(i);
		roots[i] = sd_ann_child(0, a, &v);
	}
	for (uint32_t k = 0; sd_annotate_node_count() < reserve_from; k++) {
		struct sd_value v = vint(k / 64);
		uint32_t id = sd_ann_child(roots[k % 64], b, &v);
		CHECK_EQ(id, sd_annotate_node_count());
	}
	CHECK_EQ(sd_annotate_node_count(), reserve_from);
	expect_msgs(0);
	/* Seen before: the same node, nothing said. */
	struct sd_value v5 = vint(5);
	uint32_t j5 = sd_ann_child(roots[3], b, &v5);
	CHECK(j5 <= reserve_from);
	CHECK_EQ(node(j5).i, 5);
	CHECK_EQ(sd_annotate_node_count(), reserve_from);
	expect_msgs(0);
	/* New: "(capped)" under (roots[3], j), one line. */
	struct sd_value big = vint(1 << 30), big2 = vint((1 << 30) + 1);
	uint32_t capped = sd_ann_child(roots[3], b, &big);
	CHECK_EQ(capped, reserve_from + 1);
	struct sd_node_view nv = node(capped);
	CHECK_EQ(nv.type, SD_TYPE_STRING);
	CHECK_STR(nv.s, "(capped)");
	CHECK_EQ(nv.parent, roots[3]);
	CHECK_EQ(nv.attr, b);
	expect_msgs(1, "sonde: annotations: 64512 distinct contexts reached, new values are "
		       "recorded as \"(capped)\" (see docs/API.md, Limits)");
	CHECK_EQ(sd_ann_child(roots[3], b, &big2), capped);
	CHECK_EQ(sd_ann_child(roots[3], b, &big), capped);
	CHECK_EQ(sd_ann_child(roots[3], b, &v5), j5);
	/* Another (parent, attribute): its own "(capped)" node. */
	uint32_t capped_a = sd_ann_child(roots[3], a, &big);
	CHECK_EQ(capped_a, reserve_from + 2);
	CHECK_EQ(node(capped_a).attr, a);
	/* Use up the reserve: one capped node per parent, ids to 65535. */
	uint32_t parent = 1;
	while (sd_annotate_node_count() < SD_NODES_MAX - 1) {
		uint32_t id = sd_ann_child(parent, b, &big);
		CHECK(id > reserve_from);
		CHECK_STR(node(id).s, "(capped)");
		parent++;
	}
	CHECK_EQ(sd_annotate_node_count(), SD_NODES_MAX - 1);
	/* No id left: the value is left out, the parent stands for the path. */
	uint32_t p2 = reserve_from - 5;
	CHECK_EQ(sd_ann_child(p2, b, &big), p2);
	CHECK_EQ(sd_ann_child(p2, b, &big2), p2);
	CHECK_EQ(sd_annotate_node_count(), SD_NODES_MAX - 1);
	/* Everything seen before still resolves. */
	CHECK_EQ(sd_ann_child(roots[3], b, &v5), j5);
	CHECK_EQ(sd_ann_child(roots[3], b, &big), capped);
	struct sd_value v0 = vint(0);
	CHECK_EQ(sd_ann_child(0, a, &v0), roots[0]);
	CHECK_EQ(sd_annotate_node_get(SD_NODES_MAX - 1, &nv), 0);
	CHECK_EQ(sd_annotate_node_get(SD_NODES_MAX, &nv), -1);
	expect_msgs(0);
}

/* Threads that look up the same paths at the same time, each in its own
 * order, get the same node for the same path, and each path is one node. */
#define NTHREADS 6
#define NA 8
#define NB 8
#define NC 16

static pthread_barrier_t barrier;
static uint32_t ids[NTHREADS][NA][NB][NC];
static uint32_t ctxs[NTHREADS][NA][NB];
static uint16_t ab, bb, cb;

static void *lookup(void *arg)
{
	int t = (int)(intptr_t)arg;
	pthread_barrier_wait(&barrier);
	for (int round = 0; round < 2; round++) {
		for (int x = 0; x < NA * NB * NC; x++) {
			int k = (x * 7 + t * 131) % (NA * NB * NC); /* a different order each */
			int i = k / (NB * NC), j = k / NC % NB, l = k % NC;
			char s[16];
			snprintf(s, sizeof s, "a%d", i);
			struct sd_value va = vstr(s), vb = vint(j), vc = vdouble(l * 0.5);
			uint32_t n1 = sd_ann_child(0, ab, &va);
			uint32_t n2 = sd_ann_child(n1, bb, &vb);
			uint32_t n3 = sd_ann_child(n2, cb, &vc);
			CHECK(n1 && n2 && n3);
			if (round == 0)
				ids[t][i][j][l] = n3;
			else
				CHECK_EQ(ids[t][i][j][l], n3);
		}
	}
	/* through the entry points too: same path, same blackboard value */
	for (int i = NA; i-- > 0;)
		for (int j = 0; j < NB; j++) {
			char s[16];
			snprintf(s, sizeof s, "a%d", i);
			sonde_rt_begin("pa", s);
			sonde_rt_begin_int("pb", j);
			ctxs[t][i][j] = sd_annotate_thread_ctx_sigsafe();
			sonde_rt_end("pb");
			sonde_rt_end("pa");
		}
	sd_annotate_thread_exit();
	return NULL;
}

static void case_concurrent(void)
{
	sd_annotate_start(NULL);
	ab = attr("a", SD_TYPE_STRING);
	bb = attr("b", SD_TYPE_INT);
	cb = attr("c", SD_TYPE_DOUBLE);
	uint32_t before = sd_annotate_node_count();
	pthread_t th[NTHREADS];
	CHECK(pthread_barrier_init(&barrier, NULL, NTHREADS) == 0);
	for (int t = 0; t < NTHREADS; t++)
		CHECK(pthread_create(&th[t], NULL, lookup, (void *)(intptr_t)t) == 0);
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&barrier);
	/* NA + NA*NB + NA*NB*NC nodes for the paths, NA + NA*NB for pa/pb */
	CHECK_EQ(sd_annotate_node_count() - before, NA + NA * NB + NA * NB * NC + NA + NA * NB);
	for (int i = 0; i < NA; i++)
		for (int j = 0; j < NB; j++) {
			for (int l = 0; l < NC; l++) {
				uint32_t id = ids[0][i][j][l];
				for (int t = 1; t < NTHREADS; t++)
					CHECK_EQ(ids[t][i][j][l], id);
				/* and it is that path */
				struct sd_node_view c = node(id), b = node(c.parent), a = node(b.parent);
				CHECK(c.d == l * 0.5);
				CHECK_EQ(b.i, j);
				char s[16];
				snprintf(s, sizeof s, "a%d", i);
				CHECK_STR(a.s, s);
				CHECK_EQ(a.parent, 0);
			}
			for (int t = 1; t < NTHREADS; t++)
				CHECK_EQ(ctxs[t][i][j], ctxs[0][i][j]);
			CHECK_EQ(node(ctxs[0][i][j]).i, j);
		}
	expect_msgs(0);
}

UNIT_MAIN({"intern", case_intern}, {"blackboard", case_blackboard},
	  {"truncate", case_truncate}, {"truncate_region", case_truncate_region},
	  {"attr_limits", case_attr_limits}, {"stack_limit", case_stack_limit},
	  {"node_cap", case_node_cap}, {"concurrent", case_concurrent})
