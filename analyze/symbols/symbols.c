/*
 * symbols.c: offline symbolization for `sonde report`, with elfutils (libdwfl).
 *
 * A module is an ELF file named by a stream's MODULE record, identified by (path,
 * build-id) so that the many processes of one run share one module. A relative path (a
 * plugin dlopen()ed as "./libplug.so") is taken relative to the directory the program
 * ran in (HEADER `cwd`); without one the module is not symbolized, with a warning.
 *
 * Files. A module's file is opened only if it is a regular file with the ELF magic,
 * checked on the descriptor: an O_PATH descriptor first (which opens no device), then
 * O_RDONLY|O_NONBLOCK (a FIFO swapped in cannot block) with the same inode, never a file
 * of /proc or /sys (/proc/PID/mem is "regular"). The descriptor is handed to elfutils.
 * Every module with the same build-id (or, without one, the same file identity) shares
 * one struct symfile: its Dwfl, its sorted symbol table and its raw locations
 * (symcache.c), loaded once per report whatever number of streams and paths name it.
 * Each symfile gets its own Dwfl, reported at base 0 with add_p_vaddr=true, which makes
 * the module's addresses equal to ELF virtual addresses (bias 0, also for prelinked
 * objects): FRAME addrs are ELF vaddrs already and are looked up unchanged. Separate
 * debug info is found the standard way (dwfl_standard_find_debuginfo: .gnu_debuglink,
 * /usr/lib/debug, build-id).
 *
 * Symbol table. dwfl_module_addrinfo scans every symbol per lookup (cc1: 29,000 symbols
 * for each of thousands of addresses); the symbols are read once into an array sorted by
 * address instead, with the running maximum of their ends, so that a lookup is a binary
 * search and a short scan back. The choice is elfutils' own: the closest symbol at or
 * below the address whose size covers it (global over weak over local at one address),
 * else the closest sizeless one above every sized symbol's end (an assembly label).
 *
 * Symbol cache. Raw locations (symcache.c) are kept across reports in the cache
 * directory (SONDE_CACHE, default $XDG_CACHE_HOME/sonde or ~/.cache/sonde), one file per
 * build-id. A cache is used when it was made from a file of the same identity (device,
 * inode, size, mtime, ctime) or when the file's build-id, read again, is the one
 * recorded; else it is not. A file is opened with elfutils only when an address is not
 * in its cache, so a second report of the same binaries reads no ELF or DWARF at all.
 * Caches that gained addresses are written at sd_sym_finish and sd_sym_free.
 *
 * Files are opened lazily, at the first lookup. A module that cannot be symbolized (the
 * vDSO, a missing file, a file whose build-id differs from the one recorded, a stripped
 * file without function symbols) yields "basename+0xADDR" names; a warning is printed
 * once per module.
 *
 * An address resolves to a *location*: its frames, outermost first. Without inlining
 * (or --no-inline) that is one frame, the function of the symbol table containing the
 * address. When the address is in code inlined into that function, DWARF's scopes
 * (dwarf_getscopes_die from the innermost scope at the address) give one more frame per
 * DW_TAG_inlined_subroutine: each frame's file:line is where it is at the address, i.e.
 * the call site (DW_AT_call_file/line) of the next inner inlined call, and for the
 * innermost frame the address's own line (dwfl_module_getsrc). Names are demangled
 * unless SD_SYM_NO_DEMANGLE, bounded (demangle()); inlined functions are named by their
 * DW_AT_linkage_name (demangled), else DW_AT_name, so an inlined function and its
 * out-of-line copy are one function. With SD_SYM_LINES (--lines) a function at a line is
 * named "name file:line", so the views count per source line.
 *
 * Runs in the one thread that merges streams (profile.c); not thread-safe.
 *
 * Invariants: a function id names one (module path, name) pair for the symbolizer's
 * life; a file id one path (0: unknown); each (module, addr) is looked up at most once
 * (per-module cache of location ids) and each (file, addr) in elfutils at most once
 * across reports (raw locations); a location's frames never change.
 */
#define _GNU_SOURCE /* O_PATH */
#include "analyze/symbols/symbols.h"
#include "format/format.h"

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <link.h>
#include <setjmp.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <libiberty/demangle.h>

#include "common/common.h"

enum { MOD_NEW, MOD_OPEN, MOD_FALLBACK };

/* One symbol of a file's table, sorted by (addr, preference). */
struct fsym {
	uint64_t addr, size;
	const char *name;  /* in the Dwfl's string table */
	uint32_t rank;     /* binding (global 3, weak 2, local 1) << 24 | symbol-order tiebreak */
};

/* One ELF file (a build-id, or an identity without one), shared by its modules. */
struct symfile {
	char *path;                  /* the path it is opened by */
	struct sd_fileid id;         /* build-id as recorded (and checked) and identity */
	int fd;                      /* O_RDONLY, until handed to elfutils; -1 after */
	int opened, ok;              /* elfutils tried; and usable */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct fsym *syms; size_t nsyms;
	uint64_t *maxend;            /* maxend[i]: max addr + size of syms[0..i] */
	struct sd_symcache *cache;   /* raw locations, never NULL once registered */
	char *cache_name;            /* its file in the cache directory; NULL: not kept */
};

struct symmod {
	char *path, *base;           /* path made absolute against cwd when relative */
	uint8_t *build_id;
	size_t build_id_len;
	int rel_nocwd;               /* relative path and no cwd recorded */
	int state;
	uint32_t file;               /* MOD_OPEN: index in sy->sfiles */
	struct sd_u64map cache;      /* addr -> location id */
};

/* Bounds of a demangled name (docs/REPORT.md, "Names"): a mangled name longer than
 * DM_MAX_IN is not demangled (the demangler's arrays are on the stack, a few dozen bytes
 * per input byte), nor one whose demangled form exceeds DM_MAX_OUT: substitutions can
 * make it exponentially long (263 bytes -> 870 MB), in time as in memory. */
