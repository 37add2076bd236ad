/* offcpu.c - the blocked half of wall-time sampling, accounted by the writer.
 *
 * Runs on the writer thread, at each tick, with the writer lock held.
 *
 * wall-time never signals a thread that is not running: a signal makes
 * nanosleep, poll, select, epoll_wait, sem_timedwait, sigtimedwait, ... return
 * EINTR, which SA_RESTART cannot undo. Its signals come from a per-thread
 * task clock in user mode (they fire only while the thread runs its own
 * code), each standing for `period` of elapsed time. The rest of the thread's
 * elapsed time is accounted here, from outside: at each tick,
 *
 *   elapsed  = CLOCK_MONOTONIC advance since the last tick
 *   cpu      = the thread's CPU clock advance (readable from any thread)
 *   sampled  = periods the handler took since the last tick x period
 *   off-CPU  = elapsed - cpu           (blocked, sleeping, or waiting for a CPU)
 *   kernel   = cpu - sampled           (on CPU in kernel mode, never signalled)
 *
 * Each is carried over in an accumulator and written as accounted samples
 * (flag SD_FLAG_ACCOUNTED) of whole periods. The interposed calls that wait
 * (sampler/interpose/blocking.c) add up the elapsed time the thread spends inside
 * them and keep the stack of the last one (seqcount-checked). Off-CPU time,
 * up to that time in calls, is charged under [blocked] to that stack; kernel
 * time, up to what is left of it, under [kernel] to the same stack (the
 * system call's work); the rest of each goes to the last sampled stack
 * under [off-cpu] and [kernel]. The totals are exact to a period per
 * thread; attribution is exact for the calls sonde notes and approximate
 * (last known stack) for the others (docs/ENV.md).
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <time.h>

#include "writer/writer_int.h"

/* Copies the stack of buffer b (the blocking call the thread is in or
 * last left, or the one before), if the copy is consistent; returns its
 * depth, 0 otherwise. pcs[0] is the libc function it waits in (its entry
 * + 1: frames above the innermost are looked up one byte back, as return
 * addresses), then the stack where it called it, at most max_depth - 1
 * frames: *trunc is set when the thread took max_depth (its stack was
 * cut); pcs holds max_depth. */
static unsigned blocked_stack(struct sd_ring *r, uint32_t b, uint64_t *pcs, int *trunc)
{
	uint32_t g1 = atomic_load_explicit(&r->blk_gen, memory_order_acquire);
	if ((g1 & 1) || !r->blk_pcs)
		return 0;
	unsigned max = sd_w.cfg.max_depth;
	unsigned d = ((volatile uint32_t *)r->blk_depth)[b];
	unsigned n = d < max ? d : max - 1;
	uintptr_t fn = ((volatile uintptr_t *)r->blk_fn)[b];
	const volatile uint64_t *src = r->blk_pcs + (size_t)b * max;
	for (unsigned i = 0; i < n; i++)
		pcs[i + 1] = src[i];
	atomic_thread_fence(memory_order_acquire);
	uint32_t g2 = atomic_load_explicit(&r->blk_gen, memory_order_relaxed);
	if (g1 != g2 || !n || !fn)
		return 0;
	pcs[0] = (uint64_t)fn + 1;
	*trunc = d >= max;
	return n + 1;
}

/* The elapsed time the thread spent inside blocking calls since the last
 * tick, by stack buffer, into d: the calls it left (blk_done_ns, less
 * what earlier ticks counted of the one that was open then) and the part
 * of the one it is in. A call that begins or ends while this reads is
 * counted at the next tick. */
