/*
 * symbols.c: offline symbolization for `sonde report`, with elfutils (libdwfl).
 *
 * A module is an ELF file named by a stream's MODULE record, identified by (path,
 * build-id) so that the many processes of one run share one opened file. Each module
 * gets its own Dwfl, reported at base 0 with add_p_vaddr=true, which makes the module's
 * addresses equal to ELF virtual addresses (bias 0, also for prelinked objects): FRAME
 * addrs are ELF vaddrs already and are looked up unchanged. Separate debug info is found
 * the standard way (dwfl_standard_find_debuginfo: .gnu_debuglink, /usr/lib/debug, build-id).
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
 * (__cxa_demangle) unless SD_SYM_NO_DEMANGLE; inlined functions are named by their
 * DW_AT_linkage_name (demangled), else DW_AT_name, so an inlined function and its
 * out-of-line copy are one function. With SD_SYM_LINES (--lines) a function at a line is
 * named "name file:line", so the views count per source line.
 *
 * Runs in the one thread that merges streams (profile.c); not thread-safe.
 *
 * Invariants: a function id names one (module path, name) pair for the symbolizer's
 * life; a file id one path (0: unknown); each (module, addr) is looked up in elfutils at
 * most once (per-module cache of location ids); a location's frames never change.
 */
#include "analyze/analyze.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MOD_NEW, MOD_OPEN, MOD_FALLBACK };

struct symmod {
	char *path, *base;
	uint8_t *build_id;
	size_t build_id_len;
	int state;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct sd_u64map cache; /* addr -> location id */
};

/* libstdc++'s demangler (the analyzer links libstdc++ for it). */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct loc { uint32_t first, n; }; /* frames[first .. first+n), outermost first */