enum { DM_MAX_IN = 16 << 10, DM_MAX_OUT = 64 << 10 };

struct loc { uint32_t first, n; }; /* frames[first .. first+n), outermost first */

struct sd_symbolizer {
	int addresses, inl, demangle, lines, shorten;
	char *debuginfo_path;   /* NULL: elfutils' default; pointed to by cb */
	Dwfl_Callbacks cb;
	struct symmod *mods;
	size_t nmods, capmods;
	struct sd_strmap modkeys;  /* path \0 build-id -> module handle */
	struct symfile *sfiles; size_t nsfiles, capsfiles;
	struct sd_strmap sfilekeys; /* build-id, or "noid" + identity -> symfile */
	int cachefd;               /* cache directory: >= 0, -1 none, -2 not opened yet */
	char *cachedir;
	struct sd_u64map raw, unknown; /* caches for module 0 and undefined module ids */
	struct sd_func *funcs;
	size_t nfuncs, capfuncs;
	struct sd_strmap funckeys; /* module path \0 name -> function id */
	struct loc *locs; size_t nlocs, caplocs;
	struct sd_frame *frames; size_t nframes, capframes;
	char **files; size_t nfiles, capfiles; /* files[0] = "" (unknown) */
	struct sd_strmap filekeys; /* path -> file id */
	char *dm;                  /* demangle()'s output, DM_MAX_OUT + 1 bytes */
	size_t nundemangled;       /* names left mangled by the bounds (the first said) */
};

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

struct sd_symbolizer *sd_sym_new(int flags)
{
	struct sd_symbolizer *sy = calloc(1, sizeof(*sy));

	if (!sy)
		return NULL;
	sy->addresses = !!(flags & SD_SYM_ADDRESSES);
	sy->inl = !(flags & SD_SYM_NO_INLINE);
	sy->demangle = !(flags & SD_SYM_NO_DEMANGLE);
	sy->lines = !!(flags & SD_SYM_LINES);
	sy->shorten = !!(flags & SD_SYM_SHORT);
	sy->cachefd = -2;
	elf_version(EV_CURRENT); /* libelf, before has_build_id's elf_begin */
	if (sd_grow(&sy->files, &sy->capfiles, 1, sizeof(*sy->files)) || !(sy->files[0] = strdup(""))) {
		free(sy->files);
		free(sy);
		return NULL;
	}
	sy->nfiles = 1;
	sy->cb.find_elf = dwfl_build_id_find_elf;
	sy->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	sy->cb.section_address = dwfl_offline_section_address;
	sy->cb.debuginfo_path = &sy->debuginfo_path;
	return sy;
}

static void save_caches(struct sd_symbolizer *sy);

void sd_sym_free(struct sd_symbolizer *sy)
{
	if (!sy)
		return;
	save_caches(sy);
	free(sy->dm);
	for (size_t i = 0; i < sy->nmods; i++) {
		struct symmod *m = &sy->mods[i];
		free(m->path);
		free(m->build_id);
		sd_u64map_fini(&m->cache);
	}
	free(sy->mods);
	for (size_t i = 0; i < sy->nsfiles; i++) {
		struct symfile *f = &sy->sfiles[i];
		if (f->dwfl)
			dwfl_end(f->dwfl);
		if (f->fd >= 0)
			close(f->fd);
		free(f->path);
		free(f->syms);
		free(f->maxend);
		sd_symcache_free(f->cache);
		free(f->cache_name);
	}
	free(sy->sfiles);
	sd_strmap_fini(&sy->sfilekeys);
	if (sy->cachefd >= 0)
		close(sy->cachefd);
	free(sy->cachedir);
	for (size_t i = 0; i < sy->nfuncs; i++) {
		free(sy->funcs[i].name);
		free(sy->funcs[i].module);
		free(sy->funcs[i].display);
	}
	free(sy->funcs);
	sd_strmap_fini(&sy->modkeys);
	sd_strmap_fini(&sy->funckeys);
	sd_u64map_fini(&sy->raw);
	sd_u64map_fini(&sy->unknown);
	free(sy->locs);
	free(sy->frames);
	for (size_t i = 0; i < sy->nfiles; i++)
		free(sy->files[i]);
	free(sy->files);
	sd_strmap_fini(&sy->filekeys);
	free(sy);
}

/* A path the loader gives for something that is not a file: "[vdso]", "" (taken as
 * `exe` by the reader before it gets here). */
static int pseudo_path(const char *path)
{
	return !path[0] || path[0] == '[';
}

int sd_sym_module(struct sd_symbolizer *sy, const char *path, const char *cwd,
		  const uint8_t *build_id, size_t build_id_len)
{
	char *full = NULL, *key = NULL;
	uint32_t id;
	int err = -ENOMEM, rel = path[0] != '/' && !pseudo_path(path);

	if (build_id_len > SD_BUILD_ID_MAX)
		build_id_len = 0; /* not a GNU build-id: the file is matched by path alone */
	if (rel && cwd && cwd[0] == '/') {
		size_t cl = strlen(cwd);
		const char *p = path;
		while (p[0] == '.' && p[1] == '/')
			p += 2;
		if (!(full = malloc(cl + strlen(p) + 2)))
			return -ENOMEM;
		sprintf(full, "%s%s%s", cwd, cl && cwd[cl - 1] == '/' ? "" : "/", p);
		path = full;
		rel = 0;
	}
	size_t plen = strlen(path);
	if (!(key = malloc(plen + 1 + build_id_len)))
		goto out;
	memcpy(key, path, plen + 1);
	if (build_id_len)
		memcpy(key + plen + 1, build_id, build_id_len);
	if (sd_strmap_get(&sy->modkeys, key, plen + 1 + build_id_len, &id)) {
		err = (int)id;
		goto out;
	}
	if (sy->nmods == sy->capmods) {
		size_t cap = sy->capmods ? sy->capmods * 2 : 16;
		struct symmod *nm = realloc(sy->mods, cap * sizeof(*nm));
		if (!nm)
			goto out;
		sy->mods = nm;
		sy->capmods = cap;
	}
	struct symmod *m = &sy->mods[sy->nmods];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	m->build_id = build_id_len ? malloc(build_id_len) : NULL;
	if (!m->path || (build_id_len && !m->build_id)) {
		free(m->path);
		free(m->build_id);
		goto out;
	}
	if (build_id_len)
		memcpy(m->build_id, build_id, build_id_len);
	m->build_id_len = build_id_len;
	m->base = (char *)basename_of(m->path);
	m->rel_nocwd = rel;
	if (sd_strmap_put(&sy->modkeys, key, plen + 1 + build_id_len, (uint32_t)sy->nmods)) {
		free(m->path);
		free(m->build_id);
		goto out;
	}
	err = (int)sy->nmods++;
out:
	free(key);
	free(full);
	return err;
}