static void blocked_wall(struct sd_ring *r, uint64_t now, int64_t d[SD_BLK_BUFS])
{
	for (int b = 0; b < SD_BLK_BUFS; b++)
		d[b] = (int64_t)atomic_exchange_explicit(&r->blk_done_ns[b], 0, memory_order_relaxed);
	uint32_t s1 = atomic_load_explicit(&r->blk_seq, memory_order_acquire);
	uint64_t t0 = ((volatile uint64_t *)&r->blk_t0)[0];
	uint32_t cur = atomic_load_explicit(&r->blk_cur, memory_order_relaxed) % SD_BLK_BUFS;
	atomic_thread_fence(memory_order_acquire);
	uint32_t s2 = atomic_load_explicit(&r->blk_seq, memory_order_relaxed);
	if ((r->blk_wseq & 1) && s1 != r->blk_wseq) {
		d[r->blk_wbuf] -= r->blk_wpart; /* that call ended: its whole time is in done */
		r->blk_wseq = 0;
		r->blk_wpart = 0;
	}
	if ((s1 & 1) && s1 == s2 && now > t0) {
		int64_t part = (int64_t)(now - t0);
		if (s1 != r->blk_wseq)
			r->blk_wpart = 0;
		d[cur] += part - r->blk_wpart;
		r->blk_wseq = s1;
		r->blk_wbuf = cur;
		r->blk_wpart = part;
	}
}

/* Up to k periods of the time in calls (acc_blk), as samples of pseudo
 * under each call's own stack, the current call's last (the others' time
 * came first); returns the periods charged. */
static uint64_t charge_calls(struct sd_ring *r, uint32_t cur, uint64_t now, uint8_t src,
			     uint64_t period, uint64_t k, uint32_t pseudo)
{
	uint64_t done = 0;
	for (uint32_t i = 1; i <= SD_BLK_BUFS && done < k; i++) {
		uint32_t b = (cur + i) % SD_BLK_BUFS; /* the current one last */
		uint64_t kb = r->acc_blk_ns[b] > 0 ? (uint64_t)r->acc_blk_ns[b] / period : 0;
		if (kb > k - done)
			kb = k - done;
		int trunc = 0;
		unsigned n = kb ? blocked_stack(r, b, sd_w.tmp_pcs, &trunc) : 0;
		if (!n)
			continue;
		r->acc_blk_ns[b] -= (int64_t)(kb * period);
		sd_stream_accounted(r, now, src, sd_w.tmp_pcs, n, pseudo, (uint32_t)kb,
				    trunc ? SD_FLAG_TRUNCATED : 0);
		done += kb;
	}
	return done;
}

/* A thread's end (or the process's): off-CPU and kernel time still kept
 * for want of a stack (sd_offcpu_tick) goes to the last stack it has, the
 * thread itself when it never had one. */
void sd_offcpu_final(struct sd_ring *r)
{
	int src = sd_w.cfg.wall_source;
	uint64_t period = sd_w.cfg.wall_period_ns;
	if (src < 0 || !period || !r->idx || !r->wall_init)
		return;
	uint64_t now = sd_now_ns_sigsafe();
	uint8_t fl = r->last_trunc ? SD_FLAG_TRUNCATED : 0;
	if (r->acc_off_ns >= (int64_t)period) {
		uint64_t k = (uint64_t)r->acc_off_ns / period;
		r->acc_off_ns -= (int64_t)(k * period);
		sd_stream_accounted(r, now, (uint8_t)src, sd_w.tmp_pcs, 0, SD_PSEUDO_OFFCPU,
				    (uint32_t)k, fl);
	}
	if (r->acc_kernel_ns >= (int64_t)period) {
		uint64_t k = (uint64_t)r->acc_kernel_ns / period;
		r->acc_kernel_ns -= (int64_t)(k * period);
		sd_stream_accounted(r, now, (uint8_t)src, sd_w.tmp_pcs, 0, SD_PSEUDO_KERNEL,
				    (uint32_t)k, fl);
	}
}

/* A tick's account of one thread, for the helpers below. */
struct tick {
	struct sd_ring *r;
	uint64_t now, period;
	uint8_t src;     /* the wall-time source */
	uint32_t cur;    /* the current call's buffer, once for this tick */
	uint8_t last_fl; /* [off-cpu] and [kernel] go under the last sampled
			  * stack: SD_FLAG_TRUNCATED if it was cut */
};

