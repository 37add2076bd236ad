/*
 * symcache.c: what `sonde report` learned about the addresses of one ELF file, kept in
 * memory for the report and on disk across reports (the symbol cache, docs/REPORT.md
 * "Symbol cache").
 *
 * symfile.c resolves an address once with elfutils into a *raw location*: the symbol
 * table's name (version dropped, not demangled), the name of the DWARF subprogram, the
 * address's own file:line, and the inlined calls at it (innermost first: name, call
 * file:line). Raw locations do not depend on the report's options (--no-inline,
 * --no-demangle, --lines are applied when they are turned into frames), so one cache
 * serves every report of the same file.
 *
 * On disk: one file per ELF file, `<build-id hex>.sym` (or `noid-<hash>.sym` for a file
 * without build-id, the hash of its path and identity), in the cache directory: 0700,
 * owned by the user, never reached through a symlink (the directory is opened with
 * O_NOFOLLOW and every file is opened relative to it, O_NOFOLLOW too). A file is written
 * whole to a temporary name (O_EXCL, 0600) and renamed over the old one, so a concurrent
 * report reads the old file or the new one, never a part. Readers trust nothing: the
 * size, a checksum and every offset and count are checked; a bad file is ignored (one
 * warning) and replaced at the next save.
 *
 * Layout (native byte order; the header's `order` word rejects a foreign one):
 *   header  struct dhdr (below); its flags say whether every entry was resolved with the
 *           file's debug info (0 in files written before the flag: treated as "not
 *           every"), so that debug info found later is not hidden (debuginfod.c)
 *   strings nstr bytes of NUL-terminated strings (offset 0 is the empty string), padded to 4
 *   words   nwords u32: per entry addr_lo, addr_hi, sym, outer, file, line, ninl, then
 *           ninl x (name, file, line); strings as offsets, NONE for absent
 *
 * Runs in the thread that merges streams (symbols.c, symfile.c); not thread-safe.
 */
#include "analyze/symbols/symbols.h"
#include "common/common.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { F_DEBUG = 1 };
enum { NONE = UINT32_MAX, MAX_INL = SD_SYM_MAX_INLINE, VERSION = 4 /* 2: PLT entries named func@plt; 3: scoped names of DIEs without a linkage name; 4: functions without a name by their unwind-table entry */ };

struct dhdr {
	char magic[8];              /* "SONDESYM" */
	uint32_t version, order;    /* VERSION, 0x01020304 */
	uint32_t bid_len, flags;    /* F_DEBUG: every entry made with the file's DWARF */
	uint8_t bid[SD_BUILD_ID_MAX];
	uint64_t dev, ino, size;
	int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
	uint32_t nstr, nwords, nentries, pad1;
	uint64_t sum;               /* FNV-1a of strings and words */
};

struct sd_symcache {
	char *str; size_t nstr, capstr;
	struct sd_strmap strids;    /* string -> offset */
	uint32_t *w; size_t nw, capw;
	struct sd_u64map at;        /* addr -> index of its sym word in w */
	size_t nentries;
	int dirty;
	int indexed;                /* strids holds every string of str */
	int lacks_debug;            /* some entry may have been made without DWARF */
};

struct sd_symcache *sd_symcache_new(void)
{
	struct sd_symcache *c = calloc(1, sizeof(*c));
	if (c)
		c->indexed = 1;
	if (c && (sd_grow(&c->str, &c->capstr, 1, 1) || (c->str[0] = 0, c->nstr = 1, 0))) {
		free(c);
		return NULL;
	}
	return c;
}

void sd_symcache_free(struct sd_symcache *c)
{
	if (!c)
		return;
	free(c->str);
	sd_strmap_fini(&c->strids);
	free(c->w);
	sd_u64map_fini(&c->at);
	free(c);
}

int sd_symcache_lacks_debug(const struct sd_symcache *c)
{
	return c->lacks_debug;
}

void sd_symcache_lacks_debug_set(struct sd_symcache *c)
{
	c->lacks_debug = 1;
}

