/*
 * stream.c: reads a sonde stream (docs/FORMAT.md) one record at a time, for `dump`,
 * `report` and the fuzz target. Runs in the CLI's only thread.
 *
 * The file is mapped (or read whole when it is not a regular file) and each record is
 * first *measured* by span(), a bounds-checked scan that needs O(1) memory, and only then
 * decoded by msgpack_unpack_next() over exactly those bytes. The reason: msgpack-c
 * allocates an array's storage from its declared element count before it has seen the
 * elements, so five hostile bytes (0xdd ff ff ff ff) would ask for 96 GiB. After span()
 * accepted a record, every declared count is backed by at least one byte per element,
 * so decoding memory is bounded by a constant times the record's size.
 *
 * Invariants: s->off is always a record boundary; a record is returned only if it is a
 * complete msgpack array whose first element is a positive integer; an error leaves
 * s->off at the failing record and records its offset in s->err_off.
 */
#include "analyze/analyze.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Length of the msgpack value at p[0..len): 0 and *out, SD_ERR_TRUNC if the bytes end
 * inside it, SD_ERR_CORRUPT on a byte that starts no msgpack value (0xc1). */
static int span(const uint8_t *p, size_t len, size_t *out)
{
	size_t i = 0;
	uint64_t pending = 1; /* values still to be read */

	while (pending) {
		if (pending > len - i) /* every value takes at least one byte */
			return SD_ERR_TRUNC;
		uint8_t b = p[i++];
		pending--;
		uint64_t skip = 0, count = 0;
		int lenbytes = 0, mult = 0; /* mult: 0 bytes to skip, 1 array, 2 map */
		int extra = 0;              /* ext type byte */

		if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
			continue;
		if (b <= 0x8f) {
			pending += 2u * (b & 0x0f);
			continue;
		}
		if (b <= 0x9f) {
			pending += b & 0x0f;
			continue;
		}
		if (b <= 0xbf) {
			skip = b & 0x1f;
		} else {
			switch (b) {
			case 0xc4: case 0xd9: lenbytes = 1; break;            /* bin8, str8 */
			case 0xc5: case 0xda: lenbytes = 2; break;            /* bin16, str16 */
			case 0xc6: case 0xdb: lenbytes = 4; break;            /* bin32, str32 */
			case 0xc7: lenbytes = 1; extra = 1; break;            /* ext8 */
			case 0xc8: lenbytes = 2; extra = 1; break;            /* ext16 */
			case 0xc9: lenbytes = 4; extra = 1; break;            /* ext32 */
			case 0xca: skip = 4; break;                           /* float32 */
			case 0xcb: skip = 8; break;                           /* float64 */
			case 0xcc: case 0xd0: skip = 1; break;                /* (u)int8 */
			case 0xcd: case 0xd1: skip = 2; break;
			case 0xce: case 0xd2: skip = 4; break;
			case 0xcf: case 0xd3: skip = 8; break;
			case 0xd4: skip = 2; break;                           /* fixext 1..16 */
			case 0xd5: skip = 3; break;
			case 0xd6: skip = 5; break;
			case 0xd7: skip = 9; break;
			case 0xd8: skip = 17; break;
			case 0xdc: lenbytes = 2; mult = 1; break;             /* array16 */
			case 0xdd: lenbytes = 4; mult = 1; break;             /* array32 */
			case 0xde: lenbytes = 2; mult = 2; break;             /* map16 */
			case 0xdf: lenbytes = 4; mult = 2; break;             /* map32 */
			default: return SD_ERR_CORRUPT;                       /* 0xc1 */
			}
		}
		if (lenbytes) {
			if ((size_t)lenbytes > len - i)
				return SD_ERR_TRUNC;
			for (int k = 0; k < lenbytes; k++)
				count = count << 8 | p[i++];
			if (mult)
				pending += count * (uint64_t)mult;
			else
				skip = count + (uint64_t)extra;
		}
		if (skip > len - i)
			return SD_ERR_TRUNC;
		i += skip;
	}
	*out = i;
	return 0;
}

void sd_stream_init_mem(struct sd_stream *s, const char *name, const void *data, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->name = name;
	s->data = data;
	s->len_bytes = len;
	msgpack_unpacked_init(&s->up);
}

/* Read a non-regular file (pipe, /dev/stdin) whole. */
static int read_all(int fd, uint8_t **out, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			uint8_t *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;
			free(buf);
			return err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*out = buf;
	*len = n;
	return 0;
}

