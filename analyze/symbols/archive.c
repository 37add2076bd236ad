/*
 * archive.c: the build-id archive (docs/REPORT.md "Build-id archive"), for symfile.c and
 * the CLI: what a module's file gave (its raw locations: the symbol cache's format,
 * symcache.c) kept by build-id in the user's cache, so that a profile stays readable after
 * its binaries are rebuilt, upgraded or deleted, as perf's build-id cache does.
 *
 * Written: when a module file with a build-id gained raw locations in a report (those of
 * the addresses it looked up anew; every one of them after sd_sym_archive_all: `sonde run`
 * after CMD, `sonde archive`), merged into that build-id's archive file HEX.sym, written
 * whole under a temporary name and renamed (sd_symcache_save). The directory is the
 * user's, 0700, never through a symlink nor another user's (sd_symcache_dir_open); its
 * files are 0600. Past SONDE_ARCHIVE_MAX bytes the least recently used files go (a file
 * used to name a module has its mtime set then).
 *
 * Read: when a module's file is gone or is not the file profiled (another build-id), its
 * archived raw locations stand for the file: the packs' directories first
 * (sd_sym_archive_add), then the user's archive. The names are those the file gave, for
 * the addresses that were archived; any other address is module+0xADDR. What was named
 * so is said at sd_sym_finish, one line per archive.
 *
 * Runs in the one thread that merges streams; not thread-safe.
 */
#define _GNU_SOURCE /* AT_SYMLINK_NOFOLLOW, fdopendir */
#include "analyze/symbols/symbols_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/common.h"

enum { MAX_DIRS = 9, NOTE_NAMES = 8, NAME_MAX_LEN = 2 * SD_BUILD_ID_MAX + 8 };
#define DEFAULT_MAX_BYTES (256ull << 20)

/* A directory of archive files: dirs[0] is the user's archive, then the packs'. */
struct arcdir { char *dir, *label; int fd; /* -2: not opened yet; -1: none */ };
/* A module named from dirs[dir], and why its file was not used. */
struct named { char *base, *why; size_t dir; };

struct archive {
	struct arcdir dirs[MAX_DIRS]; size_t ndirs;
	int all;                       /* archive every raw location (sd_sym_archive_all) */
	int warned;                    /* a write failure said */
	struct sd_strmap files;        /* build-id -> index in sy->sfiles */
	struct named *named; size_t nnamed, capnamed, noted;
};

int sd_sym_archive_dir(char *buf, size_t len)
{
	const char *a = getenv("SONDE_ARCHIVE"), *c = getenv("SONDE_CACHE");
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;

	if (a && !strcmp(a, "off"))
		return 0;
	if (a && a[0])
		n = snprintf(buf, len, "%s", a);
	else if (c && !strcmp(c, "off"))
		return 0; /* no symbol cache, no archive in it */
	else if (c && c[0])
		n = snprintf(buf, len, "%s/build-id", c);
	else if (xdg && xdg[0] == '/')
		n = snprintf(buf, len, "%s/sonde/build-id", xdg);
	else if (home && home[0] == '/')
		n = snprintf(buf, len, "%s/.cache/sonde/build-id", home);
	else
		return 0;
	return n > 0 && (size_t)n < len;
}

static struct archive *arch_of(struct sd_symbolizer *sy)
{
	char dir[PATH_MAX];
	if (sy->arch)
		return sy->arch;
	struct archive *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->ndirs = 1;
	a->dirs[0].fd = -1;
	if (sd_sym_archive_dir(dir, sizeof(dir))) {
		a->dirs[0].dir = strdup(dir);
		a->dirs[0].fd = -2;
		size_t l = strlen(dir) + 32;
		if ((a->dirs[0].label = malloc(l)))
			snprintf(a->dirs[0].label, l, "the build-id archive %s", dir);
		if (!a->dirs[0].dir || !a->dirs[0].label)
			a->dirs[0].fd = -1;
	}
	sy->arch = a;
	return a;
}

int sd_sym_archive_add(struct sd_symbolizer *sy, const char *dir, const char *label)
{
	struct archive *a = arch_of(sy);
	if (!a)
		return -ENOMEM;
	if (a->ndirs == MAX_DIRS)
		return 0; /* more packs than that in one report: the first ones serve */
	struct arcdir *d = &a->dirs[a->ndirs];
	d->dir = strdup(dir);
	d->label = strdup(label);
	d->fd = -2;
	if (!d->dir || !d->label) {
		free(d->dir);
		free(d->label);
		return -ENOMEM;
	}
	a->ndirs++;
	return 0;
}

