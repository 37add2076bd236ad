/*
 * analyze/read/read.h: reading a docs/FORMAT.md stream record by record (stream.c:
 * bounded memory, byte offsets, the reader's errors) and the record's field accessors.
 * Below the profile; includes only util.
 */
#ifndef SONDE_ANALYZE_READ_H
#define SONDE_ANALYZE_READ_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <msgpack.h>

#include "format/format.h"
#include "analyze/util/util.h"

/* ---- stream.c ---------------------------------------------------------------------- */

/* Errors of the reader beyond plain -errno from open/read. */
#define SD_ERR_TRUNC  (-EPIPE)   /* the data ends inside a record */
#define SD_ERR_CORRUPT (-EBADMSG) /* bytes that are not msgpack, or a record not [kind, ...] */
#define SD_ERR_FOREIGN (-EPROTO)  /* first record is not a sonde HEADER */
#define SD_ERR_EMPTY  (-ENODATA)  /* zero bytes */
#define SD_ERR_VERSION (-EPROTONOSUPPORT) /* a sonde HEADER of another format version */
#define SD_ERR_NOTREG (-EMEDIUMTYPE) /* not a regular file (FIFO, device, socket) */

/* The reader's bounds (docs/FORMAT.md, "Size"): the window a file is read through, the
 * window's low-water mark, and the largest record it accepts, in bytes and in values
 * (every array element or map key and value, nested ones included). */
#define SD_WINDOW_BYTES (1u << 20)
#define SD_REFILL_BYTES (64u << 10)
#define SD_MAX_RECORD_BYTES (16u << 20)
#define SD_MAX_RECORD_VALUES (1u << 20)

/* A reader over one stream. Fields are read-only for callers. */
struct sd_stream {
	const char *name;        /* for messages; not owned */
	const uint8_t *data;     /* the window: bytes [base, base + have) of the stream (a
				  * file: buf; memory: the caller's, all of it) */
	size_t len_bytes;        /* size of the stream (a file: fstat at open) */
	size_t base, have;
	uint8_t *buf;            /* a file's window (owned), cap bytes */
	size_t cap;
	int fd;                  /* a file's descriptor, -1 for memory */
	unsigned mode;           /* st_mode of the file opened (SD_ERR_NOTREG says which) */
	size_t off;              /* byte offset of the next record */
	uint64_t nrecords;       /* records returned so far */
	size_t err_off;          /* offset of the record that failed (after an error) */
	const char *err_why;     /* what was wrong with it (static string) */
	uint64_t version;        /* from the HEADER */
	msgpack_unpacked up;     /* storage of the last record returned */
	msgpack_object fast[16]; /* the last record, when decoded on the fast path */
	msgpack_object fastn[16];
	char why_buf[160];       /* err_why when it names a field (profile.c) */
};

/* One record: valid until the next sd_stream_next() or sd_stream_close(). */
struct sd_record {
	size_t offset;           /* byte offset of the record in the stream */
	uint64_t kind;
	const msgpack_object *v; /* the whole array: v[0] is the kind */
	uint32_t n;              /* number of elements */
};

/* open(path, flags | O_CLOEXEC) for a path of any length: one longer than PATH_MAX (the
 * runtime writes into such directories, with openat) is opened by pieces, each
 * relative to the directory before it. A descriptor, or -1 and errno as open's. */
int sd_open_path(const char *path, int flags);
/* Open `path` (sd_open_path) without blocking (O_NONBLOCK) and check the descriptor: a regular file is
 * read through a bounded window; a directory is -EISDIR and anything else SD_ERR_NOTREG
 * (s->mode says what it is). 0 or -errno. Call sd_stream_close in every case. */
int sd_stream_open(struct sd_stream *s, const char *path);
/* Read from caller memory `data` (kept, not copied). Never fails. */
void sd_stream_init_mem(struct sd_stream *s, const char *name, const void *data, size_t len);
/* Next record: 1 and *rec filled, 0 at a clean end, SD_ERR_TRUNC, SD_ERR_CORRUPT (also a
 * record past SD_MAX_RECORD_BYTES or SD_MAX_RECORD_VALUES), -errno (read error, ENOMEM).
 * After an error the stream stays at the failing record (err_off). */
int sd_stream_next(struct sd_stream *s, struct sd_record *rec);
/* Read the first record and check it is a sonde HEADER: 0, SD_ERR_EMPTY, SD_ERR_FOREIGN,
 * SD_ERR_TRUNC (bytes are the start of a header), SD_ERR_CORRUPT does not occur here. */
int sd_stream_header(struct sd_stream *s, struct sd_record *rec);
void sd_stream_close(struct sd_stream *s);
/* Say `sonde: NAME: <why> (<hint>)` for an open/header/next error other than
 * truncation; returns it said (util.h), with the exit code that goes with it. */
int sd_stream_perror(const struct sd_stream *s, const char *name, int err);
/* Say `sonde: NAME: not a regular file (<what it is>; <hint>)` for a file of st_mode
 * `mode`; returns SD_SAID(SD_EXIT_BADINPUT). */
int sd_notreg_perror(const char *name, unsigned mode);

/* Field accessors: 0 and *out set if element i exists with the right type, else -EINVAL. */
int sd_rec_u64_slow(const struct sd_record *r, uint32_t i, uint64_t *out);
/* Element i as a number (a float, or an unsigned integer): 0, or -EINVAL. */
int sd_rec_f64(const struct sd_record *r, uint32_t i, double *out);
/* Element i as an unsigned integer: 0, or -EINVAL (absent, or not one).
 * Inline: it is called for every field of every sample. */
static inline int sd_rec_u64(const struct sd_record *r, uint32_t i, uint64_t *out)
{
	if (i < r->n && r->v[i].type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		*out = r->v[i].via.u64;
		return 0;
	}
	return sd_rec_u64_slow(r, i, out);
}
int sd_rec_str(const struct sd_record *r, uint32_t i, const char **p, uint32_t *len);
/* Look up key `key` in a msgpack map; NULL if absent or obj is not a map. */
const msgpack_object *sd_map_get(const msgpack_object *map, const char *key);
/* Copy a str object into a fresh NUL-terminated string (NULL if not a str). Caller frees. */
char *sd_obj_strdup(const msgpack_object *o);
int sd_obj_u64(const msgpack_object *o, uint64_t *out);

#endif
