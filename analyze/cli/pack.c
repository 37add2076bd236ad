/*
 * pack.c: a profile packed into one file for another machine (`sonde archive`) and read
 * back by `sonde report PACK` (docs/REPORT.md "Packs"). A pack is a plain POSIX ustar
 * file that tar(1) unpacks too:
 *
 *   TOP/                 the profile's directory (its last component)
 *   TOP/NAME.sonde       its streams, TOP/NAME.perf.map their kept JIT maps
 *   TOP/build-id/HEX.sym the archived symbols of every module its streams name
 *
 * Written by the CLI's thread into a file made by sd_outfile_open. Read without trust:
 * every header's checksum, octal fields and name are checked, names must be of the shapes
 * above (one TOP, no "..", no other directory, no leading dot), only regular files and
 * those two directories are taken (a link, device or anything else is refused), sizes are
 * bounded by what the pack holds, the number of entries is bounded, and a pack that ends
 * inside an entry is refused. Entries are made in a fresh private directory (mkdtemp,
 * 0700) with O_CREAT|O_EXCL|O_NOFOLLOW, 0600; the directory goes at exit.
 */
#define _GNU_SOURCE /* O_PATH */
#include "analyze/cli/cli.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { BLK = 512, MAX_ENTRIES = 1 << 20 };

struct ustar {
	char name[100], mode[8], uid[8], gid[8], size[12], mtime[12], chksum[8], type;
	char linkname[100], magic[6], version[2], uname[32], gname[32], devmajor[8];
	char devminor[8], prefix[155], pad[12];
};
_Static_assert(sizeof(struct ustar) == BLK, "a ustar header is one block");

static unsigned checksum(const struct ustar *h)
{
	const unsigned char *p = (const void *)h;
	unsigned sum = 0;
	for (size_t i = 0; i < BLK; i++)
		sum += i >= offsetof(struct ustar, chksum) &&
		       i < offsetof(struct ustar, chksum) + sizeof(h->chksum) ? ' ' : p[i];
	return sum;
}

/* One header: dir "" or "TOP" or "TOP/build-id" as the prefix, name as the name. */
static int put_header(int fd, const char *dir, const char *name, char type, uint64_t size,
		      uint64_t mtime)
{
	struct ustar h;
	memset(&h, 0, sizeof(h));
	if (strlen(dir) >= sizeof(h.prefix) || strlen(name) >= sizeof(h.name) ||
	    size > 077777777777ull)
		return -ENAMETOOLONG;
	memcpy(h.prefix, dir, strlen(dir));
	memcpy(h.name, name, strlen(name));
	snprintf(h.mode, sizeof(h.mode), "%07o", type == '5' ? 0700 : 0600);
	snprintf(h.uid, sizeof(h.uid), "%07o", 0);
	snprintf(h.gid, sizeof(h.gid), "%07o", 0);
	snprintf(h.size, sizeof(h.size), "%011" PRIo64, size);
	snprintf(h.mtime, sizeof(h.mtime), "%011" PRIo64, (uint64_t)(mtime & 077777777777u));
	h.type = type;
	memcpy(h.magic, "ustar", 6);
	memcpy(h.version, "00", 2);
	snprintf(h.chksum, sizeof(h.chksum), "%06o", checksum(&h));
	h.chksum[7] = ' ';
	return sd_write_all(fd, &h, sizeof(h));
}

int sd_pack_begin(int fd, const char *top)
{
	int r = put_header(fd, "", top, '5', 0, 0);
	if (!r)
		r = put_header(fd, top, "build-id", '5', 0, 0);
	return r;
}