int sd_stream_open(struct sd_stream *s, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int err = 0;

	sd_stream_init_mem(s, path, NULL, 0);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto out;
	}
	if (S_ISREG(st.st_mode)) {
		if (st.st_size > 0) {
			void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (m == MAP_FAILED) {
				err = -errno;
				goto out;
			}
			s->data = m;
			s->len_bytes = (size_t)st.st_size;
			s->owned = 1;
		}
	} else {
		uint8_t *buf = NULL;
		size_t n = 0;
		err = read_all(fd, &buf, &n);
		if (err == 0) {
			s->data = buf;
			s->len_bytes = n;
			s->owned = 2;
		}
	}
out:
	close(fd);
	return err;
}

void sd_stream_close(struct sd_stream *s)
{
	if (s->owned == 1)
		munmap((void *)s->data, s->len_bytes);
	else if (s->owned == 2)
		free((void *)s->data);
	msgpack_unpacked_destroy(&s->up);
	s->data = NULL;
	s->owned = 0;
}

static int fail(struct sd_stream *s, int err, const char *why)
{
	s->err_off = s->off;
	s->err_why = why;
	return err;
}

/* A mapped stream is read once, front to back: the pages behind the reader
 * are given back, so memory follows what is kept (the aggregates), not the
 * file's size. Only whole pages well behind the current record. */
static void release(struct sd_stream *s)
{
	size_t page = 4096;
	size_t upto = (s->off - (1u << 20)) & ~(page - 1);
	if (upto > s->released) {
		madvise((void *)(s->data + s->released), upto - s->released, MADV_DONTNEED);
		s->released = upto;
	}
}

/* Reads one msgpack unsigned integer at *p (fixint, uint8/16/32/64). */
static inline int read_uint(const uint8_t **pp, const uint8_t *end, uint64_t *x)
{
	const uint8_t *p = *pp;
	unsigned len;
	if (p >= end)
		return 0;
	if (*p <= 0x7f) {
		*x = *p;
		*pp = p + 1;
		return 1;
	}
	switch (*p) {
	case 0xcc: len = 1; break;
	case 0xcd: len = 2; break;
	case 0xce: len = 4; break;
	case 0xcf: len = 8; break;
	default: return 0;
	}
	if ((size_t)(end - p) < 1 + len)
		return 0;
	uint64_t v = 0;
	for (unsigned i = 1; i <= len; i++)
		v = v << 8 | p[i];
	*x = v;
	*pp = p + 1 + len;
	return 1;
}

/* The fast path for the records that make up nearly all of a stream
 * (SAMPLE, FRAME, REGION): a short array of unsigned integers, with at most
 * one nested array of them. Decoded straight into s->fast, no allocation;
 * anything else (or a record cut short) returns 0 and takes msgpack-c's
 * general path, which also reports the errors. */
static int next_fast(struct sd_stream *s, struct sd_record *rec)
{
	const uint8_t *p = s->data + s->off, *end = s->data + s->len_bytes;
	if ((*p & 0xf0) != 0x90)
		return 0;
	unsigned n = *p++ & 0x0f, nested = 0;
	if (n == 0)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		msgpack_object *o = &s->fast[i];
		if (read_uint(&p, end, &o->via.u64)) {
			o->type = MSGPACK_OBJECT_POSITIVE_INTEGER;
			continue;
		}
		if (p >= end || (*p & 0xf0) != 0x90 || nested)
			return 0;
		unsigned m = *p++ & 0x0f;
		for (unsigned j = 0; j < m; j++) {
			if (!read_uint(&p, end, &s->fastn[j].via.u64))
				return 0;
			s->fastn[j].type = MSGPACK_OBJECT_POSITIVE_INTEGER;
		}
		o->type = MSGPACK_OBJECT_ARRAY;
		o->via.array.size = m;
		o->via.array.ptr = s->fastn;
		nested = 1;
	}
	if (s->fast[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER || s->fast[0].via.u64 == 0)
		return 0;
	rec->offset = s->off;
	rec->kind = s->fast[0].via.u64;
	rec->v = s->fast;
	rec->n = n;
	s->off = (size_t)(p - s->data);
	s->nrecords++;
	return 1;
}

int sd_stream_next(struct sd_stream *s, struct sd_record *rec)
{
	size_t n, used = 0;

	if (s->off >= s->len_bytes)
		return 0;
	if (s->owned == 1 && s->off - s->released >= (64u << 20))
		release(s);
	if (next_fast(s, rec))
		return 1;
	int err = span(s->data + s->off, s->len_bytes - s->off, &n);
	if (err == SD_ERR_TRUNC)
		return fail(s, err, "the data ends inside a record");
	if (err)
		return fail(s, err, "invalid msgpack");
	if (msgpack_unpack_next(&s->up, (const char *)s->data + s->off, n, &used) !=
	    MSGPACK_UNPACK_SUCCESS || used != n)
		return fail(s, SD_ERR_CORRUPT, "msgpack nested too deeply");
	const msgpack_object *o = &s->up.data;
	if (o->type != MSGPACK_OBJECT_ARRAY || o->via.array.size == 0 ||
	    o->via.array.ptr[0].type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    o->via.array.ptr[0].via.u64 == 0)
		return fail(s, SD_ERR_CORRUPT, "not an array starting with a record kind");
	rec->offset = s->off;
	rec->kind = o->via.array.ptr[0].via.u64;
	rec->v = o->via.array.ptr;
	rec->n = o->via.array.size;
	s->off += n;
	s->nrecords++;
	return 1;
}

