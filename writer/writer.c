/* writer.c - the writer component's state (sd_w); its start (the stream
 * begun: header, modules), its stop (exit, exec, a failed exec) and what
 * fork does to it.
 *
 * Who calls what: program threads create and close rings (their own,
 * rings.c) and report loader changes; the writer thread (thread.c) wakes
 * every few milliseconds, drains every ring into msgpack records (drain.c,
 * encoded by stream.c) and appends them to the file (outfile.c) at least
 * every flush_ms; without one the program's threads drain (thread.c); the
 * thread that ends the process (exit, _exit, exec) stops it and writes the
 * last records itself (sd_writer_stop); a SIGTERM-like signal asks the
 * writer thread for a final flush through atomics only
 * (sd_writer_final_flush_sigsafe, thread.c). Any thread or signal handler
 * posts notes and CHILD events without the lock (notes.c).
 *
 * Invariants: `sd_w.lock` guards all writer state; in signal context it is
 * only tried (sd_writer_drain_sigsafe, sd_writer_final_flush_sigsafe), never
 * waited for. The stream file is made lazily, never receives a byte through
 * a descriptor number the program took over, and holds whole records only:
 * a killed process leaves a valid prefix (outfile.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/real.h"
#include "writer/writer_int.h"
#include "mem/mem.h"

struct sd_writer sd_w = {.lock = PTHREAD_MUTEX_INITIALIZER, .out_fd = -1, .dir_fd = -1};

static void read_exe(void)
{
	ssize_t n = readlink("/proc/self/exe", sd_w.exe, sizeof sd_w.exe - 1);
	sd_w.exe[n > 0 ? n : 0] = 0;
	if (n <= 0)
		snprintf(sd_w.exe, sizeof sd_w.exe, "unknown");
}

static void clock_origin(void)
{
	struct timespec r;
	sd_w.t0_mono = sd_now_ns_sigsafe();
	clock_gettime(CLOCK_REALTIME, &r);
	sd_w.t0_real = (uint64_t)r.tv_sec * 1000000000ull + (uint64_t)r.tv_nsec;
}

/* The packer's sink: msgpack_sbuffer_write's, over sonde's memory (mem.h:
 * msgpack's would realloc, and give the writer thread a malloc arena),
 * except when the buffer cannot grow. Then the record being packed is taken
 * back (stream.c, rec_begin), so the buffer and the file hold whole records
 * only, and every later record is dropped: the FRAME or CONTEXT records a
 * later one refers to may be among those lost. Said once; the stream ends
 * without END (incomplete). Writer lock held. */
static int sbuf_write(void *data, const char *buf, size_t len)
{
	msgpack_sbuffer *sb = data;
	if (sd_w.pack_oom)
		return -1;
	if (sb->alloc - sb->size >= len) {
		memcpy(sb->data + sb->size, buf, len);
		sb->size += len;
		return 0;
	}
	size_t cap = sb->alloc ? sb->alloc : MSGPACK_SBUFFER_INIT_SIZE;
	while (cap - sb->size < len && cap < SIZE_MAX / 2)
		cap *= 2;
	char *grown = cap - sb->size >= len ? sd_mem_realloc(sb->data, cap) : NULL;
	if (grown) {
		sb->data = grown;
		sb->alloc = cap;
		memcpy(sb->data + sb->size, buf, len);
		sb->size += len;
		return 0;
	}
	sd_w.pack_oom = 1;
	sd_w.sbuf.size = sd_w.rec_start;
	sd_msg("sonde: stream: out of memory for its buffer: %s (profiling data from now on is "
	    "discarded; lower SONDE_FLUSH_MS)", strerror(ENOMEM));
	return -1;
}

/* Header, modules, and the first flush: the file is a valid stream as soon
 * as it exists. Writer lock held. */
static void begin_stream(void)
{
	msgpack_sbuffer_init(&sd_w.sbuf);
	sd_w.rec_start = 0;
	sd_w.pack_oom = 0;
	msgpack_packer_init(&sd_w.pk, &sd_w.sbuf, sbuf_write);
	clock_origin();
	sd_stream_header();
	if (sd_w.loader_suspect)
		sd_modules_reemit(sd_w.t0_mono);
	else
		sd_modules_scan(sd_w.t0_mono, sd_w.t0_mono);
	sd_outfile_flush();
}

