/* modules.c - the writer's map of loaded ELF objects.
 *
 * Called with the writer lock held: at start, after every dlopen/dlclose
 * (from the program thread that made it) and when the writer meets an address
 * no module contains. Modules are never forgotten within a stream: an
 * unloaded one keeps its id and its [t_load, t_unload] interval, so samples
 * taken before a dlclose still resolve to it (hazards H1).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/common.h"
#include "common/dlns.h"
#include "common/real.h"
#include "writer/writer_int.h"
#include "mem/mem.h"

struct scan_item {
	char *name;
	uintptr_t bias, lo, hi;
	uint8_t build_id[SD_BUILD_ID_MAX];
	unsigned build_id_len;
};

struct scan {
	struct scan_item *items;
	size_t n, cap;
	int incomplete; /* out of memory part-way: not the loader's whole list */
};

static int scan_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct scan *s = data;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (hi == 0)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 32;
		struct scan_item *it = sd_mem_realloc(s->items, cap * sizeof *it);
		if (!it) {
			s->incomplete = 1;
			return 1;
		}
		s->items = it;
		s->cap = cap;
	}
	struct scan_item *it = &s->items[s->n++];
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	if (!*name && s->n == 1)
		name = sd_w.exe;
	else if (!*name)
		name = "[unknown]";
	else if (!strncmp(name, "linux-vdso", 10))
		name = "[vdso]";
	it->name = sd_mem_strdup(name);
	if (!it->name) {
		s->n--;
		s->incomplete = 1;
		return 1;
	}
	it->bias = info->dlpi_addr;
	it->lo = lo;
	it->hi = hi;
	it->build_id_len = (unsigned)sd_build_id_of(info->dlpi_phdr, info->dlpi_phnum, info->dlpi_addr, it->build_id,
						  sizeof it->build_id);
	return 0;
}

/* The size and modification time of m's file as it is now, when the module is met (so
 * that a report can tell a file replaced since, docs/FORMAT.md MODULE): one stat(2), in
 * the thread that applies a scan, writer lock held; never in a signal handler. Paths
 * that name no file ("[vdso]", "[unknown]") and files that cannot be stat'ed: none. */
static void stat_module(struct sd_module *m)
{
	struct stat st;
	int e = errno; /* the program's, kept */
	m->has_stat = m->path[0] != '[' && stat(m->path, &st) == 0 && S_ISREG(st.st_mode);
	if (m->has_stat) {
		m->size = (uint64_t)st.st_size;
		m->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u +
			      (uint64_t)st.st_mtim.tv_nsec;
	}
	errno = e;
}

