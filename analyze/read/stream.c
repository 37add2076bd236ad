/*
 * stream.c: reads a sonde stream (docs/FORMAT.md) one record at a time, for `dump`,
 * `report`, `diff` and the fuzz target. Runs in the CLI's threads, one stream per thread.
 *
 * Only regular files are read: the path is opened O_NONBLOCK (a FIFO without a writer
 * must not hang the open) and the descriptor, not the name, is checked with fstat; any
 * other kind of file (FIFO, device, socket) is refused with SD_ERR_NOTREG. A file is read
 * through a window (pread into a buffer of 1 MiB that grows, for a long record, up to
 * SD_MAX_RECORD_BYTES), never mapped or read whole: memory does not follow the file's
 * size, a file truncated while it is read ends the stream (a mapping would SIGBUS), and an
 * address-space limit does not refuse a large stream. The size is the one fstat gave at
 * open (a stream still being written is read up to there).
 *
 * Each record is first *measured* by span(), a bounds-checked scan that needs O(1) memory,
 * and only then decoded by msgpack_unpack_next() over exactly those bytes. The reason:
 * msgpack-c allocates an array's storage from its declared element count before it has
 * seen the elements, so five hostile bytes (0xdd ff ff ff ff) would ask for 96 GiB. After
 * span() accepted a record, every declared count is backed by at least one byte per
 * element and the record holds at most SD_MAX_RECORD_VALUES values, so decoding memory is
 * bounded by a constant times that.
 *
 * Invariants: s->off is always a record boundary; the window holds file bytes
 * [s->base, s->base + s->have) and s->base <= s->off; a record is returned only if it is
 * a complete msgpack array whose first element is a positive integer; an error leaves
 * s->off at the failing record and records its offset in s->err_off.
 */
#define _GNU_SOURCE /* O_PATH */
#include "analyze/read/read.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Length of the msgpack value at p[0..len): 0 and *out, SD_ERR_TRUNC if the bytes end
 * inside it, SD_ERR_CORRUPT (and *why) on a byte that starts no msgpack value (0xc1) or
 * when the value declares more than SD_MAX_RECORD_VALUES values in all. */
static int span(const uint8_t *p, size_t len, size_t *out, const char **why)
{
	size_t i = 0;
	uint64_t pending = 1; /* values still to be read */
	uint64_t declared = 1; /* values declared so far, nested ones included */

	while (pending) {
		if (declared > SD_MAX_RECORD_VALUES) {
			*why = "a record declares more than 1048576 values: the reader's limit, "
			       "docs/FORMAT.md";
			return SD_ERR_CORRUPT;
		}
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
			declared += 2u * (b & 0x0f);
			continue;
		}
		if (b <= 0x9f) {
			pending += b & 0x0f;
			declared += b & 0x0f;
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
			default:                                              /* 0xc1 */
				*why = "invalid msgpack";
				return SD_ERR_CORRUPT;
			}
		}
		if (lenbytes) {
			if ((size_t)lenbytes > len - i)
				return SD_ERR_TRUNC;
			for (int k = 0; k < lenbytes; k++)
				count = count << 8 | p[i++];
			if (mult) {
				pending += count * (uint64_t)mult;
				declared += count * (uint64_t)mult;
			} else
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
	s->have = len;
	s->fd = -1;
	msgpack_unpacked_init(&s->up);
}

/* Bytes of the window from the current record on, and where they are. */
static inline size_t avail(const struct sd_stream *s)
{
	return s->base + s->have - s->off;
}

static inline const uint8_t *at(const struct sd_stream *s)
{
	return s->data + (s->off - s->base);
}

/* Does the window reach the end of the stream? (always, for memory) */
static inline int all_read(const struct sd_stream *s)
{
	return s->fd < 0 || s->base + s->have >= s->len_bytes;
}

/* Move the current record to the front of the window (growing it to cap_bytes first if
 * that is larger) and read as much as fits. 0 or -errno. A file that got shorter since
 * open ends where the data ends. */