/* ---- opening files ------------------------------------------------------------------ */

/* Open path for reading if it is a regular ELF file on disk: an fd (O_CLOEXEC) and *st,
 * or -1 with the reason in *why. Nothing but a regular file is ever opened for reading:
 * the type is checked on an O_PATH descriptor (opening no device, waiting for no FIFO
 * writer), then on the O_RDONLY|O_NONBLOCK one, which must be the same inode. */
static int open_elf(const char *path, struct stat *st, const char **why)
{
	struct stat st2;
	struct statfs sfs;
	unsigned char magic[4];
	int fd = -1, pfd = open(path, O_PATH | O_CLOEXEC);

	if (pfd < 0) {
		*why = strerror(errno);
		return -1;
	}
	*why = "not a regular file";
	if (fstat(pfd, st) < 0 || !S_ISREG(st->st_mode))
		goto bad;
	if (fstatfs(pfd, &sfs) == 0 && (sfs.f_type == PROC_SUPER_MAGIC ||
					sfs.f_type == SYSFS_MAGIC)) {
		*why = "a file of /proc or /sys, not an object file";
		goto bad;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		*why = strerror(errno);
		goto bad;
	}
	if (fstat(fd, &st2) < 0 || !S_ISREG(st2.st_mode) || st2.st_dev != st->st_dev ||
	    st2.st_ino != st->st_ino) {
		*why = "replaced while being opened";
		goto bad;
	}
	*st = st2;
	if (pread(fd, magic, sizeof(magic), 0) != (ssize_t)sizeof(magic) ||
	    memcmp(magic, "\177ELF", 4)) {
		*why = "not an ELF file";
		goto bad;
	}
	close(pfd);
	return fd;
bad:
	if (fd >= 0)
		close(fd);
	close(pfd);
	return -1;
}

static void fileid_of(struct sd_fileid *id, const struct stat *st, const uint8_t *bid,
		      size_t bid_len)
{
	memset(id, 0, sizeof(*id));
	if (bid_len) /* a module without a build-id: bid may be NULL */
		memcpy(id->bid, bid, bid_len);
	id->bid_len = (uint32_t)bid_len;
	id->dev = st->st_dev;
	id->ino = st->st_ino;
	id->size = (uint64_t)st->st_size;
	id->mtime_s = st->st_mtim.tv_sec;
	id->mtime_ns = st->st_mtim.tv_nsec;
	id->ctime_s = st->st_ctim.tv_sec;
	id->ctime_ns = st->st_ctim.tv_nsec;
}

static int same_identity(const struct sd_fileid *a, const struct sd_fileid *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_s == b->mtime_s && a->mtime_ns == b->mtime_ns &&
	       a->ctime_s == b->ctime_s && a->ctime_ns == b->ctime_ns;
}

/* 1 if the ELF file open on fd has GNU build-id bid, 0 if not (another or none). */
static int has_build_id(int fd, const uint8_t *bid, size_t len)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *p;
	ssize_t n = e ? dwelf_elf_gnu_build_id(e, &p) : -1;
	int same = n == (ssize_t)len && !memcmp(p, bid, len);

	if (e)
		elf_end(e);
	return same;
}

/* The cache directory, opened on first use: fd >= 0, or -1 (off, or unusable: one
 * warning). SONDE_CACHE: "off" (none), a directory, or unset/empty (the default). */
static int cache_dir(struct sd_symbolizer *sy)
{
	const char *env = getenv("SONDE_CACHE"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	char why[160];

	if (sy->cachefd != -2)
		return sy->cachefd;
	sy->cachefd = -1;
	if (env && !strcmp(env, "off"))
		return -1;
	size_t l = 64 + (env ? strlen(env) : 0) + (xdg ? strlen(xdg) : 0) +
		   (home ? strlen(home) : 0);
	if (!(sy->cachedir = malloc(l)))
		return -1;
	if (env && env[0])
		snprintf(sy->cachedir, l, "%s", env);
	else if (xdg && xdg[0] == '/')
		snprintf(sy->cachedir, l, "%s/sonde", xdg);
	else if (home && home[0] == '/')
		snprintf(sy->cachedir, l, "%s/.cache/sonde", home);
	else
		return -1;
	sy->cachefd = sd_symcache_dir_open(sy->cachedir, why, sizeof(why));
	/* the default place goes unused quietly where it cannot be made (no home: a
	 * daemon's user); a place that is there but unsafe, or one asked for, is said */
	if (sy->cachefd < 0 && (env && env[0] ? 1 : errno != ENOENT && errno != EACCES &&
				errno != EROFS && errno != ENOTDIR))
		fprintf(stderr, "sonde: %s: symbol cache not used: %s (set SONDE_CACHE to "
			"another directory, or to off)\n", sy->cachedir, why);
	return sy->cachefd;
}

/* Name of f's cache file into buf: the build-id in hex and the size (a stripped copy of
 * a file has its build-id, not its symbols), else a hash of the path and identity (a
 * file without build-id is known by those alone). */
static void cache_name(const struct symfile *f, char *buf, size_t len)
{
	if (f->id.bid_len) {
		size_t o = 0;
		for (uint32_t i = 0; i < f->id.bid_len && o + 3 < len; i++)
			o += (size_t)snprintf(buf + o, len - o, "%02x", f->id.bid[i]);
		snprintf(buf + o, len - o, "-%" PRIx64 ".sym", f->id.size);
		return;
	}
	uint64_t h = sd_fnv1a(f->path, strlen(f->path));
	h = sd_fnv1a_more(h, &f->id.dev, sizeof(f->id) - offsetof(struct sd_fileid, dev));
	snprintf(buf, len, "noid-%016" PRIx64 ".sym", h);
}

static int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank; /* best last: met first going down */
}

