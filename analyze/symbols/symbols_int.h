/*
 * symbols_int.h: what the two files of the symbolizer share, and nothing else includes.
 * symbols.c holds the public entry points (symbols.h: sd_sym_*): modules, function and
 * file ids, an address's frames, names (demangled, shortened); symfile.c the ELF files
 * behind the modules: opened safely, identified, their symbol tables, their raw locations
 * from DWARF and their symbol caches (symcache.c). The design is described at the top of
 * symbols.c.
 */
#ifndef SONDE_SYMBOLS_INT_H
#define SONDE_SYMBOLS_INT_H

#include <elfutils/libdwfl.h>

#include "analyze/symbols/symbols.h"

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
	char *plt_names;             /* the names of its PLT entries' symbols (func@plt) */
	uint64_t *maxend;            /* maxend[i]: max addr + size of syms[0..i] */
	struct sd_symcache *cache;   /* raw locations, never NULL once registered */
	char *cache_name;            /* its file in the cache directory; NULL: not kept */
	int dbgd_main;               /* debuginfod.c: its debug file looked up (0 not yet,
				      * 1 found, 2 not) */
	const char *from;            /* NULL: the file itself; else the build-id archive it
				      * was read from (archive.c), cache its only names */
	size_t arch_n;               /* its cache's addresses already archived */
};

struct symmod {
	char *path, *base;           /* path made absolute against cwd when relative */
	uint8_t *build_id;
	size_t build_id_len;
	int rel_nocwd;               /* relative path and no cwd recorded */
	int state;
	int has_stat;                /* the stream recorded its file's size and mtime */
	uint64_t fsize, fmtime_ns;
	uint32_t file;               /* MOD_OPEN: index in sy->sfiles */
	struct sd_u64map cache;      /* addr -> location id */
};

/* A perf map of JIT code (perfmap.c): disjoint segments sorted by address, each named
 * by an offset into names; cache: segment index -> location id. */
struct jitseg { uint64_t lo, hi; uint32_t name; };
struct perfmap {
	struct jitseg *segs; size_t nsegs;
	char *names;
	struct sd_u64map cache;
};

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
	struct perfmap *maps; size_t nmaps, capmaps; /* perf maps of JIT code */
	struct sd_strmap mapkeys;  /* path -> index in maps */
	struct sd_dbgd *dbgd;      /* debuginfod.c: NULL when DEBUGINFOD_URLS is unset */
	struct archive *arch;      /* the build-id archive (archive.c), NULL until used */
};

/* Up to this many inlined frames per address are kept (the outermost ones dropped). */
enum { MAX_INLINE = SD_SYM_MAX_INLINE };

/* symbols.c: is path one the loader gives for something that is not a file ("[vdso]", "")? */
int sd_sym_pseudo_path(const char *path);

/* symfile.c: module m, at its first lookup, made MOD_OPEN (with its symfile) or MOD_FALLBACK. */
void sd_symmod_open(struct sd_symbolizer *sy, struct symmod *m);
/* symfile.c: f handed to elfutils at its first uncached address; f->ok says if usable. */
void sd_symfile_open(struct sd_symbolizer *sy, struct symfile *f, const char *base);
/* symfile.c: the raw location of addr in open file f into *l (strings in f's Dwfl or symbuf). */
void sd_symfile_resolve(struct symfile *f, uint64_t addr, struct sd_rawloc *l, char *symbuf,
			size_t symlen);
/* perfmap.c: the name of the segment of m holding addr (and its index in *seg), or NULL. */
const char *sd_perfmap_find(const struct perfmap *m, uint64_t addr, size_t *seg);
/* perfmap.c: m's memory freed. */
void sd_perfmap_fini(struct perfmap *m);
/* archive.c: the archived symbols of module m (whose file is gone or not the one
 * profiled: `why`) as a symfile: its index, or -1 (none, or the archive is off). */
long sd_archive_file(struct sd_symbolizer *sy, struct symmod *m, const char *why);
/* archive.c: the raw locations that module files gained, archived (sd_sym_save_caches). */
void sd_archive_save(struct sd_symbolizer *sy);
/* archive.c: the modules named from an archive since the last call, said in one line
 * per archive. */
void sd_archive_note(struct sd_symbolizer *sy);
/* archive.c: its memory freed. */
void sd_archive_free(struct sd_symbolizer *sy);
/* debuginfod.c: its state for a report when DEBUGINFOD_URLS is set, else NULL (or
 * ENOMEM: nothing is fetched). */
struct sd_dbgd *sd_dbgd_new(void);
void sd_dbgd_free(struct sd_dbgd *d);
/* debuginfod.c: the Dwfl's find_debuginfo callback (each module's userdata is sy): the
 * local places of dwfl_standard_find_debuginfo, then, when sy->dbgd, the debuginfod
 * servers, bounded, each outcome said in one line. An fd and *name, or -1. */
int sd_dbgd_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			   Dwarf_Addr base, const char *file, const char *link, GElf_Word crc,
			   char **name);
/* debuginfod.c: 1 if symbol cache c of the file identified by id was made (in part)
 * without debug info that may now be had (DEBUGINFOD_URLS is set, or a debug file of its
 * build-id is in /usr/lib/debug/.build-id): then it is not used. */
int sd_dbgd_cache_stale(const struct sd_symbolizer *sy, const struct sd_fileid *id,
			const struct sd_symcache *c);
/* symfile.c: every symbol cache that gained addresses written (one warning on failure). */
void sd_sym_save_caches(struct sd_symbolizer *sy);

#endif
