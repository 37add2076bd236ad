/* drain.c - the drain: every ring's records read into msgpack records, with
 * what the threads and the process posted beside them (notes, CHILD events,
 * drops, unsampled time, region totals, off-CPU time), rings of ended
 * threads freed, and the stream's end (sd_drain_finish).
 *
 * Who drains, always with the writer lock held: the writer thread at each
 * tick (thread.c); without one (writerless, thread.c) the program's threads
 * in their sample handlers (sd_writer_drain_sigsafe: the lock only tried,
 * never waited for, and never while the thread is inside sonde's allocator)
 * and where sonde already runs in ordinary context with every signal
 * blocked (sd_writer_drain_self); the query API (sd_writer_leaf_pcs,
 * sd_writer_flush_now); the thread that ends the process (sd_drain_finish).
 *
 * The consumer's protocol (the producer is inline in writer.h): head read
 * with acquire, records read between tail and head at tail mod cap_bytes,
 * PAD records skipped by their length, tail stored with release once the
 * records are read.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "annotate/annotate.h"
#include "common/real.h"
#include "common/sys.h"
#include "mem/mem.h"
#include "writer/writer_int.h"

/* ---- what a ring carries beside its records ------------------------------ */

static void emit_unsampled(struct sd_ring *r)
{
	static const char *const names[SD_UNSAMPLED_NREASONS] = SD_UNSAMPLED_NAMES;
	uint32_t posted = atomic_load(&r->unsampled_posted); /* before the values */
	for (unsigned i = 0; i < SD_UNSAMPLED_NREASONS; i++) {
		uint64_t v = atomic_load(&r->unsampled_ns[i]);
		int first = (posted >> i & 1) && !(r->unsampled_written >> i & 1);
		if (v != r->unsampled_sent[i] || first) {
			r->unsampled_sent[i] = v;
			r->unsampled_written |= 1u << i;
			sd_stream_unsampled(r->idx, names[i], v);
		}
	}
}

/* An entry's totals if they changed, then its call still open (REGION_OPEN
 * after REGION_STATS: the reader takes a later REGION_STATS as the close). */
static void emit_region_stat(void *ring, const struct sd_region_stat *s)
{
	if (s->changed)
		sd_stream_region_stat(ring, s);
	if (s->open_begin_ns)
		sd_stream_region_open(ring, s);
}

/* REGION_STATS of the ring's thread: what changed, at most once a flush
 * period while it runs, and once more at its end or the process's. */
static void emit_regions(struct sd_ring *r, int last)
{
	struct sd_rtable *rt = atomic_load_explicit(&r->regions, memory_order_acquire);
	if (!rt || !r->idx)
		return; /* no regions timed in this thread: no clock read either */
	uint64_t now = sd_now_ns_sigsafe();
	if (!last && now - r->regions_written_ns < sd_w.cfg.flush_ms * 1000000ull)
		return;
	r->regions_written_ns = now;
	sd_annotate_rtable_collect(rt, emit_region_stat, r);
}

static void emit_drops(struct sd_ring *r)
{
	int changed = 0;
	uint64_t now[SD_DROP_NREASONS];
	for (unsigned i = 0; i < SD_DROP_NREASONS; i++) {
		now[i] = atomic_load_explicit(&r->drops[i], memory_order_relaxed);
		changed |= now[i] != r->drops_sent[i];
	}
	if (!changed)
		return;
	memcpy(r->drops_sent, now, sizeof now);
	sd_stream_drops(r->idx, now);
}

/* ---- one ring ------------------------------------------------------------- */

/* The records between the ring's tail and head, the file written whenever
 * a MiB is buffered. */
static void drain_records(struct sd_ring *r)
{
	uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	while (tail != head) {
		const struct sd_rec *rec = (const void *)(r->buf + (tail & (r->cap_bytes - 1)));
		SD_ASSERT(rec->len_bytes >= sizeof *rec && rec->len_bytes <= head - tail &&
			  (rec->kind == SD_REC_PAD || rec->len_bytes <= r->max_rec_bytes));
		if (rec->kind == SD_REC_SAMPLE)
			sd_stream_sample(r, rec);
		else if (rec->kind == SD_REC_REGION)
			sd_stream_region(r, rec);
		tail += rec->len_bytes;
		if (sd_w.sbuf.size > (1u << 20)) {
			atomic_store_explicit(&r->tail, tail, memory_order_release);
			sd_outfile_flush();
		}
	}
	atomic_store_explicit(&r->tail, tail, memory_order_release);
}

