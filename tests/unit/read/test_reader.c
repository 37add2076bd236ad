/* test_reader.c - unit.reader: the analyzer's stream reader (analyze/read/stream.c)
 * and the record checks over it (analyze/profile.c sd_profile_add), on
 * streams built here record by record with msgpack-c, against docs/FORMAT.md
 * ("Records", "Size"): a cut stream gives its whole records and then "the
 * data ends inside a record" at the cut record's offset; lengths and counts
 * past the reader's bounds are refused, never allocated; records of the
 * wrong shape or field types are refused with the file, the offset and the
 * field; no input crashes it (run under ASan in CI).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze/analyze.h"
#include "tests/unit/unit.h"

/* ---- building streams ---------------------------------------------------- */

#define MAX_RECS 64

struct builder {
	msgpack_sbuffer sb;
	msgpack_packer pk;
	size_t start[MAX_RECS + 1]; /* record offsets; start[n] = the end */
	uint64_t kind[MAX_RECS];
	size_t n;
};

static void b_init(struct builder *b)
{
	memset(b, 0, sizeof *b);
	msgpack_sbuffer_init(&b->sb);
	msgpack_packer_init(&b->pk, &b->sb, msgpack_sbuffer_write);
}

static void b_fini(struct builder *b)
{
	msgpack_sbuffer_destroy(&b->sb);
}

/* A record begins (kind `kind`, or 0 for a value that is not a record). */
static msgpack_packer *rec(struct builder *b, uint64_t kind)
{
	CHECK(b->n < MAX_RECS);
	b->start[b->n] = b->sb.size;
	b->kind[b->n++] = kind;
	return &b->pk;
}

static void b_end(struct builder *b)
{
	b->start[b->n] = b->sb.size;
}