static int bind_rank(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

/* Read f's symbols into the sorted table: 1 if it has a defined function symbol, 0 if
 * not (stripped), -ENOMEM. */
static int load_symtab(struct symfile *f)
{
	int nsyms = dwfl_module_getsymtab(f->mod), funcs = 0;
	size_t n = 0;

	if (nsyms <= 1)
		return 0;
	if (!(f->syms = malloc((size_t)nsyms * sizeof(*f->syms))))
		return -ENOMEM;
	for (int i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym(f->mod, i, &sym, &shndx);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		if (type == STT_FUNC)
			funcs = 1;
		/* symbols read first win ties, as in elfutils: globals come after locals in
		 * a table, so the order counts down from the end */
		f->syms[n++] = (struct fsym){ sym.st_value, sym.st_size, name,
			(uint32_t)bind_rank(&sym) << 24 | (uint32_t)(0xffffff - (i & 0xffffff)) };
	}
	f->nsyms = n;
	if (!n)
		return funcs;
	qsort(f->syms, n, sizeof(*f->syms), fsym_cmp);
	if (!(f->maxend = malloc(n * sizeof(*f->maxend))))
		return -ENOMEM;
	uint64_t mx = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t e = f->syms[i].addr + f->syms[i].size;
		mx = e > mx ? e : mx;
		f->maxend[i] = mx;
	}
	return funcs;
}