/* A running thread's off-CPU time, and its CPU time once a flush period. */
static void ring_tick(struct sd_ring *r)
{
	sd_offcpu_tick(r);
	uint64_t now_ns = sd_now_ns_sigsafe(), cpu;
	if (r->idx && now_ns - r->cpu_written_ns >= sd_w.cfg.flush_ms * 1000000ull &&
	    sd_kernel_thread_cpu_ns(r->tid, &cpu) == 0) {
		sd_stream_thread_cpu(r, now_ns, cpu);
		r->cpu_written_ns = now_ns;
	}
}

/* The name of a thread still running as the process ends: its name now,
 * else the one it began with. */
static void ring_name_now(struct sd_ring *r)
{
	char path[64];
	memcpy(r->name_end, r->name_begin, sizeof r->name_end);
	int fd = -1;
	if (r->tid == gettid()) { /* the exiting thread's own: no file */
		char name[16] = "";
		if (prctl(PR_GET_NAME, name, 0, 0, 0) == 0)
			memcpy(r->name_end, name, sizeof name);
	} else { /* not stdio: no malloc on the writer thread (mem.h) */
		snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)r->tid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd >= 0) {
		char name[sizeof r->name_end];
		ssize_t n = sd_sys_read(fd, name, sizeof name - 1);
		sd_sys_close(fd);
		if (n > 0) {
			name[n] = 0;
			name[strcspn(name, "\n")] = 0;
			memcpy(r->name_end, name, sizeof name);
		}
	}
}

/* THREAD_END of a thread that ended (closed) or that runs on as the
 * process ends. */
static void ring_end(struct sd_ring *r, int closed)
{
	sd_offcpu_final(r); /* time kept for want of a stack */
	if (!closed && !r->cpu_known && sd_kernel_thread_cpu_ns(r->tid, &r->cpu_ns) == 0)
		r->cpu_known = sd_kernel_thread_cpu_split(r->tid, r->cpu_ns, &r->user_ns,
							  &r->sys_ns) == 0 ? 2 : 1;
	if (!closed) {
		ring_name_now(r);
		atomic_store(&r->t_end_ns, sd_now_ns_sigsafe());
	}
	sd_stream_thread_end(r);
}

/* Everything of ring r since the last drain; its end if closed or final. */
static void drain_ring(struct sd_ring *r, int closed, int final)
{
	if (!r->idx)
		sd_stream_thread(r);
	drain_records(r);
	emit_drops(r);
	if (!closed)
		ring_tick(r);
	emit_unsampled(r);
	emit_regions(r, closed || final);
	if (closed || final)
		ring_end(r, closed);
}

/* ---- every ring ----------------------------------------------------------- */

void sd_drain(int final)
{
	sd_notes_emit();
	sd_notes_children_emit();
	sd_traffic_emit();
	struct sd_ring **p;
	for (p = &sd_w.rings; *p;) {
		struct sd_ring *r = *p;
		int closed = atomic_load_explicit(&r->closed, memory_order_acquire);
		drain_ring(r, closed, final);
		if (closed) {
			for (unsigned i = 0; i < SD_DROP_NREASONS; i++)
				sd_w.n_dropped_gone += r->drops_sent[i];
			*p = r->next;
			sd_annotate_rtable_free(atomic_load(&r->regions));
			sd_rings_free(r);
		} else {
			p = &r->next;
		}
	}
	sd_w.rings_tail = p;
	sd_notes_drops_emit();
}

void sd_drain_finish(const char *reason, int signo)
{
	if (atomic_exchange(&sd_w.ended, 1))
		return;
	if (sd_w.file_pending && !strcmp(reason, "exec")) {
		sd_drain(0);
		if (!sd_outfile_due())
			return; /* no file: the new image writes this pid's stream (if
				 * exec fails, buffering simply goes on) */
	}
	sd_drain(1);
	sd_stream_end(reason, signo);
	sd_outfile_flush_at(1);
	if (strcmp(reason, "signal")) /* exit, _exit, exec: never in a handler (jitmap.c) */
		sd_jitmap_keep();
}