struct sd_symbolizer {
	int addresses, inl, demangle, lines;
	char *debuginfo_path;   /* NULL: elfutils' default; pointed to by cb */
	Dwfl_Callbacks cb;
	struct symmod *mods;
	size_t nmods, capmods;
	struct sd_strmap modkeys;  /* path \0 build-id -> module handle */
	struct sd_u64map raw, unknown; /* caches for module 0 and undefined module ids */
	struct sd_func *funcs;
	size_t nfuncs, capfuncs;
	struct sd_strmap funckeys; /* module path \0 name -> function id */
	struct loc *locs; size_t nlocs, caplocs;
	struct sd_frame *frames; size_t nframes, capframes;
	char **files; size_t nfiles, capfiles; /* files[0] = "" (unknown) */
	struct sd_strmap filekeys; /* path -> file id */
};

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int grow(void *arr, size_t *cap, size_t need, size_t size)
{
	void **a = arr;
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 64;
	while (c < need)
		c *= 2;
	void *n = realloc(*a, c * size);
	if (!n)
		return -ENOMEM;
	*a = n;
	*cap = c;
	return 0;
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
	if (grow(&sy->files, &sy->capfiles, 1, sizeof(*sy->files)) || !(sy->files[0] = strdup(""))) {
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

void sd_sym_free(struct sd_symbolizer *sy)
{
	if (!sy)
		return;
	for (size_t i = 0; i < sy->nmods; i++) {
		struct symmod *m = &sy->mods[i];
		if (m->dwfl)
			dwfl_end(m->dwfl);
		free(m->path);
		free(m->build_id);
		sd_u64map_fini(&m->cache);
	}
	free(sy->mods);
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

int sd_sym_module(struct sd_symbolizer *sy, const char *path, const uint8_t *build_id,
		  size_t build_id_len)
{
	size_t plen = strlen(path);
	char *key = malloc(plen + 1 + build_id_len);
	uint32_t id;
	int err = -ENOMEM;

	if (!key)
		return -ENOMEM;
	memcpy(key, path, plen + 1);
	if (build_id_len)
		memcpy(key + plen + 1, build_id, build_id_len);
	if (sd_strmap_get(&sy->modkeys, key, plen + 1 + build_id_len, &id)) {
		free(key);
		return (int)id;
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
	if (sd_strmap_put(&sy->modkeys, key, plen + 1 + build_id_len, (uint32_t)sy->nmods)) {
		free(m->path);
		free(m->build_id);
		goto out;
	}
	err = (int)sy->nmods++;
out:
	free(key);
	return err;
}

/* Open module m for lookups, or decide it falls back to module+offset names. */
static void mod_open(struct sd_symbolizer *sy, struct symmod *m)
{
	struct stat st;
	const unsigned char *bits;
	GElf_Addr vaddr;

	m->state = MOD_FALLBACK;
	if (sy->addresses || m->path[0] != '/')   /* [vdso], [unknown], "" */
		return;
	int bad = stat(m->path, &st) < 0 ? errno : !S_ISREG(st.st_mode) ? -1 : 0;
	if (bad) {
		fprintf(stderr, "sonde: %s: %s (cannot symbolize; showing %s+0xADDR)\n", m->path,
			bad > 0 ? strerror(bad) : "not a regular file", m->base);
		return;
	}
	m->dwfl = dwfl_begin(&sy->cb);
	if (m->dwfl)
		m->mod = dwfl_report_elf(m->dwfl, m->base, m->path, -1, 0, true);
	if (m->dwfl)
		dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod) {
		fprintf(stderr, "sonde: %s: %s (cannot symbolize; showing %s+0xADDR)\n", m->path,
			dwfl_errmsg(-1), m->base);
		return;
	}
	if (m->build_id_len) {
		int n = dwfl_module_build_id(m->mod, &bits, &vaddr);
		if (n != (int)m->build_id_len || memcmp(bits, m->build_id, m->build_id_len)) {
			fprintf(stderr, "sonde: %s: build-id differs from the profiled file (it "
				"was rebuilt or replaced since the run; showing %s+0xADDR)\n",
				m->path, m->base);
			return;
		}
	}
	/* a stripped file: no defined function symbol in .symtab or .dynsym */
	int nsyms = dwfl_module_getsymtab(m->mod), funcs = 0;
	for (int i = 1; i < nsyms && !funcs; i++) {
		GElf_Sym sym;
		GElf_Word shndx;
		if (dwfl_module_getsym(m->mod, i, &sym, &shndx) &&
		    GELF_ST_TYPE(sym.st_info) == STT_FUNC && shndx != SHN_UNDEF)
			funcs = 1;
	}
	if (!funcs) {
		fprintf(stderr, "sonde: %s: no symbols (stripped?; showing %s+0xADDR)\n", m->path,
			m->base);
		return;
	}
	m->state = MOD_OPEN;
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
	if (sy->nfiles >= INT32_MAX || grow(&sy->files, &sy->capfiles, sy->nfiles + 1,
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

/* Function id of `name` in modpath, demangled unless --no-demangle; with --lines, of
 * "name file:line" (file's basename) when the frame's source is known. */
static int func_named(struct sd_symbolizer *sy, const char *modpath, const char *name,
		      int file, int line)
{
	char *d = NULL, *nl = NULL;
	int status = -1, r = -ENOMEM;

	if (sy->demangle && name[0] == '_' && name[1] == 'Z')
		d = __cxa_demangle(name, NULL, NULL, &status);
	if (d && status == 0)
		name = d;
	if (sy->lines && file > 0) {
		const char *f = basename_of(sy->files[file]);
		size_t l = strlen(name) + strlen(f) + 16;
		if (!(nl = malloc(l)))
			goto out;
		snprintf(nl, l, "%s %s:%d", name, f, line);
		name = nl;
	}
	r = func_id(sy, modpath, name);
out:
	free(d);
	free(nl);
	return r;
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
enum { MAX_INLINE = 64 };

/* Append the frames of (m, addr) to sy->frames, outermost first; *n gets their number.
 * m is NULL for addresses outside every module. 0 or -ENOMEM. */
static int resolve(struct sd_symbolizer *sy, int mod, struct symmod *m, uint64_t addr,
		   uint32_t *n)
{
	struct inl { const char *name; int file, line; } in[MAX_INLINE]; /* innermost first */
	size_t nin = 0;
	char buf[512];
	const char *name = NULL, *modpath = "", *outer = NULL;
	int file = 0, line = 0, r;
	Dwarf_Die *scopes = NULL;

	if (m && m->state == MOD_OPEN) {
		GElf_Off off;
		GElf_Sym sym;
		name = dwfl_module_addrinfo(m->mod, addr, &off, &sym, NULL, NULL, NULL);
		/* drop the symbol version ("memcpy@@GLIBC_2.14"): one function, one row */
		const char *at = name ? strchr(name, '@') : NULL;
		if (at && at > name) {
			snprintf(buf, sizeof(buf), "%.*s", (int)(at - name), name);
			name = buf;
		}
		Dwfl_Line *l = dwfl_module_getsrc(m->mod, addr);
		const char *f = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
		if ((file = file_id(sy, f)) < 0)
			return -ENOMEM;
		if (!f)
			line = 0;
		Dwarf_Addr bias = 0;
		Dwarf_Die *cu = sy->inl ? dwfl_module_addrdie(m->mod, addr, &bias) : NULL;
		int ns = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
		if (ns > 0) {
			/* the DIE chain from the innermost scope: concrete inlined instances
			 * nest in their callers, up to the subprogram */
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
				outer = die_name(&scopes[i]);
				break;
			}
			if (tag != DW_TAG_inlined_subroutine)
				continue;
			const char *iname = die_name(&scopes[i]);
			if (iname && nin < MAX_INLINE)
				in[nin++] = (struct inl){ iname, file, line };
			/* the caller is at the call site */
			Dwarf_Attribute a;
			Dwarf_Word cf = 0, cl = 0;
			const char *fname = NULL;
			if (files && !dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf))
				fname = dwarf_filesrc(files, cf, NULL, NULL);
			if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl))
				cl = 0;
			if ((file = file_id(sy, fname)) < 0)
				goto nomem;
			line = file ? (int)cl : 0;
		}
	}
	if (m) {
		modpath = m->path;
		if (!name)
			name = outer;
		if (!name) {
			snprintf(buf, sizeof(buf), "%.400s+0x%" PRIx64, m->base, addr);
			name = buf;
		}
	} else if (mod == -1 && sd_pseudo_frame_name(addr)) {
		name = sd_pseudo_frame_name(addr);
	} else {
		snprintf(buf, sizeof(buf), mod == -1 ? "0x%" PRIx64 : "[unknown]+0x%" PRIx64, addr);
		name = buf;
	}
	if (grow(&sy->frames, &sy->capframes, sy->nframes + nin + 1, sizeof(*sy->frames)))
		goto nomem;
	if ((r = func_named(sy, modpath, name, file, line)) < 0)
		goto nomem;
	sy->frames[sy->nframes] = (struct sd_frame){ (uint32_t)r, (uint32_t)file, (uint32_t)line };
	for (size_t k = 0; k < nin; k++) {
		const struct inl *e = &in[nin - 1 - k];
		if ((r = func_named(sy, modpath, e->name, e->file, e->line)) < 0)
			goto nomem;
		sy->frames[sy->nframes + 1 + k] = (struct sd_frame){
			(uint32_t)r, (uint32_t)in[nin - 1 - k].file, (uint32_t)in[nin - 1 - k].line };
	}
	*n = (uint32_t)nin + 1;
	free(scopes);
	return 0;
nomem:
	free(scopes);
	return -ENOMEM;
}

const char *sd_pseudo_frame_name(uint64_t addr)
{
	static const char *const names[] = {
		NULL, "[blocked]", "[off-cpu]", "[kernel]", "[signals blocked]", "[dlopen/dlclose]",
	};
	return addr < sizeof(names) / sizeof(names[0]) ? names[addr] : NULL;
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
		    grow(&sy->locs, &sy->caplocs, sy->nlocs + 1, sizeof(*sy->locs)))
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

int sd_sym_lookup(struct sd_symbolizer *sy, int mod, uint64_t addr)
{
	const struct sd_frame *f;
	int n = sd_sym_frames(sy, mod, addr, &f);

	return n < 0 ? n : (int)f[n - 1].func;
}

const char *sd_sym_file(const struct sd_symbolizer *sy, uint32_t file)
{
	return file < sy->nfiles ? sy->files[file] : "";
}

int sd_sym_srcline(struct sd_symbolizer *sy, int mod, uint64_t addr, char *buf, size_t len)
{
	const struct sd_frame *f;
	int n = sd_sym_frames(sy, mod, addr, &f);

	if (n < 0)
		return n;
	if (!f[n - 1].file)
		return -ENOENT;
	snprintf(buf, len, "%s:%u", sy->files[f[n - 1].file], f[n - 1].line);
	return 0;
}

int sd_sym_finish(struct sd_symbolizer *sy)
{
	struct sd_strmap count = { 0 };
	int err = 0;

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
		if (c > 1 && f->module[0]) {
			size_t l = strlen(f->name) + strlen(f->module) + 4;
			f->display = malloc(l);
			if (f->display)
				snprintf(f->display, l, "%s [%s]", f->name, f->module);
		} else {
			f->display = strdup(f->name);
		}
		if (!f->display)
			err = -ENOMEM;
	}
	sd_strmap_fini(&count);
	return err;
}

size_t sd_sym_nfuncs(const struct sd_symbolizer *sy)
{
	return sy->nfuncs;
}

const struct sd_func *sd_sym_func(const struct sd_symbolizer *sy, uint32_t id)
{
	return id < sy->nfuncs ? &sy->funcs[id] : NULL;
}