/* The symbol table's name for addr (NULL: none), as dwfl_module_addrinfo chooses it. */
static const char *symtab_name(const struct symfile *f, uint64_t addr)
{
	size_t lo = 0, hi = f->nsyms;

	while (lo < hi) { /* first symbol above addr */
		size_t mid = lo + (hi - lo) / 2;
		if (f->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* the closest sized symbol that covers addr: only symbols whose running maximum
	 * end is above addr can (at one address the best is met first) */
	for (size_t i = lo; i-- > 0 && f->maxend[i] > addr;) {
		const struct fsym *s = &f->syms[i];
		if (s->size && addr - s->addr < s->size)
			return s->name;
	}
	/* else the closest sizeless label at or above the end of every symbol below */
	uint64_t min_label = f->maxend[lo - 1];
	for (size_t i = lo; i-- > 0 && f->syms[i].addr >= min_label;)
		if (!f->syms[i].size)
			return f->syms[i].name;
	return NULL;
}

/* Function id for (module path, name), created on first use. */
static int func_id(struct sd_symbolizer *sy, const char *modpath, const char *name)
{
	size_t ml = strlen(modpath), nl = strlen(name);
	char *key = malloc(ml + 1 + nl);
	uint32_t id;
	int err = -ENOMEM;

	if (!key)
		return -ENOMEM;
	memcpy(key, modpath, ml + 1);
	memcpy(key + ml + 1, name, nl);
	if (sd_strmap_get(&sy->funckeys, key, ml + 1 + nl, &id)) {
		free(key);
		return (int)id;
	}
	if (sy->nfuncs >= INT32_MAX)
		goto out;
	if (sy->nfuncs == sy->capfuncs) {
		size_t cap = sy->capfuncs ? sy->capfuncs * 2 : 64;
		struct sd_func *nf = realloc(sy->funcs, cap * sizeof(*nf));
		if (!nf)
			goto out;
		sy->funcs = nf;
		sy->capfuncs = cap;
	}
	struct sd_func *f = &sy->funcs[sy->nfuncs];
	f->name = strdup(name);
	f->module = strdup(basename_of(modpath));
	f->display = NULL;
	if (!f->name || !f->module ||
	    sd_strmap_put(&sy->funckeys, key, ml + 1 + nl, (uint32_t)sy->nfuncs)) {
		free(f->name);
		free(f->module);
		goto out;
	}
	err = (int)sy->nfuncs++;
out:
	free(key);
	return err;
}

int sd_sym_pseudo(struct sd_symbolizer *sy, const char *name)
{
	return func_id(sy, "", name);
}

/* File id of path, created on first use: >= 0 or -ENOMEM. NULL or "" is 0 (unknown). */
static int file_id(struct sd_symbolizer *sy, const char *path)
{
	uint32_t id;

	if (!path || !path[0])
		return 0;
	if (sd_strmap_get(&sy->filekeys, path, strlen(path), &id))
		return (int)id;
	if (sy->nfiles >= INT32_MAX || sd_grow(&sy->files, &sy->capfiles, sy->nfiles + 1,
					    sizeof(*sy->files)))
		return -ENOMEM;
	if (!(sy->files[sy->nfiles] = strdup(path)))
		return -ENOMEM;
	if (sd_strmap_put(&sy->filekeys, path, strlen(path), (uint32_t)sy->nfiles)) {
		free(sy->files[sy->nfiles]);
		return -ENOMEM;
	}
	return (int)sy->nfiles++;
}

/* The demangler's output as it comes (cplus_demangle_v3_callback prints through a small
 * buffer and calls back at each flush): kept up to DM_MAX_OUT bytes; past that the
 * demangler is left by longjmp, which is safe: its callback variant allocates nothing
 * (its state is on the stack) and holds no lock. */
struct dm_out { char *buf; size_t len; int over; jmp_buf jb; };

static void dm_put(const char *s, size_t len, void *opaque)
{
	struct dm_out *d = opaque;
	if (len > DM_MAX_OUT - d->len) {
		d->over = 1;
		longjmp(d->jb, 1);
	}
	memcpy(d->buf + d->len, s, len);
	d->len += len;
}

/* `name` demangled into sy->dm: 1, 0 when it is not a mangled name, -E2BIG when its
 * demangled form is past DM_MAX_OUT, -ENAMETOOLONG when it is past DM_MAX_IN, -ENOMEM. */
static int demangle(struct sd_symbolizer *sy, const char *name)
{
	struct dm_out d = { 0 };
	size_t len = strlen(name);
	int ok;

	if (!sy->dm && !(sy->dm = malloc(DM_MAX_OUT + 1)))
		return -ENOMEM;
	d.buf = sy->dm;
	if (len <= DM_MAX_IN) {
		if (setjmp(d.jb) == 0)
			ok = cplus_demangle_v3_callback(name, DMGL_PARAMS | DMGL_TYPES, dm_put, &d);
		else
			ok = 0;
		if (ok && !d.over) {
			sy->dm[d.len] = 0;
			return 1;
		}
		if (!d.over)
			return 0; /* not a name the demangler knows: kept as it is */
	}
	return d.over ? -E2BIG : -ENAMETOOLONG;
}

/* Function id of `name` in modpath, demangled unless --no-demangle (within the bounds);
 * with --lines, of "name file:line" (file's basename) when the frame's source is known. */
static int func_named(struct sd_symbolizer *sy, const char *modpath, const char *name,
		      int file, int line)
{
	char *nl = NULL;
	const char *mangled = name;
	size_t had = sy->nfuncs;
	int r = -ENOMEM, dm = 0;

	if (sy->demangle && name[0] == '_' && name[1] == 'Z') {
		dm = demangle(sy, name);
		if (dm == -ENOMEM)
			goto out;
		if (dm == 1)
			name = sy->dm;
	}
	if (sy->lines && file > 0) {
		const char *f = basename_of(sy->files[file]);
		size_t l = strlen(name) + strlen(f) + 16;
		if (!(nl = malloc(l)))
			goto out;
		snprintf(nl, l, "%s %s:%d", name, f, line);
		name = nl;
	}
	r = func_id(sy, modpath, name);
	if (dm < 0 && sy->nfuncs > had && !sy->nundemangled++) /* a new function: said once */
		fprintf(stderr, "sonde: %s: %.60s...: not demangled: its %s form is longer than "
			"%d bytes (shown mangled)\n", basename_of(modpath), mangled,
			dm == -E2BIG ? "demangled" : "mangled",
			dm == -E2BIG ? DM_MAX_OUT : DM_MAX_IN);
out:
	free(nl);
	return r;
}


/* Hand f's descriptor to elfutils and read its symbol table (at the first address not in
 * its cache). f->ok tells whether it can be used; a warning names the module path. */
static void file_open(struct sd_symbolizer *sy, struct symfile *f, const char *base)
{
	const unsigned char *bits;
	GElf_Addr vaddr;

	if (f->opened)
		return;
	f->opened = 1;
	f->ok = 0;
	if (f->fd < 0)
		return;
	f->dwfl = dwfl_begin(&sy->cb);
	if (f->dwfl)
		f->mod = dwfl_report_elf(f->dwfl, base, f->path, f->fd, 0, true);
	if (f->mod)
		f->fd = -1; /* the Dwfl's now */
	if (f->dwfl)
		dwfl_report_end(f->dwfl, NULL, NULL);
	if (!f->mod) {
		fprintf(stderr, "sonde: %s: %s (cannot symbolize; showing %s+0xADDR)\n", f->path,
			dwfl_errmsg(-1), base);
		return;
	}
	if (f->id.bid_len) {
		int n = dwfl_module_build_id(f->mod, &bits, &vaddr);
		if (n != (int)f->id.bid_len || memcmp(bits, f->id.bid, f->id.bid_len)) {
			fprintf(stderr, "sonde: %s: build-id differs from the profiled file (it "
				"was rebuilt or replaced since the run; showing %s+0xADDR)\n",
				f->path, base);
			return;
		}
	}
	int r = load_symtab(f);
	if (r == 0)
		fprintf(stderr, "sonde: %s: no symbols (stripped?; showing %s+0xADDR)\n", f->path,
			base);
	f->ok = r > 0;
}

/* The symfile of a module whose file is open on fd (taken), registered if new: its index,
 * or -1 (the module falls back: a build-id that differs, no memory). */
static long file_of(struct sd_symbolizer *sy, struct symmod *m, int fd, const struct stat *st)
{
	struct sd_fileid id;
	char key[16 + sizeof(id)], name[2 * SD_BUILD_ID_MAX + 32];
	size_t klen;
	uint32_t idx;
	int same = 0;
	struct sd_symcache *c = NULL;

	fileid_of(&id, st, m->build_id, m->build_id_len);
	if (id.bid_len) { /* and size: a stripped copy keeps its build-id */
		memcpy(key, id.bid, id.bid_len);
		memcpy(key + id.bid_len, &id.size, sizeof(id.size));
		klen = id.bid_len + sizeof(id.size);
	} else { /* its identity: hard links to one file share it */
		memcpy(key, "noid", 4);
		memcpy(key + 4, &id.dev, sizeof(id) - offsetof(struct sd_fileid, dev));
		klen = 4 + sizeof(id) - offsetof(struct sd_fileid, dev);
	}
	if (sd_strmap_get(&sy->sfilekeys, key, klen, &idx)) {
		struct symfile *f = &sy->sfiles[idx];
		/* another path (or the same one, replaced) with this build-id and size: its
		 * own file must have the build-id too */
		if (id.bid_len && !same_identity(&id, &f->id) && !has_build_id(fd, id.bid, id.bid_len))
			goto differs;
		close(fd);
		return idx;
	}
	struct symfile nf = { .fd = fd, .id = id };
	nf.path = strdup(m->path);
	if (!nf.path)
		goto nomem;
	int cfd = cache_dir(sy);
	if (cfd >= 0) {
		cache_name(&nf, name, sizeof(name));
		int r = sd_symcache_load(cfd, name, &id, &c, &same);
		if (r == -EINVAL)
			fprintf(stderr, "sonde: %s/%s: not a valid symbol cache file (ignored; it "
				"will be rewritten)\n", sy->cachedir, name);
		if (!(nf.cache_name = strdup(name)))
			goto nomem;
		if (!id.bid_len && c && !same) { /* identity is all a file without build-id has */
			sd_symcache_free(c);
			c = NULL;
		}
	}
	/* the recorded build-id is checked unless a cache made from this very file says so */
	if (id.bid_len && !(c && same) && !has_build_id(fd, id.bid, id.bid_len)) {
		free(nf.path);
		free(nf.cache_name);
		sd_symcache_free(c);
		goto differs;
	}
	if (c && !same)
		sd_symcache_touch(c); /* same build-id, another file: save its identity */
	nf.cache = c ? c : sd_symcache_new();
	if (!nf.cache || sd_grow(&sy->sfiles, &sy->capsfiles, sy->nsfiles + 1, sizeof(nf)) ||
	    sd_strmap_put(&sy->sfilekeys, key, klen, (uint32_t)sy->nsfiles)) {
		free(nf.path);
		free(nf.cache_name);
		sd_symcache_free(nf.cache);
		goto nomem;
	}
	sy->sfiles[sy->nsfiles] = nf;
	return (long)sy->nsfiles++;
differs:
	fprintf(stderr, "sonde: %s: build-id differs from the profiled file (it was rebuilt or "
		"replaced since the run; showing %s+0xADDR)\n", m->path, m->base);
	close(fd);
	return -1;
nomem:
	close(fd);
	return -1;
}

/* The vDSO is no file, but the kernel maps the same image into every process: when the
 * stream's [vdso] has the build-id of the analyzer's own vDSO (the same kernel), a copy
 * of that image in a memory file is symbolized like any ELF file. A descriptor, or -1. */
static int own_vdso(const struct symmod *m)
{
	const ElfW(Ehdr) *e = (const void *)getauxval(AT_SYSINFO_EHDR);
	uint8_t bid[SD_BUILD_ID_MAX];
	if (!e || !m->build_id_len || memcmp(e->e_ident, ELFMAG, SELFMAG) ||
	    e->e_phentsize != sizeof(ElfW(Phdr)))
		return -1;
	const ElfW(Phdr) *ph = (const void *)((const char *)e + e->e_phoff);
	uintptr_t bias = (uintptr_t)e;
	size_t size = (size_t)e->e_shoff + (size_t)e->e_shnum * e->e_shentsize;
	for (unsigned i = 0; i < e->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && !ph[i].p_offset)
			bias = (uintptr_t)e - ph[i].p_vaddr;
		if (ph[i].p_offset + ph[i].p_filesz > size)
			size = ph[i].p_offset + ph[i].p_filesz;
	}
	size_t n = sd_build_id_of(ph, e->e_phnum, bias, bid, sizeof bid);
	if (n != m->build_id_len || memcmp(bid, m->build_id, n) || size > (1u << 20))
		return -1;
	int fd = memfd_create("sonde-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (write(fd, e, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Decide whether module m is symbolized (MOD_OPEN, with its symfile) or falls back to
 * module+offset names (with one warning, unless it is no file: [vdso] of another
 * kernel). */
static void mod_open(struct sd_symbolizer *sy, struct symmod *m)
{
	struct stat st;
	const char *why;

	m->state = MOD_FALLBACK;
	if (!sy->addresses && !strcmp(m->path, "[vdso]")) {
		int fd = own_vdso(m);
		int ok = fd >= 0 && fstat(fd, &st) == 0;
		/* a memory file is new each time: its build-id and size are its identity, so
		 * that its symbol cache stays valid from one report to the next */
		st.st_dev = 0, st.st_ino = 0;
		st.st_mtim = st.st_ctim = (struct timespec){ 0, 0 };
		long f = ok ? file_of(sy, m, fd, &st) : -1;
		if (fd >= 0 && f < 0)
			close(fd);
		if (f >= 0) {
			m->file = (uint32_t)f;
			m->state = MOD_OPEN;
		}
		return;
	}
	if (sy->addresses || pseudo_path(m->path))
		return;
	if (m->rel_nocwd) {
		fprintf(stderr, "sonde: %s: relative module path and no working directory in the "
			"stream (the runtime that wrote it did not record `cwd`; showing %s+0xADDR)\n",
			m->path, m->base);
		return;
	}
	int fd = open_elf(m->path, &st, &why);
	if (fd < 0) {
		fprintf(stderr, "sonde: %s: %s (cannot symbolize; showing %s+0xADDR)\n", m->path,
			why, m->base);
		return;
	}
	long f = file_of(sy, m, fd, &st);
	if (f < 0)
		return;
	m->file = (uint32_t)f;
	m->state = MOD_OPEN;
}

/* Write every cache that gained addresses (one warning for the first failure). */
static void save_caches(struct sd_symbolizer *sy)
{
	int warned = 0;

	for (size_t i = 0; i < sy->nsfiles; i++) {
		struct symfile *f = &sy->sfiles[i];
		if (!f->cache_name || sy->cachefd < 0 || !sd_symcache_dirty(f->cache))
			continue;
		int r = sd_symcache_save(sy->cachefd, f->cache_name, f->cache, &f->id);
		if (r && !warned++)
			fprintf(stderr, "sonde: %s/%s: cannot write the symbol cache: %s (set "
				"SONDE_CACHE to another directory, or to off)\n", sy->cachedir,
				f->cache_name, strerror(-r));
	}
}

/* Name of a subprogram or inlined-subroutine DIE: linkage name, else DW_AT_name. */
static const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_linkage_name, &a));

	if (!n)
		n = dwarf_formstring(dwarf_attr_integrate(d, DW_AT_MIPS_linkage_name, &a));
	return n ? n : dwarf_diename(d);
}

