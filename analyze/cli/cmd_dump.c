/*
 * cmd_dump.c: `sonde dump FILE`, every record of one stream as one JSON object per line,
 * for debugging the runtime and for tests. Field names are those of docs/FORMAT.md's
 * layouts; elements past the documented ones are kept under "extra".
 *
 * Exit: 0 also for a truncated stream (its valid prefix is printed, then a warning);
 * 4 when the file is not a sonde stream or has a corrupt record; 3 when it cannot be read.
 */
#include "analyze/cli/cli.h"

#include <string.h>

static const char *const fields[SD_K_LAST + 1][SD_F_MAX] = SD_FIELD_NAMES;
static const char *const kind_names[SD_K_LAST + 1] = SD_KIND_NAMES;

static void print_record(FILE *out, const struct sd_record *r)
{
	uint32_t i = 1;

	fprintf(out, "{\"offset\":%zu,\"kind\":", r->offset);
	if (r->kind > SD_K_LAST) {
		fprintf(out, "%llu,\"raw\":[", (unsigned long long)r->kind);
		for (i = 1; i < r->n; i++) {
			if (i > 1)
				putc(',', out);
			sd_json_obj(out, &r->v[i]);
		}
		fputs("]}\n", out);
		return;
	}
	fprintf(out, "\"%s\"", kind_names[r->kind]);
	for (; i < r->n && fields[r->kind][i - 1]; i++) {
		fprintf(out, ",\"%s\":", fields[r->kind][i - 1]);
		sd_json_obj(out, &r->v[i]);
	}
	if (i < r->n) {
		fputs(",\"extra\":[", out);
		for (uint32_t j = i; j < r->n; j++) {
			if (j > i)
				putc(',', out);
			sd_json_obj(out, &r->v[j]);
		}
		putc(']', out);
	}
	fputs("}\n", out);
}

int sd_cmd_dump(int argc, char **argv)
{
	static const char usage[] = "usage: sonde dump FILE";
	struct sd_stream s;
	struct sd_record rec;
	const char *path = NULL;
	int r, code = SD_EXIT_OK;

	for (int i = 1, opts = 1; i < argc; i++) {
		const char *a = argv[i];
		if (opts && !strcmp(a, "--")) {
			opts = 0;
			continue;
		}
		if (opts && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
			printf("%s\n\nPrints every record of a sonde stream as one JSON object per "
			       "line.\n", usage);
			return SD_EXIT_OK;
		}
		if (opts && a[0] == '-' && a[1])
			return sd_error(SD_EXIT_USAGE, "dump: unknown option '%s' (%s)", a, usage);
		if (path)
			return sd_error(SD_EXIT_USAGE, "dump: one FILE at a time (%s)", usage);
		path = a;
	}
	if (!path)
		return sd_error(SD_EXIT_USAGE, "dump: no FILE given (%s)", usage);
	r = sd_stream_open(&s, path);
	if (r)
		return sd_stream_perror(&s, path, r);
	r = sd_stream_header(&s, &rec);
	if (r) {
		code = sd_stream_perror(&s, path, r);
		goto out;
	}
	do
		print_record(stdout, &rec);
	while ((r = sd_stream_next(&s, &rec)) == 1);
	if (fflush(stdout) || ferror(stdout)) {
		code = sd_error(SD_EXIT_IO, "dump: stdout: %s", strerror(errno));
	} else if (r == SD_ERR_TRUNC) {
		sd_msg("sonde: %s: truncated at byte %zu (valid prefix of %llu records "
			"used)", path, s.err_off, (unsigned long long)s.nrecords);
	} else if (r < 0) {
		code = sd_stream_perror(&s, path, r);
	}
out:
	sd_stream_close(&s);
	return code;
}