int sd_symcache_dirty(const struct sd_symcache *c)
{
	return c->dirty;
}

void sd_symcache_touch(struct sd_symcache *c)
{
	c->dirty = 1;
}

static int index_strings(struct sd_symcache *c);

/* Offset of string s (NULL: NONE), added if new; out of memory sets *err. */
static uint32_t str_id(struct sd_symcache *c, const char *s, int *err)
{
	uint32_t id;
	if (!s)
		return NONE;
	size_t l = strlen(s);
	if (sd_strmap_get(&c->strids, s, l, &id))
		return id;
	if (c->nstr + l + 1 >= NONE || sd_grow(&c->str, &c->capstr, c->nstr + l + 1, 1) ||
	    sd_strmap_put(&c->strids, s, l, (uint32_t)c->nstr)) {
		*err = -ENOMEM;
		return NONE;
	}
	memcpy(c->str + c->nstr, s, l + 1);
	id = (uint32_t)c->nstr;
	c->nstr += l + 1;
	return id;
}

int sd_symcache_put(struct sd_symcache *c, uint64_t addr, const struct sd_rawloc *l)
{
	uint32_t idx;
	int err = 0;
	size_t ninl = l->ninl < MAX_INL ? l->ninl : MAX_INL;

	if (sd_u64map_get(&c->at, addr, &idx))
		return 0;
	if (!c->indexed && index_strings(c))
		return -ENOMEM;
	c->indexed = 1;
	if (c->nw + 7 + 3 * ninl >= NONE || sd_grow(&c->w, &c->capw, c->nw + 7 + 3 * ninl, 4))
		return -ENOMEM;
	uint32_t *w = c->w + c->nw;
	w[0] = (uint32_t)addr;
	w[1] = (uint32_t)(addr >> 32);
	w[2] = str_id(c, l->sym, &err);
	w[3] = str_id(c, l->outer, &err);
	w[4] = str_id(c, l->file, &err);
	w[5] = l->line;
	w[6] = (uint32_t)ninl;
	for (size_t i = 0; i < ninl; i++) {
		w[7 + 3 * i] = str_id(c, l->inl[i].name, &err);
		w[8 + 3 * i] = str_id(c, l->inl[i].file, &err);
		w[9 + 3 * i] = l->inl[i].line;
	}
	if (err || sd_u64map_put(&c->at, addr, (uint32_t)c->nw + 2))
		return -ENOMEM;
	c->nw += 7 + 3 * ninl;
	c->nentries++;
	c->dirty = 1;
	return 0;
}

size_t sd_symcache_count(const struct sd_symcache *c)
{
	return c->nentries;
}

int sd_symcache_merge(struct sd_symcache *into, const struct sd_symcache *from)
{
	struct sd_rawinl inl[MAX_INL];
	struct sd_rawloc l = { .inl = inl };
	uint32_t idx;
	int added = 0;

	for (size_t i = 0; i + 7 <= from->nw; i += 7 + 3 * (size_t)from->w[i + 6]) {
		uint64_t addr = (uint64_t)from->w[i + 1] << 32 | from->w[i];
		if (sd_u64map_get(&into->at, addr, &idx) || !sd_symcache_get(from, addr, &l))
			continue;
		if (sd_symcache_put(into, addr, &l))
			return -ENOMEM;
		added++;
	}
	return added;
}

static const char *str_at(const struct sd_symcache *c, uint32_t off)
{
	return off == NONE ? NULL : c->str + off;
}

int sd_symcache_get(const struct sd_symcache *c, uint64_t addr, struct sd_rawloc *l)
{
	uint32_t idx;

	if (!sd_u64map_get(&c->at, addr, &idx))
		return 0;
	const uint32_t *w = c->w + idx;
	l->sym = str_at(c, w[0]);
	l->outer = str_at(c, w[1]);
	l->file = str_at(c, w[2]);
	l->line = w[3];
	l->ninl = w[4];
	for (uint32_t i = 0; i < l->ninl; i++) {
		l->inl[i].name = str_at(c, w[5 + 3 * i]);
		l->inl[i].file = str_at(c, w[6 + 3 * i]);
		l->inl[i].line = w[7 + 3 * i];
	}
	return 1;
}