void sd_sym_archive_all(struct sd_symbolizer *sy)
{
	struct archive *a = arch_of(sy);
	if (a)
		a->all = 1;
}

/* dirs[i] opened on first use: fd, or -1. The user's archive is made if missing (its
 * default place quietly skipped where it cannot be: no home); one that is unsafe is
 * said once. A pack's directory is only opened: the user's own, no symlink. */
static int dir_fd(struct archive *a, size_t i)
{
	struct arcdir *d = &a->dirs[i];
	char why[160];
	struct stat st;

	if (d->fd != -2)
		return d->fd;
	if (i == 0 && !(getenv("SONDE_ARCHIVE") && getenv("SONDE_ARCHIVE")[0])) {
		/* build-id/ of the symbol cache's directory: that one checked first (it says
		 * itself why it is not used), build-id/ made and opened relative to it */
		char *slash = strrchr(d->dir, '/');
		*slash = 0;
		int pfd = sd_symcache_dir_open(d->dir, why, sizeof(why));
		*slash = '/';
		d->fd = -1;
		if (pfd < 0)
			return -1;
		if (mkdirat(pfd, "build-id", 0700) < 0 && errno != EEXIST)
			goto out;
		d->fd = openat(pfd, "build-id", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (d->fd >= 0 && (fstat(d->fd, &st) || st.st_uid != geteuid() ||
				   ((st.st_mode & 077) && fchmod(d->fd, 0700)))) {
			sd_msg("sonde: %s: build-id archive not used: a directory of another user "
				"or open to others (set SONDE_ARCHIVE to another directory, or to off)",
				d->dir);
			close(d->fd);
			d->fd = -1;
		}
out:
		close(pfd);
		return d->fd;
	}
	if (i == 0) {
		d->fd = sd_symcache_dir_open(d->dir, why, sizeof(why));
		if (d->fd < 0 && (getenv("SONDE_ARCHIVE") || errno == EPERM))
			sd_msg("sonde: %s: build-id archive not used: %s (set SONDE_ARCHIVE to "
				"another directory, or to off)", d->dir, why);
		return d->fd;
	}
	d->fd = open(d->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->fd >= 0 && (fstat(d->fd, &st) || st.st_uid != geteuid())) {
		close(d->fd);
		d->fd = -1;
	}
	return d->fd;
}

/* The archive file name of a build-id: HEX.sym. */
static void entry_name(const uint8_t *bid, size_t len, char *buf, size_t buflen)
{
	size_t o = 0;
	for (size_t i = 0; i < len && o + 3 < buflen; i++)
		o += (size_t)snprintf(buf + o, buflen - o, "%02x", bid[i]);
	snprintf(buf + o, buflen - o, ".sym");
}

int sd_sym_archive_open(struct sd_symbolizer *sy, const uint8_t *bid, size_t len,
			char *name, size_t namelen)
{
	struct archive *a = arch_of(sy);
	struct stat st;

	if (!a || !len || len > SD_BUILD_ID_MAX)
		return -1;
	entry_name(bid, len, name, namelen);
	for (size_t k = 1; k <= a->ndirs; k++) {
		size_t i = k % a->ndirs; /* the packs first, the user's archive last */
		int dfd = dir_fd(a, i);
		int fd = dfd < 0 ? -1 : openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
					       O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid())
			return fd;
		close(fd);
	}
	return -1;
}

/* Remember that module m was named from dirs[dir] because of why. */
static void add_named(struct archive *a, const struct symmod *m, const char *why, size_t dir)
{
	if (sd_grow(&a->named, &a->capnamed, a->nnamed + 1, sizeof(*a->named)))
		return;
	struct named *n = &a->named[a->nnamed];
	n->base = strdup(m->base);
	n->why = strdup(why);
	n->dir = dir;
	if (n->base && n->why)
		a->nnamed++;
	else
		free(n->base), free(n->why);
}

