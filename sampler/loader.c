/* loader.c - ordinary-context work for the signal handler: the loader
 * snapshot it reads, and libunwind's lazy state made before any handler runs.
 *
 * The sampler owns the tracking of the loader: the dlopen/dlclose wrappers
 * and the writer thread's tick (sd_loader_poll: modules mapped behind our
 * back, by libc's own dlopen of gconv or NSS modules) call sd_loader_changed,
 * which rebuilds the snapshot, flushes libunwind's caches and tells the
 * writer to record the new module set. The first thread's start calls
 * sd_unwind_warmup. Never from signal context: building
 * the snapshot calls the real dl_iterate_phdr (the loader lock), mmap and
 * munmap. The handler's side, reading the snapshot and the atomic swap that
 * publishes it, is in handler.c.
 */
#define _GNU_SOURCE
#include <link.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "common/dlns.h"
#include "common/sys.h"
#include "sampler/sampler.h"
#include "mem/mem.h"

/* The loader's load and unload counters when the snapshot was last built
 * (what sd_loader_poll compares with), and whether the loader may not be
 * touched from the writer's tick: in a forked child, until the program's own
 * dlopen or dlclose returned, its lock may be held by a thread that is gone. */
static _Atomic unsigned long long built_adds, built_subs;
static atomic_int suspect;

struct build_ctx {
	size_t count, phdr_count, name_bytes;
	struct phdr_snapshot *s;
	char *cursor;
};

static int count_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct build_ctx *b = data;
	b->count++;
	b->phdr_count += info->dlpi_phnum;
	b->name_bytes += strlen(info->dlpi_name ? info->dlpi_name : "") + 1;
	return 0;
}

static int fill_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct build_ctx *b = data;
	struct phdr_snapshot *s = b->s;
	if (s->count >= b->count)
		return 1; /* the set grew between the two passes: retry */
	struct phdr_entry *e = &s->e[s->count++];
	memset(&e->info, 0, sizeof e->info);
	e->info.dlpi_addr = info->dlpi_addr;
	e->info.dlpi_phnum = info->dlpi_phnum;
	e->phdrs = (ElfW(Phdr) *)b->cursor;
	memcpy(e->phdrs, info->dlpi_phdr, info->dlpi_phnum * sizeof(ElfW(Phdr)));
	b->cursor += info->dlpi_phnum * sizeof(ElfW(Phdr));
	e->info.dlpi_phdr = e->phdrs;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	size_t n = strlen(name) + 1;
	e->name = b->cursor;
	memcpy(e->name, name, n);
	b->cursor += n;
	e->info.dlpi_name = e->name;
	s->adds = info->dlpi_adds;
	s->subs = info->dlpi_subs;
	return 0;
}

/* Rebuilds the snapshot from the real loader state. Ordinary context only;
 * the calling thread must have sonde's signals blocked or be the writer. */
void sd_phdr_snapshot_rebuild(void)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		struct build_ctx b = {0};
		sd_dl_iterate_all(sd_real_dl_iterate_phdr, count_cb, &b);
		b.count += 8; /* slack for a concurrent load between passes */
		size_t bytes = sizeof(struct phdr_snapshot) + b.count * sizeof(struct phdr_entry) +
			       (b.phdr_count + 64) * sizeof(ElfW(Phdr)) + b.name_bytes + 4096;
		void *m = sd_mem_map(bytes, 0);
		if (m == MAP_FAILED)
			return;
		b.s = m;
		b.s->map_bytes = bytes;
		b.cursor = (char *)&b.s->e[b.count];
		if (sd_dl_iterate_all(sd_real_dl_iterate_phdr, fill_cb, &b) != 0) {
			sd_mem_unmap(m, bytes);
			continue;
		}
		atomic_store_explicit(&built_adds, b.s->adds, memory_order_relaxed);
		atomic_store_explicit(&built_subs, b.s->subs, memory_order_relaxed);
		struct phdr_snapshot *old = sd_phdr_snapshot_swap_sigsafe(b.s);
		if (!old)
			return;
		/* Free the old copy once no handler reads it; a handler runs for
		 * microseconds, so this waits at most a few yields. If readers never
		 * drain (should not happen), the old copy is leaked, not freed under
		 * a reader. */
		for (int spin = 0; spin < 10000; spin++) {
			if (sd_phdr_snapshot_readers_sigsafe() == 0) {
				sd_mem_unmap(old, old->map_bytes);
				return;
			}
			sd_sys_sched_yield();
		}
		return;
	}
}