/* ---- the directory ----------------------------------------------------------------- */

/* mkdir -p of the parents of `dir` (mode 0700 for those it makes); errors are left to
 * the open of dir itself. */
static void make_parents(const char *dir)
{
	char *p = strdup(dir);
	if (!p)
		return;
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		mkdir(p, 0700);
		*s = '/';
	}
	free(p);
}

int sd_symcache_dir_open(const char *dir, char *why, size_t len)
{
	struct stat st;

	make_parents(dir);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
		int e = errno;
		snprintf(why, len, "cannot create it: %s", strerror(e));
		errno = e;
		return -1;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno == ELOOP || errno == ENOTDIR ? EPERM : errno;
		snprintf(why, len, "%s", e == EPERM ? "a symlink or not a directory" : strerror(e));
		errno = e;
		return -1;
	}
	errno = EPERM; /* from here on: there, but unsafe */
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, len, "not a directory");
		goto bad;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, len, "owned by uid %u, not by you", (unsigned)st.st_uid);
		goto bad;
	}
	if ((st.st_mode & 077) && fchmod(fd, 0700) < 0) {
		snprintf(why, len, "open to others and cannot be made private: %s", strerror(errno));
		goto bad;
	}
	return fd;
bad:
	close(fd);
	errno = EPERM;
	return -1;
}

/* ---- load and save ------------------------------------------------------------------ */

/* Parse words into c's index, checking every offset and count. 0 or -EINVAL/-ENOMEM. */
static int index_words(struct sd_symcache *c, size_t nentries)
{
	size_t i = 0, n = 0;

	while (i < c->nw) {
		if (c->nw - i < 7)
			return -EINVAL;
		const uint32_t *w = c->w + i;
		uint32_t ninl = w[6];
		if (ninl > MAX_INL || c->nw - i - 7 < 3 * (size_t)ninl)
			return -EINVAL;
		for (size_t k = 2; k < 7 + 3 * (size_t)ninl; k++) {
			int is_str = k == 2 || k == 3 || k == 4 || (k >= 7 && (k - 7) % 3 != 2);
			if (is_str && w[k] != NONE && w[k] >= c->nstr)
				return -EINVAL;
		}
		uint64_t addr = (uint64_t)w[1] << 32 | w[0];
		uint32_t old;
		if (sd_u64map_get(&c->at, addr, &old))
			return -EINVAL;
		if (sd_u64map_put(&c->at, addr, (uint32_t)i + 2))
			return -ENOMEM;
		i += 7 + 3 * (size_t)ninl;
		n++;
	}
	c->nentries = n;
	return n == nentries ? 0 : -EINVAL;
}

/* Rebuild the string index of a loaded string table (for dedup of strings added later). */
static int index_strings(struct sd_symcache *c)
{
	for (size_t off = 1; off < c->nstr;) {
		size_t l = strlen(c->str + off);
		uint32_t id;
		if (!sd_strmap_get(&c->strids, c->str + off, l, &id) &&
		    sd_strmap_put(&c->strids, c->str + off, l, (uint32_t)off))
			return -ENOMEM;
		off += l + 1;
	}
	return 0;
}

int sd_symcache_load(int dirfd, const char *name, const struct sd_fileid *want,
		     struct sd_symcache **out, int *same_file)
{
	struct dhdr h;
	struct stat st;
	struct sd_symcache *c = NULL;
	int err = -EINVAL;