/* A symfile standing for module m's file, made of archived cache c (taken). */
static long add_file(struct sd_symbolizer *sy, struct archive *a, struct symmod *m,
		     struct sd_symcache *c, size_t dir)
{
	struct symfile nf = { .fd = -1, .opened = 1, .cache = c, .from = a->dirs[dir].label };
	memcpy(nf.id.bid, m->build_id, m->build_id_len);
	nf.id.bid_len = (uint32_t)m->build_id_len;
	nf.path = strdup(m->path);
	if (!nf.path || sd_grow(&sy->sfiles, &sy->capsfiles, sy->nsfiles + 1, sizeof(nf)) ||
	    sd_strmap_put(&a->files, m->build_id, m->build_id_len, (uint32_t)sy->nsfiles)) {
		free(nf.path);
		sd_symcache_free(c);
		return -1;
	}
	sy->sfiles[sy->nsfiles] = nf;
	return (long)sy->nsfiles++;
}

long sd_archive_file(struct sd_symbolizer *sy, struct symmod *m, const char *why)
{
	struct archive *a = arch_of(sy);
	char name[NAME_MAX_LEN];
	uint32_t idx;

	if (!a || !m->build_id_len || sy->addresses)
		return -1;
	if (sd_strmap_get(&a->files, m->build_id, m->build_id_len, &idx)) {
		const struct symfile *f = &sy->sfiles[idx];
		for (size_t i = 0; i < a->ndirs; i++)
			if (f->from == a->dirs[i].label)
				add_named(a, m, why, i);
		return idx;
	}
	entry_name(m->build_id, m->build_id_len, name, sizeof(name));
	struct sd_fileid want = { .bid_len = (uint32_t)m->build_id_len,
				  .size = SD_SYMCACHE_ANY_SIZE };
	memcpy(want.bid, m->build_id, m->build_id_len);
	for (size_t k = 1; k <= a->ndirs; k++) {
		size_t i = k % a->ndirs; /* the packs first, the user's archive last */
		struct sd_symcache *c = NULL;
		int same, dfd = dir_fd(a, i);
		int r = dfd < 0 ? -ENOENT : sd_symcache_load(dfd, name, &want, &c, &same);
		if (r == -EINVAL)
			sd_msg("sonde: %s/%s: not a valid archive file (ignored)", a->dirs[i].dir,
				name);
		if (r)
			continue;
		if (i == 0) /* used: the last to go when the archive is trimmed */
			utimensat(dfd, name, NULL, AT_SYMLINK_NOFOLLOW);
		long f = add_file(sy, a, m, c, i);
		if (f >= 0)
			add_named(a, m, why, i);
		return f;
	}
	return -1;
}

/* ---- writing and trimming -------------------------------------------------------- */

/* SONDE_ARCHIVE_MAX in bytes (K, M, G suffixes; 0: no cap); a bad value is said once
 * and the default used. */
static uint64_t max_bytes(void)
{
	const char *e = getenv("SONDE_ARCHIVE_MAX");
	char *end;
	if (!e || !e[0])
		return DEFAULT_MAX_BYTES;
	unsigned long long v = strtoull(e, &end, 10);
	int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 :
		    *end == 'G' || *end == 'g' ? 30 : 0;
	if (shift)
		end++;
	if (end == e || *end || e[0] == '-' || v > (UINT64_MAX >> shift)) {
		sd_msg("sonde: SONDE_ARCHIVE_MAX=%s: not a size (give bytes, or a number with K, "
			"M or G; using %llu M)", e, DEFAULT_MAX_BYTES >> 20);
		return DEFAULT_MAX_BYTES;
	}
	return (uint64_t)v << shift;
}

struct ent { char *name; uint64_t size; struct timespec mtime; };

static int ent_cmp(const void *x, const void *y)
{
	const struct ent *a = x, *b = y;
	if (a->mtime.tv_sec != b->mtime.tv_sec)
		return a->mtime.tv_sec < b->mtime.tv_sec ? -1 : 1;
	return (a->mtime.tv_nsec > b->mtime.tv_nsec) - (a->mtime.tv_nsec < b->mtime.tv_nsec);
}

/* The archive kept under its cap: the least recently used files removed, never one
 * written or used since `keep` (this report's). */
