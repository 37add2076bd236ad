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
 * vDSO, a missing file, a file whose build-id differs from the one recorded) yields
 * "basename+0xADDR" names; a warning is printed once per module.
 *
 * Invariants: a function id names one (module path, name) pair for the symbolizer's
 * life; each (module, addr) is looked up in elfutils at most once (per-module cache).
 */
#include "analyze/analyze.h"

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
	struct sd_u64map cache; /* addr -> function id */
};

struct sd_symbolizer {
	int addresses;
	char *debuginfo_path;   /* NULL: elfutils' default; pointed to by cb */
	Dwfl_Callbacks cb;
	struct symmod *mods;
	size_t nmods, capmods;
	struct sd_strmap modkeys;  /* path \0 build-id -> module handle */
	struct sd_u64map raw, unknown; /* caches for module 0 and undefined module ids */
	struct sd_func *funcs;
	size_t nfuncs, capfuncs;
	struct sd_strmap funckeys; /* module path \0 name -> function id */
};

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

struct sd_symbolizer *sd_sym_new(int addresses)
{
	struct sd_symbolizer *sy = calloc(1, sizeof(*sy));

	if (!sy)
		return NULL;
	sy->addresses = addresses;
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

int sd_sym_lookup(struct sd_symbolizer *sy, int mod, uint64_t addr)
{
	struct sd_u64map *cache = mod == -1 ? &sy->raw : mod < 0 ? &sy->unknown : NULL;
	struct symmod *m = NULL;
	char buf[512];
	const char *name = NULL, *modpath = "";
	uint32_t id;
	int r;

	if (mod >= 0) {
		if ((size_t)mod >= sy->nmods)
			return -EINVAL;
		m = &sy->mods[mod];
		cache = &m->cache;
	}
	if (sd_u64map_get(cache, addr, &id))
		return (int)id;
	if (m) {
		if (m->state == MOD_NEW)
			mod_open(sy, m);
		if (m->state == MOD_OPEN) {
			GElf_Off off;
			GElf_Sym sym;
			name = dwfl_module_addrinfo(m->mod, addr, &off, &sym, NULL, NULL, NULL);
			/* drop the symbol version ("memcpy@@GLIBC_2.14"): one function, one row */
			const char *at = name ? strchr(name, '@') : NULL;
			if (at && at > name) {
				snprintf(buf, sizeof(buf), "%.*s", (int)(at - name), name);
				name = buf;
			}
		}
		modpath = m->path;
		if (!name) {
			snprintf(buf, sizeof(buf), "%.400s+0x%" PRIx64, m->base, addr);
			name = buf;
		}
	} else {
		snprintf(buf, sizeof(buf), mod == -1 ? "0x%" PRIx64 : "[unknown]+0x%" PRIx64, addr);
		name = buf;
	}
	r = func_id(sy, modpath, name);
	if (r >= 0 && sd_u64map_put(cache, addr, (uint32_t)r))
		return -ENOMEM;
	return r;
}

int sd_sym_srcline(struct sd_symbolizer *sy, int mod, uint64_t addr, char *buf, size_t len)
{
	int line = 0;

	if (mod < 0 || (size_t)mod >= sy->nmods)
		return -ENOENT;
	struct symmod *m = &sy->mods[mod];
	if (m->state == MOD_NEW)
		mod_open(sy, m);
	if (m->state != MOD_OPEN)
		return -ENOENT;
	Dwfl_Line *l = dwfl_module_getsrc(m->mod, addr);
	const char *file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
	if (!file)
		return -ENOENT;
	snprintf(buf, len, "%s:%d", file, line);
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