/* Do the bytes p[0..len) begin like an encoded [1, "sonde", ...]? */
static int looks_like_header(const uint8_t *p, size_t len)
{
	static const uint8_t magic[] = { 0x01, 0xa5, 's', 'o', 'n', 'd', 'e' };

	if (len == 0 || p[0] < 0x94 || p[0] > 0x9f)
		return 0;
	for (size_t i = 1; i < len && i <= sizeof(magic); i++)
		if (p[i] != magic[i - 1])
			return 0;
	return 1;
}

int sd_stream_header(struct sd_stream *s, struct sd_record *rec)
{
	const char *magic;
	uint32_t mlen;

	if (s->len_bytes == 0)
		return fail(s, SD_ERR_EMPTY, "empty file");
	int r = sd_stream_next(s, rec);
	if (r == SD_ERR_TRUNC && looks_like_header(s->data, s->len_bytes))
		return r;
	if (r != 1 || rec->kind != SD_K_HEADER || sd_rec_str(rec, 1, &magic, &mlen) ||
	    mlen != 5 || memcmp(magic, "sonde", 5) != 0 || sd_rec_u64(rec, 2, &s->version))
		return fail(s, SD_ERR_FOREIGN, "not a sonde stream");
	if (s->version != 1)
		return fail(s, SD_ERR_VERSION, "unsupported version");
	return 0;
}

int sd_stream_perror(const struct sd_stream *s, const char *name, int err)
{
	switch (err) {
	case SD_ERR_EMPTY:
		fprintf(stderr, "sonde: %s: empty file (not a sonde stream; the profiled process "
			"wrote nothing)\n", name);
		return SD_EXIT_BADINPUT;
	case SD_ERR_FOREIGN:
		fprintf(stderr, "sonde: %s: not a sonde stream (expected a msgpack HEADER record "
			"at byte 0)\n", name);
		return SD_EXIT_BADINPUT;
	case SD_ERR_VERSION:
		fprintf(stderr, "sonde: %s: stream format version %llu is not supported (this "
			"sonde reads version 1; use a matching sonde)\n", name,
			(unsigned long long)s->version);
		return SD_EXIT_BADINPUT;
	case SD_ERR_TRUNC:
		fprintf(stderr, "sonde: %s: truncated at byte %zu (no complete HEADER record; the "
			"process may have died at startup)\n", name, s->err_off);
		return SD_EXIT_BADINPUT;
	case SD_ERR_CORRUPT:
		fprintf(stderr, "sonde: %s: corrupt record at byte %zu (%s)\n", name, s->err_off,
			s->err_why ? s->err_why : "bad record");
		return SD_EXIT_BADINPUT;
	default:
		fprintf(stderr, "sonde: %s: %s\n", name, strerror(-err));
		return SD_EXIT_IO;
	}
}

int sd_obj_u64(const msgpack_object *o, uint64_t *out)
{
	if (!o || o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		return -EINVAL;
	*out = o->via.u64;
	return 0;
}

int sd_rec_u64_slow(const struct sd_record *r, uint32_t i, uint64_t *out)
{
	return i < r->n ? sd_obj_u64(&r->v[i], out) : -EINVAL;
}

int sd_rec_str(const struct sd_record *r, uint32_t i, const char **p, uint32_t *len)
{
	if (i >= r->n || r->v[i].type != MSGPACK_OBJECT_STR)
		return -EINVAL;
	*p = r->v[i].via.str.ptr;
	*len = r->v[i].via.str.size;
	return 0;
}

const msgpack_object *sd_map_get(const msgpack_object *map, const char *key)
{
	size_t klen = strlen(key);

	if (!map || map->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (uint32_t i = 0; i < map->via.map.size; i++) {
		const msgpack_object *k = &map->via.map.ptr[i].key;
		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == klen &&
		    memcmp(k->via.str.ptr, key, klen) == 0)
			return &map->via.map.ptr[i].val;
	}
	return NULL;
}

char *sd_obj_strdup(const msgpack_object *o)
{
	if (!o || o->type != MSGPACK_OBJECT_STR)
		return NULL;
	char *s = malloc(o->via.str.size + 1);
	if (s) {
		if (o->via.str.size)
			memcpy(s, o->via.str.ptr, o->via.str.size);
		s[o->via.str.size] = 0;
	}
	return s;
}