/* The thread's first tick: where its account starts. 0 when it starts now
 * (nothing to account at this tick). */
static int wall_begin(struct sd_ring *r, uint64_t now, uint64_t cpu, uint64_t periods)
{
	r->wall_init = 1;
	/* A thread sonde saw begin has used no CPU before t_begin: count
	 * from there. The main thread and threads older than sonde have:
	 * count from now. */
	uint64_t since = r->t_begin_ns && r->t_begin_ns < now ? now - r->t_begin_ns : 0;
	if (since && r->begin_cpu_known && cpu >= r->begin_cpu_ns) {
		/* its CPU clock read as its ring was made: from there, however
		 * late the first tick (a single thread drains at its samples) */
		r->wall_mono = r->t_begin_ns;
		r->wall_cpu = r->begin_cpu_ns;
		r->wall_seen = 0;
	} else if (since && cpu <= since + 1000000) {
		r->wall_mono = r->t_begin_ns;
		r->wall_cpu = 0;
		r->wall_seen = 0;
	} else {
		r->wall_mono = now;
		r->wall_cpu = cpu;
		r->wall_seen = periods;
		return 0;
	}
	return 1;
}

/* The whole periods of off-CPU time (acc_off_ns holds one or more).
 * `sampled`: the time the handler's samples stood for since the last tick;
 * dw: the time in calls since then (blocked_wall). */
static void charge_offcpu(const struct tick *t, int64_t sampled, const int64_t dw[SD_BLK_BUFS])
{
	struct sd_ring *r = t->r;
	uint64_t *pcs = sd_w.tmp_pcs;
	uint64_t k = (uint64_t)r->acc_off_ns / t->period;
	r->acc_off_ns -= (int64_t)(k * t->period);
	/* Off-CPU time inside blocking calls goes to where the thread
	 * waited, the rest (waiting for a CPU, calls sonde does not know)
	 * to its last sampled stack. */
	k -= charge_calls(r, t->cur, t->now, t->src, t->period, k, SD_PSEUDO_BLOCKED);
	/* The rest, when the thread did nothing but such calls since the
	 * last tick (no sample on CPU): waiting for a CPU as they returned,
	 * under the last call's stack; else under the last sampled one. */
	int64_t in_calls = 0;
	for (int b = 0; b < SD_BLK_BUFS; b++)
		in_calls += dw[b];
	int trunc = 0;
	unsigned n = k && !sampled && in_calls > 0
			     ? blocked_stack(r, t->cur, pcs, &trunc)
			     : 0;
	if (k && !n && !r->last_node) {
		/* No stack known yet (the thread has not been sampled:
		 * waiting for a CPU before its first period, or in a call
		 * sonde does not see): kept for the first stack it gets,
		 * where it then runs; at its end, whatever is left goes to
		 * the thread itself (sd_offcpu_final). */
		r->acc_off_ns += (int64_t)(k * t->period);
		k = 0;
	}
	if (k)
		sd_stream_accounted(r, t->now, t->src, pcs, n, SD_PSEUDO_OFFCPU, (uint32_t)k,
				    n ? (trunc ? SD_FLAG_TRUNCATED : 0) : t->last_fl);
}

/* The whole periods of kernel time (acc_kernel_ns holds one or more). */
static void charge_kernel(const struct tick *t)
{
	struct sd_ring *r = t->r;
	uint64_t k = (uint64_t)r->acc_kernel_ns / t->period;
	r->acc_kernel_ns -= (int64_t)(k * t->period);
	/* Time inside the calls that was not off CPU was on CPU, in the
	 * kernel (the system call's work: a read of /dev/zero) or in a
	 * lock's spin: kernel time up to it goes under the call, the
	 * rest to the last sampled stack. */
	k -= charge_calls(r, t->cur, t->now, t->src, t->period, k, SD_PSEUDO_KERNEL);
	if (k && !r->last_node) { /* no stack known yet: as [off-cpu] above */
		r->acc_kernel_ns += (int64_t)(k * t->period);
		k = 0;
	}
	if (k)
		sd_stream_accounted(r, t->now, t->src, sd_w.tmp_pcs, 0, SD_PSEUDO_KERNEL,
				    (uint32_t)k, t->last_fl);
}

