/*
 * decode_header.c: a stream's HEADER into its struct sstate (profile_int.h), for
 * sd_profile_parse (decode.c): the info map checked key by key against the types
 * docs/FORMAT.md gives them (sd_decode_check_keys, which the maps of later records use
 * too), then the process's name and command, its sources, counters and unavailable
 * counters, and the tables the records fill, each with its reserved slot 0. A key present
 * with another type makes the stream corrupt; unknown keys are ignored. Runs where the
 * stream is read (possibly a --jobs worker): touches nothing but the stream's state.
 */
#include "analyze/profile/profile_int.h"

#include <stdlib.h>
#include <string.h>

/* Is key `k` of map m, when present, of type `ty` (POSITIVE_INTEGER, STR, MAP, ARRAY)? */
static int key_ok(const msgpack_object *m, const char *k, msgpack_object_type ty)
{
	const msgpack_object *v = sd_map_get(m, k);
	return !v || v->type == ty;
}

static const char *type_name(msgpack_object_type ty)
{
	return ty == MSGPACK_OBJECT_POSITIVE_INTEGER ? "an unsigned integer"
	     : ty == MSGPACK_OBJECT_STR ? "a string" : ty == MSGPACK_OBJECT_MAP ? "a map"
	     : "an array";
}

/* The keys of the maps of a HEADER (docs/FORMAT.md) and their types (struct keyty); a
 * key that is present with another type makes the stream corrupt. Unknown keys are
 * ignored. */
#define U MSGPACK_OBJECT_POSITIVE_INTEGER
#define S MSGPACK_OBJECT_STR
#define M MSGPACK_OBJECT_MAP
#define A MSGPACK_OBJECT_ARRAY
static const struct keyty info_keys[] = {
	{ "pid", U }, { "ppid", U }, { "host", S }, { "exe", S }, { "argv", A }, { "clock", M },
	{ "sources", A }, { "unwind", S }, { "max_depth", U }, { "rank", U }, { "fork_of", U },
	{ "seq", U }, { "sonde", S }, { "counters", A }, { "counters_unavailable", A },
	{ "ring_bytes", U }, { "start_ticks", U }, { NULL, U } };
static const struct keyty source_keys[] = {
	{ "name", S }, { "spec", S }, { "unit", S }, { "period", U }, { "mechanism", S },
	{ "signal", U }, { "fallback_reason", S }, { NULL, U } };
static const struct keyty counter_keys[] = {
	{ "name", S }, { "group", S }, { "unit", S }, { "source", S }, { NULL, U } };
static const struct keyty unavail_keys[] = { { "name", S }, { "reason", S }, { NULL, U } };
static const struct keyty clock_keys[] = {
	{ "monotonic_ns", U }, { "realtime_ns", U }, { NULL, U } };
#undef U
#undef S
#undef M
#undef A

/* NULL if map m's keys of table kt have their types, else why not (in buf). */
const char *sd_decode_check_keys(const msgpack_object *m, const struct keyty *kt,
				 const char *what, char *buf, size_t len)
{
	for (; kt->key; kt++)
		if (!key_ok(m, kt->key, kt->ty)) {
			snprintf(buf, len, "%s `%s` is not %s", what, kt->key, type_name(kt->ty));
			return buf;
		}
	return NULL;
}

/* NULL if `key` of info, when present, is an array of maps whose keys have their types. */
static const char *check_maps(const msgpack_object *info, const char *key,
			      const struct keyty *kt, char *buf, size_t len)
{
	const msgpack_object *a = sd_map_get(info, key);
	char what[64];

	for (uint32_t i = 0; a && i < a->via.array.size; i++) {
		const msgpack_object *m = &a->via.array.ptr[i];
		snprintf(what, sizeof(what), "HEADER %s[%u]", key, (unsigned)i);
		if (m->type != MSGPACK_OBJECT_MAP) {
			snprintf(buf, len, "%s is not a map", what);
			return buf;
		}
		if (sd_decode_check_keys(m, kt, what, buf, len))
			return buf;
	}
	return NULL;
}

