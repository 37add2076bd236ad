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
 * debug info is found where elfutils looks (build-id, .gnu_debuglink, /usr/lib/debug),
 * then on the debuginfod servers of DEBUGINFOD_URLS (debuginfod.c).
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
 * This file holds the entry points, the modules, function and file ids, the frames of an
 * address and their names; symfile.c the ELF files (opening, identity, symbol table,
 * raw locations from DWARF, the cache directory); symbols_int.h what they share.
 *
 * Runs in the one thread that merges streams (profile.c); not thread-safe.
 *
 * Invariants: a function id names one (module path, name) pair for the symbolizer's
 * life; a file id one path (0: unknown); each (module, addr) is looked up at most once
 * (per-module cache of location ids) and each (file, addr) in elfutils at most once
 * across reports (raw locations); a location's frames never change.
 */
#include "analyze/symbols/symbols_int.h"
#include "format/format.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <unistd.h>

#include <libiberty/demangle.h>

/* Bounds of a demangled name (docs/REPORT.md, "Names"): a mangled name longer than
 * DM_MAX_IN is not demangled (the demangler's arrays are on the stack, a few dozen bytes
 * per input byte), nor one whose demangled form exceeds DM_MAX_OUT: substitutions can
 * make it exponentially long (263 bytes -> 870 MB), in time as in memory. */
enum { DM_MAX_IN = 16 << 10, DM_MAX_OUT = 64 << 10 };

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
	/* elfutils' local places; with DEBUGINFOD_URLS, debuginfod servers (debuginfod.c) */
	sy->dbgd = sd_dbgd_new();
	sy->cb.find_debuginfo = sd_dbgd_find_debuginfo;
	return sy;
}

void sd_sym_free(struct sd_symbolizer *sy)
{
	if (!sy)
		return;
	sd_sym_save_caches(sy);
	sd_archive_note(sy);
	sd_archive_free(sy);
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
		free(f->plt_names);
		free(f->maxend);
		sd_symcache_free(f->cache);
		free(f->cache_name);
	}
	free(sy->sfiles);
	sd_strmap_fini(&sy->sfilekeys);
	sd_dbgd_free(sy->dbgd); /* after dwfl_end: their clients point to it */
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
	for (size_t i = 0; i < sy->nmaps; i++)
		sd_perfmap_fini(&sy->maps[i]);
	free(sy->maps);
	sd_strmap_fini(&sy->mapkeys);
	free(sy);
}

/* A path the loader gives for something that is not a file: "[vdso]", "" (taken as
 * `exe` by the reader before it gets here). */
int sd_sym_pseudo_path(const char *path)
{
	return !path[0] || path[0] == '[';
}

int sd_sym_module(struct sd_symbolizer *sy, const char *path, const char *cwd,
		  const uint8_t *build_id, size_t build_id_len)
{
	return sd_sym_module_stat(sy, path, cwd, build_id, build_id_len, UINT64_MAX, 0);
}