static int refill(struct sd_stream *s, size_t cap_bytes)
{
	size_t keep = avail(s);

	if (cap_bytes > s->cap) {
		uint8_t *nb = malloc(cap_bytes);
		if (!nb)
			return -ENOMEM;
		if (keep)
			memcpy(nb, at(s), keep);
		free(s->buf);
		s->buf = nb;
		s->cap = cap_bytes;
	} else if (keep && s->off != s->base) {
		memmove(s->buf, at(s), keep);
	}
	s->data = s->buf;
	s->base = s->off;
	s->have = keep;
	while (s->have < s->cap && s->base + s->have < s->len_bytes) {
		size_t want = s->cap - s->have;
		if (want > s->len_bytes - s->base - s->have)
			want = s->len_bytes - s->base - s->have;
		ssize_t r = pread(s->fd, s->buf + s->have, want, (off_t)(s->base + s->have));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0) { /* truncated under us: the stream ends here */
			s->len_bytes = s->base + s->have;
			break;
		}
		s->have += (size_t)r;
	}
	return 0;
}

int sd_open_path(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);
	if (fd >= 0 || errno != ENAMETOOLONG)
		return fd;
	/* Longer than the kernel takes in one call (PATH_MAX): the directories leading to
	 * it in pieces of at most PATH_MAX - 1 bytes, each opened relative to the one
	 * before (as writer/outdir.c makes them), then the rest. */
	char *piece = malloc(PATH_MAX);
	int dir = AT_FDCWD, e = ENOMEM;
	const char *p = path;
	if (!piece)
		goto out;
	while (strlen(p) >= PATH_MAX) {
		const char *cut = p + PATH_MAX - 1;
		while (cut > p && *cut != '/')
			cut--;
		if (cut == p && *p != '/') { /* one name longer than PATH_MAX */
			e = ENAMETOOLONG;
			goto out;
		}
		size_t n = cut == p ? 1 : (size_t)(cut - p); /* "/" alone when p starts there */
		memcpy(piece, p, n);
		piece[n] = 0;
		int nd = openat(dir, piece, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (nd < 0) {
			e = errno;
			goto out;
		}
		if (dir != AT_FDCWD)
			close(dir);
		dir = nd;
		for (p += n; *p == '/'; p++)
			;
	}
	fd = openat(dir, *p ? p : ".", flags | O_CLOEXEC);
	e = errno;
out:
	if (dir != AT_FDCWD)
		close(dir);
	free(piece);
	errno = e;
	return fd;
}

int sd_stream_open(struct sd_stream *s, const char *path)
{
	struct stat st;
	/* O_NONBLOCK: opening a FIFO with no writer must not wait for one */
	int fd = sd_open_path(path, O_RDONLY | O_NONBLOCK);
	int err = 0;

	sd_stream_init_mem(s, path, NULL, 0);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto fail;
	}
	s->mode = (unsigned)st.st_mode;
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = SD_ERR_NOTREG;
		goto fail;
	}
	s->fd = fd;
	s->len_bytes = (size_t)st.st_size;
	s->have = 0;
	err = refill(s, SD_WINDOW_BYTES);
	if (err)
		sd_stream_close(s);
	return err;
fail:
	close(fd);
	return err;
}

void sd_stream_close(struct sd_stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	msgpack_unpacked_destroy(&s->up);
	msgpack_unpacked_init(&s->up);
	s->fd = -1;
	s->buf = NULL;
	s->data = NULL;
	s->cap = s->have = 0;
}

static int fail(struct sd_stream *s, int err, const char *why)
{
	s->err_off = s->off;
	s->err_why = why;
	return err;
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
	const uint8_t *p = at(s), *end = p + avail(s);
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
	s->off += (size_t)(p - at(s));
	s->nrecords++;
	return 1;
}

