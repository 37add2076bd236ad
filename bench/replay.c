/* replay.c - makes a large stream from a real one, for bench/report.sh.
 *
 * Copies every record of IN once (header, modules, threads, frames,
 * contexts, ...), then writes its SAMPLE records again and again, in order,
 * until COUNT samples are written, and ends with IN's END record. The result
 * is a valid stream (docs/FORMAT.md) with the call paths and per-sample
 * byte sizes of the real workload, at any length.
 *
 * usage: replay IN OUT COUNT
 */
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: replay IN OUT COUNT\n");
		return 2;
	}
	FILE *in = fopen(argv[1], "rb");
	if (!in) {
		perror(argv[1]);
		return 1;
	}
	fseek(in, 0, SEEK_END);
	long len = ftell(in);
	fseek(in, 0, SEEK_SET);
	char *buf = malloc((size_t)len);
	if (!buf || fread(buf, 1, (size_t)len, in) != (size_t)len) {
		fprintf(stderr, "replay: cannot read %s\n", argv[1]);
		return 1;
	}
	fclose(in);
	FILE *out = fopen(argv[2], "wb");
	if (!out) {
		perror(argv[2]);
		return 1;
	}
	unsigned long long want = strtoull(argv[3], NULL, 10), written = 0;
	/* Record boundaries: one pass with msgpack_unpack_next. */
	size_t off = 0, nsamples = 0, cap = 1024, end_off = 0, end_len = 0;
	size_t *soff = malloc(cap * sizeof *soff), *slen = malloc(cap * sizeof *slen);
	msgpack_unpacked up;
	msgpack_unpacked_init(&up);
	while (off < (size_t)len) {
		size_t start = off;
		if (msgpack_unpack_next(&up, buf, (size_t)len, &off) != MSGPACK_UNPACK_SUCCESS)
			break;
		const msgpack_object *o = &up.data;
		uint64_t kind = o->type == MSGPACK_OBJECT_ARRAY && o->via.array.size &&
					o->via.array.ptr[0].type == MSGPACK_OBJECT_POSITIVE_INTEGER
				? o->via.array.ptr[0].via.u64 : 0;
		if (kind == 7) {
			if (nsamples == cap) {
				cap *= 2;
				soff = realloc(soff, cap * sizeof *soff);
				slen = realloc(slen, cap * sizeof *slen);
			}
			soff[nsamples] = start;
			slen[nsamples++] = off - start;
			fwrite(buf + start, 1, off - start, out);
			written++;
		} else if (kind == 9) {
			end_off = start;
			end_len = off - start;
		} else {
			fwrite(buf + start, 1, off - start, out);
		}
	}
	msgpack_unpacked_destroy(&up);
	if (!nsamples) {
		fprintf(stderr, "replay: %s has no samples\n", argv[1]);
		return 1;
	}
	for (size_t i = 0; written < want; i = (i + 1) % nsamples, written++)
		fwrite(buf + soff[i], 1, slen[i], out);
	if (end_len)
		fwrite(buf + end_off, 1, end_len, out);
	if (fclose(out) != 0) {
		perror(argv[2]);
		return 1;
	}
	printf("replay: %llu samples (%zu distinct records replayed) -> %s\n", written, nsamples,
	       argv[2]);
	return 0;
}