int sd_writer_open_dir(const struct sd_writer_config *cfg)
{
	sd_w.cfg = *cfg;
	snprintf(sd_w.dir, sizeof sd_w.dir, "%s", cfg->dir);
	return sd_outfile_prepare_dir();
}

int sd_writer_init(const struct sd_writer_config *cfg)
{
	sd_w.cfg = *cfg;
	if (sd_w.cfg.nsources > 8)
		sd_w.cfg.nsources = 8;
	memcpy(sd_w.sources, cfg->sources, sd_w.cfg.nsources * sizeof *sd_w.sources);
	if (sd_w.dir_fd < 0) /* else sd_writer_open_dir made it absolute already */
		snprintf(sd_w.dir, sizeof sd_w.dir, "%s", cfg->dir);
	read_exe();
	sd_w.tmp_nodes = sd_mem_alloc((cfg->max_depth + 1) * sizeof *sd_w.tmp_nodes);
	sd_w.tmp_pcs = sd_mem_alloc((cfg->max_depth + 1) * sizeof *sd_w.tmp_pcs);
	if (!sd_w.tmp_nodes || !sd_w.tmp_pcs) {
		sd_outfile_drop_dir();
		sd_msg("sonde: writer: cannot start: %s (this run is not profiled)", strerror(ENOMEM));
		return -ENOMEM;
	}
	int err = sd_w.dir_fd >= 0 ? 0 : sd_outfile_prepare_dir();
	if (err)
		return err;
	sd_slots_init();
	sd_w.file_pending = 1;
	sd_real_pthread_mutex_lock(&sd_w.lock);
	begin_stream();
	pthread_mutex_unlock(&sd_w.lock);
	atomic_store(&sd_w.inited, 1);
	return 0;
}

void sd_writer_stop(const char *reason, int signo)
{
	if (!atomic_load(&sd_w.inited))
		return;
	if (sd_w.joinable) { /* running, or left by itself (its slot given back) */
		atomic_store(&sd_w.stop_req, 1);
		sd_writer_wake_sigsafe();
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 5;
		if (sd_real_pthread_timedjoin_np(sd_w.thread, NULL, &until) != 0)
			return; /* the writer is stuck: leave the valid prefix as it is */
		sd_w.joinable = 0;
	}
	sd_real_pthread_mutex_lock(&sd_w.lock);
	sd_drain_finish(reason, signo);
	pthread_mutex_unlock(&sd_w.lock);
}

void sd_writer_resume(void)
{
	if (!atomic_load(&sd_w.inited))
		return;
	atomic_store(&sd_w.ended, 0);
	sd_writer_start();
}

void sd_writer_modules_changed(uint64_t t_ns)
{
	if (!atomic_load(&sd_w.inited))
		return;
	if (sd_w.in_drain_hook) { /* a sample's drain (drain.c, single thread): lock held */
		sd_modules_apply(sd_modules_collect(), t_ns, sd_now_ns_sigsafe());
		return;
	}
	struct sd_scan *scan = sd_modules_collect(); /* before our lock: lock order */
	sd_real_pthread_mutex_lock(&sd_w.lock);
	sd_w.loader_suspect = 0; /* the program's own dlopen/dlclose returned */
	sd_modules_apply(scan, t_ns, sd_now_ns_sigsafe());
	pthread_mutex_unlock(&sd_w.lock);
}

/* ---- fork --------------------------------------------------------------- */

void sd_writer_fork_prepare(void)
{
	sd_real_pthread_mutex_lock(&sd_w.lock);
	if (atomic_load(&sd_w.inited))
		sd_slots_fork_prepare();
}

void sd_writer_fork_parent(void)
{
	pthread_mutex_unlock(&sd_w.lock);
}

/* The ring of the thread that forked, in the child: emptied, its counts
 * and account started again for the child's own stream. */