struct gen { unsigned long long adds, subs; };

static int gen_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct gen *g = data;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
		g->adds = info->dlpi_adds;
		g->subs = info->dlpi_subs;
	}
	return 1; /* the counters are global: the first object is enough */
}

int sd_loader_poll(void)
{
	if (atomic_load(&suspect))
		return 0;
	struct gen g = {0, 0};
	sd_real_dl_iterate_phdr(gen_cb, &g);
	return g.adds != atomic_load_explicit(&built_adds, memory_order_relaxed) ||
	       g.subs != atomic_load_explicit(&built_subs, memory_order_relaxed);
}

void sd_loader_changed(uint64_t t0_ns)
{
	sigset_t old;
	sd_runtime_block_signals(&old);
	atomic_store(&suspect, 0);
	sd_phdr_snapshot_rebuild();
	if (sd_rt.cfg.unwind == SD_UNWIND_LIBUNWIND)
		unw_flush_cache(unw_local_addr_space, 0, 0);
	sd_writer_modules_changed(t0_ns);
	sd_runtime_restore_signals(&old);
}

/* Is every namespace's list of loaded objects whole (no dlopen or dlclose
 * between its start and end)? r_debug's r_state says; since glibc 2.35
 * (r_version 2) r_next links the other namespaces' r_debug. */
static int loader_consistent_sigsafe(void)
{
	struct r_debug_v2 {
		struct r_debug base;
		struct r_debug_v2 *r_next;
	};
	const struct r_debug_v2 *r = (const struct r_debug_v2 *)&_r_debug;
	for (int n = 0; r && n < 64; n++) {
		if (r->base.r_state != RT_CONSISTENT)
			return 0;
		r = r->base.r_version >= 2 ? r->r_next : NULL;
	}
	return 1;
}

void sd_loader_poll_single_sigsafe(void)
{
	struct sd_thread *t = sd_tls_thread;
	if ((t && t->in_dl) || atomic_load(&suspect) || !loader_consistent_sigsafe() ||
	    !sd_loader_poll())
		return;
	uint64_t t0 = sd_now_ns_sigsafe();
	sd_phdr_snapshot_rebuild();
	if (sd_rt.cfg.unwind == SD_UNWIND_LIBUNWIND)
		unw_flush_cache(unw_local_addr_space, 0, 0);
	sd_writer_modules_changed(t0);
}

void sd_loader_fork_child(void)
{
	atomic_store(&suspect, 1);
}

/* valgrind loads its core preload into every dynamically linked program it
 * runs (LD_PRELOAD, before the program's own, sonde's included). */
static int valgrind_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *name = info->dlpi_name ? info->dlpi_name : "";
	const char *base = strrchr(name, '/');
	if (strncmp(base ? base + 1 : name, "vgpreload_core-", 15) != 0)
		return 0;
	*(int *)data = 1;
	return 1;
}

int sd_loader_under_valgrind(void)
{
	int found = 0;
	sd_real_dl_iterate_phdr(valgrind_cb, &found);
	return found;
}

/* Runs libunwind's slow path a few frames in ordinary context, on the first
 * thread that begins, so that its process-wide lazy state (its set-up, the
 * caches of the unwind tables it met, its memory-validation pipe) is made
 * here, not in a handler. The fast trace's per-thread cache (256 KiB, about
 * 0.1 ms to fill) is made by each thread's first sample, the first thread's
 * included: a process or thread that is never sampled never pays for it.
 * Making it takes libunwind's own signal-safe path (its once-only key, an
 * mmap, a store), and never a lock the interrupted code could hold: the
 * handler does not run while this thread is inside libunwind (`busy`). */
void sd_unwind_warmup(struct sd_thread *t)
{
	t->busy = 1;
	t->in_handler = 1; /* libunwind's lazily made pipe is marked as ours */
	unw_context_t uc;
	unw_cursor_t c;
	if (unw_getcontext(&uc) == 0 && unw_init_local(&c, &uc) == 0)
		for (int i = 0; i < 4 && unw_step(&c) > 0; i++)
			;
	t->in_handler = 0;
	t->busy = 0;
}