/* What is left of the earlier calls (less than a period each, or what
 * their off-CPU time did not cover) is carried by the current one, as
 * one accumulator would: nothing lingers to be charged to an old call
 * site later. */
static void carry_calls(struct sd_ring *r, uint32_t cur)
{
	for (uint32_t b = 0; b < SD_BLK_BUFS; b++)
		if (b != cur) {
			r->acc_blk_ns[cur] += r->acc_blk_ns[b];
			r->acc_blk_ns[b] = 0;
		}
}

/* What is left of the time inside calls beyond a period was user time
 * there (a spinning lock, sched_yield), sampled where it ran: not
 * carried over (the older calls' first). Only once a stack is known. */
static void trim_calls(struct sd_ring *r, uint32_t cur, uint64_t period)
{
	int64_t keep = r->acc_off_ns + r->acc_kernel_ns + (int64_t)period;
	int64_t over = -keep;
	for (int b = 0; b < SD_BLK_BUFS; b++)
		over += r->acc_blk_ns[b];
	for (uint32_t i = 1; i <= SD_BLK_BUFS && over > 0; i++) {
		uint32_t b = (cur + i) % SD_BLK_BUFS;
		int64_t cut = r->acc_blk_ns[b] < over ? r->acc_blk_ns[b] : over;
		if (cut > 0) {
			r->acc_blk_ns[b] -= cut;
			over -= cut;
		}
	}
}

void sd_offcpu_tick(struct sd_ring *r)
{
	int src = sd_w.cfg.wall_source;
	uint64_t period = sd_w.cfg.wall_period_ns;
	if (src < 0 || !period || !r->idx)
		return;
	uint64_t now = sd_now_ns_sigsafe(), cpu;
	if (sd_kernel_thread_cpu_ns(r->tid, &cpu) != 0)
		return; /* the thread is gone: its tail (under a tick) is not counted */
	uint64_t periods = atomic_load_explicit(&r->wall_periods, memory_order_relaxed);
	if (!r->wall_init && !wall_begin(r, now, cpu, periods))
		return;
	int64_t elapsed = (int64_t)(now - r->wall_mono);
	int64_t cpu_d = (int64_t)(cpu - r->wall_cpu);
	int64_t sampled = (int64_t)((periods - r->wall_seen) * period);
	r->wall_mono = now;
	r->wall_cpu = cpu;
	r->wall_seen = periods;
	if (elapsed < 0 || cpu_d < 0)
		return;
	r->acc_off_ns += elapsed - cpu_d;
	r->acc_kernel_ns += cpu_d - sampled;
	int64_t dw[SD_BLK_BUFS];
	blocked_wall(r, now, dw);
	for (int b = 0; b < SD_BLK_BUFS; b++)
		r->acc_blk_ns[b] += dw[b];
	struct tick t = {
		.r = r, .now = now, .period = period, .src = (uint8_t)src,
		.cur = atomic_load_explicit(&r->blk_cur, memory_order_relaxed) % SD_BLK_BUFS,
		.last_fl = r->last_trunc ? SD_FLAG_TRUNCATED : 0,
	};
	if (r->acc_off_ns >= (int64_t)period)
		charge_offcpu(&t, sampled, dw);
	carry_calls(r, t.cur);
	if (r->acc_kernel_ns >= (int64_t)period)
		charge_kernel(&t);
	if (!r->last_node)
		return; /* the time in calls is kept with the rest until a stack is known */
	trim_calls(r, t.cur, period);
}