/* Up to this many inlined frames per address are kept (the outermost ones dropped). */
enum { MAX_INLINE = SD_SYM_MAX_INLINE };

/* The raw location of addr in open file f, with elfutils, into *l (whose strings point
 * into f's Dwfl or into symbuf). */
static void raw_resolve(struct symfile *f, uint64_t addr, struct sd_rawloc *l,
			char *symbuf, size_t symlen)
{
	Dwarf_Die *scopes = NULL;
	int line = 0;

	l->sym = symtab_name(f, addr);
	/* drop the symbol version ("memcpy@@GLIBC_2.14"): one function, one row */
	const char *at = l->sym ? strchr(l->sym, '@') : NULL;
	if (at && at > l->sym) {
		snprintf(symbuf, symlen, "%.*s", (int)(at - l->sym), l->sym);
		l->sym = symbuf;
	}
	l->outer = NULL;
	l->ninl = 0;
	Dwfl_Line *dl = dwfl_module_getsrc(f->mod, addr);
	l->file = dl ? dwfl_lineinfo(dl, NULL, &line, NULL, NULL, NULL) : NULL;
	l->line = l->file && line > 0 ? (uint32_t)line : 0;
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = dwfl_module_addrdie(f->mod, addr, &bias);
	int ns = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
	if (ns > 0) {
		/* the DIE chain from the innermost scope: concrete inlined instances nest in
		 * their callers, up to the subprogram */
		Dwarf_Die inner = scopes[0];
		free(scopes);
		scopes = NULL;
		ns = dwarf_getscopes_die(&inner, &scopes);
	}
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	if (ns > 0 && dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	for (int i = 0; i < ns; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram) {
			l->outer = die_name(&scopes[i]);
			break;
		}
		if (tag != DW_TAG_inlined_subroutine || l->ninl == MAX_INLINE)
			continue;
		/* the caller is at the call site */
		Dwarf_Attribute a;
		Dwarf_Word cf = 0, cl = 0;
		const char *fname = NULL;
		if (files && !dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf))
			fname = dwarf_filesrc(files, cf, NULL, NULL);
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) || cl > UINT32_MAX)
			cl = 0;
		l->inl[l->ninl++] = (struct sd_rawinl){ die_name(&scopes[i]), fname, (uint32_t)cl };
	}
	free(scopes);
}

