/*
 * analyze/symbols/symbols.h: (module, ELF address) to function, file and line with elfutils
 * (symbols.c; the ELF files: symfile.c), cached per build-id in memory and across reports
 * (symcache.c). Below the profile; includes only util.
 */
#ifndef SONDE_ANALYZE_SYMBOLS_H
#define SONDE_ANALYZE_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/util/util.h"

/* ---- symbols.c --------------------------------------------------------------------- */

/* A function: what the flat profile has one row for. Keyed by (module path, name). */
struct sd_func {
	char *name;      /* symbol name, or "module+0xADDR" / "0xADDR" when unknown */
	char *module;    /* basename of the module path ("" for none) */
	char *display;   /* name, plus " [module]" when the name occurs in two modules */
};

/* One frame of an address: function, and the source file (sd_sym_file; 0: unknown) and
 * line where that function is at the address (for an inlined call's caller: the call). */
struct sd_frame { uint32_t func, file, line; };

/* Flags of sd_sym_new (and sd_profile_init). */
enum {
	SD_SYM_ADDRESSES = 1,    /* never look up names (always module+0xoffset) */
	SD_SYM_NO_INLINE = 2,    /* one frame per address: no inlined frames */
	SD_SYM_NO_DEMANGLE = 4,  /* keep C++ names mangled */
	SD_SYM_LINES = 8,        /* name frames "function file:line" (--lines) */
	SD_SYM_SHORT = 16,       /* --short-names: C++ names without template arguments,
				  * parameters and clone suffixes */
};

struct sd_symbolizer;
/* flags: SD_SYM_*. NULL on ENOMEM. */
struct sd_symbolizer *sd_sym_new(int flags);
void sd_sym_free(struct sd_symbolizer *sy);
/* Register a module of a stream; returns a module handle >= 0 or -ENOMEM. Modules with
 * the same path and build-id share a handle; modules with the same build-id share one
 * loaded file. A relative path is taken relative to cwd (the stream's HEADER `cwd`, an
 * absolute path, or NULL: then the module is not symbolized, with a warning). build_id
 * may be NULL. */
int sd_sym_module(struct sd_symbolizer *sy, const char *path, const char *cwd,
		  const uint8_t *build_id, size_t build_id_len);
/* sd_sym_module with what the stream recorded of the module's file (MODULE `size` and
 * `mtime`, docs/FORMAT.md; size UINT64_MAX: not recorded). A module without build-id
 * whose file has another size or mtime now is not named (its names would be another
 * program's): module+0xADDR and one line saying so. Modules without build-id recorded
 * with different sizes or mtimes get different handles. */
int sd_sym_module_stat(struct sd_symbolizer *sy, const char *path, const char *cwd,
		       const uint8_t *build_id, size_t build_id_len, uint64_t size,
		       uint64_t mtime_ns);
/* The module of sonde's MPI wrappers (mpi/wrap.c): its frames are left out, so that a
 * program's call of MPI_Send is its caller's child, as without sonde. */
#define SD_SYM_MPI_WRAPPER "libsonde_mpi.so"
/* Frames of address `addr` in module handle `mod` (-1: no module, addr is raw; -2:
 * module id not defined in the stream), outermost first: the function containing the
 * address, then one per inlined call down to the innermost. Returns their number (>= 1;
 * 0 in SD_SYM_MPI_WRAPPER) and *frames (valid until the next sd_sym_* call that may add
 * frames), or -ENOMEM / -EINVAL. Cached per (mod, addr). An MPI function's profiling
 * name is its name: PMPI_Send is MPI_Send. */
int sd_sym_frames(struct sd_symbolizer *sy, int mod, uint64_t addr,
		  const struct sd_frame **frames);
/* JIT code (perfmap.c): the perf map of a stream's process, by the rule of
 * docs/REPORT.md "JIT code: perf maps": `stream` is the stream file's path (its kept
 * copy is the same name with .perf.map for .sonde), the rest from its HEADER (real_lo_ns
 * its clock's realtime origin, real_hi_ns that plus its last record's t) for the
 * /tmp/perf-PID.map of a process that kept none. */