int sd_pack_add(int fd, const char *top, int sub, const char *name, int src)
{
	struct stat st;
	char dir[200], buf[64 << 10];
	static const char zero[BLK];

	if (fstat(src, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	snprintf(dir, sizeof(dir), "%s%s", top, sub ? "/build-id" : "");
	int r = put_header(fd, dir, name, '0', (uint64_t)st.st_size, (uint64_t)st.st_mtim.tv_sec);
	uint64_t left = (uint64_t)st.st_size;
	for (off_t off = 0; !r && left;) {
		ssize_t n = pread(src, buf, left < sizeof(buf) ? left : sizeof(buf), off);
		if (n <= 0) /* the file shrank while packed: no pack at all */
			return n < 0 ? -errno : -EIO;
		r = sd_write_all(fd, buf, (size_t)n);
		off += n;
		left -= (uint64_t)n;
	}
	if (!r && st.st_size % BLK)
		r = sd_write_all(fd, zero, BLK - (size_t)(st.st_size % BLK));
	return r;
}

int sd_pack_end(int fd)
{
	static const char zero[2 * BLK];
	return sd_write_all(fd, zero, sizeof(zero));
}

/* ---- reading ----------------------------------------------------------------------- */

int sd_pack_is(const char *path)
{
	struct ustar h;
	struct stat st;
	int fd = sd_open_path(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int is = fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) &&
		 pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
		 !memcmp(h.magic, "ustar", 5);
	if (fd >= 0)
		close(fd);
	return is;
}

/* An octal field of n bytes: 0 and *v, or -1 (not a number, or past the field). */
static int octal(const char *f, size_t n, uint64_t *v)
{
	size_t i = 0;
	*v = 0;
	while (i < n && f[i] == ' ')
		i++;
	if (i == n || f[i] < '0' || f[i] > '7')
		return -1;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
		if (*v >> 60)
			return -1;
		*v = *v << 3 | (uint64_t)(f[i] - '0');
	}
	return i == n || f[i] == 0 || f[i] == ' ' ? 0 : -1;
}

/* A field of n bytes as a string into out (NUL inside, or not at all: n bytes). */
static void field(const char *f, size_t n, char *out)
{
	size_t l = strnlen(f, n);
	memcpy(out, f, l);
	out[l] = 0;
}

/* One name component that may be made: not empty, no '/', no leading dot, printable. */
static int good_component(const char *s, size_t len)
{
	if (!len || s[0] == '.' || len > 255)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (s[i] == '/' || (unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t l = strlen(s), k = strlen(suffix);
	return l > k && !strcmp(s + l - k, suffix);
}

/* What the entry named full is: 1 TOP's directory, 2 TOP/build-id, 3 a stream or map in
 * TOP, 4 an archive file in TOP/build-id; 0 none of those. top: the first entry's TOP
 * ("" until then). *leaf: the last component. */
static int classify(const char *full, char *top, const char **leaf)
{
	char buf[300];
	snprintf(buf, sizeof(buf), "%s", full);
	size_t l = strlen(buf);
	while (l && buf[l - 1] == '/')
		buf[--l] = 0;
	char *s1 = strchr(buf, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
	size_t tl = s1 ? (size_t)(s1 - buf) : l;
	if (!good_component(buf, tl) || (top[0] && (strlen(top) != tl || strncmp(top, buf, tl))))
		return 0;
	if (!top[0])
		memcpy(top, buf, tl), top[tl] = 0;
	*leaf = full + (s2 ? s2 - buf + 1 : s1 ? s1 - buf + 1 : 0);
	if (!s1)
		return 1;
	if (!s2) {
		if (!strcmp(s1 + 1, "build-id"))
			return 2;
		return good_component(s1 + 1, strlen(s1 + 1)) &&
		       (ends_with(s1 + 1, ".sonde") || ends_with(s1 + 1, ".perf.map")) ? 3 : 0;
	}
	if ((size_t)(s2 - s1 - 1) != 8 || strncmp(s1 + 1, "build-id", 8) || strchr(s2 + 1, '/'))
		return 0;
	const char *h = s2 + 1;
	size_t hl = strlen(h);
	if (hl < 6 || hl > 2 * 64 + 4 || strcmp(h + hl - 4, ".sym"))
		return 0;
	for (size_t i = 0; i + 4 < hl; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f')))
			return 0;
	return 4;
}

/* Copy size bytes of the pack (at off) into a new file name of dirfd. 0, -EEXIST, -EIO
 * (the pack ends first), -errno. */
static int extract(int pfd, off_t off, uint64_t size, int dirfd, const char *name)
{
	char buf[64 << 10];
	int out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int r = out < 0 ? -errno : 0;
	while (!r && size) {
		ssize_t n = pread(pfd, buf, size < sizeof(buf) ? size : sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		r = n < 0 ? -errno : n == 0 ? -EIO : sd_write_all(out, buf, (size_t)n);
		off += n > 0 ? n : 0;
		size -= n > 0 ? (uint64_t)n : 0;
	}
	if (out >= 0 && close(out) < 0 && !r)
		r = -errno;
	return r;
}

/* Reads the entries of the pack open on pfd into dirfd (TOP's files) and bfd (its
 * build-id/): SD_EXIT_OK, or a said SD_EXIT_BADINPUT / SD_EXIT_IO. */
static int read_entries(int pfd, const char *path, int dirfd, int bfd, uint64_t psize,
			char *top)
{
	struct ustar h;
	size_t n = 0, refused = 0, streams = 0;
	const char *why = NULL;
	off_t off = 0;

	for (;; n++) {
		ssize_t got = pread(pfd, &h, sizeof(h), off);
		uint64_t size, sum;
		char name[100 + 1], prefix[155 + 1], full[300];
		const char *leaf;
		if (got == 0 && n) { why = "it ends without its two empty blocks"; break; }
		if (got != (ssize_t)sizeof(h)) { why = "truncated inside a header"; break; }
		static const struct ustar zero;
		if (!memcmp(&h, &zero, sizeof(h)))
			break; /* the end */
		if (n >= MAX_ENTRIES) { why = "more than 1048576 entries"; break; }
		if (memcmp(h.magic, "ustar", 5) || octal(h.chksum, sizeof(h.chksum), &sum) ||
		    sum != checksum(&h)) { why = "a header is not a ustar header (bad checksum)"; break; }
		if (octal(h.size, sizeof(h.size), &size) || size > psize ||
		    (uint64_t)off + BLK > psize - size) { why = "an entry's size is past the end of the pack"; break; }
		field(h.name, sizeof(h.name), name);
		field(h.prefix, sizeof(h.prefix), prefix);
		snprintf(full, sizeof(full), "%s%s%s", prefix, prefix[0] ? "/" : "", name);
		int kind = classify(full, top, &leaf);
		off_t data = off + BLK;
		off = data + (off_t)((size + BLK - 1) / BLK * BLK);
		if ((kind == 1 || kind == 2) && h.type == '5')
			continue;
		if ((kind != 3 && kind != 4) || (h.type != '0' && h.type != 0)) {
			refused++; /* a link, a device, another directory, a name out of shape */
			continue;
		}
		int r = extract(pfd, data, size, kind == 3 ? dirfd : bfd, leaf);
		if (r == -EIO) { why = "truncated inside an entry"; break; }
		if (r == -EEXIST) { refused++; continue; } /* the same name twice: the first */
		if (r)
			return sd_error(SD_EXIT_IO, "report: %s: cannot unpack %s: %s (set TMPDIR to "
					"a directory with room)", path, leaf, strerror(-r));
		streams += ends_with(leaf, ".sonde");
	}
	if (why)
		return sd_error(SD_EXIT_BADINPUT, "report: %s: not a sonde pack: %s", path, why);
	if (refused)
		sd_msg("sonde: report: %s: %zu entr%s left out (links, devices, or names not of a "
			"sonde pack: TOP/NAME.sonde, TOP/NAME.perf.map, TOP/build-id/HEX.sym)", path,
			refused, refused > 1 ? "ies" : "y");
	if (!streams)
		return sd_error(SD_EXIT_BADINPUT, "report: %s: a pack without streams (nothing "
				"to report)", path);
	return SD_EXIT_OK;
}

/* The directories made by sd_pack_unpack, removed at exit. */
static char *tmpdirs[16];
static size_t ntmpdirs;

static void remove_tree(const char *dir)
{
	char p[4096];
	static const char *const subs[] = { "build-id", "" };
	for (size_t s = 0; s < 2; s++) {
		snprintf(p, sizeof(p), "%s%s%s", dir, subs[s][0] ? "/" : "", subs[s]);
		int fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		DIR *d = fdopendir(fd);
		struct dirent *de;
		while (d && (de = readdir(d)))
			if (de->d_name[0] != '.')
				unlinkat(fd, de->d_name, 0);
		if (d)
			closedir(d);
		else
			close(fd);
		rmdir(p);
	}
}

static void remove_tmpdirs(void)
{
	for (size_t i = 0; i < ntmpdirs; i++) {
		remove_tree(tmpdirs[i]);
		free(tmpdirs[i]);
	}
	ntmpdirs = 0;
}

int sd_pack_unpack(const char *path, char **dir_out)
{
	const char *tmp = getenv("TMPDIR");
	char tmpl[4096], top[256] = "";
	struct stat st;
	int code, dirfd = -1, bfd = -1;

	*dir_out = NULL;
	if (ntmpdirs == sizeof(tmpdirs) / sizeof(tmpdirs[0]))
		return sd_error(SD_EXIT_USAGE, "report: %s: at most %zu packs in one report", path,
				ntmpdirs);
	int pfd = sd_open_path(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (pfd < 0 || fstat(pfd, &st) < 0)
		return sd_error(SD_EXIT_IO, "report: %s: %s", path, strerror(errno));
	snprintf(tmpl, sizeof(tmpl), "%s/sonde-pack-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (!mkdtemp(tmpl)) {
		close(pfd);
		return sd_error(SD_EXIT_IO, "report: %s: cannot make a directory to unpack it in: "
				"%s (set TMPDIR)", path, strerror(errno));
	}
	if (!ntmpdirs)
		atexit(remove_tmpdirs);
	if (!(tmpdirs[ntmpdirs] = strdup(tmpl))) {
		close(pfd);
		rmdir(tmpl);
		return -ENOMEM;
	}
	ntmpdirs++;
	dirfd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd >= 0 && mkdirat(dirfd, "build-id", 0700) == 0)
		bfd = openat(dirfd, "build-id", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (bfd < 0)
		code = sd_error(SD_EXIT_IO, "report: %s: cannot unpack it in %s: %s (set TMPDIR)",
				path, tmpl, strerror(errno));
	else
		code = read_entries(pfd, path, dirfd, bfd, (uint64_t)st.st_size, top);
	if (code == SD_EXIT_OK && !(*dir_out = strdup(tmpl)))
		code = -ENOMEM;
	close(pfd);
	if (dirfd >= 0)
		close(dirfd);
	if (bfd >= 0)
		close(bfd);
	return code;
}

int sd_pack_paths(char *const *paths, size_t npaths, struct sd_symbolizer *sy, char ***out)
{
	char **v = calloc(npaths ? npaths : 1, sizeof(*v));
	int code = SD_EXIT_OK;
	struct stat st;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < npaths && code == SD_EXIT_OK; i++) {
		char *dir = NULL, *label = NULL, *bdir = NULL;
		int pack = sd_pack_is(paths[i]);
		if (pack && (code = sd_pack_unpack(paths[i], &dir)) != SD_EXIT_OK)
			break;
		v[i] = pack ? dir : strdup(paths[i]);
		size_t l = strlen(v[i] ? v[i] : "") + strlen(paths[i]) + 64;
		if (!v[i] || !(bdir = malloc(l)) || !(label = malloc(l))) {
			free(bdir);
			code = -ENOMEM;
			break;
		}
		snprintf(bdir, l, "%s/build-id", v[i]);
		if (pack)
			snprintf(label, l, "the pack %s", paths[i]);
		else
			snprintf(label, l, "the profile's archive %s/build-id", paths[i]);
		/* a pack's, or a directory where one was unpacked: its archived symbols */
		if (!stat(bdir, &st) && S_ISDIR(st.st_mode) && sd_sym_archive_add(sy, bdir, label))
			code = -ENOMEM;
		free(bdir);
		free(label);
	}
	if (code != SD_EXIT_OK) {
		for (size_t i = 0; i < npaths; i++)
			free(v[i]);
		free(v);
		return code;
	}
	*out = v;
	return SD_EXIT_OK;
}