/* The name of a pseudo-frame (FRAME with module 0 and a small address,
 * docs/FORMAT.md), or NULL when addr is not one. */
static const char *pseudo_frame_name(uint64_t addr)
{
	static const char *const names[] = SD_PSEUDO_NAMES;
	return addr && addr < sizeof(names) / sizeof(names[0]) ? names[addr] : NULL;
}

/* Append the frames of (m, addr) to sy->frames, outermost first; *n gets their number.
 * m is NULL for addresses outside every module. 0 or -ENOMEM. */
static int resolve(struct sd_symbolizer *sy, int mod, struct symmod *m, uint64_t addr,
		   uint32_t *n)
{
	struct inl { const char *name; int file, line; } in[MAX_INLINE]; /* innermost first */
	struct sd_rawinl rawinl[MAX_INLINE];
	struct sd_rawloc l = { .inl = rawinl };
	size_t nin = 0;
	char buf[512], symbuf[1024];
	const char *name = NULL, *modpath = "";
	int file = 0, line = 0, r, have = 0;

	if (m && m->state == MOD_OPEN) {
		struct symfile *f = &sy->sfiles[m->file];
		have = sd_symcache_get(f->cache, addr, &l);
		if (!have) {
			file_open(sy, f, m->base);
			if (f->ok) {
				raw_resolve(f, addr, &l, symbuf, sizeof(symbuf));
				if (sd_symcache_put(f->cache, addr, &l))
					return -ENOMEM;
				have = 1;
			}
		}
	}
	if (have) {
		if ((file = file_id(sy, l.file)) < 0)
			return -ENOMEM;
		line = file ? (int)l.line : 0;
		for (uint32_t i = 0; sy->inl && i < l.ninl; i++) {
			if (l.inl[i].name)
				in[nin++] = (struct inl){ l.inl[i].name, file, line };
			if ((file = file_id(sy, l.inl[i].file)) < 0)
				return -ENOMEM;
			line = file ? (int)l.inl[i].line : 0;
		}
		name = l.sym ? l.sym : sy->inl ? l.outer : NULL;
	}
	if (m) {
		modpath = m->path;
		if (!name) {
			snprintf(buf, sizeof(buf), "%.400s+0x%" PRIx64, m->base, addr);
			name = buf;
		}
	} else if (mod == -1 && pseudo_frame_name(addr)) {
		name = pseudo_frame_name(addr);
	} else {
		snprintf(buf, sizeof(buf), mod == -1 ? "0x%" PRIx64 : "[unknown]+0x%" PRIx64, addr);
		name = buf;
	}
	if (sd_grow(&sy->frames, &sy->capframes, sy->nframes + nin + 1, sizeof(*sy->frames)))
		return -ENOMEM;
	if ((r = func_named(sy, modpath, name, file, line)) < 0)
		return -ENOMEM;
	sy->frames[sy->nframes] = (struct sd_frame){ (uint32_t)r, (uint32_t)file, (uint32_t)line };
	for (size_t k = 0; k < nin; k++) {
		const struct inl *e = &in[nin - 1 - k];
		if ((r = func_named(sy, modpath, e->name, e->file, e->line)) < 0)
			return -ENOMEM;
		sy->frames[sy->nframes + 1 + k] = (struct sd_frame){
			(uint32_t)r, (uint32_t)e->file, (uint32_t)e->line };
	}
	*n = (uint32_t)nin + 1;
	return 0;
}

