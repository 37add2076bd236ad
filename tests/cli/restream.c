/* restream.c - many streams from real ones, for the analyzer's scale tests and
 * benchmarks (issue 21: 10 000 streams of 2 500 hosts x 4 ranks):
 *
 *   restream OUTDIR N STREAM...
 *
 * writes OUTDIR/gen<i>.sonde for i in 0..N-1, each a copy of STREAM[i % count] as
 * recorded, record for record, but for: the HEADER's pid (1000000 + i), rank (i),
 * host ("node<i / 4>": four ranks a host) and start_ticks (i + 1), so that each is
 * its own process and rank; and every FRAME's address replaced by another code address
 * of the same module that the stream holds (the k-th of the module's distinct FRAME
 * addresses becomes the (k + i)-th, cyclically), so that the streams' call paths differ
 * from one another while every frame is still real code of the same libraries and
 * programs, symbolized like any other. Exit 0, or 1 with a line on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <msgpack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/format.h"

/* The distinct FRAME addresses of each module id (sorted), from a first pass. */
struct mod { uint64_t *a; size_t n, cap; };

static int die(const char *what, const char *why)
{
	fprintf(stderr, "restream: %s: %s\n", what, why);
	return 1;
}

static int key_is(const msgpack_object_kv *kv, const char *k)
{
	return kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == strlen(k) &&
	       !memcmp(kv->key.via.str.ptr, k, kv->key.via.str.size);
}