/* NULL if the HEADER's info map is well typed (docs/FORMAT.md, HEADER), else why not. */
static const char *check_header(const struct sd_record *r, char *buf, size_t len)
{
	const msgpack_object *info = r->n > SD_F_HEADER_INFO ? &r->v[SD_F_HEADER_INFO] : NULL;
	const msgpack_object *argv;

	if (!info || info->type != MSGPACK_OBJECT_MAP)
		return "HEADER info is not a map";
	if (sd_decode_check_keys(info, info_keys, "HEADER", buf, len) ||
	    check_maps(info, "sources", source_keys, buf, len) ||
	    check_maps(info, "counters", counter_keys, buf, len) ||
	    check_maps(info, "counters_unavailable", unavail_keys, buf, len))
		return buf;
	if (sd_map_get(info, "clock") &&
	    sd_decode_check_keys(sd_map_get(info, "clock"), clock_keys, "HEADER clock", buf, len))
		return buf;
	if ((argv = sd_map_get(info, "argv")))
		for (uint32_t i = 0; i < argv->via.array.size; i++)
			if (argv->via.array.ptr[i].type != MSGPACK_OBJECT_STR)
				return "HEADER `argv` holds a value that is not a string";
	return NULL;
}

/* The process name of a HEADER (docs/REPORT.md, "Processes"): the basename of argv[0],
 * else of exe, else "?"; control characters become '?' (it labels text tables). */