static void trim(int dfd, time_t keep)
{
	uint64_t cap = max_bytes(), total = 0;
	struct ent *v = NULL;
	size_t n = 0, capv = 0;
	int fd = dup(dfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	struct stat st;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (de->d_name[0] == '.' || l < 5 || strcmp(de->d_name + l - 4, ".sym") ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		total += (uint64_t)st.st_size;
		if (sd_grow(&v, &capv, n + 1, sizeof(*v)) || !(v[n].name = strdup(de->d_name)))
			break;
		v[n].size = (uint64_t)st.st_size;
		v[n++].mtime = st.st_mtim;
	}
	closedir(d);
	if (cap && total > cap && n) {
		qsort(v, n, sizeof(*v), ent_cmp);
		for (size_t i = 0; i < n && total > cap && v[i].mtime.tv_sec < keep; i++)
			if (!unlinkat(dfd, v[i].name, 0))
				total -= v[i].size;
	}
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* f's raw locations merged into its build-id's archive file: 1 written, 0 nothing new,
 * -errno. */
static int archive_one(int dfd, const struct symfile *f)
{
	char name[NAME_MAX_LEN];
	struct sd_symcache *c = NULL;
	int same, r;

	entry_name(f->id.bid, f->id.bid_len, name, sizeof(name));
	struct sd_fileid want = { .bid_len = f->id.bid_len, .size = SD_SYMCACHE_ANY_SIZE };
	memcpy(want.bid, f->id.bid, f->id.bid_len);
	int old = sd_symcache_load(dfd, name, &want, &c, &same) == 0;
	if (!old && !(c = sd_symcache_new()))
		return -ENOMEM;
	int added = sd_symcache_merge(c, f->cache);
	r = added < 0 ? added : added == 0 && old ? 0 : sd_symcache_save(dfd, name, c, &f->id);
	sd_symcache_free(c);
	return r < 0 ? r : added > 0 || !old;
}

void sd_archive_save(struct sd_symbolizer *sy)
{
	struct archive *a = arch_of(sy);
	time_t start = time(NULL);
	int wrote = 0, dfd = -1;

	if (!a || sy->addresses)
		return;
	for (size_t i = 0; i < sy->nsfiles; i++) {
		struct symfile *f = &sy->sfiles[i];
		size_t n = f->cache ? sd_symcache_count(f->cache) : 0;
		if (f->from || !f->id.bid_len || n <= f->arch_n ||
		    !(a->all || sd_symcache_dirty(f->cache)))
			continue;
		if (dfd < 0 && (dfd = dir_fd(a, 0)) < 0)
			return;
		int r = archive_one(dfd, f);
		if (r < 0 && !a->warned++)
			sd_msg("sonde: %s: cannot write to the build-id archive: %s (set "
				"SONDE_ARCHIVE to another directory, or to off)", a->dirs[0].dir,
				strerror(-r));
		if (r >= 0)
			f->arch_n = n;
		wrote |= r > 0;
	}
	if (wrote)
		trim(dfd, start);
}

/* ---- the note --------------------------------------------------------------------- */

void sd_archive_note(struct sd_symbolizer *sy)
{
	struct archive *a = sy->arch;
	if (!a || a->noted == a->nnamed)
		return;
	for (size_t d = 0; d < a->ndirs; d++) {
		char *list = NULL;
		size_t len = 0, n = 0;
		FILE *m = open_memstream(&list, &len);
		if (!m)
			return;
		for (size_t i = a->noted; i < a->nnamed; i++) {
			const struct named *e = &a->named[i];
			if (e->dir != d)
				continue;
			if (n < NOTE_NAMES)
				fprintf(m, "%s%s: %s", n ? "; " : "", e->base, e->why);
			n++;
		}
		if (n > NOTE_NAMES)
			fprintf(m, "; %zu more", n - NOTE_NAMES);
		if (fclose(m) == 0 && n)
			sd_msg("sonde: note: %zu module%s named from %s, not from %s file%s (%s)", n,
				n > 1 ? "s" : "", a->dirs[d].label, n > 1 ? "their" : "its",
				n > 1 ? "s" : "", list);
		free(list);
	}
	a->noted = a->nnamed;
}

void sd_archive_free(struct sd_symbolizer *sy)
{
	struct archive *a = sy->arch;
	if (!a)
		return;
	for (size_t i = 0; i < a->ndirs; i++) {
		if (a->dirs[i].fd >= 0)
			close(a->dirs[i].fd);
		free(a->dirs[i].dir);
		free(a->dirs[i].label);
	}
	for (size_t i = 0; i < a->nnamed; i++)
		free(a->named[i].base), free(a->named[i].why);
	free(a->named);
	sd_strmap_fini(&a->files);
	free(a);
	sy->arch = NULL;
}