int sd_sym_module_stat(struct sd_symbolizer *sy, const char *path, const char *cwd,
		       const uint8_t *build_id, size_t build_id_len, uint64_t size,
		       uint64_t mtime_ns)
{
	char *full = NULL, *key = NULL;
	uint32_t id;
	int err = -ENOMEM, rel = path[0] != '/' && !sd_sym_pseudo_path(path);

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
	uint64_t stat2[2] = { size, mtime_ns };
	/* without a build-id, the file's recorded size and mtime tell its versions apart */
	size_t extra = build_id_len ? build_id_len : size != UINT64_MAX ? sizeof(stat2) : 0;
	if (!(key = malloc(plen + 1 + extra)))
		goto out;
	memcpy(key, path, plen + 1);
	memcpy(key + plen + 1, build_id_len ? (const void *)build_id : stat2, extra);
	if (sd_strmap_get(&sy->modkeys, key, plen + 1 + extra, &id)) {
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
	m->has_stat = size != UINT64_MAX;
	m->fsize = size;
	m->fmtime_ns = mtime_ns;
	if (sd_strmap_put(&sy->modkeys, key, plen + 1 + extra, (uint32_t)sy->nmods)) {
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
		sd_msg("sonde: %s: %.60s...: not demangled: its %s form is longer than "
			"%d bytes (shown mangled)", basename_of(modpath), mangled,
			dm == -E2BIG ? "demangled" : "mangled",
			dm == -E2BIG ? DM_MAX_OUT : DM_MAX_IN);
out:
	free(nl);
	return r;
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

	if (m && !strcmp(m->base, SD_SYM_MPI_WRAPPER)) {
		*n = 0; /* sonde's own MPI wrappers: the MPI call they wrap is below */
		return 0;
	}
	if (m && m->state == MOD_OPEN) {
		struct symfile *f = &sy->sfiles[m->file];
		have = sd_symcache_get(f->cache, addr, &l);
		if (!have) {
			sd_symfile_open(sy, f, m->base);
			if (f->ok) {
				sd_symfile_resolve(f, addr, &l, symbuf, sizeof(symbuf));
				/* a file without symbols is not cached: each report opens it and
				 * says so (its names are entries of its unwind table) */
				if (f->ok == 1 && sd_symcache_put(f->cache, addr, &l))
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
		/* MPI's profiling names are the calls the program made: PMPI_Send is MPI_Send
		 * (MPI_Send is its weak alias, and the Fortran bindings call PMPI_Send) */
		if (name && !strncmp(name, "PMPI_", 5) && name[5] >= 'A' && name[5] <= 'Z')
			name++;
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
			sd_symmod_open(sy, m);
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

int sd_sym_jit_frames(struct sd_symbolizer *sy, int map, uint64_t addr,
		      const struct sd_frame **frames)
{
	struct perfmap *m = map > 0 && (size_t)map <= sy->nmaps ? &sy->maps[map - 1] : NULL;
	const char *name;
	size_t seg;
	uint32_t id;
	int f;

	if (!m || pseudo_frame_name(addr) || !(name = sd_perfmap_find(m, addr, &seg)))
		return sd_sym_frames(sy, -1, addr, frames);
	if (!sd_u64map_get(&m->cache, seg, &id)) { /* one location per segment */
		if (sy->nlocs >= UINT32_MAX ||
		    sd_grow(&sy->locs, &sy->caplocs, sy->nlocs + 1, sizeof(*sy->locs)) ||
		    sd_grow(&sy->frames, &sy->capframes, sy->nframes + 1, sizeof(*sy->frames)) ||
		    (f = func_named(sy, SD_SYM_JIT_MODULE, name, 0, 0)) < 0)
			return -ENOMEM;
		id = (uint32_t)sy->nlocs;
		if (sd_u64map_put(&m->cache, seg, id))
			return -ENOMEM;
		sy->frames[sy->nframes] = (struct sd_frame){ (uint32_t)f, 0, 0 };
		sy->locs[sy->nlocs++] = (struct loc){ (uint32_t)sy->nframes++, 1 };
	}
	*frames = &sy->frames[sy->locs[id].first];
	return 1;
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

	sd_sym_save_caches(sy);
	sd_archive_note(sy);
	if (sy->nundemangled > 1)
		sd_msg("sonde: %zu more C++ names not demangled: past the same bounds "
			"(shown mangled)", sy->nundemangled - 1);
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

int sd_sym_module_used(const struct sd_symbolizer *sy, size_t i)
{
	return i < sy->nmods && sy->mods[i].state != MOD_NEW;
}

size_t sd_sym_nfuncs(const struct sd_symbolizer *sy)
{
	return sy->nfuncs;
}

const struct sd_func *sd_sym_func(const struct sd_symbolizer *sy, uint32_t id)
{
	return id < sy->nfuncs ? &sy->funcs[id] : NULL;
}