static void pack_str(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

/* The HEADER's info map with this stream's identity. */
static void pack_info(msgpack_packer *pk, const msgpack_object *info, uint64_t i)
{
	static const char *const own[] = { "pid", "rank", "host", "start_ticks" };
	uint32_t keep = 0;
	char host[32];
	for (uint32_t k = 0; k < info->via.map.size; k++) {
		int mine = 0;
		for (size_t j = 0; j < 4; j++)
			mine |= key_is(&info->via.map.ptr[k], own[j]);
		keep += !mine;
	}
	msgpack_pack_map(pk, keep + 4);
	for (uint32_t k = 0; k < info->via.map.size; k++) {
		int mine = 0;
		for (size_t j = 0; j < 4; j++)
			mine |= key_is(&info->via.map.ptr[k], own[j]);
		if (mine)
			continue;
		msgpack_pack_object(pk, info->via.map.ptr[k].key);
		msgpack_pack_object(pk, info->via.map.ptr[k].val);
	}
	snprintf(host, sizeof host, "node%04" PRIu64, i / 4);
	pack_str(pk, "pid"), msgpack_pack_uint64(pk, 1000000 + i);
	pack_str(pk, "rank"), msgpack_pack_uint64(pk, i);
	pack_str(pk, "host"), pack_str(pk, host);
	pack_str(pk, "start_ticks"), msgpack_pack_uint64(pk, i + 1);
}

static uint64_t u(const msgpack_object *o)
{
	return o->type == MSGPACK_OBJECT_POSITIVE_INTEGER ? o->via.u64 : 0;
}

static int frame_of(const msgpack_object *r, uint64_t *mod, uint64_t *addr)
{
	const msgpack_object *v = r->via.array.ptr;
	if (r->type != MSGPACK_OBJECT_ARRAY || r->via.array.size <= SD_F_FRAME_ADDR ||
	    u(&v[0]) != SD_K_FRAME)
		return 0;
	*mod = u(&v[SD_F_FRAME_MODULE]), *addr = u(&v[SD_F_FRAME_ADDR]);
	return *mod > 0 && *mod < 100000;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* First pass: the distinct addresses of each module's FRAMEs. */
static int collect(const msgpack_object *recs, size_t n, struct mod **mods, size_t *nmods)
{
	for (size_t k = 0; k < n; k++) {
		uint64_t mod, addr;
		if (!frame_of(&recs[k], &mod, &addr))
			continue;
		if (mod >= *nmods) {
			struct mod *m = realloc(*mods, (mod + 1) * sizeof(*m));
			if (!m)
				return -ENOMEM;
			memset(m + *nmods, 0, (mod + 1 - *nmods) * sizeof(*m));
			*mods = m, *nmods = mod + 1;
		}
		struct mod *m = &(*mods)[mod];
		if (m->n == m->cap) {
			uint64_t *g = realloc(m->a, (m->cap = m->cap ? 2 * m->cap : 16) * sizeof(*g));
			if (!g)
				return -ENOMEM;
			m->a = g;
		}
		m->a[m->n++] = addr;
	}
	for (size_t k = 0; k < *nmods; k++) {
		struct mod *m = &(*mods)[k];
		size_t w = 0;
		if (m->n)
			qsort(m->a, m->n, sizeof(*m->a), cmp_u64);
		for (size_t j = 0; j < m->n; j++)
			if (!w || m->a[w - 1] != m->a[j])
				m->a[w++] = m->a[j];
		m->n = w;
	}
	return 0;
}

/* One record of stream copy i: packed as read, but for the HEADER and FRAMEs. */
static int pack_record(msgpack_packer *pk, const msgpack_object *r, uint64_t i,
		       const struct mod *mods, size_t nmods)
{
	const msgpack_object *v = r->via.array.ptr;
	uint32_t n = r->via.array.size;
	uint64_t mod, addr;
	if (u(&v[0]) == SD_K_HEADER && n > SD_F_HEADER_INFO &&
	    v[SD_F_HEADER_INFO].type == MSGPACK_OBJECT_MAP) {
		msgpack_pack_array(pk, n);
		for (uint32_t k = 0; k < n; k++)
			if (k == SD_F_HEADER_INFO)
				pack_info(pk, &v[k], i);
			else
				msgpack_pack_object(pk, v[k]);
		return 0;
	}
	if (frame_of(r, &mod, &addr) && mod < nmods && mods[mod].n) {
		const struct mod *m = &mods[mod];
		const uint64_t *at = bsearch(&addr, m->a, m->n, sizeof(*m->a), cmp_u64);
		addr = m->a[((size_t)(at - m->a) + i) % m->n];
		msgpack_pack_array(pk, n);
		for (uint32_t k = 0; k < n; k++)
			if (k == SD_F_FRAME_ADDR)
				msgpack_pack_uint64(pk, addr);
			else
				msgpack_pack_object(pk, v[k]);
		return 0;
	}
	return msgpack_pack_object(pk, *r);
}

static int copy(const char *in, const char *out, uint64_t i)
{
	FILE *f = fopen(in, "rb");
	if (!f)
		return die(in, strerror(errno));
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	rewind(f);
	char *buf = malloc(len > 0 ? (size_t)len : 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fclose(f);
		free(buf);
		return die(in, "cannot read it");
	}
	fclose(f);
	msgpack_sbuffer sb;
	msgpack_packer pk;
	msgpack_zone zone;
	msgpack_object *recs = NULL;
	struct mod *mods = NULL;
	size_t off = 0, nrec = 0, cap = 0, nmods = 0;
	int rc = 0;
	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_zone_init(&zone, 1 << 16);
	while (!rc && off < (size_t)len) {
		msgpack_object o;
		msgpack_unpack_return ur = msgpack_unpack(buf, (size_t)len, &off, &zone, &o);
		if (ur != MSGPACK_UNPACK_SUCCESS && ur != MSGPACK_UNPACK_EXTRA_BYTES)
			break; /* a truncated tail: the copy ends where the stream does */
		if (nrec == cap) {
			msgpack_object *g = realloc(recs, (cap = cap ? 2 * cap : 1024) * sizeof(*g));
			if (!g) {
				rc = -ENOMEM;
				break;
			}
			recs = g;
		}
		recs[nrec++] = o;
	}
	if (!rc)
		rc = collect(recs, nrec, &mods, &nmods);
	for (size_t k = 0; !rc && k < nrec; k++)
		if (recs[k].type != MSGPACK_OBJECT_ARRAY || !recs[k].via.array.size)
			rc = msgpack_pack_object(&pk, recs[k]);
		else
			rc = pack_record(&pk, &recs[k], i, mods, nmods);
	FILE *o = rc ? NULL : fopen(out, "wb");
	if (!rc && (!o || fwrite(sb.data, 1, sb.size, o) != sb.size || fclose(o)))
		rc = die(out, strerror(errno));
	else if (rc)
		rc = die(in, "out of memory");
	msgpack_zone_destroy(&zone);
	msgpack_sbuffer_destroy(&sb);
	for (size_t k = 0; k < nmods; k++)
		free(mods[k].a);
	free(mods);
	free(recs);
	free(buf);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return die("usage", "restream OUTDIR N STREAM...");
	char *end;
	unsigned long long n = strtoull(argv[2], &end, 10);
	if (*end || !n)
		return die(argv[2], "not a count of streams");
	for (unsigned long long i = 0; i < n; i++) {
		char out[4096];
		snprintf(out, sizeof out, "%s/gen%llu.sonde", argv[1], i);
		if (copy(argv[3 + i % (unsigned long long)(argc - 3)], out, i))
			return 1;
	}
	return 0;
}