int sd_sym_frames(struct sd_symbolizer *sy, int mod, uint64_t addr,
		  const struct sd_frame **frames)
{
	struct sd_u64map *cache = mod == -1 ? &sy->raw : mod < 0 ? &sy->unknown : NULL;
	struct symmod *m = NULL;
	uint32_t id, n;

	if (mod >= 0) {
		if ((size_t)mod >= sy->nmods)
			return -EINVAL;
		m = &sy->mods[mod];
		cache = &m->cache;
	}
	if (!sd_u64map_get(cache, addr, &id)) {
		if (m && m->state == MOD_NEW)
			mod_open(sy, m);
		if (sy->nlocs >= UINT32_MAX ||
		    sd_grow(&sy->locs, &sy->caplocs, sy->nlocs + 1, sizeof(*sy->locs)))
			return -ENOMEM;
		size_t first = sy->nframes;
		if (resolve(sy, mod, m, addr, &n))
			return -ENOMEM;
		id = (uint32_t)sy->nlocs;
		if (sd_u64map_put(cache, addr, id))
			return -ENOMEM;
		sy->locs[sy->nlocs++] = (struct loc){ (uint32_t)first, n };
		sy->nframes += n;
	}
	*frames = &sy->frames[sy->locs[id].first];
	return (int)sy->locs[id].n;
}

const char *sd_sym_file(const struct sd_symbolizer *sy, uint32_t file)
{
	return file < sy->nfiles ? sy->files[file] : "";
}

/* A C++ name made short (--short-names): template arguments become "<>", the parameter
 * list and what follows it (const, clone suffixes) go: "std::vector<int,
 * std::allocator<int> >::push_back(int const&) [clone .isra.0]" is
 * "std::vector<>::push_back". operator<, operator<< and operator() keep their
 * characters. A malloc'ed copy, NULL on ENOMEM. */
char *sd_sym_short_name(const char *n)
{
	size_t len = strlen(n), k = 0;
	char *o = malloc(len + 1);
	int depth = 0;
	if (!o)
		return NULL;
	for (size_t i = 0; i < len; i++) {
		char ch = n[i];
		int op = k >= 8 && !depth && !strncmp(o + k - 8, "operator", 8);
		if (op && (ch == '<' || ch == '(' || ch == '>')) { /* operator<, <<, (), -> ... */
			o[k++] = ch;
			while (i + 1 < len && (n[i + 1] == '<' || n[i + 1] == '=' || n[i + 1] == ')'))
				o[k++] = n[++i];
			continue;
		}
		if (ch == '<') {
			if (!depth++)
				o[k++] = '<';
			continue;
		}
		if (ch == '>' && depth) {
			if (!--depth)
				o[k++] = '>';
			continue;
		}
		if (depth)
			continue;
		if (ch == '(' || (ch == ' ' && n[i + 1] == '[')) /* parameters, [clone ...] */
			break;
		o[k++] = ch;
	}
	o[k] = 0;
	return o;
}

int sd_sym_finish(struct sd_symbolizer *sy)
{
	struct sd_strmap count = { 0 };
	int err = 0;

	save_caches(sy);
	if (sy->nundemangled > 1)
		fprintf(stderr, "sonde: %zu more C++ names not demangled: past the same bounds "
			"(shown mangled)\n", sy->nundemangled - 1);
	sy->nundemangled = 0;

	/* Functions are unique per (module, name): a name seen twice is in two modules. */
	for (size_t i = 0; i < sy->nfuncs && !err; i++) {
		const char *n = sy->funcs[i].name;
		uint32_t c = 0;
		sd_strmap_get(&count, n, strlen(n), &c);
		err = sd_strmap_put(&count, n, strlen(n), c + 1);
	}
	for (size_t i = 0; i < sy->nfuncs && !err; i++) {
		struct sd_func *f = &sy->funcs[i];
		uint32_t c = 0;
		sd_strmap_get(&count, f->name, strlen(f->name), &c);
		free(f->display);
		char *name = sy->shorten && f->name[0] != '[' ? sd_sym_short_name(f->name)
							       : strdup(f->name);
		if (name && !strcmp(f->module, "[vdso]") && name[0] != '[') { /* "[vdso] NAME" */
			char *v = malloc(strlen(name) + 8);
			if (v)
				sprintf(v, "[vdso] %s", name);
			free(name);
			name = v;
		}
		if (name && c > 1 && f->module[0]) {
			size_t l = strlen(name) + strlen(f->module) + 4;
			f->display = malloc(l);
			if (f->display)
				snprintf(f->display, l, "%s [%s]", name, f->module);
			free(name);
		} else {
			f->display = name;
		}
		if (!f->display)
			err = -ENOMEM;
	}
	sd_strmap_fini(&count);
	return err;
}

size_t sd_sym_nmodules(const struct sd_symbolizer *sy)
{
	return sy->nmods;
}

void sd_sym_module_info(const struct sd_symbolizer *sy, size_t i, const char **path,
			const char **base, const uint8_t **build_id, size_t *build_id_len)
{
	const struct symmod *m = &sy->mods[i];
	*path = m->path;
	*base = m->base;
	*build_id = m->build_id;
	*build_id_len = m->build_id_len;
}

size_t sd_sym_nfuncs(const struct sd_symbolizer *sy)
{
	return sy->nfuncs;
}

const struct sd_func *sd_sym_func(const struct sd_symbolizer *sy, uint32_t id)
{
	return id < sy->nfuncs ? &sy->funcs[id] : NULL;
}