int sd_stream_next(struct sd_stream *s, struct sd_record *rec)
{
	size_t n, used = 0;
	const char *why = "invalid msgpack";
	int err;

	if (s->off >= s->len_bytes)
		return 0;
	if (avail(s) < SD_REFILL_BYTES && !all_read(s)) {
		if ((err = refill(s, s->cap)))
			return fail(s, err, strerror(-err));
		if (s->off >= s->len_bytes) /* the file got shorter */
			return 0;
	}
	if (next_fast(s, rec))
		return 1;
	for (;;) {
		err = span(at(s), avail(s), &n, &why);
		if (err != SD_ERR_TRUNC || all_read(s))
			break;
		/* the record goes on past the window: read on, in a larger one if need be */
		size_t cap = s->cap;
		if (avail(s) == cap) {
			if (cap >= SD_MAX_RECORD_BYTES)
				return fail(s, SD_ERR_CORRUPT, "a record longer than 16 MiB: the "
					    "reader's limit, docs/FORMAT.md");
			cap = cap * 2 > SD_MAX_RECORD_BYTES ? SD_MAX_RECORD_BYTES : cap * 2;
		}
		if ((err = refill(s, cap)))
			return fail(s, err, strerror(-err));
	}
	if (err == SD_ERR_TRUNC)
		return fail(s, err, "the data ends inside a record");
	if (err)
		return fail(s, err, why);
	if (msgpack_unpack_next(&s->up, (const char *)at(s), n, &used) !=
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

/* Do the bytes p[0..len) begin like an encoded [SD_K_HEADER, SD_FORMAT_MAGIC, ...]
 * (a fixarray of 4 or more, a positive fixint, a fixstr of 5)? */
static int looks_like_header(const uint8_t *p, size_t len)
{
	_Static_assert(sizeof SD_FORMAT_MAGIC - 1 == 5 && SD_K_HEADER < 0x80, "encoding below");
	static const uint8_t magic[] = { SD_K_HEADER, 0xa0 | 5, 's', 'o', 'n', 'd', 'e' };

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
	if (r == SD_ERR_TRUNC && looks_like_header(s->data, s->have))
		return r;
	if (r != 1 || rec->kind != SD_K_HEADER ||
	    sd_rec_str(rec, SD_F_HEADER_MAGIC, &magic, &mlen) || mlen != sizeof SD_FORMAT_MAGIC - 1 ||
	    memcmp(magic, SD_FORMAT_MAGIC, mlen) != 0 ||
	    sd_rec_u64(rec, SD_F_HEADER_VERSION, &s->version))
		return fail(s, SD_ERR_FOREIGN, "not a sonde stream");
	if (s->version != SD_FORMAT_VERSION)
		return fail(s, SD_ERR_VERSION, "unsupported version");
	return 0;
}

int sd_stream_perror(const struct sd_stream *s, const char *name, int err)
{
	switch (err) {
	case SD_ERR_EMPTY:
		return sd_error(SD_EXIT_BADINPUT, "%s: empty file (not a sonde stream; the profiled "
				"process wrote nothing)", name);
	case SD_ERR_FOREIGN:
		return sd_error(SD_EXIT_BADINPUT, "%s: not a sonde stream (expected a msgpack HEADER "
				"record at byte 0)", name);
	case SD_ERR_VERSION:
		return sd_error(SD_EXIT_BADINPUT, "%s: stream format version %llu is not supported "
				"(this sonde reads version 1; use a matching sonde)", name,
				(unsigned long long)s->version);
	case SD_ERR_TRUNC:
		return sd_error(SD_EXIT_BADINPUT, "%s: truncated at byte %zu (no complete HEADER "
				"record; the process may have died at startup)", name, s->err_off);
	case SD_ERR_NOTREG:
		return sd_notreg_perror(name, s->mode);
	case SD_ERR_CORRUPT:
		return sd_error(SD_EXIT_BADINPUT, "%s: corrupt record at byte %zu (%s)", name,
				s->err_off, s->err_why ? s->err_why : "bad record");
	default:
		return sd_error(SD_EXIT_IO, "%s: %s", name, strerror(-err));
	}
}

int sd_notreg_perror(const char *name, unsigned mode)
{
	const char *what = S_ISFIFO(mode) ? "a FIFO" : S_ISCHR(mode) ? "a character device"
			 : S_ISBLK(mode) ? "a block device" : S_ISSOCK(mode) ? "a socket"
			 : S_ISDIR(mode) ? "a directory" : "not a file";

	return sd_error(SD_EXIT_BADINPUT, "%s: not a regular file (%s; give .sonde files "
			"written by 'sonde run', or their directory; to read a stream from a pipe, "
			"save it to a file first)", name, what);
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

int sd_rec_f64(const struct sd_record *r, uint32_t i, double *out)
{
	if (i >= r->n)
		return -EINVAL;
	const msgpack_object *o = &r->v[i];
	if (o->type == MSGPACK_OBJECT_FLOAT64 || o->type == MSGPACK_OBJECT_FLOAT32)
		*out = o->via.f64;
	else if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		*out = (double)o->via.u64;
	else
		return -EINVAL;
	return 0;
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
