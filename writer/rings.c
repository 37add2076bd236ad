/* rings.c - the per-thread sample rings: made as a thread begins
 * (sd_writer_ring_new), told its thread's last figures and closed as it ends
 * (sd_writer_ring_close), freed by the drain once read (drain.c).
 *
 * Ordinary context: a thread's own ring, or one sonde closes on its behalf;
 * the list of rings and the pool of buffers are the writer's, under its
 * lock. The producer side (the handler's records) is inline in writer.h;
 * the consumer side is drain.c.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "common/log.h"
#include "common/real.h"
#include "mem/mem.h"
#include "writer/writer_int.h"

static uint32_t ring_max_rec(void)
{
	return (uint32_t)((sizeof(struct sd_rec) + (sd_w.cfg.max_depth + 1 + SD_MAX_COUNTERS) * 8 +
			   7) & ~7ul);
}

/* Buffers of ended threads are kept for the next ones (up to SD_RING_POOL):
 * mapping and unmapping a ring, and touching its pages again, cost a few
 * microseconds per thread. A thread that ends with its ring drained hands
 * its buffers back at once (sd_writer_ring_close), so a program that starts
 * and joins threads faster than the writer ticks reuses the same few. */

/* Writer lock held. */
static void ring_bufs_release(struct sd_ring *r)
{
	if (!r->buf)
		return;
	if (r->buf != MAP_FAILED && r->prev_pcs && r->prev_nodes &&
	    sd_w.nspare < SD_RING_POOL && r->cap_bytes == sd_w.cfg.ring_bytes) {
		sd_w.spare[sd_w.nspare++] =
			(struct sd_ring_bufs){r->buf, r->prev_pcs, r->prev_nodes};
	} else {
		if (r->buf != MAP_FAILED)
			sd_mem_unmap(r->buf, r->cap_bytes);
		sd_mem_free(r->prev_pcs);
		sd_mem_free(r->prev_nodes);
	}
	r->buf = NULL;
	r->prev_pcs = NULL;
	r->prev_nodes = NULL;
}

/* Writer lock held. */
void sd_rings_free(struct sd_ring *r)
{
	ring_bufs_release(r);
	sd_mem_free(r->blk_pcs);
	sd_mem_free(r);
}

/* A new thread's ring size: SONDE_BUFFER_KB's, unless sonde has a share of
 * RLIMIT_AS (mem.h). The share is sized for SD_MEM_THREADS threads: the ring
 * is then halved, down to SD_RING_MIN_BYTES, until it fits in a thread's
 * part of the share beside the thread's other costs (cfg.thread_bytes), and
 * in a quarter of what is left (threads that come when the share runs short
 * still get one). Said once. */
static uint64_t ring_bytes_for(pid_t tid, const char *name)
{
	uint64_t cap = sd_w.cfg.ring_bytes;
	size_t left = sd_mem_left();
	if (left == SIZE_MAX)
		return cap;
	size_t part = sd_mem_budget() / SD_MEM_THREADS;
	part = part > sd_w.cfg.thread_bytes ? part - sd_w.cfg.thread_bytes : 0;
	while (cap > SD_RING_MIN_BYTES && (cap > part || cap > left / 4))
		cap >>= 1;
	if (cap < sd_w.cfg.ring_bytes && !atomic_exchange(&sd_w.ring_cut_said, 1))
		sd_msg("sonde: SONDE_BUFFER_KB: %u KiB per thread does not fit in sonde's share of "
		    "RLIMIT_AS (1/%u of %llu MiB: %zu MiB): thread %d (%s) and later ones get rings "
		    "of %llu KiB at most (raise RLIMIT_AS or lower SONDE_BUFFER_KB)",
		    sd_w.cfg.ring_bytes / 1024, SD_MEM_SHARE,
		    (unsigned long long)(sd_mem_limit() >> 20), sd_mem_budget() >> 20, (int)tid,
		    name ? name : "", (unsigned long long)(cap / 1024));
	return cap;
}