static void keep_restart(struct sd_ring *keep)
{
	atomic_store(&keep->tail, atomic_load(&keep->head));
	for (unsigned i = 0; i < SD_DROP_NREASONS; i++) {
		atomic_store(&keep->drops[i], 0);
		keep->drops_sent[i] = 0;
	}
	for (unsigned i = 0; i < SD_UNSAMPLED_NREASONS; i++) {
		atomic_store(&keep->unsampled_ns[i], 0);
		keep->unsampled_sent[i] = 0;
	}
	atomic_store(&keep->unsampled_posted, 0);
	keep->unsampled_written = 0;
	keep->idx = 0;
	keep->prev_depth = 0;
	keep->last_node = 0;
	keep->last_trunc = 0;
	keep->wall_init = 0;
	keep->cpu_known = 0;
	keep->cpu_written_ns = 0;
	keep->acc_off_ns = keep->acc_kernel_ns = 0;
	atomic_store(&keep->wall_periods, 0);
	keep->next = NULL;
	keep->tid = gettid();
	keep->t_begin_ns = sd_now_ns_sigsafe();
	keep->begin_cpu_known = sd_kernel_thread_cpu_ns(keep->tid, &keep->begin_cpu_ns) == 0;
}

int sd_writer_fork_child(struct sd_ring *keep)
{
	pthread_mutex_init(&sd_w.lock, NULL);
	if (!atomic_load(&sd_w.inited))
		return -EINVAL;
	/* The parent flushes what it had; nothing of it is written twice. */
	pid_t parent = getppid();
	sd_mem_free(sd_w.sbuf.data);
	msgpack_sbuffer_init(&sd_w.sbuf);
	for (struct sd_ring *r = sd_w.rings, *next; r; r = next) {
		next = r->next;
		if (r != keep)
			sd_rings_free(r);
	}
	sd_w.rings = NULL;
	sd_w.rings_tail = &sd_w.rings;
	sd_w.loader_suspect = 1;
	sd_stream_intern_reset();
	sd_w.next_thread = 0;
	sd_w.n_samples = sd_w.n_frames = sd_w.n_bytes = sd_w.n_threads = 0;
	sd_w.n_dropped = sd_w.n_dropped_gone = 0;
	memset(sd_w.global_drops_sent, 0, sizeof sd_w.global_drops_sent);
	for (unsigned i = 0; i < SD_DROP_NREASONS; i++)
		atomic_store(&sd_w.global_drops[i], 0);
	atomic_store(&sd_w.notes_head, 0);
	atomic_store(&sd_w.notes_done, 0);
	sd_w.notes_sent = 0;
	sd_notes_children_reset(); /* the parent's events are the parent's to write */
	sd_traffic_fork_child();
	atomic_store(&sd_w.ended, 0);
	atomic_store(&sd_w.final_req, 0);
	atomic_store(&sd_w.final_done, 0);
	atomic_store(&sd_w.thread_running, 0);
	atomic_store(&sd_w.writerless, 0);
	sd_w.joinable = 0; /* the parent's thread: not in this process */
	sd_slots_fork_child();
	if (!keep) {
		sd_modules_free();
		sd_outfile_drop_fd(1);
		sd_outfile_drop_dir();
		atomic_store(&sd_w.inited, 0);
		return 0;
	}
	keep_restart(keep);
	sd_w.rings = keep;
	sd_w.rings_tail = &keep->next;
	sd_w.fork_of = parent;
	sd_w.reopened = sd_w.lost_pending = 0;
	sd_w.file_ok = 0;
	atomic_store(&sd_w.discarding, 0); /* a stream of its own, made lazily */
	sd_outfile_drop_fd(1); /* the parent's file */
	sd_w.file_pending = 1; /* made lazily: a child that only execs leaves none */
	/* The parent's directory descriptor, if it kept one, is ours too; else the
	 * directory is opened again (sd_w.dir, absolute) when the file is made:
	 * a child that only execs never walks the path. */
	sd_real_pthread_mutex_lock(&sd_w.lock);
	begin_stream();
	pthread_mutex_unlock(&sd_w.lock);
	return sd_writer_start();
}
