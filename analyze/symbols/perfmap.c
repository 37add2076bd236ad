/*
 * perfmap.c: the perf map files of JIT code, for `sonde report` (docs/REPORT.md,
 * "JIT code: perf maps"). A runtime that compiles code at run time (node
 * --perf-basic-prof, Python 3.12 -X perf, a Java agent, LuaJIT) writes
 * /tmp/perf-PID.map, one line `START SIZE NAME` (hex, with or without 0x) per piece of
 * code; libsonde.so keeps a copy beside the stream (`STREAM.perf.map`, docs/FORMAT.md,
 * "Files"). An address of a stream's process outside every module (FRAME module 0) is
 * looked up in its map (symbols.c: sd_sym_jit_frames).
 *
 * Called by the profile's merge (one thread, as all of the symbolizer). Which map a
 * stream gets (sd_sym_perfmap_open): its kept copy; else, when no copy was kept (a
 * process killed before it could make one, and no `sonde run` to copy what remained),
 * /tmp/perf-PID.map only if it can be this very process's: the stream was written on
 * this host, the map is a regular file (never followed through a symbolic link) owned
 * by the stream file's owner, last written within the process's time span (from one
 * second before its clock origin to ten seconds after its last record). A later process
 * with the same pid writes its map after that span.
 *
 * Any map file is read as hostile: bounded (SD_PERFMAP_MAX_BYTES read, at most
 * SD_PERFMAP_MAX_ENTRIES entries, names cut at 1024 bytes), each line checked (hex
 * numbers of at most 16 digits, a size above 0, no range past 2^64, a name), bad lines
 * skipped and counted in one warning. JITs reuse code memory, and a later line for a
 * range wins, as in perf: the entries, in file order, are painted onto the address
 * space (a sweep over their ends with a heap of the covering entries by line number), so
 * that overlapping lines of any shape become disjoint segments, sorted, and a lookup is
 * a binary search. Memory: O(entries) (about 80 bytes an entry while building, 24 after,
 * plus the names).
 */
#define _GNU_SOURCE
#include "analyze/symbols/symbols_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { NAME_MAX_BYTES = 1024, LINE_MAX_BYTES = 8192 };

struct pent { uint64_t lo, hi; uint32_t seq, name; };

struct build {
	struct pent *e; size_t n, cap;
	char *names; size_t nnames, capnames;
	uint64_t bad, lines;
	int full;               /* SD_PERFMAP_MAX_ENTRIES reached */
};

/* A hex number of at most 16 digits (0x allowed) at *p, which moves past it. */
static int hex(const char **p, const char *end, uint64_t *v)
{
	const char *s = *p;
	uint64_t x = 0;
	int nd = 0;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < end; s++, nd++) {
		int c = *s, d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			    : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			break;
		if (nd == 16)
			return -1;
		x = x << 4 | (uint64_t)d;
	}
	if (!nd)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