struct sd_jit_want {
	const char *stream, *host;
	uint64_t pid, real_lo_ns, real_hi_ns;
	int has_clock;
};
/* The map's handle + 1 (maps read once per path), 0 when the stream has none (or
 * --addresses), -ENOMEM. A map that cannot be used is said in one line. */
int sd_sym_perfmap_open(struct sd_symbolizer *sy, const struct sd_jit_want *w);
/* sd_sym_frames for an address outside every module (FRAME module 0) of a stream whose
 * perf map is `map` (a handle + 1 of sd_sym_perfmap_open; 0: none): one frame, the
 * map's name in module "[JIT]", when the map holds the address; else as
 * sd_sym_frames(sy, -1, addr, frames). */
int sd_sym_jit_frames(struct sd_symbolizer *sy, int map, uint64_t addr,
		      const struct sd_frame **frames);
/* The module name of JIT frames (struct sd_func's module). */
#define SD_SYM_JIT_MODULE "[JIT]"
/* Bounds of a perf map read (perfmap.c). */
#define SD_PERFMAP_MAX_BYTES (256u << 20)
#define SD_PERFMAP_MAX_ENTRIES (1u << 22)
/* Path of a file id of struct sd_frame ("" for 0 and unknown ids). */
const char *sd_sym_file(const struct sd_symbolizer *sy, uint32_t file);
/* A pseudo function with a fixed name such as "[no stack]". */
int sd_sym_pseudo(struct sd_symbolizer *sy, const char *name);
/* A C++ name as --short-names shows it: template arguments "<>", no parameters, no
 * clone suffix (operator<, operator<<, operator() kept). malloc'ed; NULL on ENOMEM. */
char *sd_sym_short_name(const char *name);
/* Fill every func's `display` (call once after all lookups). 0 or -ENOMEM. */
int sd_sym_finish(struct sd_symbolizer *sy);
size_t sd_sym_nfuncs(const struct sd_symbolizer *sy);
/* The modules registered (sd_sym_module): how many, and module i's path, basename (what
 * struct sd_func's module holds) and build-id (NULL, 0: none). */
size_t sd_sym_nmodules(const struct sd_symbolizer *sy);
void sd_sym_module_info(const struct sd_symbolizer *sy, size_t i, const char **path,
			const char **base, const uint8_t **build_id, size_t *build_id_len);
const struct sd_func *sd_sym_func(const struct sd_symbolizer *sy, uint32_t id);
/* 1 if module i had an address looked up (sd_sym_frames), else 0. */
int sd_sym_module_used(const struct sd_symbolizer *sy, size_t i);

/* ---- archive.c: the build-id archive (docs/REPORT.md "Build-id archive") ------------- */

/* A directory of archived symbols (NAME.sym files by build-id: a pack's, or the
 * build-id/ directory of an unpacked pack) looked in before the user's archive, for
 * modules whose file is gone or changed; `label` names it in the note ("pack
 * x.tar"). Read only. 0 or -ENOMEM. */
int sd_sym_archive_add(struct sd_symbolizer *sy, const char *dir, const char *label);
/* At the next save (sd_sym_finish, sd_sym_free), archive the raw locations of every
 * module file with a build-id that this symbolizer read, not only those it resolved anew
 * (sonde run after CMD, sonde archive). */
void sd_sym_archive_all(struct sd_symbolizer *sy);
/* The user's archive directory as SONDE_ARCHIVE, SONDE_CACHE, XDG_CACHE_HOME and HOME
 * say (docs/ENV.md) into buf: 1, or 0 when it is off (or no place can be named). */
int sd_sym_archive_dir(char *buf, size_t len);
/* The archived symbols of build-id bid (len bytes) opened for reading: the pack
 * directories of sd_sym_archive_add first, then the user's archive; a regular file of
 * the user's, never through a symlink. An fd (O_CLOEXEC) and its name (HEX.sym) in
 * name, or -1. */