static char *process_name(const msgpack_object *argv, const msgpack_object *exe)
{
	const msgpack_object *o = argv && argv->via.array.size ? &argv->via.array.ptr[0] : NULL;
	const char *p = NULL;
	size_t len = 0;

	for (int k = 0; k < 2 && !len; k++, o = exe) {
		if (!o || o->type != MSGPACK_OBJECT_STR)
			continue;
		p = o->via.str.ptr;
		len = o->via.str.size;
		while (len && p[len - 1] == '/')
			len--;
		for (size_t i = len; i-- > 0;)
			if (p[i] == '/') {
				p += i + 1;
				len -= i + 1;
				break;
			}
	}
	char *n = len ? sd_decode_dupn(p, len) : strdup("?");
	for (char *c = n; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return n;
}

/* argv joined with spaces (NULL without argv). */
static char *join_argv(const msgpack_object *argv)
{
	size_t len = 1;

	if (!argv)
		return NULL;
	for (uint32_t i = 0; i < argv->via.array.size; i++)
		len += argv->via.array.ptr[i].via.str.size + 1;
	char *j = malloc(len), *q = j;
	if (!j)
		return NULL;
	for (uint32_t i = 0; i < argv->via.array.size; i++) {
		const msgpack_object_str *a = &argv->via.array.ptr[i].via.str;
		if (i)
			*q++ = ' ';
		if (a->size)
			memcpy(q, a->ptr, a->size);
		q += a->size;
	}
	*q = 0;
	return j;
}

/* The HEADER's sources into st (sources[n]: samples of sources it does not list), and
 * the coverage account's cpu-time source. 0 or -ENOMEM. */
static int header_sources(struct sstate *st, const msgpack_object *info)
{
	const msgpack_object *srcs = sd_map_get(info, "sources");
	size_t n = srcs && srcs->type == MSGPACK_OBJECT_ARRAY ? srcs->via.array.size : 0;

	st->sources = calloc(n + 1, sizeof(*st->sources));
	if (!st->sources)
		return -ENOMEM;
	st->nsources = n;
	for (size_t i = 0; i <= n; i++) {
		const msgpack_object *m = i < n ? &srcs->via.array.ptr[i] : NULL;
		struct ssource *s = &st->sources[i];
		s->name = sd_decode_strdup_or(sd_map_get(m, "name"),
					      i < n ? "?" : "[unknown source]");
		s->spec = sd_decode_strdup_or(sd_map_get(m, "spec"), "?");
		s->unit = sd_decode_strdup_or(sd_map_get(m, "unit"), "ns");
		s->mechanism = sd_decode_strdup_or(sd_map_get(m, "mechanism"), "?");
		sd_obj_u64(sd_map_get(m, "period"), &s->period);
		if (!s->name || !s->spec || !s->unit || !s->mechanism)
			return -ENOMEM;
	}
	st->cpu_src = -1; /* coverage: the first cpu-time source in ns */
	for (size_t i = 0; i < n && st->cpu_src < 0; i++)
		if (!strcmp(st->sources[i].name, "cpu-time") && !strcmp(st->sources[i].unit, "ns"))
			st->cpu_src = (long)i;
	return 0;
}

/* The HEADER's counters and unavailable counters into st; entries that are not maps
 * get "?" names. 0 or -ENOMEM. */
static int header_counters(struct sstate *st, const msgpack_object *info)
{
	const msgpack_object *ctrs = sd_map_get(info, "counters");
	size_t n = ctrs && ctrs->type == MSGPACK_OBJECT_ARRAY ? ctrs->via.array.size : 0;

	if (n && !(st->ctrs = calloc(n, sizeof(*st->ctrs))))
		return -ENOMEM;
	st->nctrs = n;
	for (size_t i = 0; i < n; i++) {
		const msgpack_object *m = &ctrs->via.array.ptr[i];
		struct scounter *c = &st->ctrs[i];
		c->name = sd_decode_strdup_or(sd_map_get(m, "name"), "?");
		c->group = sd_decode_strdup_or(sd_map_get(m, "group"), c->name ? c->name : "?");
		c->unit = sd_decode_strdup_or(sd_map_get(m, "unit"), "count");
		c->source = sd_decode_strdup_or(sd_map_get(m, "source"), "?");
		if (!c->name || !c->group || !c->unit || !c->source)
			return -ENOMEM;
	}
	const msgpack_object *un = sd_map_get(info, "counters_unavailable");
	n = un && un->type == MSGPACK_OBJECT_ARRAY ? un->via.array.size : 0;
	if (n && (!(st->unames = calloc(n, sizeof(char *))) ||
		  !(st->ureasons = calloc(n, sizeof(char *)))))
		return -ENOMEM;
	st->nun = n;
	for (size_t i = 0; i < n; i++) {
		const msgpack_object *m = &un->via.array.ptr[i];
		st->unames[i] = sd_decode_strdup_or(sd_map_get(m, "name"), "?");
		st->ureasons[i] = sd_decode_strdup_or(sd_map_get(m, "reason"), "no reason given");
		if (!st->unames[i] || !st->ureasons[i])
			return -ENOMEM;
	}
	return 0;
}

/* The stream's HEADER into st: 0, or SD_ERR_CORRUPT with s->err_off and s->err_why
 * set, or -ENOMEM. (The records after it: sd_profile_parse.) */
int sd_decode_header(struct sstate *st, const struct sd_record *r, struct sd_stream *strm)
{
	const msgpack_object *info = r->n > SD_F_HEADER_INFO ? &r->v[SD_F_HEADER_INFO] : NULL;
	const char *bad = check_header(r, strm->why_buf, sizeof(strm->why_buf));
	int err;

	if (bad) {
		strm->err_off = r->offset;
		strm->err_why = bad;
		return SD_ERR_CORRUPT;
	}
	sd_obj_u64(sd_map_get(info, "pid"), &st->pid);
	if (sd_obj_u64(sd_map_get(info, "start_ticks"), &st->start_ticks))
		st->start_ticks = 0;
	st->host = sd_decode_strdup_or(sd_map_get(info, "host"), "?");
	st->exe = sd_decode_strdup_or(sd_map_get(info, "exe"), "[unknown module]");
	if (!st->host || !st->exe)
		return -ENOMEM;
	st->cwd = sd_obj_strdup(sd_map_get(info, "cwd")); /* NULL: none (or no memory) */
	const msgpack_object *argv = sd_map_get(info, "argv");
	st->has_exe = sd_map_get(info, "exe") != NULL;
	st->has_ppid = sd_obj_u64(sd_map_get(info, "ppid"), &st->ppid) == 0;
	st->has_clock = sd_obj_u64(sd_map_get(sd_map_get(info, "clock"), "monotonic_ns"),
				   &st->origin_ns) == 0;
	if (sd_obj_u64(sd_map_get(sd_map_get(info, "clock"), "realtime_ns"), &st->real_ns))
		st->real_ns = 0;
	if (!(st->name = process_name(argv, sd_map_get(info, "exe"))) ||
	    (argv && !(st->command = join_argv(argv))))
		return -ENOMEM;
	if (sd_obj_u64(sd_map_get(info, "max_depth"), &st->max_depth))
		st->max_depth = 0; /* unknown */
	uint64_t rank;
	st->rank = sd_obj_u64(sd_map_get(info, "rank"), &rank) == 0 && rank <= INT64_MAX
		   ? (int64_t)rank : -1;
	if ((err = header_sources(st, info)) || (err = header_counters(st, info)))
		return err;
	/* thread slot 0: samples of threads never announced */
	st->threads = calloc(1, sizeof(*st->threads));
	if (!st->threads)
		return -ENOMEM;
	st->nthreads = 1;
	st->nodes = calloc(1, sizeof(*st->nodes));
	if (!st->nodes || sd_grow(&st->attrs, &st->capattrs, 1, sizeof(*st->attrs)) ||
	    sd_grow(&st->ctxs, &st->capctxs, 1, sizeof(*st->ctxs)))
		return -ENOMEM;
	st->nnodes = 1;
	st->nattrs = 1;
	st->nctxs = 1;
	return 0;
}