/* One line [s, end) (no newline): an entry, or counted as bad. 0 or -ENOMEM. */
static int add_line(struct build *b, const char *s, const char *end)
{
	uint64_t lo, size;
	while (end > s && (end[-1] == '\r' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (end == s)
		return 0; /* empty lines are no entries, and no error */
	b->lines++;
	if (hex(&s, end, &lo) || s == end || *s != ' ' || (s++, hex(&s, end, &size)) || s == end ||
	    *s != ' ' || !size || size > UINT64_MAX - lo || ++s == end) {
		b->bad++;
		return 0;
	}
	if (b->n >= SD_PERFMAP_MAX_ENTRIES) {
		b->full = 1;
		return 0;
	}
	size_t len = (size_t)(end - s) < NAME_MAX_BYTES ? (size_t)(end - s) : NAME_MAX_BYTES;
	if (sd_grow(&b->e, &b->cap, b->n + 1, sizeof(*b->e)) ||
	    sd_grow(&b->names, &b->capnames, b->nnames + len + 1, 1))
		return -ENOMEM;
	memcpy(b->names + b->nnames, s, len);
	b->names[b->nnames + len] = 0;
	b->e[b->n] = (struct pent){ lo, lo + size, (uint32_t)b->n, (uint32_t)b->nnames };
	b->n++;
	b->nnames += len + 1;
	return 0;
}

/* Every line of fd, up to SD_PERFMAP_MAX_BYTES; *cut: the file was longer. */
static int read_lines(int fd, struct build *b, int *cut)
{
	char *buf = malloc(LINE_MAX_BYTES + 65536);
	size_t have = 0, total = 0;
	int err = 0, skipping = 0;
	if (!buf)
		return -ENOMEM;
	*cut = 0;
	for (;;) {
		ssize_t r = read(fd, buf + have, LINE_MAX_BYTES + 65536 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || (total += (size_t)r) > SD_PERFMAP_MAX_BYTES) {
			*cut = r > 0;
			break; /* the last line without a newline is left: it may be half-written */
		}
		have += (size_t)r;
		char *s = buf, *nl;
		while (!err && (nl = memchr(s, '\n', have - (size_t)(s - buf)))) {
			if (!skipping)
				err = add_line(b, s, nl);
			skipping = 0;
			s = nl + 1;
		}
		have -= (size_t)(s - buf);
		memmove(buf, s, have);
		if (err)
			break;
		if (have >= LINE_MAX_BYTES) { /* a line too long: bad, skipped to its end */
			if (!skipping)
				b->bad++, b->lines++;
			skipping = 1;
			have = 0;
		}
	}
	free(buf);
	return err;
}

static int by_lo(const void *a, const void *b)
{
	const struct pent *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The heap of covering entries (indices into e), the latest line on top. */
static void heap_push(uint32_t *h, size_t *n, const struct pent *e, uint32_t v)
{
	size_t i = (*n)++;
	for (; i && e[h[(i - 1) / 2]].seq < e[v].seq; i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = v;
}

static void heap_pop(uint32_t *h, size_t *n, const struct pent *e)
{
	uint32_t v = h[--*n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && e[h[c + 1]].seq > e[h[c]].seq)
			c++;
		if (e[h[c]].seq <= e[v].seq)
			break;
		h[i] = h[c];
		i = c;
	}
	if (*n)
		h[i] = v;
}

/* The entries painted in line order into disjoint segments of m. 0 or -ENOMEM. */
static int paint(struct build *b, struct perfmap *m)
{
	uint64_t *pts = malloc(2 * b->n * sizeof(*pts) + 1);
	uint32_t *heap = malloc(b->n * sizeof(*heap) + 1);
	struct jitseg *segs = malloc(2 * b->n * sizeof(*segs) + 1);
	size_t np = 0, hn = 0, k = 0, ns = 0;
	if (!pts || !heap || !segs) {
		free(pts), free(heap), free(segs);
		return -ENOMEM;
	}
	qsort(b->e, b->n, sizeof(*b->e), by_lo);
	for (size_t i = 0; i < b->n; i++)
		pts[np++] = b->e[i].lo, pts[np++] = b->e[i].hi;
	qsort(pts, np, sizeof(*pts), by_u64);
	for (size_t i = 0; i + 1 < np; i++) {
		uint64_t p = pts[i];
		if (p == pts[i + 1])
			continue;
		while (k < b->n && b->e[k].lo <= p)
			heap_push(heap, &hn, b->e, (uint32_t)k++);
		while (hn && b->e[heap[0]].hi <= p)
			heap_pop(heap, &hn, b->e);
		if (!hn)
			continue;
		uint32_t name = b->e[heap[0]].name;
		if (ns && segs[ns - 1].hi == p && segs[ns - 1].name == name)
			segs[ns - 1].hi = pts[i + 1];
		else
			segs[ns++] = (struct jitseg){ p, pts[i + 1], name };
	}
	free(pts);
	free(heap);
	m->segs = segs;
	m->nsegs = ns;
	return 0;
}

/* Reads the map open on fd (a regular file, checked) into m. 0 or -ENOMEM. */
static int load(int fd, const char *path, struct perfmap *m)
{
	struct build b = { 0 };
	int cut, err = read_lines(fd, &b, &cut);
	if (!err)
		err = paint(&b, m);
	free(b.e);
	if (err) {
		free(b.names);
		return err;
	}
	m->names = b.names;
	if (b.bad)
		sd_msg("sonde: %s: %" PRIu64 " of %" PRIu64 " lines are not START SIZE NAME (skipped; "
		       "a perf map of JIT code: the other lines are used)", path, b.bad, b.lines);
	if (cut || b.full)
		sd_msg("sonde: %s: larger than sonde reads (%u MiB, %u entries): the rest is not "
		       "used (JIT code named in it shows as addresses)", path,
		       (unsigned)(SD_PERFMAP_MAX_BYTES >> 20), (unsigned)SD_PERFMAP_MAX_ENTRIES);
	return 0;
}

/* Opens path as a perf map may be opened: never through a symbolic link, a regular
 * file, without blocking (a FIFO). fd and *st, or -errno (-EMEDIUMTYPE: not regular). */
static int open_map(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -EMEDIUMTYPE;
	}
	return fd;
}

/* /tmp/perf-PID.map of w's process, when it can be its (see the top): fd, or -1. */
static int tmp_map(const struct sd_jit_want *w, char *path, size_t len)
{
	char host[256] = "";
	struct stat st, sst;
	if (!w->pid || !w->has_clock || gethostname(host, sizeof host - 1) || strcmp(host, w->host) ||
	    stat(w->stream, &sst))
		return -1;
	snprintf(path, len, "/tmp/perf-%" PRIu64 ".map", w->pid);
	int fd = open_map(path, &st);
	if (fd < 0)
		return -1;
	int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (st.st_uid != sst.st_uid || mt < (int64_t)w->real_lo_ns - 1000000000 ||
	    mt > (int64_t)w->real_hi_ns + 10 * (int64_t)1000000000) {
		close(fd);
		return -1;
	}
	return fd;
}

int sd_sym_perfmap_open(struct sd_symbolizer *sy, const struct sd_jit_want *w)
{
	size_t sl = strlen(w->stream);
	char path[4096 + 64];
	struct stat st;
	int fd = -1;
	uint32_t id;

	if (sy->addresses)
		return 0;
	if (sl > 6 && sl < 4096 && !strcmp(w->stream + sl - 6, ".sonde")) {
		snprintf(path, sizeof path, "%.*s.perf.map", (int)(sl - 6), w->stream);
		fd = open_map(path, &st);
		if (fd < 0 && fd != -ENOENT)
			sd_msg("sonde: %s: %s (not read: JIT code of %s shows as addresses)", path,
			       fd == -ELOOP ? "a symbolic link" : fd == -EMEDIUMTYPE ? "not a regular file"
			       : strerror(-fd), w->stream);
	}
	if (fd < 0 && (fd = tmp_map(w, path, sizeof path)) < 0)
		return 0;
	if (sd_strmap_get(&sy->mapkeys, path, strlen(path), &id)) {
		close(fd);
		return (int)id + 1;
	}
	if (sd_grow(&sy->maps, &sy->capmaps, sy->nmaps + 1, sizeof(*sy->maps))) {
		close(fd);
		return -ENOMEM;
	}
	struct perfmap *m = &sy->maps[sy->nmaps];
	memset(m, 0, sizeof(*m));
	int err = load(fd, path, m);
	close(fd);
	if (err || sd_strmap_put(&sy->mapkeys, path, strlen(path), (uint32_t)sy->nmaps)) {
		sd_perfmap_fini(m);
		return -ENOMEM;
	}
	return (int)++sy->nmaps;
}

const char *sd_perfmap_find(const struct perfmap *m, uint64_t addr, size_t *seg)
{
	size_t lo = 0, hi = m->nsegs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->segs[mid].hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == m->nsegs || m->segs[lo].lo > addr)
		return NULL;
	*seg = lo;
	return m->names + m->segs[lo].name;
}

void sd_perfmap_fini(struct perfmap *m)
{
	free(m->segs);
	free(m->names);
	sd_u64map_fini(&m->cache);
	memset(m, 0, sizeof(*m));
}