int sd_sym_archive_open(struct sd_symbolizer *sy, const uint8_t *bid, size_t len,
			char *name, size_t namelen);

/* ---- symcache.c: raw locations of one ELF file, in memory and across reports ------- */

enum { SD_BUILD_ID_MAX = 64, SD_SYM_MAX_INLINE = 64 };
/* What an address of a file resolves to, before the report's options apply: the symbol
 * table's name (no version), the DWARF subprogram's name, the address's own file:line,
 * and the inlined calls at it, innermost first, each with the file:line of its call. */
struct sd_rawinl { const char *name, *file; uint32_t line; };
struct sd_rawloc {
	const char *sym, *outer, *file; /* NULL: unknown */
	uint32_t line, ninl;
	struct sd_rawinl *inl;          /* room for SD_SYM_MAX_INLINE */
};
/* The file a cache was made from: its build-id (may be empty) and stat identity. */
struct sd_fileid {
	uint8_t bid[SD_BUILD_ID_MAX]; uint32_t bid_len;
	uint64_t dev, ino, size; int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
};
struct sd_symcache;
/* An empty cache; NULL on ENOMEM. */
struct sd_symcache *sd_symcache_new(void);
void sd_symcache_free(struct sd_symcache *c);
/* 1 and *l (strings valid until the next put) if addr is cached, else 0. */
int sd_symcache_get(const struct sd_symcache *c, uint64_t addr, struct sd_rawloc *l);
/* Add addr's location (copied; a cached addr is kept as is): 0 or -ENOMEM. */
int sd_symcache_put(struct sd_symcache *c, uint64_t addr, const struct sd_rawloc *l);
/* 1 if entries were added since it was loaded or saved, or it was touched. */
int sd_symcache_dirty(const struct sd_symcache *c);
/* Mark c to be saved (it was made from another file of the same build-id). */
void sd_symcache_touch(struct sd_symcache *c);
/* 1 if some address of c may have been resolved without the file's debug info (DWARF):
 * marked by sd_symcache_lacks_debug_set, and in a file saved before sonde recorded it. */
int sd_symcache_lacks_debug(const struct sd_symcache *c);
void sd_symcache_lacks_debug_set(struct sd_symcache *c);
/* Open (creating it and its parents, 0700) the cache directory: an fd (O_CLOEXEC), or -1
 * with the reason in why and errno: EPERM when it is there but unsafe (a symlink, not
 * a directory, owned by another user), else why it could not be made or opened. */
int sd_symcache_dir_open(const char *dir, char *why, size_t len);
/* How many addresses c holds. */
size_t sd_symcache_count(const struct sd_symcache *c);
/* Add every address of `from` that `into` lacks (copied): how many, or -ENOMEM. */
int sd_symcache_merge(struct sd_symcache *into, const struct sd_symcache *from);
/* want->size of sd_symcache_load that takes a file of any size (the build-id archive:
 * the stream records no size, or an earlier one's). */
#define SD_SYMCACHE_ANY_SIZE UINT64_MAX
/* Read cache file `name` of dirfd made for build-id want->bid and size want->size: 0
 * and *out, with *same_file = 1 when it was made from a file of want's identity; -ENOENT (none),
 * -ESTALE (a cache file of another format version: to be rewritten, nothing to say),
 * -EINVAL (not a valid cache of that file: corrupt, truncated, foreign), -ENOMEM,
 * -errno. Never trusts the file: every offset and count is checked. */
int sd_symcache_load(int dirfd, const char *name, const struct sd_fileid *want,
		     struct sd_symcache **out, int *same_file);
/* Write c as cache file `name` of dirfd, atomically (temporary file, 0600, renamed): 0
 * or -errno. */
int sd_symcache_save(int dirfd, const char *name, struct sd_symcache *c,
		     const struct sd_fileid *id);

#endif