static void pstr(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

static void raw(struct builder *b, const void *p, size_t n)
{
	msgpack_sbuffer_write(&b->sb, p, n);
}

/* HEADER [1, "sonde", 1, info] with pid, host, exe and one cpu-time source.
 * `bad_pid`: pid as a string. */
static void header(struct builder *b, int bad_pid)
{
	msgpack_packer *pk = rec(b, SD_K_HEADER);
	msgpack_pack_array(pk, 4);
	msgpack_pack_uint64(pk, 1);
	pstr(pk, "sonde");
	msgpack_pack_uint64(pk, 1);
	msgpack_pack_map(pk, 4);
	pstr(pk, "pid");
	if (bad_pid)
		pstr(pk, "42");
	else
		msgpack_pack_uint64(pk, 42);
	pstr(pk, "host");
	pstr(pk, "testhost");
	pstr(pk, "exe");
	pstr(pk, "/usr/bin/unit-test");
	pstr(pk, "sources");
	msgpack_pack_array(pk, 1);
	msgpack_pack_map(pk, 5);
	pstr(pk, "name");
	pstr(pk, "cpu-time");
	pstr(pk, "spec");
	pstr(pk, "cpu-time@1ms");
	pstr(pk, "unit");
	pstr(pk, "ns");
	pstr(pk, "period");
	msgpack_pack_uint64(pk, 1000000);
	pstr(pk, "mechanism");
	pstr(pk, "perf_event:task-clock");
}

static void u64s(struct builder *b, uint64_t kind, unsigned n, const uint64_t *v)
{
	msgpack_packer *pk = rec(b, kind);
	msgpack_pack_array(pk, n + 1);
	msgpack_pack_uint64(pk, kind);
	for (unsigned i = 0; i < n; i++)
		msgpack_pack_uint64(pk, v[i]);
}

/* A small valid stream: header, a thread, two frames, three samples (one with
 * flags, one with a large dt), a note, an end. */
static void good_stream(struct builder *b)
{
	b_init(b);
	header(b, 0);
	msgpack_packer *pk = rec(b, SD_K_THREAD);
	msgpack_pack_array(pk, 5);
	msgpack_pack_uint64(pk, SD_K_THREAD);
	msgpack_pack_uint64(pk, 1);
	msgpack_pack_uint64(pk, 4242);
	msgpack_pack_uint64(pk, 1000);
	pstr(pk, "main");
	u64s(b, SD_K_FRAME, 4, (uint64_t[]){1, 0, 0, 0x401000});
	u64s(b, SD_K_FRAME, 4, (uint64_t[]){2, 1, 0, 0x402000});
	u64s(b, SD_K_SAMPLE, 5, (uint64_t[]){1, 1000000, 0, 2, 1});
	pk = rec(b, SD_K_NOTE);
	msgpack_pack_array(pk, 3);
	msgpack_pack_uint64(pk, SD_K_NOTE);
	msgpack_pack_uint64(pk, 2000);
	pstr(pk, "sonde: a note");
	u64s(b, SD_K_SAMPLE, 6, (uint64_t[]){1, 1000000, 0, 1, 3, 0});
	u64s(b, SD_K_SAMPLE, 5, (uint64_t[]){1, 5000000000ull, 0, 2, 1});
	pk = rec(b, SD_K_END);
	msgpack_pack_array(pk, 4);
	msgpack_pack_uint64(pk, SD_K_END);
	msgpack_pack_uint64(pk, 9000000000ull);
	pstr(pk, "exit");
	msgpack_pack_map(pk, 1);
	pstr(pk, "samples");
	msgpack_pack_uint64(pk, 3);
	b_end(b);
}

/* ---- reading -------------------------------------------------------------- */

/* sd_profile_add over bytes; its result, *bad_off and the samples merged. */
static int profile_mem(const void *data, size_t len, size_t *bad_off, uint64_t *samples)
{
	struct sd_profile p;
	struct sd_stream s;
	CHECK_EQ(sd_profile_init(&p, SD_SYM_ADDRESSES), 0);
	sd_stream_init_mem(&s, "mem.sonde", data, len);
	*bad_off = (size_t)-1;
	int r = sd_profile_add(&p, &s, bad_off);
	if (samples)
		*samples = p.samples_read;
	sd_stream_close(&s);
	sd_profile_fini(&p);
	return r;
}

/* The lines said through the log sink (common/log.h) while perror_line runs. */
static char said[1024];
static int nsaid;

static void keep_said(const char *line, size_t len)
{
	CHECK(len < sizeof said && strlen(line) == len);
	memcpy(said, line, len + 1);
	nsaid++;
}

/* What sd_stream_perror says for s and err: the line, without its newline. */
static char *perror_line(const struct sd_stream *s, const char *name, int err, int *exit_code)
{
	nsaid = 0;
	sd_log_set(keep_said, 1);
	*exit_code = sd_stream_perror(s, name, err);
	sd_log_set(NULL, 0);
	CHECK_EQ(nsaid, 1); /* one line */
	CHECK(!strchr(said, '\n'));
	return said;
}

/* Every record of the good stream, in order, at its offset, then a clean end. */
static void case_records(void)
{
	struct builder b;
	good_stream(&b);
	struct sd_stream s;
	struct sd_record r;
	sd_stream_init_mem(&s, "mem.sonde", b.sb.data, b.sb.size);
	CHECK_EQ(sd_stream_header(&s, &r), 0);
	CHECK_EQ(s.version, 1);
	CHECK_EQ(r.offset, 0);
	for (size_t i = 1; i < b.n; i++) {
		CHECK_EQ(sd_stream_next(&s, &r), 1);
		CHECK_EQ(r.offset, b.start[i]);
		CHECK_EQ(r.kind, b.kind[i]);
		CHECK_EQ(r.v[0].via.u64, b.kind[i]);
		CHECK_EQ(s.off, b.start[i + 1]);
	}
	CHECK_EQ(sd_stream_next(&s, &r), 0);
	CHECK_EQ(sd_stream_next(&s, &r), 0);
	CHECK_EQ(s.nrecords, b.n);
	sd_stream_close(&s);

	size_t bad;
	uint64_t samples;
	CHECK_EQ(profile_mem(b.sb.data, b.sb.size, &bad, &samples), 0);
	CHECK_EQ(samples, 3);
	b_fini(&b);
}

/* Every prefix of the good stream: the records that end inside it, in order;
 * then a clean end on a record boundary, else SD_ERR_TRUNC at the offset of
 * the record cut (which stays the current one). The profile merges the valid
 * prefix (1: truncated) and exactly its samples. */
static void case_prefixes(void)
{
	struct builder b;
	good_stream(&b);
	const uint8_t *data = (const uint8_t *)b.sb.data;
	for (size_t len = 0; len <= b.sb.size; len++) {
		/* a copy of exactly len bytes: ASan sees any read past it */
		uint8_t *copy = malloc(len ? len : 1);
		CHECK(copy);
		memcpy(copy, data, len);
		struct sd_stream s;
		struct sd_record r;
		sd_stream_init_mem(&s, "mem.sonde", copy, len);
		int h = sd_stream_header(&s, &r);
		size_t whole = 0; /* records that end within len */
		while (whole < b.n && b.start[whole + 1] <= len)
			whole++;
		int boundary = len == b.start[whole];
		uint64_t samples_in = 0;
		for (size_t i = 0; i < whole; i++)
			samples_in += b.kind[i] == SD_K_SAMPLE;
		if (len == 0) {
			CHECK_EQ(h, SD_ERR_EMPTY);
		} else if (whole == 0) {
			CHECK_EQ(h, SD_ERR_TRUNC);
		} else {
			CHECK_EQ(h, 0);
			for (size_t i = 1; i < whole; i++) {
				CHECK_EQ(sd_stream_next(&s, &r), 1);
				CHECK_EQ(r.offset, b.start[i]);
				CHECK_EQ(r.kind, b.kind[i]);
			}
			if (boundary) {
				CHECK_EQ(sd_stream_next(&s, &r), 0);
			} else {
				CHECK_EQ(sd_stream_next(&s, &r), SD_ERR_TRUNC);
				CHECK_EQ(s.err_off, b.start[whole]);
				CHECK_STR(s.err_why, "the data ends inside a record");
				CHECK_EQ(s.off, b.start[whole]);
				CHECK_EQ(sd_stream_next(&s, &r), SD_ERR_TRUNC); /* stays */
				CHECK_EQ(s.err_off, b.start[whole]);
			}
		}
		sd_stream_close(&s);

		size_t bad;
		uint64_t samples = 0;
		int pr = profile_mem(copy, len, &bad, &samples);
		if (len == 0)
			CHECK_EQ(pr, SD_ERR_EMPTY);
		else if (whole == 0)
			CHECK_EQ(pr, SD_ERR_TRUNC);
		else {
			CHECK_EQ(pr, boundary ? 0 : 1);
			CHECK_EQ(samples, samples_in);
		}
		free(copy);
	}
	b_fini(&b);
}

/* The header, then one record of raw bytes: what sd_stream_next says of it. */
static int raw_record(const void *bytes, size_t n, struct sd_stream *s, struct builder *b)
{
	b_init(b);
	header(b, 0);
	rec(b, 0);
	raw(b, bytes, n);
	b_end(b);
	struct sd_record r;
	sd_stream_init_mem(s, "mem.sonde", b->sb.data, b->sb.size);
	CHECK_EQ(sd_stream_header(s, &r), 0);
	return sd_stream_next(s, &r);
}

static void expect_raw(const void *bytes, size_t n, int err, const char *why)
{
	struct builder b;
	struct sd_stream s;
	int got = raw_record(bytes, n, &s, &b);
	if (got != err)
		fprintf(stderr, "record of %zu bytes starting 0x%02x 0x%02x: %d (%s)\n", n,
			((const uint8_t *)bytes)[0], ((const uint8_t *)bytes)[1], got,
			s.err_why ? s.err_why : "-");
	CHECK_EQ(got, err);
	CHECK_EQ(s.err_off, b.start[1]);
	CHECK_STR(s.err_why, why);
	if (err == SD_ERR_CORRUPT) {
		int code;
		char want[512];
		snprintf(want, sizeof want, "sonde: mem.sonde: corrupt record at byte %zu (%s)",
			 b.start[1], why);
		CHECK_STR(perror_line(&s, "mem.sonde", err, &code), want);
		CHECK_EQ(code, SD_SAID(SD_EXIT_BADINPUT)); /* said, a bad-input exit */
	}
	sd_stream_close(&s);
	b_fini(&b);
}

/* Lengths and counts the bytes cannot back, and values past the reader's
 * bounds: refused before anything is allocated for them. */
static void case_bounds(void)
{
	const char *cut = "the data ends inside a record";
	const char *values = "a record declares more than 1048576 values: the reader's limit, "
			     "docs/FORMAT.md";
	/* str32, bin32, ext32 of 4 GiB - 1 in a stream of a few hundred bytes:
	 * the data ends inside the record */
	expect_raw("\x91\xdb\xff\xff\xff\xff", 6, SD_ERR_TRUNC, cut);
	expect_raw("\x92\x07\xc6\xff\xff\xff\xff", 7, SD_ERR_TRUNC, cut);
	expect_raw("\x92\x07\xc9\xff\xff\xff\xff\x01", 8, SD_ERR_TRUNC, cut);
	/* array32 of 2^32 - 1, map32 of 2^32 - 1 pairs: past the values limit */
	expect_raw("\xdd\xff\xff\xff\xff", 5, SD_ERR_CORRUPT, values);
	expect_raw("\x92\x07\xdf\xff\xff\xff\xff", 7, SD_ERR_CORRUPT, values);
	/* within the limit, but not backed by a byte per value */
	expect_raw("\x92\x07\xdd\x00\x0f\x00\x00\x00", 8, SD_ERR_TRUNC, cut);
	expect_raw("\x92\x07\xde\xff\xff", 5, SD_ERR_TRUNC, cut);
	/* a length cut in the middle of its own bytes */
	expect_raw("\x92\x07\xdb\xff", 4, SD_ERR_TRUNC, cut);
	/* 0xc1 is no msgpack value */
	expect_raw("\x93\x07\xc1\x01", 4, SD_ERR_CORRUPT, "invalid msgpack");
	/* nested deeper than msgpack-c's parser goes */
	uint8_t deep[200];
	deep[0] = 0x92;
	deep[1] = 0x07;
	memset(deep + 2, 0x91, sizeof deep - 3);
	deep[sizeof deep - 1] = 0x01;
	expect_raw(deep, sizeof deep, SD_ERR_CORRUPT, "msgpack nested too deeply");

	/* values in all, the record's array included: 2^20 at most */
	size_t n = (1u << 20) - 1; /* elements: 2^20 values with the array */
	uint8_t *big = malloc(5 + n + 1);
	CHECK(big);
	big[0] = 0xdd;
	big[1] = (uint8_t)(n >> 24), big[2] = (uint8_t)(n >> 16), big[3] = (uint8_t)(n >> 8),
	big[4] = (uint8_t)n;
	big[5] = SD_K_NOTE;
	memset(big + 6, 0, n - 1);
	struct builder b;
	struct sd_stream s;
	CHECK_EQ(raw_record(big, 5 + n, &s, &b), 1);
	CHECK_EQ(s.off, b.sb.size);
	sd_stream_close(&s);
	b_fini(&b);
	n++;
	big[1] = (uint8_t)(n >> 24), big[2] = (uint8_t)(n >> 16), big[3] = (uint8_t)(n >> 8),
	big[4] = (uint8_t)n;
	big[5 + n - 1] = 0;
	expect_raw(big, 5 + n, SD_ERR_CORRUPT, values);
	/* the same count reached by nesting: [7, [0 x 2^19], {0:0 x 2^18}] */
	size_t half = 1u << 19, quarter = 1u << 18;
	size_t len = 2 + 5 + half + 5 + 2 * quarter;
	uint8_t *nest = calloc(1, len);
	CHECK(nest);
	size_t o = 0;
	nest[o++] = 0x93;
	nest[o++] = 0x07;
	nest[o++] = 0xdd;
	nest[o++] = 0, nest[o++] = (uint8_t)(half >> 16), nest[o++] = 0, nest[o++] = 0;
	o += half;
	nest[o++] = 0xdf;
	nest[o++] = 0, nest[o++] = (uint8_t)(quarter >> 16), nest[o++] = 0, nest[o++] = 0;
	o += 2 * quarter;
	CHECK_EQ(o, len);
	/* 1 + 3 + 2^19 + 2^18 * 2 = 2^20 + 4 values */
	expect_raw(nest, len, SD_ERR_CORRUPT, values);
	free(nest);
	free(big);
}

/* Files are read through a window: a record longer than the window (2 MiB)
 * is read whole, and the next record after it; one longer than 16 MiB is
 * refused at its offset without reading it (the file is sparse). */
static void case_file_bounds(void)
{
	char path[] = "/tmp/sonde-unit-reader-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	struct builder b;
	b_init(&b);
	header(&b, 0);
	/* NOTE [10, 1, str32 of 2 MiB] */
	size_t note = 2u << 20;
	rec(&b, SD_K_NOTE);
	uint8_t h1[] = {0x93, 0x0a, 0x01, 0xdb, (uint8_t)(note >> 24), (uint8_t)(note >> 16),
			(uint8_t)(note >> 8), (uint8_t)note};
	raw(&b, h1, sizeof h1);
	char *body = calloc(1, note);
	CHECK(body);
	memset(body, 'n', note);
	raw(&b, body, note);
	free(body);
	u64s(&b, SD_K_NOTE, 1, (uint64_t[]){7}); /* [10, 7]: a short record after it */
	/* NOTE [10, 2, str32 of 17 MiB], the file ending with its string */
	size_t huge = 17u << 20;
	rec(&b, SD_K_NOTE);
	uint8_t h2[] = {0x93, 0x0a, 0x02, 0xdb, (uint8_t)(huge >> 24), (uint8_t)(huge >> 16),
			(uint8_t)(huge >> 8), (uint8_t)huge};
	raw(&b, h2, sizeof h2);
	b_end(&b);
	CHECK_EQ(write(fd, b.sb.data, b.sb.size), (ssize_t)b.sb.size);
	CHECK(ftruncate(fd, (off_t)(b.sb.size + huge)) == 0);
	close(fd);

	struct sd_stream s;
	struct sd_record r;
	CHECK_EQ(sd_stream_open(&s, path), 0);
	CHECK_EQ(sd_stream_header(&s, &r), 0);
	CHECK_EQ(sd_stream_next(&s, &r), 1);
	CHECK_EQ(r.offset, b.start[1]);
	CHECK_EQ(r.n, 3);
	CHECK_EQ(r.v[2].type, MSGPACK_OBJECT_STR);
	CHECK_EQ(r.v[2].via.str.size, note);
	CHECK(r.v[2].via.str.ptr[0] == 'n' && r.v[2].via.str.ptr[note - 1] == 'n');
	CHECK_EQ(sd_stream_next(&s, &r), 1);
	CHECK_EQ(r.offset, b.start[2]);
	CHECK_EQ(r.v[1].via.u64, 7);
	CHECK_EQ(sd_stream_next(&s, &r), SD_ERR_CORRUPT);
	CHECK_EQ(s.err_off, b.start[3]);
	CHECK_STR(s.err_why, "a record longer than 16 MiB: the reader's limit, docs/FORMAT.md");
	int code;
	char want[512];
	snprintf(want, sizeof want, "sonde: %s: corrupt record at byte %zu (a record longer than "
		 "16 MiB: the reader's limit, docs/FORMAT.md)", path, b.start[3]);
	CHECK_STR(perror_line(&s, path, SD_ERR_CORRUPT, &code), want);
	CHECK_EQ(code, SD_SAID(SD_EXIT_BADINPUT)); /* said, a bad-input exit */
	CHECK(s.cap <= SD_MAX_RECORD_BYTES);
	sd_stream_close(&s);
	unlink(path);
	b_fini(&b);
}

/* A stream whose record `which` (1-based after the header) is replaced by
 * the given one; sd_profile_add refuses it at that record's offset, and
 * sd_stream_perror names the file, the offset and the field. */
typedef void (*bad_fn)(struct builder *b);

static void bad_thread_tid(struct builder *b)
{
	msgpack_packer *pk = rec(b, SD_K_THREAD);
	msgpack_pack_array(pk, 5);
	msgpack_pack_uint64(pk, SD_K_THREAD);
	msgpack_pack_uint64(pk, 1);
	pstr(pk, "4242");
	msgpack_pack_uint64(pk, 1000);
	pstr(pk, "main");
}

static void bad_sample_thread(struct builder *b)
{
	msgpack_packer *pk = rec(b, SD_K_SAMPLE);
	msgpack_pack_array(pk, 6);
	msgpack_pack_uint64(pk, SD_K_SAMPLE);
	msgpack_pack_int64(pk, -1);
	msgpack_pack_uint64(pk, 10);
	msgpack_pack_uint64(pk, 0);
	msgpack_pack_uint64(pk, 2);
	msgpack_pack_uint64(pk, 1);
}

static void bad_sample_short(struct builder *b)
{
	u64s(b, SD_K_SAMPLE, 4, (uint64_t[]){1, 10, 0, 2});
}

static void bad_sample_flags(struct builder *b)
{
	msgpack_packer *pk = rec(b, SD_K_SAMPLE);
	msgpack_pack_array(pk, 7);
	msgpack_pack_uint64(pk, SD_K_SAMPLE);
	for (int i = 0; i < 5; i++)
		msgpack_pack_uint64(pk, i == 0 ? 1 : i == 3 ? 2 : 0);
	msgpack_pack_double(pk, 1.5);
}

static void bad_frame_short(struct builder *b)
{
	u64s(b, SD_K_FRAME, 3, (uint64_t[]){3, 2, 0});
}

static void bad_end_reason(struct builder *b)
{
	msgpack_packer *pk = rec(b, SD_K_END);
	msgpack_pack_array(pk, 4);
	msgpack_pack_uint64(pk, SD_K_END);
	msgpack_pack_uint64(pk, 5000);
	msgpack_pack_uint64(pk, 0);
	msgpack_pack_map(pk, 0);
}

static void bad_not_array(struct builder *b)
{
	msgpack_pack_uint64(rec(b, 0), 7);
}

static void bad_kind_zero(struct builder *b)
{
	u64s(b, 0, 2, (uint64_t[]){1, 2});
}

static void bad_kind_str(struct builder *b)
{
	msgpack_packer *pk = rec(b, 0);
	msgpack_pack_array(pk, 2);
	pstr(pk, "SAMPLE");
	msgpack_pack_uint64(pk, 1);
}

static void bad_empty_array(struct builder *b)
{
	msgpack_pack_array(rec(b, 0), 0);
}

static void case_wrong_types(void)
{
	static const struct {
		bad_fn fn;
		unsigned at; /* replaces good record `at` (0: inserted before the end) */
		const char *why;
	} cases[] = {
		{bad_thread_tid, 1, "THREAD tid is not an unsigned integer"},
		{bad_sample_thread, 0, "SAMPLE thread is not an unsigned integer"},
		{bad_sample_short, 0, "SAMPLE weight is missing"},
		{bad_sample_flags, 0, "SAMPLE flags is not an unsigned integer"},
		{bad_frame_short, 0, "FRAME addr is missing"},
		{bad_end_reason, 0, "END reason is not a string"},
		{bad_not_array, 0, "not an array starting with a record kind"},
		{bad_kind_zero, 0, "not an array starting with a record kind"},
		{bad_kind_str, 0, "not an array starting with a record kind"},
		{bad_empty_array, 0, "not an array starting with a record kind"},
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		struct builder b;
		b_init(&b);
		header(&b, 0);
		size_t bad_at = 0;
		if (cases[k].at == 1) {
			bad_at = b.sb.size;
			cases[k].fn(&b);
		} else {
			msgpack_packer *pk = rec(&b, SD_K_THREAD);
			msgpack_pack_array(pk, 5);
			msgpack_pack_uint64(pk, SD_K_THREAD);
			msgpack_pack_uint64(pk, 1);
			msgpack_pack_uint64(pk, 4242);
			msgpack_pack_uint64(pk, 1000);
			pstr(pk, "main");
			u64s(&b, SD_K_FRAME, 4, (uint64_t[]){1, 0, 0, 0x401000});
			u64s(&b, SD_K_FRAME, 4, (uint64_t[]){2, 1, 0, 0x402000});
			u64s(&b, SD_K_SAMPLE, 5, (uint64_t[]){1, 1000, 0, 2, 1});
			bad_at = b.sb.size;
			cases[k].fn(&b);
		}
		u64s(&b, SD_K_SAMPLE, 5, (uint64_t[]){1, 1000, 0, 0, 1});
		b_end(&b);

		struct sd_profile p;
		struct sd_stream s;
		CHECK_EQ(sd_profile_init(&p, SD_SYM_ADDRESSES), 0);
		sd_stream_init_mem(&s, "bad.sonde", b.sb.data, b.sb.size);
		size_t off = 0;
		int r = sd_profile_add(&p, &s, &off);
		if (r != SD_ERR_CORRUPT || off != bad_at)
			fprintf(stderr, "case %zu (%s): r %d off %zu (want %zu), why %s\n", k,
				cases[k].why, r, off, bad_at, s.err_why ? s.err_why : "-");
		CHECK_EQ(r, SD_ERR_CORRUPT);
		CHECK_EQ(off, bad_at);
		CHECK_EQ(p.streams, 0); /* nothing merged */
		int code;
		char want[512];
		snprintf(want, sizeof want, "sonde: bad.sonde: corrupt record at byte %zu (%s)",
			 bad_at, cases[k].why);
		CHECK_STR(perror_line(&s, "bad.sonde", r, &code), want);
		CHECK_EQ(code, SD_SAID(SD_EXIT_BADINPUT)); /* said, a bad-input exit */
		sd_stream_close(&s);
		sd_profile_fini(&p);
		b_fini(&b);
	}

	/* The header: its own messages. */
	struct builder b;
	b_init(&b);
	header(&b, 1);
	b_end(&b);
	size_t off;
	struct sd_profile p;
	struct sd_stream s;
	CHECK_EQ(sd_profile_init(&p, SD_SYM_ADDRESSES), 0);
	sd_stream_init_mem(&s, "h.sonde", b.sb.data, b.sb.size);
	CHECK_EQ(sd_profile_add(&p, &s, &off), SD_ERR_CORRUPT);
	CHECK_EQ(off, 0);
	int code;
	CHECK_STR(perror_line(&s, "h.sonde", SD_ERR_CORRUPT, &code),
		  "sonde: h.sonde: corrupt record at byte 0 (HEADER `pid` is not an unsigned "
		  "integer)");
	sd_stream_close(&s);
	sd_profile_fini(&p);
	b_fini(&b);
	/* not a sonde stream; another version */
	static const uint8_t foreign[] = {0x94, 0x01, 0xa5, 's', 'o', 'n', 'd', 'x', 0x01, 0x80};
	static const uint8_t v2[] = {0x94, 0x01, 0xa5, 's', 'o', 'n', 'd', 'e', 0x02, 0x80};
	struct sd_record rr;
	sd_stream_init_mem(&s, "f.sonde", foreign, sizeof foreign);
	CHECK_EQ(sd_stream_header(&s, &rr), SD_ERR_FOREIGN);
	CHECK_STR(perror_line(&s, "f.sonde", SD_ERR_FOREIGN, &code),
		  "sonde: f.sonde: not a sonde stream (expected a msgpack HEADER record at byte 0)");
	CHECK_EQ(code, SD_SAID(SD_EXIT_BADINPUT)); /* said, a bad-input exit */
	sd_stream_close(&s);
	sd_stream_init_mem(&s, "v.sonde", v2, sizeof v2);
	CHECK_EQ(sd_stream_header(&s, &rr), SD_ERR_VERSION);
	CHECK_STR(perror_line(&s, "v.sonde", SD_ERR_VERSION, &code),
		  "sonde: v.sonde: stream format version 2 is not supported (this sonde reads "
		  "version 1; use a matching sonde)");
	sd_stream_close(&s);
}

/* Every byte of the good stream replaced by each of a few values (msgpack
 * type bytes that declare lengths and counts, an invalid byte, bit flips):
 * the reader and the checks never crash nor read outside the bytes (ASan),
 * and an error names an offset inside the stream. */
static void case_mutations(void)
{
	struct builder b;
	good_stream(&b);
	const size_t len = b.sb.size;
	uint8_t *m = malloc(len);
	CHECK(m);
	static const uint8_t vals[] = {0x00, 0x7f, 0x90, 0x9f, 0xc1, 0xc4, 0xc6, 0xc9,
				       0xd8, 0xdb, 0xdd, 0xdf, 0xff};
	unsigned ok = 0, trunc = 0, corrupt = 0, other = 0;
	for (size_t pos = 0; pos < len; pos++) {
		for (size_t v = 0; v < sizeof vals + 2; v++) {
			memcpy(m, b.sb.data, len);
			m[pos] = v < sizeof vals ? vals[v] : v == sizeof vals ? m[pos] ^ 0x01
									     : m[pos] ^ 0x80;
			size_t off;
			int r = profile_mem(m, len, &off, NULL);
			if (r == 0 || r == 1)
				ok++;
			else if (r == SD_ERR_TRUNC)
				trunc++;
			else if (r == SD_ERR_CORRUPT)
				corrupt++;
			else if (r == SD_ERR_FOREIGN || r == SD_ERR_VERSION)
				other++;
			else {
				fprintf(stderr, "byte %zu = 0x%02x: result %d\n", pos, m[pos], r);
				CHECK(0);
			}
			if (r == SD_ERR_TRUNC || r == SD_ERR_CORRUPT)
				CHECK(off < len);
		}
	}
	printf("mutations: %u read, %u truncated, %u corrupt, %u not a stream\n", ok, trunc,
	       corrupt, other);
	CHECK(trunc > 0 && corrupt > 0 && other > 0);
	free(m);
	b_fini(&b);
}

UNIT_MAIN({"records", case_records}, {"prefixes", case_prefixes}, {"bounds", case_bounds},
	  {"file_bounds", case_file_bounds}, {"wrong_types", case_wrong_types},
	  {"mutations", case_mutations})