struct sd_ring *sd_writer_ring_new(pid_t tid, const char *name)
{
	if (!atomic_load(&sd_w.inited))
		return NULL;
	struct sd_ring *r = sd_mem_calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->cap_bytes = sd_w.cfg.ring_bytes;
	r->max_rec_bytes = ring_max_rec();
	/* wall-time: the stack where the thread waits (offcpu.c) */
	if (sd_w.cfg.wall_source >= 0 &&
	    !(r->blk_pcs = sd_mem_alloc(SD_BLK_BUFS * (size_t)sd_w.cfg.max_depth * sizeof *r->blk_pcs))) {
		sd_mem_free(r);
		return NULL;
	}
	sd_real_pthread_mutex_lock(&sd_w.lock);
	if (sd_w.nspare) { /* a finished thread's: same sizes, contents do not matter */
		struct sd_ring_bufs b = sd_w.spare[--sd_w.nspare];
		r->buf = b.buf, r->prev_pcs = b.prev_pcs, r->prev_nodes = b.prev_nodes;
	}
	pthread_mutex_unlock(&sd_w.lock);
	if (!r->buf) {
		r->cap_bytes = ring_bytes_for(tid, name);
		r->buf = sd_mem_room(r->cap_bytes) ? sd_mem_map(r->cap_bytes, 0) : MAP_FAILED;
		r->prev_pcs = sd_mem_alloc((sd_w.cfg.max_depth + 1) * sizeof *r->prev_pcs);
		r->prev_nodes = sd_mem_alloc((sd_w.cfg.max_depth + 1) * sizeof *r->prev_nodes);
		if (r->buf == MAP_FAILED || !r->prev_pcs || !r->prev_nodes) {
			sd_real_pthread_mutex_lock(&sd_w.lock);
			sd_rings_free(r);
			pthread_mutex_unlock(&sd_w.lock);
			return NULL;
		}
	}
	r->tid = tid;
	r->t_begin_ns = sd_now_ns_sigsafe();
	r->begin_cpu_known = sd_kernel_thread_cpu_ns(tid, &r->begin_cpu_ns) == 0;
	snprintf(r->name_begin, sizeof r->name_begin, "%s", name ? name : "");
	sd_real_pthread_mutex_lock(&sd_w.lock);
	if (!sd_w.rings_tail)
		sd_w.rings_tail = &sd_w.rings;
	*sd_w.rings_tail = r;
	sd_w.rings_tail = &r->next;
	pthread_mutex_unlock(&sd_w.lock);
	sd_writer_drain_self();
	return r;
}

void sd_writer_ring_final(struct sd_ring *r, const uint64_t *final, unsigned n,
			  const struct sd_cpu_times *cpu)
{
	if (!r || n > SD_MAX_COUNTERS)
		return;
	if (n)
		memcpy(r->final_deltas, final, n * sizeof *final);
	r->nfinal = n;
	if (cpu && cpu->known) {
		r->cpu_ns = cpu->cpu_ns;
		r->user_ns = cpu->user_ns;
		r->sys_ns = cpu->sys_ns;
		r->cpu_known = cpu->known;
	}
}

void sd_writer_ring_close(struct sd_ring *r, const char *name, const uint64_t *final, unsigned n,
			  const struct sd_cpu_times *cpu)
{
	if (!r)
		return;
	sd_writer_ring_final(r, final, n, cpu);
	snprintf(r->name_end, sizeof r->name_end, "%s", name ? name : "");
	atomic_store(&r->t_end_ns, sd_now_ns_sigsafe());
	/* Closed by its own thread and drained already (a short thread, or one
	 * the writer just caught up with): its buffers go to the next thread
	 * now, not at the next tick. The writer reads a buffer only between tail
	 * and head, under the lock held here. */
	SD_ASSERT(!atomic_load(&r->closed));
	if (cpu && pthread_mutex_trylock(&sd_w.lock) == 0) {
		if (atomic_load_explicit(&r->head, memory_order_acquire) ==
		    atomic_load_explicit(&r->tail, memory_order_acquire))
			ring_bufs_release(r);
		pthread_mutex_unlock(&sd_w.lock);
	}
	atomic_store_explicit(&r->closed, 1, memory_order_release);
	if (cpu) /* its own thread, ordinary context, signals blocked */
		sd_writer_drain_self();
}

void sd_writer_ring_unsampled(struct sd_ring *r, enum sd_unsampled why, uint64_t cpu_ns)
{
	if (!r || (unsigned)why >= SD_UNSAMPLED_NREASONS)
		return;
	atomic_store(&r->unsampled_ns[why], cpu_ns);
	atomic_fetch_or(&r->unsampled_posted, 1u << why); /* after the value */
}

void sd_writer_ring_regions(struct sd_ring *r, struct sd_rtable *rt)
{
	if (r)
		atomic_store_explicit(&r->regions, rt, memory_order_release);
}