/* ---- who drains ----------------------------------------------------------- */

/* Rings are drained: by the writer thread, or by the program's threads
 * (writerless, until the stream's END). */
static int drained(void)
{
	return atomic_load(&sd_w.inited) &&
	       (atomic_load(&sd_w.thread_running) ||
		(atomic_load(&sd_w.writerless) && !atomic_load(&sd_w.ended)));
}

/* A process without a writer thread (thread.c): the calling thread drains
 * every ring and writes when a flush period has passed. Ordinary context,
 * every signal blocked by the caller; nothing waits (a busy lock means
 * another thread is draining). */
void sd_writer_drain_self(void)
{
	if (!atomic_load(&sd_w.writerless) || sd_mem_held_here_sigsafe() ||
	    pthread_mutex_trylock(&sd_w.lock) != 0)
		return;
	if (!atomic_load(&sd_w.ended)) {
		atomic_store(&sd_w.drained_ns, sd_now_ns_sigsafe());
		sd_drain(0);
		if (sd_now_ns_sigsafe() - sd_w.last_flush_ns >= sd_w.cfg.flush_ms * 1000000ull)
			sd_outfile_flush();
	}
	pthread_mutex_unlock(&sd_w.lock);
}

size_t sd_writer_leaf_pcs(struct sd_top_pc **out)
{
	*out = NULL;
	if (!drained())
		return 0;
	sd_real_pthread_mutex_lock(&sd_w.lock);
	sd_drain(0);
	size_t n = sd_stream_leaf_copy(out);
	pthread_mutex_unlock(&sd_w.lock);
	return n;
}

int sd_writer_flush_now(void)
{
	if (!drained())
		return -EAGAIN;
	sd_real_pthread_mutex_lock(&sd_w.lock);
	for (struct sd_ring *r = sd_w.rings; r; r = r->next)
		r->regions_written_ns = 0; /* due now */
	sd_drain(0);
	sd_outfile_flush();
	pthread_mutex_unlock(&sd_w.lock);
	return 0;
}

int sd_writer_drain_due_sigsafe(const struct sd_ring *own)
{
	return sd_writer_drain_after_sigsafe(own, 1);
}

int sd_writer_drain_after_sigsafe(const struct sd_ring *own, unsigned periods)
{
	if (!atomic_load(&sd_w.writerless) || !atomic_load(&sd_w.inited) ||
	    atomic_load(&sd_w.ended))
		return 0;
	uint64_t now = sd_now_ns_sigsafe(), period = sd_w.cfg.flush_ms * 1000000ull;
	uint64_t used = atomic_load_explicit(&own->head, memory_order_relaxed) -
			atomic_load_explicit(&own->tail, memory_order_relaxed);
	return used >= own->cap_bytes / 4 ||
	       now - atomic_load(&sd_w.drained_ns) >= periods * period;
}

void sd_writer_drain_sigsafe(const struct sd_ring *own)
{
	if (!sd_writer_drain_due_sigsafe(own))
		return;
	uint64_t now = sd_now_ns_sigsafe(), period = sd_w.cfg.flush_ms * 1000000ull;
	if (sd_mem_held_here_sigsafe() || pthread_mutex_trylock(&sd_w.lock) != 0)
		return; /* this thread was inside sonde, or another thread drains */
	if (atomic_load(&sd_w.writerless) && !atomic_load(&sd_w.ended)) {
		int e = errno;
		atomic_store(&sd_w.drained_ns, now);
		if (atomic_load(&sd_w.deferred) && sd_w.cfg.drain_hook) {
			/* one thread, this one: the loader's lists are this thread's,
			 * and whole unless the hook finds them changing */
			sd_w.in_drain_hook = 1;
			sd_w.cfg.drain_hook();
			sd_w.in_drain_hook = 0;
		}
		sd_drain(0);
		if (now - sd_w.last_flush_ns >= period)
			sd_outfile_flush();
		errno = e;
	}
	pthread_mutex_unlock(&sd_w.lock);
}