static int cmp_lo(const void *a, const void *b)
{
	const struct sd_module *x = *(struct sd_module *const *)a;
	const struct sd_module *y = *(struct sd_module *const *)b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void rebuild_index(void)
{
	sd_w.nloaded = 0;
	for (size_t i = 0; i < sd_w.nmods; i++)
		if (sd_w.mods[i]->loaded)
			sd_w.nloaded++;
	sd_mem_free(sd_w.loaded);
	sd_w.loaded = sd_mem_alloc((sd_w.nloaded + 1) * sizeof *sd_w.loaded);
	size_t k = 0;
	for (size_t i = 0; sd_w.loaded && i < sd_w.nmods; i++)
		if (sd_w.mods[i]->loaded)
			sd_w.loaded[k++] = sd_w.mods[i];
	if (!sd_w.loaded)
		sd_w.nloaded = 0;
	if (sd_w.nloaded > 1) /* never sort NULL (out of memory) */
		sd_sort(sd_w.loaded, sd_w.nloaded, sizeof *sd_w.loaded, cmp_lo);
}

/* Re-reads the loader's list; records MODULE / MODULE_END for the
 * differences. t_load: time attributed to new modules (when their dlopen
 * began); t_unload: to vanished ones. Writer lock held. */
/* Reads the loader's list into a new scan. Must be called WITHOUT the
 * writer lock: dl_iterate_phdr takes the loader's lock, and a library
 * constructor running under that lock may create a thread, which takes the
 * writer lock (a lock-order inversion). */
struct sd_scan *sd_modules_collect(void)
{
	struct scan *s = sd_mem_calloc(1, sizeof *s);
	if (s)
		/* ordinary context: the loader's own lists, every namespace */
		sd_dl_iterate_all(sd_real_dl_iterate_phdr, scan_cb, s);
	return (struct sd_scan *)s;
}

void sd_modules_scan(uint64_t t_load, uint64_t t_unload)
{
	sd_modules_apply(sd_modules_collect(), t_load, t_unload);
}

/* Records MODULE / MODULE_END for the differences between the modules known
 * and the scan (which it frees). Writer lock held. */
void sd_modules_apply(struct sd_scan *scan, uint64_t t_load, uint64_t t_unload)
{
	if (!scan)
		return; /* out of memory: keep what is known rather than unload all */
	struct scan s = *(struct scan *)scan;
	sd_mem_free(scan);
	for (size_t i = 0; i < sd_w.nmods; i++)
		sd_w.mods[i]->seen = 0;
	for (size_t j = 0; j < s.n; j++) {
		struct scan_item *it = &s.items[j];
		struct sd_module *m = NULL;
		for (size_t i = 0; i < sd_w.nmods && !m; i++) {
			struct sd_module *c = sd_w.mods[i];
			if (c->loaded && c->bias == it->bias && c->lo == it->lo && c->hi == it->hi &&
			    !strcmp(c->path, it->name))
				m = c;
		}
		if (m) {
			m->seen = 1;
			sd_mem_free(it->name);
			continue;
		}
		if (sd_w.nmods == sd_w.capmods) {
			size_t cap = sd_w.capmods ? sd_w.capmods * 2 : 64;
			struct sd_module **mm = sd_mem_realloc(sd_w.mods, cap * sizeof *mm);
			if (!mm) {
				sd_mem_free(it->name);
				continue;
			}
			sd_w.mods = mm;
			sd_w.capmods = cap;
		}
		m = sd_mem_calloc(1, sizeof *m);
		if (!m) {
			sd_mem_free(it->name);
			continue;
		}
		m->id = (uint32_t)sd_w.nmods + 1;
		m->path = it->name;
		m->bias = it->bias;
		m->lo = it->lo;
		m->hi = it->hi;
		memcpy(m->build_id, it->build_id, it->build_id_len);
		m->build_id_len = it->build_id_len;
		m->t_load = t_load;
		m->t_unload = UINT64_MAX;
		m->loaded = 1;
		m->seen = 1;
		stat_module(m);
		sd_w.mods[sd_w.nmods++] = m;
		sd_stream_module(m);
	}
	/* A module missing from an incomplete scan may well be loaded: only a
	 * whole list says what was unloaded. */
	for (size_t i = 0; i < sd_w.nmods && !s.incomplete; i++) {
		struct sd_module *m = sd_w.mods[i];
		if (m->loaded && !m->seen) {
			m->loaded = 0;
			m->t_unload = t_unload;
			sd_stream_module_end(m);
		}
	}
	sd_mem_free(s.items);
	rebuild_index();
	sd_w.mod_gen++;
}

/* The module that held run-time address `addr` at time t_ns, or NULL. */
struct sd_module *sd_modules_find(uintptr_t addr, uint64_t t_ns)
{
	size_t lo = 0, hi = sd_w.nloaded;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (sd_w.loaded[mid]->lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0) {
		struct sd_module *m = sd_w.loaded[lo - 1];
		if (addr < m->hi && m->t_load <= t_ns)
			return m;
	}
	for (size_t i = sd_w.nmods; i-- > 0;) {
		struct sd_module *m = sd_w.mods[i];
		if (!m->loaded && addr >= m->lo && addr < m->hi && m->t_load <= t_ns &&
		    t_ns <= m->t_unload)
			return m;
	}
	return NULL;
}

void sd_modules_free(void)
{
	for (size_t i = 0; i < sd_w.nmods; i++) {
		sd_mem_free(sd_w.mods[i]->path);
		sd_mem_free(sd_w.mods[i]);
	}
	sd_mem_free(sd_w.mods);
	sd_mem_free(sd_w.loaded);
	sd_w.mods = NULL;
	sd_w.loaded = NULL;
	sd_w.nmods = sd_w.capmods = sd_w.nloaded = 0;
}

/* In a forked child the loader's lock may be held forever by a thread that
 * no longer exists (one that was inside dlopen when another forked), so the
 * child must not call dl_iterate_phdr until the program itself has loaded or
 * unloaded something. The address space is the parent's: the modules the
 * parent had loaded are carried over, renumbered for the new stream. Writer
 * lock held. */
void sd_modules_reemit(uint64_t t_ns)
{
	size_t k = 0;
	for (size_t i = 0; i < sd_w.nmods; i++) {
		struct sd_module *m = sd_w.mods[i];
		if (!m->loaded) {
			sd_mem_free(m->path);
			sd_mem_free(m);
			continue;
		}
		m->id = (uint32_t)k + 1;
		m->t_load = t_ns;
		sd_w.mods[k++] = m;
		sd_stream_module(m);
	}
	sd_w.nmods = k;
	rebuild_index();
	sd_w.mod_gen++;
}