	*out = NULL;
	*same_file = 0;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (size_t)st.st_size < sizeof(h) || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		goto out;
	if (!memcmp(h.magic, "SONDESYM", 8) && h.version != VERSION) {
		err = -ESTALE; /* another version's file: rewritten without a word */
		goto out;
	}
	if (memcmp(h.magic, "SONDESYM", 8) || h.order != 0x01020304 ||
	    h.bid_len > SD_BUILD_ID_MAX || h.bid_len != want->bid_len ||
	    memcmp(h.bid, want->bid, h.bid_len) ||
	    (h.size != want->size && want->size != SD_SYMCACHE_ANY_SIZE))
		goto out;
	size_t spad = ((size_t)h.nstr + 3) & ~(size_t)3;
	if ((uint64_t)st.st_size != sizeof(h) + spad + 4 * (uint64_t)h.nwords || h.nstr == 0 ||
	    h.nstr >= NONE || h.nwords >= NONE / 4)
		goto out;
	err = -ENOMEM;
	if (!(c = calloc(1, sizeof(*c))) || !(c->str = malloc(spad)) ||
	    !(c->w = malloc(h.nwords ? 4 * (size_t)h.nwords : 4)))
		goto out;
	c->capstr = spad;
	c->capw = h.nwords ? h.nwords : 1;
	err = -EINVAL;
	if (pread(fd, c->str, spad, sizeof(h)) != (ssize_t)spad ||
	    pread(fd, c->w, 4 * (size_t)h.nwords, (off_t)(sizeof(h) + spad)) !=
	    (ssize_t)(4 * (size_t)h.nwords))
		goto out;
	c->nstr = h.nstr;
	c->nw = h.nwords;
	uint64_t sum = sd_fnv1a_more(sd_fnv1a(c->str, c->nstr), c->w, 4 * c->nw);
	if (sum != h.sum || c->str[0] || c->str[c->nstr - 1])
		goto out;
	if ((err = index_words(c, h.nentries)))
		goto out;
	c->lacks_debug = !(h.flags & F_DEBUG); /* and in files older than the flag */
	*same_file = h.dev == want->dev && h.ino == want->ino && h.size == want->size &&
		     h.mtime_s == want->mtime_s && h.mtime_ns == want->mtime_ns &&
		     h.ctime_s == want->ctime_s && h.ctime_ns == want->ctime_ns;
	*out = c;
	c = NULL;
	err = 0;
out:
	close(fd);
	sd_symcache_free(c);
	return err;
}

int sd_symcache_save(int dirfd, const char *name, struct sd_symcache *c,
		     const struct sd_fileid *id)
{
	struct dhdr h;
	char tmp[256];
	static const char zero[4];
	static unsigned seq;
	int err;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, "SONDESYM", 8);
	h.version = VERSION;
	h.order = 0x01020304;
	h.bid_len = id->bid_len;
	h.flags = c->lacks_debug ? 0 : F_DEBUG;
	memcpy(h.bid, id->bid, id->bid_len);
	h.dev = id->dev;
	h.ino = id->ino;
	h.size = id->size;
	h.mtime_s = id->mtime_s;
	h.mtime_ns = id->mtime_ns;
	h.ctime_s = id->ctime_s;
	h.ctime_ns = id->ctime_ns;
	h.nstr = (uint32_t)c->nstr;
	h.nwords = (uint32_t)c->nw;
	h.nentries = (uint32_t)c->nentries;
	h.sum = sd_fnv1a_more(sd_fnv1a(c->str, c->nstr), c->w, 4 * c->nw);
	snprintf(tmp, sizeof(tmp), ".%s.%ld.%u.tmp", name, (long)getpid(), seq++);
	int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = sd_write_all(fd, &h, sizeof(h));
	if (!err)
		err = sd_write_all(fd, c->str, c->nstr);
	if (!err)
		err = sd_write_all(fd, zero, ((c->nstr + 3) & ~(size_t)3) - c->nstr);
	if (!err)
		err = sd_write_all(fd, c->w, 4 * c->nw);
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && renameat(dirfd, tmp, dirfd, name) < 0)
		err = -errno;
	if (err)
		unlinkat(dirfd, tmp, 0);
	else
		c->dirty = 0;
	return err;
}
